"""Where one ingest commit's time goes: planning, writing its files, committing.

The engines mark their step boundaries for the crash matrix (:mod:`engines.table.faults`); an
ingest passes ``timeline.commit.after_requested`` once its plan is made (the view, the pending
plans it must avoid, the size estimate and bucket assignment are done: the requested instant is
created next) and ``ingest.after_files_written`` once its files are on storage. Observing those
two points on the ingesting thread splits the commit's wall time into three phases with no timer
inside an engine. An engine that passes neither (Apache Hudi's, delta-rs) gets no phases.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from engines.table import faults

PLANNED = "timeline.commit.after_requested"
WRITTEN = "ingest.after_files_written"
PHASES = ("plan_s", "write_s", "commit_s")


@contextmanager
def ingest_phases() -> Iterator[dict[str, float]]:
    """Time the block (one ``engine.ingest``); the yielded dict gets ``plan_s``, ``write_s`` and
    ``commit_s`` when the block ends, if the engine passed both boundaries on this thread."""
    caller = threading.get_ident()
    marks: dict[str, float] = {}

    def seen(name: str) -> None:
        if name in (PLANNED, WRITTEN) and name not in marks and threading.get_ident() == caller:
            marks[name] = time.perf_counter()

    out: dict[str, float] = {}
    start = time.perf_counter()
    remove = faults.observe(seen)
    try:
        yield out
    finally:
        remove()
        end = time.perf_counter()
        if PLANNED in marks and WRITTEN in marks:
            out.update(plan_s=marks[PLANNED] - start, write_s=marks[WRITTEN] - marks[PLANNED],
                       commit_s=end - marks[WRITTEN])
