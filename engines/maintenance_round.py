"""One maintenance round, written once: schedule -> execute -> clean.

Everything that maintains a table goes through here: the runner and the crash child (each
maintenance step of :mod:`bench.batch_loop`), the stream's services, the ``service`` command and the
engines' own inline and async modes. An engine takes part through :class:`TableService`, the four
maintenance calls of the :class:`engines.base.Engine` protocol. Our designs answer them with their
planners and the one execute skeleton (:mod:`engines.service_executor`), Apache Hudi's engine with
its write client's own calls (``scheduleClustering``, ``cluster``, ``clean``), the Delta peer with
delta-rs's OPTIMIZE and VACUUM.

A round (:class:`MaintenanceRound`) has three steps, one method each, so a caller can act between
them (the runner starts its readers once the round has planned):

1. ``schedule``: ask the engine for a new plan (not when the round only executes what is pending)
   and choose the first plan to execute, as :class:`Runs` says;
2. ``execute``: execute it, and with ``Runs.PENDING`` every plan still pending after it, earliest
   first. An instant is executed at most once a round (a plan still pending after its execution
   ends the step), and an execution that returns nothing ends the step;
3. ``clean``: run the cleaner once.

``run`` does the three in order. :func:`execute_pending` is "execute what is pending" alone,
:func:`schedule_if_idle` schedules only when no plan is pending (the semi-async writer),
:func:`earliest_pending` is the look-up behind every engine's ``pending_plan`` on a Hudi timeline,
and :func:`plan_to_execute` is what ``execute()`` without an instant means (the earliest pending
plan), for every engine. :func:`after_commit_round` is a writer's post-commit work (Hudi's auto
clean and inline or async table service), the order of its steps written once for every engine
and the stream's writer.

A caller observes a round through three hooks. ``phase(name)`` wraps each engine call in a context
of the caller's: a request label, a mutex or a timed span (:class:`RoundPhase`).
``on_executed(result)`` sees each execution's result as soon as it returns, before the next
look-up. ``on_error(instant, exc)``, when given, takes an execution's failure instead of the
caller: the plan stays pending and the step ends (as a plan still pending after its execution).
With ``retries`` a failed execution is run again that many times (the execute skeleton rolls the
failed attempt back first), unless its error is one of ``never_retry``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from engines.table.table import HudiTable



class RoundPhase(StrEnum):
    """The phases of a round, as a caller's ``phase`` hook receives them (one per engine call)."""

    SCHEDULE = "schedule"  # the engine plans and saves a new plan
    FIND = "find"  # the earliest pending plan is looked up
    EXECUTE = "execute"  # one plan is executed
    CLEAN = "clean"  # the cleaner runs


PhaseHook = Callable[[RoundPhase], AbstractContextManager[Any]]
OnExecuted = Callable[["MaintenanceResult"], None]
OnError = Callable[[str, Exception], None]


@dataclass
class MaintenanceResult:
    """One table-service run (compaction, clustering, baseline merge, clean, rollback)."""

    kind: str
    instant: str
    duration_s: float
    files_in: int = 0
    files_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records: int = 0
    files_deleted: int = 0
    details: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class TableService(Protocol):
    """The four calls a maintenance round makes on an engine (every engine has them)."""

    def schedule(self) -> str | None:
        """Plan the engine's table service and save the plan; its instant, or None if nothing to do."""
        ...

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        """Execute a pending plan (the earliest when ``instant`` is None) and complete its instant;
        None when there is none."""
        ...

    def clean(self) -> MaintenanceResult | None:
        """Run the cleaner once; None when the engine has no cleaner or it did nothing."""
        ...

    def pending_plan(self) -> str | None:
        """The earliest pending plan's instant (what ``execute()`` without an instant picks), or None."""
        ...


class Runs(StrEnum):
    """Which plans a round executes."""

    NEW = "new"  # the plan the round scheduled, if any (HoodieClusteringJob's scheduleAndExecute)
    NEW_OR_EARLIEST = "new_or_earliest"  # the new plan, else the earliest pending one: one plan at most
    PENDING = "pending"  # no schedule: every pending plan, earliest first (runAnyPendingClustering)
    EARLIEST = "earliest"  # no schedule: the round's ``instant``, else the earliest pending plan (one)


