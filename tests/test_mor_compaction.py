"""MERGE_ON_READ compaction (Hudi's ``HoodieCompactionPlan``, ``compaction.requested`` → ``inflight``
→ ``commit``) and the exclusion rule with clustering, checked against ground truth by key and read
by real readers: hudi-rs in every test, Apache Hudi's Spark datasource in the ``interop`` one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mor_core import Truth, batch, hudi_rs_rows, new_table, rows_of, write_history

from engines.clustering import executor as clustering
from engines.clustering.config import ClusteringConfig
from engines.clustering.mor import execute_merged
from engines.clustering.plan import RequestedReplace
from engines.clustering.planner import SKIPPED_KEY
from engines.files.deltacommit import PendingServiceConflictError, write_deltacommit
from engines.maintenance_round import MaintenanceRound, earliest_pending
from engines.mor_compaction import executor as compaction
from engines.mor_compaction.plan import CompactionOperation, CompactionPlan
from engines.mor_compaction.planner import CompactionConfig, SliceLogs, plan_compaction
from engines.mor_compaction.service import MorCompactionService
from engines.table import faults, plans
from engines.table.avro import COMPACTION_PLAN, decode_plan, encode_plan
from engines.table.instants import InstantClock
from engines.table.mor import read_optimized_read, snapshot_read
from engines.table.rollback import recover
from engines.table.table import HudiTable, TableConfig
from engines.table.timeline import COMMIT, MOR_COMPACTION, REPLACE, State

ROOT = Path(__file__).resolve().parent.parent
FORCE = CompactionConfig()


def latest(truth: Truth) -> list[tuple]:
    return list(truth.at.values())[-1]


def _earliest(table: HudiTable) -> str:
    """The earliest pending compaction (what the service's ``execute()`` picks)."""
    instant = earliest_pending(table, (MOR_COMPACTION,))
    assert instant is not None
    return instant


def files_of(table: HudiTable) -> dict[str, bytes]:
    return {e.path: table.storage.read_bytes(e.path) for e in table.storage.list("", recursive=True)}


# -- the pure planner -------------------------------------------------------------------------
def test_planner_takes_every_slice_with_logs_and_names_what_it_skips() -> None:
    slices = [SliceLogs("p", f"f{i}", "1", f"f{i}_0-0-0_1.parquet", 100, tuple(f".f{i}_1.log.{v}_0-0-0"
                                                                                for v in range(1, i + 1)), 10 * i)
              for i in range(5)]
    plan = plan_compaction(slices, FORCE, pending_clustering={("p", "f2"): "7"}, replaced={("p", "f3"): "8"})
    assert [op.file_id for op in plan.operations] == ["f1", "f4"]  # f0 has no logs
    assert [(s.file_id, s.reason, s.instant) for s in plan.skipped] == [("f2", "pending_clustering", "7"),
                                                                       ("f3", "replaced", "8")]
    thresholds = plan_compaction(slices, CompactionConfig(min_log_files=3))
    assert [op.file_id for op in thresholds.operations] == ["f3", "f4"]
    assert plan_compaction(slices[:1], FORCE) is None
    record = decode_plan(COMPACTION_PLAN, encode_plan(COMPACTION_PLAN, plan.to_avro()), "mem")
    again = CompactionPlan.from_avro(record)
    assert again.operations == plan.operations and again.skipped == plan.skipped
    assert json.loads(record["extraMetadata"][SKIPPED_KEY])[0] == ["p", "f2", "pending_clustering", "7"]


# -- compaction on a real table ---------------------------------------------------------------------
@pytest.fixture()
def history(tmp_path) -> tuple[HudiTable, Truth]:
    table = new_table(tmp_path)
    return table, write_history(table)


def test_compaction_schedules_every_n_deltacommits(tmp_path) -> None:
    table = new_table(tmp_path)
    write_deltacommit(table, batch(list(range(6)), 1, "a"))
    for n in range(2, 5):
        write_deltacommit(table, batch([0, 1], n, "u"))
        assert compaction.schedule(table, CompactionConfig(max_delta_commits=5)) is None  # n deltacommits
    write_deltacommit(table, batch([2], 5, "u"))  # the fifth
    assert compaction.schedule(table, CompactionConfig(max_delta_commits=5)) is not None


def test_compaction_merges_logs_and_real_readers_agree(history) -> None:
    table, truth = history
    before = dict(truth.at)
    groups_with_logs = {s.file_group for s in table.view().merge_slices() if s.logs}
    ts = compaction.schedule(table, CompactionConfig(max_delta_commits=5))
    timeline = table.refresh()
    assert timeline.get(ts) == timeline.pending()[0] and timeline.get(ts).action == MOR_COMPACTION
    assert (Path(table.base_uri) / ".hoodie" / f"{ts}.compaction.requested").exists()
    plan = compaction.load_plan(table, ts)
    assert set(plan.file_groups) == groups_with_logs and not plan.skipped
    # pending: readers see the table as before, and the cleaner keeps the plan's inputs
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)
    protected = plans.pending_paths(table.refresh())
    assert all(op.path(name) in protected for op in plan.operations for name in op.log_files)
    result = compaction.execute(table, _earliest(table))
    assert result.instant == ts and result.operations == len(groups_with_logs)
    timeline = table.refresh()
    assert timeline.get(ts).is_completed and timeline.file_name(timeline.get(ts)) == f"{ts}.commit"
    assert json.loads(timeline.read(timeline.get(ts)))["operationType"] == "COMPACT"
    assert all(not s.logs and s.base_instant == ts for s in table.view().merge_slices() if s.file_group in groups_with_logs)
    expected = latest(truth)
    assert rows_of(snapshot_read(table).rows) == expected == rows_of(read_optimized_read(table).rows)
    assert hudi_rs_rows(table.base_uri) == expected == hudi_rs_rows(table.base_uri, read_optimized=True)
    assert hudi_rs_rows(table.base_uri, ts) == expected
    for instant, rows in before.items():  # time travel to before the compaction
        assert rows_of(snapshot_read(table, instant).rows) == rows == hudi_rs_rows(table.base_uri, instant), instant
    # the next deltacommit's logs belong to the new slice
    upserts = batch([0, 2, 4], 9, "after")
    truth.apply(write_deltacommit(table, upserts).instant, upserts)
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)


