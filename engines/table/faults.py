"""Named fault-injection points: a real crash (SIGKILL of this process) at a chosen step.

Activated by configuration, never by editing code: ``LAYOUTBENCH_CRASH_AT=<point>[:<n>]`` kills
the process the n-th time (default 1st) execution reaches ``<point>``. Engines call
:func:`step` at every step boundary (the caller's ``on_step`` observer, then the point) and
:func:`killed_mid_action` around a running write job; tests may also register in-process
observers. Every point's name is in :data:`POINTS` (``bench/engine_points.py`` builds the crash
matrix from it); an unlisted name is an error at once.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENV = "LAYOUTBENCH_CRASH_AT"

# Every point, by family. A ``mid_*`` point is inside a running write job (killed_mid_action).
POINTS: dict[str, tuple[str, ...]] = {
    "ingest": ("timeline.commit.after_requested", "ingest.mid_write", "ingest.after_files_written",
               "ingest.before_complete"),
    "storage": ("storage.before_rename",),
    "clean": ("timeline.clean.after_requested", "clean.after_clean_requested", "clean.after_file_deleted",
              "clean.before_clean_complete"),
    "rollback": ("timeline.rollback.after_requested", "rollback.after_rollback_requested",
                 "rollback.after_partial_files_removed", "rollback.before_rollback_complete"),
    # Option 1: the plan is saved as the requested instant itself, so it has no separate after-requested step.
    "option1": ("option1.after_plan_saved", "option1.after_inflight", "option1.mid_write",
                "option1.after_new_files_written", "option1.after_old_file_deleted", "option1.before_commit",
                "option1.after_commit"),
    "clustering": ("clustering.after_plan_saved", "clustering.after_inflight", "clustering.mid_group",
                   "clustering.after_group_written", "clustering.after_all_groups",
                   "clustering.before_replacecommit", "clustering.after_replacecommit"),
    "archive": ("archive.after_archive_written",),
    # HudiTable.start of the other actions (not in a crash matrix)
    "timeline": ("timeline.replacecommit.after_requested", "timeline.basefilecompaction.after_requested",
                 "timeline.deltacommit.after_requested"),
    # the streaming sink: a micro-batch committed to the table, not yet recorded by Spark (stream --kill-test)
    "stream": ("stream.after_table_commit",),
}
KNOWN = frozenset(name for names in POINTS.values() for name in names)
StepHook = Callable[[str], None] | None
_hits: dict[str, int] = {}
_lock = threading.Lock()
_observers: list[Callable[[str], None]] = []


def _target() -> tuple[str, int] | None:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    name, _, nth = raw.partition(":")
    return name, int(nth) if nth.isdigit() else 1


def step(name: str, on_step: StepHook = None) -> None:
    """A step boundary: the caller's observer ``on_step(name)`` (a test pausing or failing there),
    then the fault point ``name``. The one hook every engine, the cleaner and rollback use."""
    if on_step is not None:
        on_step(name)
    point(name)


def _check(name: str) -> None:
    if name not in KNOWN:
        raise ValueError(f"unknown fault point {name!r}: add it to engines.table.faults.POINTS")


def point(name: str) -> None:
    """Mark a step boundary; crash here if configured to."""
    _check(name)
    for observer in list(_observers):
        observer(name)
    target = _target()
    if target is None or target[0] != name:
        return
    with _lock:
        _hits[name] = _hits.get(name, 0) + 1
        hit = _hits[name]
    if hit == target[1]:
        os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def killed_mid_action(name: str, started: Callable[[], bool], poll_s: float = 0.02) -> Iterator[None]:
    """Crash point *inside* a running action (e.g. a Spark write job): when ``name`` is targeted,
    a watcher kills this process as soon as ``started()`` is true (say, the job's first output file
    is on storage), or when the block ends if it finished first. A no-op when not targeted."""
    _check(name)
    for observer in list(_observers):
        observer(name)
    target = _target()
    if target is None or target[0] != name:
        yield
        return
    with _lock:
        _hits[name] = _hits.get(name, 0) + 1
        hit = _hits[name]
    if hit != target[1]:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if started():
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(poll_s)

    watcher = threading.Thread(target=watch, name=f"crash-{name}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
    os.kill(os.getpid(), signal.SIGKILL)


def observe(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(point_name)`` at every point; returns a function that removes it."""
    _observers.append(callback)
    return lambda: _observers.remove(callback)
