"""The one maintenance round (engines.maintenance_round) against a real table, without Spark.

The engine below merges each partition's live base files into one new file group: its plans are
real ``basefilecompaction`` plans on a real timeline, executed through the one execute skeleton
(engines.service_executor) and cleaned by the real cleaner. Only the rewrite is bytes instead of
Parquet, so no Spark is needed. It logs every call a round makes, in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest
from test_table_core import commit_files, make_table

from engines.append_compaction.plan import BaseFileCompactionOperation, BaseFileCompactionPlan
from engines.base import MaintenanceResult, TableEngine, clean_result
from engines.maintenance_round import (
    CleanAt,
    MaintenanceRound,
    RoundPhase,
    Runs,
    TableService,
    Trigger,
    after_commit_round,
    earliest_pending,
    execute_pending,
    schedule_if_idle,
)
from engines.service_executor import Committed, MissingPlanInputError, PlanExecutor, ServicePoints
from engines.table import plans
from engines.table.cleaner import run_clean
from engines.table.metadata import CommitMetadata
from engines.table.model import WriteStat, base_file_name, parse_base_file_name
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, Instant, State


class FileMergeEngine(TableEngine, PlanExecutor):
    """Merges each partition's unplanned live files (two or more) into one new file group."""

    service_kind = "merge"
    action = COMPACTION
    points = ServicePoints(after_inflight="option1.after_inflight", after_rewrite="option1.after_new_files_written")

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self.name = "merge"
        self.on_step = None
        self._mutex = threading.RLock()
        self.log: list[str] = []

    # -- the four calls of a round --------------------------------------------------------------
    def schedule(self) -> str | None:
        self.log.append("schedule")
        with self.table.lock:
            view = self.table.view()
            planned = plans.pending_paths(view.timeline, (COMPACTION,))
            by_partition: dict[str, list[str]] = {}
            for s in view.snapshot():
                if s.path not in planned:
                    by_partition.setdefault(s.partition, []).append(s.path)
            ops = tuple(BaseFileCompactionOperation(tuple(sorted(paths)), partition)
                        for partition, paths in sorted(by_partition.items()) if len(paths) >= 2)
            if not ops:
                return None
            timeline = self.table.refresh()
            ts = self.table.clock.next(timeline.last_timestamp())
            timeline.create_requested(ts, COMPACTION, BaseFileCompactionPlan(ops).encode())
        return ts

    def pending_plan(self) -> str | None:
        self.log.append("find")
        return earliest_pending(self.table, (COMPACTION,))

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        self.log.append(f"execute {instant}")
        return super().execute(instant)

    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        return self.execute_plan(instant)

    def clean(self) -> MaintenanceResult | None:
        self.log.append("clean")
        return clean_result(run_clean(self.table, retained=1))

    # -- the parts of the execute skeleton ------------------------------------------------------
    @property
    def max_parallel(self) -> int:
        return 1

    def load_plan(self, instant: str) -> BaseFileCompactionPlan:
        return BaseFileCompactionPlan.from_avro(plans.load_plan(self.table.refresh(), instant, COMPACTION))

    def plan_inputs(self, plan: BaseFileCompactionPlan) -> list[str]:
        return plan.file_paths

    def plan_units(self, plan: BaseFileCompactionPlan) -> tuple[BaseFileCompactionOperation, ...]:
        return plan.operations

    def bytes_read(self, plan: BaseFileCompactionPlan) -> int:
        return sum(self.table.storage.size(p) for p in plan.file_paths)

    def rewrite_unit(self, plan: BaseFileCompactionPlan, instant: str, index: int,
                     unit: BaseFileCompactionOperation) -> list[WriteStat]:
        data = b"".join(self.table.storage.read_bytes(p) for p in unit.base_file_paths)
        file_id = f"merged{instant}-{index}"
        rel = f"{unit.partition_path}/{base_file_name(file_id, '0-0-0', instant)}"
        self.table.storage.write_atomic(rel, data)
        return [WriteStat(file_id, unit.partition_path, rel, num_writes=len(unit.base_file_paths), file_size=len(data))]

    def commit(self, plan: BaseFileCompactionPlan, inflight: Instant, stats: list[WriteStat]) -> Committed:
        replaced = {op.partition_path: [parse_base_file_name(p.rsplit("/", 1)[-1])[0] for p in op.base_file_paths]
                    for op in plan.operations}
        self.table.complete(inflight, CommitMetadata("COMPACT", stats, replaced_file_ids=replaced), replace=True)
        return Committed()


def table_with(tmp_path, files: list[list[tuple[str, str]]]) -> HudiTable:
    """A table with one ingest commit per list of (partition, fileId)."""
    table = make_table(tmp_path)
    for commit in files:
        commit_files(table, commit)
    return table