def test_a_deltacommit_on_a_group_under_pending_compaction_is_refused(history) -> None:
    table, truth = history
    compaction.schedule(table, FORCE, force=True)
    before = files_of(table)
    with pytest.raises(PendingServiceConflictError, match="pending compaction or clustering.*Nothing was written"):
        write_deltacommit(table, batch([0], 9, "x"))
    assert files_of(table) == before
    upserts = batch([50], 9, "new")  # an insert: a new file group, never refused
    truth.apply(write_deltacommit(table, upserts).instant, upserts)
    compaction.execute(table, _earliest(table))
    assert rows_of(snapshot_read(table).rows) == latest(truth)


def test_a_compaction_plan_naming_a_replaced_group_is_refused(history) -> None:
    table, truth = history
    slices = {s.file_group: s for s in table.view().merge_slices()}
    ts = clustering.schedule(table, ClusteringConfig())
    execute_merged(table, ts)
    replaced = sorted(table.refresh().replaced_file_groups())[0]
    s = slices[replaced]
    op = CompactionOperation(s.partition, s.file_id, s.base_instant, s.base.path.rsplit("/", 1)[-1],
                             tuple(log.path.rsplit("/", 1)[-1] for log in s.logs))
    timeline = table.refresh()
    bad = table.clock.next(timeline.last_timestamp())
    timeline.create_requested(bad, MOR_COMPACTION, encode_plan(COMPACTION_PLAN, CompactionPlan([op]).to_avro()))
    before = files_of(table)
    with pytest.raises(compaction.CompactionPlanError, match=f"file group {s.file_id} of partition "
                                                             f"'{s.partition}', which replacecommit {ts} replaced"):
        compaction.execute(table, bad)
    assert files_of(table) == before
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)


# -- the exclusion rule ---------------------------------------------------------------------------
def _random_table(tmp_path: Path, name: str, writes: list[tuple[list[int], list[int]]]) -> tuple[HudiTable, Truth]:
    table = new_table(tmp_path, name)
    truth = Truth()
    first = batch(list(range(12)), 1, "a")
    truth.apply(write_deltacommit(table, first).instant, first)
    for n, (ids, deleted) in enumerate(writes, start=2):
        # upserts, then deletes as a write of their own (Hudi's upsert and delete are two operations)
        if ids:
            upserts = batch(ids, n, f"w{n}-")
            truth.apply(write_deltacommit(table, upserts).instant, upserts)
        if deleted:
            deletes = [(f"k{i:03d}", f"2026-01-0{1 + i % 3}") for i in deleted]
            truth.apply(write_deltacommit(table, None, deletes, operation="delete").instant, None, deletes)
    return table, truth


_WRITES = st.lists(st.tuples(st.lists(st.integers(0, 15), max_size=5, unique=True),
                             st.lists(st.integers(0, 11), max_size=2, unique=True)), min_size=1, max_size=3)


_PARTITIONS = ["dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-03"]


