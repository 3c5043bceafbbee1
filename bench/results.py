"""Moved to :mod:`runresults` (the results format sits below both bench and reports); this name
stays for code written against it."""

from runresults import *  # noqa: F403
from runresults import FORMAT_VERSION, TABLES, Results, ResultsError, ResultsWriter  # noqa: F401
