"""The one scenario batch loop: ingest, after-commit, maintenance by mode, checkpoints.

The runner (real engines, queries, readers), the crash child (one engine, resumed after a crash)
and the simulator (metadata-only engines) all run :func:`run_batches`; what each does at a step
is its :class:`BatchSteps`. ``maintenance.mode`` is read here and nowhere else
(:class:`MaintenanceSchedule`), with the semantics of Hudi's clustering modes
(hudi-semantics.md §4; the clustering article's synchronous, asynchronous and semi-asynchronous
modes), ``every_commits`` = N:

| mode | after batch b's commit | after the last batch (``final``) |
| --- | --- | --- |
| ``inline`` | every N commits: schedule, execute, clean, synchronously (``inline.max.commits`` = N) | the same, unless the last batch just did it |
| ``schedule_inline`` (semi-async) | after every commit the writer schedules a plan if none is pending (``schedule.inline``, no commit gate in 0.12.1); every N commits the separate job executes the pending plans and cleans, so the executor's rhythm sets the cadence | execute what is pending and clean, unless the last batch just did it |
| ``async`` | a service thread beside the loop schedules, executes and cleans every ``async_interval_s`` seconds (the runner), once ``async_max_commits`` commits followed the last maintenance when that is set (``async.max.commits``); a driver without a wall clock (crash child, simulator) runs it every N commits instead (``async_max_commits`` when set), as ``inline`` | the service is stopped, then one schedule, execute, clean |
| ``none`` | nothing | nothing |

Before this loop the runner acted only on ``inline`` (``schedule_inline`` meant final
maintenance only) while the crash child and the simulator maintained every N commits in every
mode but ``none``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from bench.scenario import Scenario
from engines.maintenance_round import Runs

MAINTAIN = "maintain"  # schedule, execute (the new plan, else the earliest pending one), clean
SCHEDULE = "schedule"  # schedule a plan only if none is pending (the semi-async writer)
EXECUTE = "execute"  # execute every pending plan, earliest first, then clean (the semi-async job)
# the maintenance round (engines.maintenance_round) of each step but SCHEDULE: which plans it executes
ROUND_RUNS = {MAINTAIN: Runs.NEW_OR_EARLIEST, EXECUTE: Runs.PENDING}

T = TypeVar("T")


@dataclass(frozen=True)
class MaintenanceSchedule:
    """Which maintenance steps are due when, from ``maintenance`` of a scenario (module docstring)."""

    mode: str
    every: int
    final: bool
    threads: bool = True  # False: the driver has no wall clock, so async runs every N commits

    @classmethod
    def of(cls, scenario: Scenario, threads: bool = True) -> MaintenanceSchedule:
        m = scenario.maintenance
        every = m.async_max_commits if m.mode == "async" and not threads and m.async_max_commits else m.every_commits
        return cls(m.mode, every, m.final, threads)

    @property
    def runs_async(self) -> bool:
        """True when a service thread beside the loop does the maintenance."""
        return self.mode == "async" and self.threads

    def _periodic(self) -> bool:
        return self.mode == "inline" or (self.mode == "async" and not self.threads)

    def after_commit(self, batch: int) -> tuple[str, ...]:
        """The steps due right after batch ``batch``'s commit, in order."""
        due = (batch + 1) % self.every == 0
        if self._periodic():
            return (MAINTAIN,) if due else ()
        if self.mode == "schedule_inline":
            return (SCHEDULE, EXECUTE) if due else (SCHEDULE,)
        return ()

    def final_steps(self, num_batches: int) -> tuple[str, ...]:
        """The steps after the last of ``num_batches`` batches (its after-commit steps already ran)."""
        if not self.final or self.mode == "none":
            return ()
        if self.runs_async:
            return (MAINTAIN,)
        if num_batches % self.every == 0:
            return ()  # the last batch's commit just ran the periodic maintenance
        return (EXECUTE,) if self.mode == "schedule_inline" else (MAINTAIN,)


class BatchSteps(Protocol[T]):
    """What a driver does at each step of the loop, for each of its targets (engines)."""

    def begin_batch(self, batch: int) -> None:
        """Before any target ingests batch ``batch`` (generate it, once for all)."""
        ...

    def ingest(self, target: T, batch: int) -> None:
        """Commit batch ``batch`` into ``target`` and run its after-commit work."""
        ...

    def maintain(self, target: T, batch: int, step: str) -> None:
        """Run maintenance step ``step`` (:data:`MAINTAIN`, :data:`SCHEDULE`, :data:`EXECUTE`)."""
        ...

    def end_batch(self, batch: int) -> None:
        """Every target has ingested batch ``batch`` (and maintained, if due)."""
        ...

    def before_final(self, batch: int) -> None:
        """Before the final maintenance (stop async services)."""
        ...

    def checkpoint(self, batch: int) -> None:
        """Queries after batch ``batch`` (the final maintenance, if any, has run)."""
        ...


def checkpoints_of(batches: int, every: int) -> set[int]:
    """The checkpoints of a target that takes ``batches`` batches: every ``every``-th, and its last."""
    return {b for b in range(batches) if (b + 1) % every == 0} | {batches - 1}


def run_batches(steps: BatchSteps[T], targets: Sequence[T], schedule: MaintenanceSchedule,
                num_batches: int, start: int = 0, checkpoints: Iterable[int] = (),
                prefix: Callable[[T], int] | None = None) -> None:
    """Batches ``start`` .. ``num_batches - 1`` through every target: ingest and after-commit, the
    maintenance ``schedule`` makes due, the final maintenance after the last batch, and
    ``steps.checkpoint`` after each batch in ``checkpoints``. ``prefix(target)``: how many of the
    batches that target takes (a stated prefix, e.g. a design whose rewrites would not fit the run's
    time); it gets its final maintenance after its own last batch. ``steps.checkpoint`` decides
    which targets query at a mark (the runner: those whose own checkpoints include it)."""
    marks = set(checkpoints)
    upto = {id(t): min(num_batches, prefix(t)) if prefix is not None else num_batches for t in targets}
    for b in range(start, num_batches):
        steps.begin_batch(b)
        due = schedule.after_commit(b)
        for target in targets:
            if b >= upto[id(target)]:
                continue
            steps.ingest(target, b)
            for step in due:
                steps.maintain(target, b, step)
            if b == upto[id(target)] - 1 < num_batches - 1:  # a prefix ends: its own final maintenance
                for step in schedule.final_steps(upto[id(target)]):
                    steps.maintain(target, b, step)
        steps.end_batch(b)
        if b == num_batches - 1:
            steps.before_final(b)
            for target in targets:
                for step in schedule.final_steps(num_batches):
                    steps.maintain(target, b, step)
        if b in marks:
            steps.checkpoint(b)