@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writes=_WRITES, compaction_first=st.booleans(), execute_first=st.booleans(),
       clustered=st.sets(st.sampled_from(_PARTITIONS), min_size=1))
def test_no_group_is_in_both_plans_and_no_update_is_lost(tmp_path, writes, compaction_first, execute_first,
                                                         clustered) -> None:
    """Both services scheduled in either order (clustering over some partitions), executed in either
    order, then each once more after new updates: no group in both plans, the second plan names the
    groups it skipped, and every reader sees the ground truth by key."""
    table, truth = _random_table(Path(tempfile.mkdtemp(dir=tmp_path)), "t", writes)
    config = ClusteringConfig(partitions=tuple(sorted(clustered)))
    with_logs = {s.file_group for s in table.view().merge_slices() if s.logs}
    steps = [("compaction", lambda: compaction.schedule(table, FORCE, force=True)),
             ("clustering", lambda: clustering.schedule(table, config))]
    scheduled = {name: run() for name, run in (steps if compaction_first else steps[::-1])}
    compacting = set(compaction.load_plan(table, scheduled["compaction"]).file_groups) if scheduled["compaction"] else set()
    clustering_plan = clustering.load_plan(table, scheduled["clustering"]) if scheduled["clustering"] else None
    clustered_groups = clustering_plan.file_groups if clustering_plan else set()
    assert not compacting & clustered_groups
    if compaction_first:
        assert compacting == with_logs
        if clustering_plan is not None:
            skipped = {(p, f) for p, f, why, at in json.loads(clustering_plan.extra_metadata.get(SKIPPED_KEY, "[]"))
                       if why == "pending_compaction" and at == scheduled["compaction"]}
            assert skipped == {g for g in compacting if g[0] in clustered}
    else:
        assert compacting == with_logs - clustered_groups
        if scheduled["compaction"]:
            plan = compaction.load_plan(table, scheduled["compaction"])
            assert {s.file_group for s in plan.skipped} == with_logs & clustered_groups
            assert {s.instant for s in plan.skipped} <= {scheduled["clustering"]}
    runs = [("compaction", lambda ts: compaction.execute(table, ts)), ("clustering", lambda ts: execute_merged(table, ts))]
    for name, run in runs if execute_first else runs[::-1]:
        if scheduled[name]:
            run(scheduled[name])
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)
    # and again: the other service over the result keeps every update
    more = batch([0, 1, 2, 3], 20, "late")
    truth.apply(write_deltacommit(table, more).instant, more)
    if (ts := compaction.schedule(table, FORCE, force=True)) is not None:
        compaction.execute(table, ts)
    if (ts := clustering.schedule(table, config)) is not None:
        execute_merged(table, ts)
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)


def test_clustering_scheduled_second_skips_compacting_groups_and_says_so(history) -> None:
    table, truth = history
    ts = compaction.schedule(table, FORCE, force=True)
    held = set(compaction.load_plan(table, ts).file_groups)
    cts = clustering.schedule(table, ClusteringConfig())
    plan = clustering.load_plan(table, cts)
    assert not plan.file_groups & held
    assert {(p, f) for p, f, why, at in json.loads(plan.extra_metadata[SKIPPED_KEY])} == held
    assert {at for *_, at in json.loads(plan.extra_metadata[SKIPPED_KEY])} == {ts}
    requested = RequestedReplace.from_avro(plans.load_plan(table.refresh(), cts, REPLACE))
    assert requested.plan.file_groups == plan.file_groups


# -- crashes ----------------------------------------------------------------------------------------
_CHILD = """
import sys
from engines.mor_compaction import executor
from engines.table.instants import InstantClock
from engines.table.table import HudiTable, TableConfig
from engines.maintenance_round import earliest_pending
table = HudiTable.open(sys.argv[1])
executor.execute(table, earliest_pending(table, ("compaction",)))
"""


