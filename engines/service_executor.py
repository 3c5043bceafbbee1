"""One execute skeleton for the RFC's two table services: Option 1's base-file compaction and
Option 2's clustering. Only the rewrite of one unit (an operation, a group) and the commit (its
order of deletes and the commit point, its fault points) differ; a design subclasses
:class:`PlanExecutor` and supplies them.

``execute_plan(instant)``:
1. under the writer lock: ``instant`` must be a pending plan of the service's action; every file
   the plan reads must exist (else :class:`MissingPlanInputError`: the plan cannot run and stays
   pending); an inflight earlier attempt (failed or killed) is rolled back with its plan kept
   (``rollback.*`` points); then requested -> inflight;
2. ``<points>.after_inflight``;
3. every unit rewritten on a pool of ``max_parallel`` threads, one Spark job each; a unit that
   fails stops the units not yet started; ``after_unit`` after each, when the design names one;
4. ``after_rewrite``; no write stats at all is an error (the instant stays inflight);
5. the design's commit, under the writer lock;
6. a :class:`MaintenanceResult` (files and bytes in from the plan, out from the write stats).

The lock is not held while units are rewritten, so ingestion goes on beside an async service (the
plan's inputs are protected from the cleaner and its file groups excluded from other plans).
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from engines.base import MaintenanceResult
from engines.table import faults
from engines.table.model import WriteStat
from engines.table.rollback import rollback_inflight
from engines.table.table import HudiTable
from engines.table.timeline import Instant, State, TimelineError


class MissingPlanInputError(TimelineError):
    """A saved plan whose input files are gone (e.g. deleted before a crash): it cannot be executed."""


@dataclass(frozen=True)
class ServicePoints:
    """The fault points of the shared steps, in the design's own names."""

    after_inflight: str
    after_rewrite: str
    after_unit: str | None = None


@dataclass
class Committed:
    """What a design's commit reports: files it deleted (before or after the commit point) and details."""

    files_deleted: int = 0
    details: dict[str, Any] = field(default_factory=dict)


class PlanExecutor(ABC):
    """The shared execute skeleton (module docstring); a design supplies the abstract parts."""

    table: HudiTable
    on_step: faults.StepHook
    _mutex: threading.RLock  # the engine's mutex over instant-creating calls (the rollback creates one)
    service_kind: str  # MaintenanceResult.kind
    action: str  # the timeline action of the design's plans
    points: ServicePoints

    @property
    @abstractmethod
    def max_parallel(self) -> int:
        """How many units are rewritten at a time."""

    @abstractmethod
    def load_plan(self, instant: str) -> Any:
        """The design's plan object saved as ``instant`` (:func:`engines.table.plans.load_plan`)."""

    @abstractmethod
    def plan_inputs(self, plan: Any) -> list[str]:
        """Paths of the base files the plan reads."""

    @abstractmethod
    def plan_units(self, plan: Any) -> Sequence[Any]:
        """The plan's units of work, one Spark job each."""

    @abstractmethod
    def bytes_read(self, plan: Any) -> int:
        """Bytes the plan reads (measured before the rewrite, while the inputs exist)."""

    @abstractmethod
    def rewrite_unit(self, plan: Any, instant: str, index: int, unit: Any) -> list[WriteStat]:
        """Rewrite one unit into new base files named with ``instant``."""

    @abstractmethod
    def commit(self, plan: Any, inflight: Instant, stats: list[WriteStat]) -> Committed:
        """Complete the instant, in the design's order of deletes and commit point."""

    def execute_plan(self, instant: str) -> MaintenanceResult:
        """Execute the pending plan ``instant`` and complete its instant (module docstring)."""
        if self.max_parallel < 1:
            raise ValueError("the number of units rewritten in parallel must be at least 1")
        t0 = time.perf_counter()
        rolled_back = None
        with self._mutex, self.table.lock:
            inst = self.table.refresh().get(instant)
            if inst is None or inst.action != self.action or inst.is_completed:
                raise TimelineError(f"{self.service_kind} {instant} is not pending in {self.table.base_uri}")
            plan = self.load_plan(instant)
            missing = [p for p in self.plan_inputs(plan) if not self.table.storage.exists(p)]
            if missing:
                raise MissingPlanInputError(
                    f"{self.service_kind} plan {instant} references {len(missing)} file(s) that no longer exist "
                    f"(first: {missing[0]}); it cannot be executed and stays pending")
            if inst.state == State.INFLIGHT:  # a failed or killed attempt: roll back, keep the plan, re-run
                rolled_back = rollback_inflight(self.table, inst, keep_plan=True, on_step=self.on_step)
            inflight = self.table.refresh().transition_to_inflight(Instant(instant, self.action, State.REQUESTED))
        faults.step(self.points.after_inflight, self.on_step)
        bytes_read = self.bytes_read(plan)
        stats = self._rewrite_all(plan, instant)
        faults.step(self.points.after_rewrite, self.on_step)
        if not stats:
            raise TimelineError(f"{self.service_kind} plan {instant} produced 0 write stats; the instant stays inflight")
        with self.table.lock:
            committed = self.commit(plan, inflight, stats)
        return MaintenanceResult(
            kind=self.service_kind, instant=instant, duration_s=time.perf_counter() - t0,
            files_in=len(self.plan_inputs(plan)), files_out=len(stats), bytes_read=bytes_read,
            bytes_written=sum(s.file_size for s in stats), records=sum(s.num_writes for s in stats),
            files_deleted=committed.files_deleted,
            details={**committed.details, "rolled_back_attempt": rolled_back.instant if rolled_back else None})

    def _rewrite_all(self, plan: Any, instant: str) -> list[WriteStat]:
        """Every unit on the pool, write stats in unit order; the first failure is raised."""
        units = list(self.plan_units(plan))
        failed = threading.Event()

        def run(index: int, unit: Any) -> list[WriteStat]:
            if failed.is_set():  # a failed unit fails the attempt: units not yet started never start
                return []
            try:
                out = self.rewrite_unit(plan, instant, index, unit)
                if self.points.after_unit is not None:
                    faults.step(self.points.after_unit, self.on_step)
            except BaseException:
                failed.set()
                raise
            return out

        with ThreadPoolExecutor(max_workers=min(self.max_parallel, max(1, len(units)))) as pool:
            futures = [pool.submit(run, i, u) for i, u in enumerate(units)]
            return [s for f in futures for s in f.result()]