def phases_of(log: list[str]) -> Callable[[RoundPhase], AbstractContextManager[None]]:
    """A ``phase`` hook that logs each phase's start into ``log``."""
    @contextmanager
    def phase(name: RoundPhase) -> Iterator[None]:
        log.append(f"<{name}>")
        yield

    return phase


def test_every_engine_is_a_table_service(tmp_path) -> None:
    assert isinstance(FileMergeEngine(make_table(tmp_path)), TableService)


def test_a_round_schedules_then_executes_the_new_plan_then_cleans(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")], [("dt=b", "b1")]])
    engine = FileMergeEngine(table)
    rnd = MaintenanceRound(engine, phase=phases_of(engine.log),
                           on_executed=lambda res: engine.log.append(f"recorded {res.instant}"))
    results = rnd.run()

    plan = rnd.scheduled
    assert plan is not None and table.refresh().get(plan).state == State.COMPLETED
    # each engine call inside its phase; the execution recorded before the cleaner runs
    assert engine.log == ["<schedule>", "schedule", "<execute>", f"execute {plan}", f"recorded {plan}",
                          "<clean>", "clean"]
    merged = results[0]
    assert (merged.kind, merged.instant, merged.files_in, merged.files_out) == ("merge", plan, 2, 1)
    assert results == rnd.executed == [merged] and rnd.cleaned is None  # the inputs are still retained
    assert rnd.next_plan is None
    # the merged partition holds one file; dt=b (one file) was not planned
    assert sorted((s.partition, s.file_id) for s in table.view().snapshot()) == [
        ("dt=a", f"merged{plan}-0"), ("dt=b", "b1")]


def test_the_next_rounds_cleaner_deletes_the_merged_inputs(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    inputs = sorted(s.path for s in table.view().snapshot())
    first = MaintenanceRound(engine)
    first.run()
    commit_files(table, [("dt=b", "b1")])  # the merge's inputs leave the retained window
    engine.log.clear()
    second = MaintenanceRound(engine)
    results = second.run()
    assert engine.log == ["schedule", "clean"]  # nothing new to merge; the cleaner still runs
    assert [(r.kind, r.files_deleted) for r in results] == [("clean", 2)] and second.cleaned is results[0]
    assert not any(table.storage.exists(p) for p in inputs)
    assert [s.file_id for s in table.view().snapshot()] == [f"merged{first.scheduled}-0", "b1"]


def test_execute_pending_runs_every_plan_earliest_first(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    t1 = engine.schedule()  # dt=a's files are now planned
    commit_files(table, [("dt=b", "b1")])
    commit_files(table, [("dt=b", "b2")])
    t2 = engine.schedule()  # dt=b's
    assert t1 is not None and t2 is not None and t1 < t2
    assert earliest_pending(table, (COMPACTION,)) == t1
    engine.log.clear()

    results = execute_pending(engine)
    assert [r.instant for r in results] == [t1, t2]
    assert engine.log == ["find", f"execute {t1}", "find", f"execute {t2}", "find"]
    assert earliest_pending(table, (COMPACTION,)) is None


def test_new_or_earliest_executes_one_plan_the_earliest_when_none_is_new(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1"), ("dt=b", "b1")], [("dt=a", "a2"), ("dt=b", "b2")]])
    engine = FileMergeEngine(table)
    first = engine.schedule()  # plans both partitions: nothing is left to schedule
    assert first is not None
    engine.log.clear()

    rnd = MaintenanceRound(engine, Runs.NEW_OR_EARLIEST)
    rnd.run()
    assert rnd.scheduled is None and [r.instant for r in rnd.executed] == [first]
    assert engine.log == ["schedule", "find", f"execute {first}", "clean"]


def test_new_ignores_a_pending_plan_when_it_schedules_nothing(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    pending = engine.schedule()
    engine.log.clear()
    rnd = MaintenanceRound(engine, Runs.NEW)
    assert rnd.run() == [] and rnd.next_plan is None
    assert engine.log == ["schedule", "clean"]
    assert earliest_pending(table, (COMPACTION,)) == pending


def test_nothing_to_do(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1"), ("dt=b", "b1")]])  # one file per partition: no plan
    engine = FileMergeEngine(table)
    for runs in Runs:
        engine.log.clear()
        rnd = MaintenanceRound(engine, runs)
        assert rnd.run() == [] and rnd.scheduled is None and rnd.next_plan is None
        assert engine.log == {Runs.NEW: ["schedule", "clean"], Runs.NEW_OR_EARLIEST: ["schedule", "find", "clean"],
                              Runs.PENDING: ["find", "clean"], Runs.EARLIEST: ["find", "clean"]}[runs]
    engine.log.clear()
    assert execute_pending(engine) == [] and engine.log == ["find"]
    assert [i.action for i in table.refresh().instants] == ["commit"]  # no instant written


def test_schedule_if_idle_schedules_only_without_a_pending_plan(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")], [("dt=b", "b1"), ("dt=b", "b2")]])
    engine = FileMergeEngine(table)
    engine.log.clear()
    first = schedule_if_idle(engine)
    assert first is not None and engine.log == ["find", "schedule"]
    engine.log.clear()
    assert schedule_if_idle(engine) is None and engine.log == ["find"]  # a plan is pending: no schedule


def test_a_failed_execution_names_its_plan_and_leaves_it_pending(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    plan = engine.schedule()
    table.storage.delete(engine.load_plan(plan).file_paths[0])
    rnd = MaintenanceRound(engine, Runs.PENDING)
    rnd.schedule()
    with pytest.raises(MissingPlanInputError):
        rnd.execute()
    assert rnd.next_plan == plan and rnd.executed == [] and rnd.cleaned is None
    assert earliest_pending(table, (COMPACTION,)) == plan


def test_earliest_executes_one_pending_plan_or_the_given_one_and_never_schedules(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    t1 = engine.schedule()
    commit_files(table, [("dt=b", "b1")])
    commit_files(table, [("dt=b", "b2")])
    t2 = engine.schedule()
    engine.log.clear()
    given = MaintenanceRound(engine, Runs.EARLIEST, instant=t2)
    given.run()
    assert [r.instant for r in given.executed] == [t2] and engine.log == [f"execute {t2}", "clean"]
    engine.log.clear()
    earliest = MaintenanceRound(engine, Runs.EARLIEST)
    earliest.run()
    assert [r.instant for r in earliest.executed] == [t1] and engine.log == ["find", f"execute {t1}", "clean"]
    with pytest.raises(ValueError, match="only with Runs.EARLIEST"):
        MaintenanceRound(engine, Runs.NEW, instant=t1)


def _failing_once(engine: FileMergeEngine, error: type[Exception]) -> list[str]:
    """Make the engine's next execution fail once, right after its plan went inflight."""
    failures: list[str] = []

    def step(name: str) -> None:
        if name == engine.points.after_inflight and not failures:
            failures.append(name)
            raise error("killed after inflight")

    engine.on_step = step
    return failures


def test_retries_run_a_failed_execution_again_after_rolling_it_back(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    failures = _failing_once(engine, RuntimeError)
    rnd = MaintenanceRound(engine, retries=1)
    rnd.run()
    plan = rnd.scheduled
    assert failures and [r.instant for r in rnd.executed] == [plan]
    assert rnd.executed[0].details["rolled_back_attempt"] is not None
    assert table.refresh().get(plan).is_completed


def test_never_retry_and_on_error_end_the_step_with_the_plan_pending(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    _failing_once(engine, KeyError)
    errors: list[tuple[str, str]] = []
    rnd = MaintenanceRound(engine, Runs.NEW, retries=3, never_retry=(KeyError,),
                           on_error=lambda instant, exc: errors.append((instant, type(exc).__name__)))
    rnd.run()
    assert errors == [(rnd.scheduled, "KeyError")] and rnd.executed == []
    assert earliest_pending(table, (COMPACTION,)) == rnd.scheduled and rnd.next_plan == rnd.scheduled


def test_after_commit_round_orders_the_writers_post_commit_work(tmp_path) -> None:
    table = table_with(tmp_path, [[("dt=a", "a1")], [("dt=a", "a2")]])
    engine = FileMergeEngine(table)
    pending = engine.schedule()
    commit_files(table, [("dt=b", "b1")])
    commit_files(table, [("dt=b", "b2")])
    engine.log.clear()
    out = after_commit_round(engine, Trigger.INLINE, run_pending_first=True, round_cleans=True)
    new = [r.instant for r in out if r.kind == "merge"]
    assert new[0] == pending and len(new) == 2
    assert engine.log == ["clean", "find", f"execute {pending}", "find", "schedule", f"execute {new[1]}", "clean"]

    commit_files(table, [("dt=c", "c1")])
    commit_files(table, [("dt=c", "c2")])
    engine.log.clear()
    woken: list[str] = []
    out = after_commit_round(engine, Trigger.ASYNC, clean=CleanAt.AFTER, notify=lambda: woken.append("woken"))
    assert [r.kind for r in out] == ["clean"]  # the merged dt=a and dt=b inputs left the retained window
    assert engine.log == ["schedule", "clean"] and woken == ["woken"]
    assert earliest_pending(table, (COMPACTION,)) is not None  # scheduled, left to the async service
    engine.log.clear()
    assert after_commit_round(engine, Trigger.INLINE, due=lambda: False, clean=CleanAt.NONE) == []
    assert engine.log == []