@pytest.mark.parametrize("point", [p for p in faults.POINTS["mor_compaction"] if p != "compaction.after_plan_saved"])
def test_a_killed_compaction_loses_and_duplicates_nothing(history, point) -> None:
    """A real SIGKILL of a process executing the plan at each step; recovery, then the plan again."""
    table, truth = history
    ts = compaction.schedule(table, FORCE, force=True)
    env = {**os.environ, faults.ENV: point, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", _CHILD, table.base_uri], env=env, cwd=ROOT, capture_output=True)
    assert child.returncode == -9, child.stderr.decode()[-2000:]
    expected = latest(truth)
    got = rows_of(snapshot_read(table).rows)
    assert got == expected == hudi_rs_rows(table.base_uri)  # killed anywhere: the snapshot is a committed one
    recover(table)
    state = table.refresh().get(ts)
    assert state.is_completed == (point == "compaction.after_commit")
    if not state.is_completed:
        assert state.state == State.REQUESTED  # the plan kept, its partial base files gone
        assert not [b for b in table.view().base_files if b.instant == ts]
        compaction.execute(table, _earliest(table))
    assert table.refresh().get(ts).is_completed
    keys = [r[0] for r in rows_of(snapshot_read(table).rows)]
    assert len(keys) == len(set(keys)) and rows_of(snapshot_read(table).rows) == expected
    assert rows_of(read_optimized_read(table).rows) == expected == hudi_rs_rows(table.base_uri)


def test_execute_rolls_back_an_inflight_attempt_first(history) -> None:
    table, truth = history

    def crash(name: str) -> None:
        if name == "compaction.after_group_written":
            raise RuntimeError("stop")

    compaction.schedule(table, FORCE, force=True)
    with pytest.raises(RuntimeError, match="stop"):
        compaction.execute(table, _earliest(table), on_step=crash)
    assert table.refresh().pending([MOR_COMPACTION])[0].state == State.INFLIGHT
    result = compaction.execute(table, _earliest(table))
    assert result.rolled_back_first and rows_of(snapshot_read(table).rows) == latest(truth)
    assert [i.action for i in table.refresh().completed()][-2:] in ([MOR_COMPACTION, "rollback"],
                                                                    ["rollback", MOR_COMPACTION])


# -- Apache Hudi ------------------------------------------------------------------------------------
@pytest.mark.interop
def test_apache_hudi_reads_our_compacted_table(spark, tmp_path) -> None:
    """Snapshot with a pending compaction plan (Hudi's view decodes it), then after the compaction:
    snapshot, read-optimized (equal to snapshot), time travel before and after; then after a
    clustering over the compacted table with new logs.

    The table's instants come from the wall clock, as a Hudi writer's do: Apache Hudi 1.2 reading a
    table version 6 takes an instant's completion time from its state file's modification time and
    files a log under the newest slice whose base instant is not after the completion of the
    instant its name carries, so with instants in the past (the benchmarks' logical clock) it files
    the pre-compaction logs under the compacted slice and time travel before the compaction misses
    them. hudi-rs files them by name."""
    table = HudiTable.create(str(tmp_path / "wall"), TableConfig("wall", "dt", "trace_id", table_type="MERGE_ON_READ",
                                                                   ordering_field="ts"), clock=InstantClock())
    truth = write_history(table)
    cols = ["trace_id", "dt", "ts", "v"]

    def read(**opts: str) -> list[tuple]:
        import pyarrow as pa

        df = spark.read.format("hudi").options(**opts).load(table.base_uri)
        return rows_of(pa.Table.from_pylist([r.asDict() for r in df.select(*cols).collect()]))

    before = dict(truth.at)
    ts = compaction.schedule(table, FORCE, force=True)
    assert read() == latest(truth)
    compaction.execute(table, ts)
    expected = latest(truth)
    assert read() == expected == read(**{"hoodie.datasource.query.type": "read_optimized"})
    assert read(**{"as.of.instant": ts}) == expected
    for instant, rows in before.items():
        assert read(**{"as.of.instant": instant}) == rows, instant
    upserts = batch([0, 3, 7], 9, "after")
    truth.apply(write_deltacommit(table, upserts).instant, upserts)
    cts = clustering.schedule(table, ClusteringConfig())
    execute_merged(table, cts)
    assert read() == latest(truth) == hudi_rs_rows(table.base_uri)
    assert table.refresh().get(cts).is_completed
    assert table.refresh().file_name(table.refresh().get(ts)) == f"{ts}.{COMMIT}"


def test_one_maintenance_round_schedules_executes_and_cleans(history) -> None:
    table, truth = history
    old_logs = {log.path for log in table.view().log_files}
    service = MorCompactionService(table, CompactionConfig(max_delta_commits=5), commits_retained=1)
    results = MaintenanceRound(service).run()
    # the compaction is the latest instant: its old slices still serve a reader just before it
    assert [r.kind for r in results] == ["compaction"] and service.pending_plan() is None
    assert results[0].details["log_files_merged"] == len(old_logs)
    upserts = batch([40, 41], 9, "new")  # new keys: new file groups
    truth.apply(write_deltacommit(table, upserts).instant, upserts)
    assert MaintenanceRound(service).run()[0].kind == "clean"  # not due (one deltacommit): cleans only
    assert not any(table.storage.exists(p) for p in old_logs)
    assert rows_of(snapshot_read(table).rows) == latest(truth) == hudi_rs_rows(table.base_uri)
