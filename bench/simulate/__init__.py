"""The simulator: the designs on a metadata-only table, driven by the same scenarios and planners.

Import what you need from its modules (``bench.simulate.results_folder.simulate``,
``bench.simulate.calibrate.calibrate``, ...): this package's ``__init__`` imports nothing, so a
module that needs one small piece of it (the scenario's validation needs :mod:`bench.simulate.supports`)
does not load the whole simulator.
"""
