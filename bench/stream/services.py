"""Each design's table services beside a live stream (the issue's list, DESIGN.md §3):

| engine kind | beside the stream |
| --- | --- |
| ``clustering`` (Option 2) | as Hudi's streaming sink with ``hoodie.clustering.async.enabled``: the writer schedules after ``async.max.commits`` commits (pending plans' file groups excluded) and cleans after each commit; the one async service loop (``engines.async_service.AsyncService``, Hudi's ``AsyncClusteringService``) executes the plans on a thread |
| ``append_compaction`` (Option 1) | an async compaction service (the same ``AsyncService``): schedules, executes and cleans every ``maintenance.async_interval_s`` |
| ``delta_peer`` | delta-rs OPTIMIZE (and VACUUM) on the same kind of service every ``maintenance.async_interval_s`` |
| ``cow_baseline`` | inline: its merge happens at ingest; the writer cleans after each commit |
| ``hudi``, ``append_only`` | inline ``after_commit`` only |
| ``hudi`` with ``stream_sink: hudi`` | Hudi's own sink and its async clustering service (``bench.stream.hudi_sink``; not these services) |

Instant-creating calls (schedule, clean) and the sink's ingest share one mutex, so the service
thread and the writer never race for an instant time; executions run outside it, beside ingest.
Every execution's wall interval is kept, so a micro-batch knows whether maintenance overlapped it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from engines.async_service import AsyncService
from engines.base import Engine, MaintenanceResult
from engines.kinds import kind_of
from engines.maintenance_round import (
    CleanAt,
    MaintenanceRound,
    RoundPhase,
    Runs,
    Trigger,
    after_commit_round,
    execute_pending,
)

Recorder = Callable[[MaintenanceResult, str], None]


class Services:
    """The table services of one engine beside its stream (see the module docstring)."""

    def __init__(self, engine: Engine, kind: str, enabled: bool, interval_s: float, async_max_commits: int,
                 record: Recorder | None = None) -> None:
        self.engine = engine
        self.kind = kind
        self.enabled = enabled
        self.interval_s = interval_s
        self.async_max_commits = async_max_commits
        self.record = record or (lambda res, mode: None)
        self.mutex = threading.RLock()
        self.intervals: list[list[float | None]] = []  # [start, end or None] (time.time()) per execution
        self.errors: list[str] = []
        self.runs = 0
        self.commits = 0  # ingest commits seen: a service waits for the table's first one (delta-rs creates it)
        self._service: AsyncService | None = None
        service = kind_of(kind).service  # a table service of ours runs on a thread; the others inline
        self.mode = "none" if not enabled else {
            "clustering": "async_clustering", "compaction": "async_compaction",
            "optimize": "async_optimize"}.get(service or "", "inline")

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        if self.mode == "async_clustering":
            self._service = AsyncService(self._run_pending_clustering, f"stream-clustering-{self.engine.name}",
                                         self.interval_s)
        elif self.mode in ("async_compaction", "async_optimize"):
            self._service = AsyncService(self._round, f"stream-service-{self.engine.name}", self.interval_s)

    def stop(self) -> None:
        """Stop the service thread; a running execution finishes first."""
        if self._service is not None:
            self._service.close()
            self.errors += self._service.errors
            self._service = None

    def await_plans(self, timeout_s: float) -> None:
        """Run the pending clustering plans now (an upsert was rejected on their file groups): the
        async service is woken and waited for; without one they are executed in this thread."""
        if self._service is not None:
            self._service.notify()
            self._service.wait_idle(timeout_s)
        else:
            self._run_pending_clustering("inline")

    def drain(self) -> None:
        """Nothing to wait for before the query stops: these services are stopped and finished after it."""

    def running_between(self, t0: float, t1: float) -> bool:
        """Whether any execution overlapped the wall interval ``[t0, t1]``."""
        for start, end in list(self.intervals):
            if start is not None and start <= t1 and (end is None or end >= t0):
                return True
        return False

    @property
    def busy(self) -> bool:
        return any(end is None for _, end in list(self.intervals))

    # -- the writer's side (inside foreachBatch, after the commit) -------------------------------
    def after_ingest(self) -> list[MaintenanceResult]:
        """The writer's post-commit work: auto clean and, for Option 2, the async schedule."""
        out: list[MaintenanceResult] = []
        self.commits += 1
        if not self.enabled:
            return out
        if self.mode in ("inline", "async_clustering"):
            with self.mutex:
                out += [m for m in self.engine.after_commit() if m is not None]
        if self.mode == "async_clustering":
            from engines.clustering.modes import may_schedule

            def due() -> bool:
                return may_schedule("async", self.engine.table.refresh(), 1, self.async_max_commits)

            with self.mutex:  # schedule, wake the service, then the auto clean
                out += after_commit_round(self.engine, Trigger.ASYNC, due=due, clean=CleanAt.AFTER,
                                          notify=self._notify_service)
        for res in out:
            self.record(res, "inline")
        return out

    def _notify_service(self) -> None:
        if self._service is not None:
            self._service.notify()

    # -- the service's side ----------------------------------------------------------------------
    @contextmanager
    def _execution_span(self) -> Iterator[None]:
        """Keep the wall interval of one execution (``intervals``)."""
        span: list[float | None] = [time.time(), None]
        self.intervals.append(span)
        try:
            yield
        finally:
            span[1] = time.time()

    def _phase(self, phase: RoundPhase) -> AbstractContextManager[Any]:
        """How a round's engine calls run here: schedule and clean under the mutex (they create
        instants), each execution as a kept span outside it, look-ups as they are."""
        if phase in (RoundPhase.SCHEDULE, RoundPhase.CLEAN):
            return self.mutex
        return self._execution_span() if phase == RoundPhase.EXECUTE else nullcontext()

    def _executed(self, mode: str) -> Callable[[MaintenanceResult], None]:
        def count_and_record(res: MaintenanceResult) -> None:
            self.runs += 1
            self.record(res, mode)
        return count_and_record

    def _run_pending_clustering(self, mode: str = "async") -> list[MaintenanceResult]:
        """Execute every pending clustering plan, earliest first (the async clustering service's work)."""
        return execute_pending(self.engine, phase=self._phase, on_executed=self._executed(mode))

    def run_once(self, mode: str = "async", runs: Runs = Runs.NEW) -> list[MaintenanceResult]:
        """One round of the async service (:class:`engines.maintenance_round.MaintenanceRound`):
        schedule, execute, clean; ``Runs.PENDING`` executes every pending plan instead of scheduling."""
        rnd = MaintenanceRound(self.engine, runs, phase=self._phase, on_executed=self._executed(mode))
        rnd.run()
        if rnd.cleaned is not None:
            self.record(rnd.cleaned, mode)
        return rnd.results

    def _round(self) -> list[MaintenanceResult]:
        """One round of the async compaction / OPTIMIZE service, once the table has a commit."""
        return self.run_once() if self.commits else []

    def finish(self) -> list[MaintenanceResult]:
        """After the stream: execute what is still pending (Option 2's queued plans), then clean."""
        if not self.enabled or not self.commits:
            return []
        if self.mode == "async_clustering":
            return self.run_once("final", Runs.PENDING)
        if self.mode in ("async_compaction", "async_optimize"):
            return self.run_once("final")
        return []
