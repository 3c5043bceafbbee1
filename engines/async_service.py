"""The one async table-service loop (Hudi's ``AsyncClusteringService`` / async compaction): a daemon
thread beside ingestion that runs a unit of work every ``interval_s`` seconds, or at once when
woken (a plan was just scheduled).

Every async mode uses it: an engine's own (Option 1's async compaction, Option 2's async
clustering, Apache Hudi's client) and the runner's ``maintenance.mode: async``. A failure is
recorded (``errors``, or the caller's ``on_error``) and the loop goes on: the plan stays pending and
the next round re-runs it (an inflight attempt is rolled back first). ``close`` lets the running
round finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class AsyncService:
    """A daemon thread running ``work`` on a period and when notified; see the module docstring."""

    def __init__(self, work: Callable[[], list[Any] | None], name: str, interval_s: float,
                 on_error: Callable[[Exception], None] | None = None) -> None:
        if interval_s <= 0:
            raise ValueError(f"an async service's interval must be positive, got {interval_s}")
        self._work = work
        self._interval_s = interval_s
        self._on_error = on_error
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self.results: list[Any] = []
        self.errors: list[str] = []
        self._thread: threading.Thread | None = threading.Thread(target=self._loop, daemon=True, name=name)
        self._thread.start()

    def notify(self) -> None:
        """Work was queued (a plan scheduled): run a round now."""
        self._idle.clear()
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._interval_s)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self.results += self._work() or []
            except Exception as exc:  # recorded; the plan stays pending and is retried next round
                self.errors.append(f"{type(exc).__name__}: {exc}")
                if self._on_error is not None:
                    self._on_error(exc)
            finally:
                if not self._wake.is_set():
                    self._idle.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no notified work is queued (True) or ``timeout`` passes (False)."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        """Stop after the running round, if any, and join the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
