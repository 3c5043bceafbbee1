"""The one gate: does a write job run in the driver process or as Spark tasks?

A small job spends most of its time on the fixed costs of a Spark job (scheduling, shipping the task,
a Python worker's round trip), not on writing: its tasks then run in the driver, with the task indices
and attempt 0 a Spark job would give them, so the files, names and bytes are the same
(tests/test_local_write.py, tests/test_rewrite_paths.py). :func:`choose_route` says which, and why;
:func:`record_route` counts the routes jobs took, which the runner puts in the run's profile
(``profile.routes``).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

from engines.config.registry import SORT_RUN_BYTES

# At most this many rows a job writes in the driver. Sized like LOCAL_BYTES: the driver then holds no more
# than a sorting task would (the benchmark's log rows take ~280 bytes in Arrow: 100k rows ~ 28 MB, ~10 MB
# of Parquet).
LOCAL_ROWS = 100_000
# At most this many uncompressed input bytes a job reads in the driver. Measured on the loaded 2-core
# machine (unsorted rewrites, medians of 4): a 1-task no-op Spark job costs 0.2-0.4 s; 3 MB in, 1 output:
# Spark 0.43 s, driver 0.09 s; 25 MB, 1 output: 0.64 / 0.33 s; 100 MB, 4 outputs: 2.64 / 1.94 s. Option 1/2
# runs of the default scenario read 1-27 MB on disk (3-85 MB uncompressed). The bound is the memory one
# sorting task holds (SORT_RUN_BYTES), so no driver holds more than a task would.
LOCAL_BYTES = SORT_RUN_BYTES

_LOCK = threading.Lock()
_TAKEN: Counter[str] = Counter()


@dataclass(frozen=True)
class Route:
    """Where a write job runs, and the short reason the gate gave."""

    in_driver: bool
    reason: str

    def __str__(self) -> str:
        return f"{'driver' if self.in_driver else 'spark'} ({self.reason})"


def choose_route(*, rows: int | None = None, input_bytes: int | None = None, blocker: str | None = None) -> Route:
    """The driver when the job is small and pyarrow can stand in for Spark, else Spark tasks.

    ``rows``: the rows the job writes, where the rule bounds them (inserts, top-ups); ``input_bytes``:
    the uncompressed bytes of the files it reads (rewrites, top-ups); ``blocker``: why pyarrow cannot do
    the job as Spark would (files it cannot read as Spark does, a sort it orders differently, a row count
    not known without a Spark job), None when it can."""
    if blocker is not None:
        return Route(False, blocker)
    if rows is not None and rows > LOCAL_ROWS:
        return Route(False, f"more than {LOCAL_ROWS} rows")
    if input_bytes is not None and input_bytes > LOCAL_BYTES:
        return Route(False, f"more than {LOCAL_BYTES} input bytes")
    bounds = ([f"at most {LOCAL_ROWS} rows"] if rows is not None else []) + \
        ([f"at most {LOCAL_BYTES} input bytes"] if input_bytes is not None else [])
    return Route(True, ", ".join(bounds) or "nothing to bound")


def record_route(job: str, route: Route) -> Route:
    """Count that a ``job`` (insert, rewrite, bucket insert) took ``route``; returns ``route``."""
    with _LOCK:
        _TAKEN[f"{job}: {route}"] += 1
    return route


def routes_taken() -> dict[str, int]:
    """How many jobs took each route in this process so far (``job: where (reason)`` -> count)."""
    with _LOCK:
        return dict(_TAKEN)