def _no_phase(phase: RoundPhase) -> AbstractContextManager[Any]:
    return nullcontext()


class MaintenanceRound:
    """One round over ``engine``: :meth:`schedule`, :meth:`execute`, :meth:`clean` (module docstring).

    What the round did is kept as it goes: ``scheduled`` (the new plan's instant), ``executed``,
    ``cleaned``, and ``next_plan``: the plan being executed or to execute next, None once step 2
    finished normally (after a failure or an early end it names the plan the step stopped at).
    """

    def __init__(self, engine: TableService, runs: Runs = Runs.NEW, *, phase: PhaseHook | None = None,
                 on_executed: OnExecuted | None = None, on_error: OnError | None = None,
                 instant: str | None = None, retries: int = 0,
                 never_retry: tuple[type[Exception], ...] = ()) -> None:
        if instant is not None and runs is not Runs.EARLIEST:
            raise ValueError(f"a round executes a given instant only with Runs.EARLIEST, not {runs}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        self.engine = engine
        self.runs = runs
        self.instant = instant
        self.retries = retries
        self.never_retry = never_retry
        self._phase = phase or _no_phase
        self._on_executed = on_executed
        self._on_error = on_error
        self.scheduled: str | None = None
        self.next_plan: str | None = None
        self.executed: list[MaintenanceResult] = []
        self.cleaned: MaintenanceResult | None = None
        self._attempted: set[str] = set()

    def schedule(self) -> str | None:
        """Step 1: schedule a new plan (not with ``Runs.PENDING``), then choose the first plan to
        execute (the new one; without one, the earliest pending one unless ``Runs.NEW``). Returns
        the new plan's instant, or None. ``Runs.EARLIEST`` takes the round's ``instant`` when given."""
        if self.runs not in (Runs.PENDING, Runs.EARLIEST):
            with self._phase(RoundPhase.SCHEDULE):
                self.scheduled = self.engine.schedule()
        self.next_plan = self.scheduled
        if self.next_plan is None and self.runs is not Runs.NEW:
            with self._phase(RoundPhase.FIND):
                self.next_plan = plan_to_execute(self.engine, self.instant)
        return self.scheduled

    def execute(self) -> list[MaintenanceResult]:
        """Step 2: execute the chosen plan, and with ``Runs.PENDING`` every plan pending after it,
        earliest first; each result goes to ``on_executed`` at once. Returns the results."""
        while self.next_plan is not None and self.next_plan not in self._attempted:
            instant = self.next_plan
            self._attempted.add(instant)
            try:
                res = self._execute_with_retries(instant)
            except Exception as exc:
                if self._on_error is None:
                    raise
                self._on_error(instant, exc)
                break
            if res is None:
                break
            self.executed.append(res)
            if self._on_executed is not None:
                self._on_executed(res)
            if self.runs is Runs.PENDING:
                with self._phase(RoundPhase.FIND):
                    self.next_plan = self.engine.pending_plan()
            else:
                self.next_plan = None
        return list(self.executed)

    def _execute_with_retries(self, instant: str) -> MaintenanceResult | None:
        for attempt in range(self.retries + 1):
            try:
                with self._phase(RoundPhase.EXECUTE):
                    return self.engine.execute(instant)
            except Exception as exc:
                if attempt == self.retries or isinstance(exc, self.never_retry):
                    raise
        return None  # not reached: the last attempt returns or raises

    def clean(self) -> MaintenanceResult | None:
        """Step 3: run the engine's cleaner once; its result, or None."""
        with self._phase(RoundPhase.CLEAN):
            self.cleaned = self.engine.clean()
        return self.cleaned

    def run(self) -> list[MaintenanceResult]:
        """The three steps in order; every result (the executions, then the clean)."""
        self.schedule()
        self.execute()
        self.clean()
        return self.results

    @property
    def results(self) -> list[MaintenanceResult]:
        """What the round did so far: the executions in order, then the clean if it did anything."""
        return self.executed + ([self.cleaned] if self.cleaned is not None else [])


def execute_pending(engine: TableService, *, phase: PhaseHook | None = None,
                    on_executed: OnExecuted | None = None, on_error: OnError | None = None) -> list[MaintenanceResult]:
    """Execute every pending plan, earliest first, with no schedule and no clean (a round's step 2
    with ``Runs.PENDING``); the results. Hudi's ``runAnyPendingClustering`` /
    ``runAnyPendingCompactions``."""
    rnd = MaintenanceRound(engine, Runs.PENDING, phase=phase, on_executed=on_executed, on_error=on_error)
    rnd.schedule()
    return rnd.execute()


def schedule_if_idle(engine: TableService, phase: PhaseHook | None = None) -> str | None:
    """Schedule a plan only when none is pending (Hudi's semi-async writer); the new instant, or None."""
    phase = phase or _no_phase
    with phase(RoundPhase.FIND):
        if engine.pending_plan() is not None:
            return None
    with phase(RoundPhase.SCHEDULE):
        return engine.schedule()


def earliest_pending(table: HudiTable, actions: Iterable[str]) -> str | None:
    """The earliest pending (requested or inflight) instant of ``actions`` on the table's timeline
    as it is now, or None: what an engine's ``pending_plan`` answers."""
    pending = table.refresh().pending(actions)
    return pending[0].timestamp if pending else None


def plan_to_execute(engine: TableService, instant: str | None) -> str | None:
    """The plan ``engine.execute(instant)`` runs: ``instant`` when given, else the earliest pending
    plan (``pending_plan``), else None. Every engine's ``execute`` resolves its default here."""
    return instant or engine.pending_plan()


class Trigger(StrEnum):
    """What a writer does with its table service after a commit once the service is due."""

    INLINE = "inline"  # schedule and execute in the writer (Hudi's inline clustering / compaction)
    ASYNC = "async"  # schedule only, then wake the async service that executes it


class CleanAt(StrEnum):
    """Where a writer's auto clean runs in its post-commit work."""

    BEFORE = "before"  # first (Hudi's write client: autoCleanOnCommit, then the inline table service)
    AFTER = "after"  # last (the stream's async-clustering writer: schedule, then clean)
    NONE = "none"  # no auto clean here


def after_commit_round(engine: TableService, trigger: Trigger, *, due: Callable[[], bool] | None = None,
                       clean: CleanAt = CleanAt.BEFORE, run_pending_first: bool = False,
                       round_cleans: bool = False, notify: Callable[[], None] | None = None,
                       ) -> list[MaintenanceResult]:
    """A writer's post-commit work, in this order: the auto clean (``clean=BEFORE``); every pending
    plan (``run_pending_first``, inline only: runAnyPendingClustering); when ``due()`` (always
    without it) a :class:`MaintenanceRound` with ``Runs.NEW``: ``INLINE`` schedules and executes its
    plan (and cleans with ``round_cleans``), ``ASYNC`` schedules only and calls ``notify`` when a
    plan was scheduled; the auto clean (``clean=AFTER``). What it executed and cleaned, in order."""
    out: list[MaintenanceResult] = []

    def auto_clean() -> None:
        cleaned = engine.clean()
        if cleaned is not None:
            out.append(cleaned)

    if clean is CleanAt.BEFORE:
        auto_clean()
    if trigger is Trigger.INLINE and run_pending_first:
        out += execute_pending(engine)
    if due is None or due():
        rnd = MaintenanceRound(engine, Runs.NEW)
        scheduled = rnd.schedule()
        if trigger is Trigger.INLINE:
            out += rnd.execute()
            if round_cleans and rnd.clean() is not None:
                out.append(rnd.cleaned)  # type: ignore[arg-type]
        elif scheduled is not None and notify is not None:
            notify()
    if clean is CleanAt.AFTER:
        auto_clean()
    return out
