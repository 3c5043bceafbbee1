"""Named fault-injection points: a real crash (SIGKILL of this process) at a chosen step.

Activated by configuration, never by editing code: ``LAYOUTBENCH_CRASH_AT=<point>[:<n>]`` kills
the process the n-th time (default 1st) execution reaches ``<point>``. Engines call
:func:`point` at every step boundary; tests may also register in-process observers.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENV = "LAYOUTBENCH_CRASH_AT"
_hits: dict[str, int] = {}
_lock = threading.Lock()
_observers: list[Callable[[str], None]] = []


def _target() -> tuple[str, int] | None:
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    name, _, nth = raw.partition(":")
    return name, int(nth) if nth.isdigit() else 1


def point(name: str) -> None:
    """Mark a step boundary; crash here if configured to."""
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
