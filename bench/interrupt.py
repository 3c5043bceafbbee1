"""Ctrl-C during a command: told apart from the errors it causes.

SIGINT reaches the whole foreground process group, so Spark's JVM stops with Python, and the call
that was interrupted (or its clean-up) often fails on the dead JVM with a Py4J error that replaces
the ``KeyboardInterrupt``, or swallows it inside Py4J's socket read. the handler :func:`recorded` installs records the
signal itself, so :func:`interrupted` knows, and silences Py4J's logging of the dead connection
(it would print on the user's terminal after the one message).
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_pressed = threading.Event()
_active = threading.Event()  # inside recorded(): the handler is ours to keep


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    _pressed.set()
    logging.disable(logging.CRITICAL)  # Py4J's "Exception while sending command" on the stopped JVM
    raise KeyboardInterrupt


@contextmanager
def recorded() -> Iterator[None]:
    """Record Ctrl-C inside the block (main thread only; elsewhere Python's own handling stays); the
    previous handler is back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pressed.clear()
    previous = signal.signal(signal.SIGINT, _on_ctrl_c)
    _active.set()
    try:
        yield
    finally:
        _active.clear()
        signal.signal(signal.SIGINT, previous)


def reclaim() -> None:
    """Put the handler back after Spark started: PySpark's SparkContext installs its own, which asks the
    JVM (stopping by the same Ctrl-C) to cancel its jobs from inside an interrupted Py4J call."""
    if _active.is_set() and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_ctrl_c)


def interrupted(exc: BaseException | None = None) -> bool:
    """True when Ctrl-C was pressed (inside :func:`recorded`), or ``exc`` is, or was raised while
    handling, a ``KeyboardInterrupt``."""
    if _pressed.is_set():
        return True
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False
