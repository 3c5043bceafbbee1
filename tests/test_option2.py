"""Option 2: clustering with snapshot isolation, update conflicts, cleaner, rollback, orderings."""

from __future__ import annotations

import threading

import pytest
from engine_helpers import hudi_keys, ingest, keys, new_table, spec, truth_keys

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, ClusteringUpdateConflictError, Option2Config
from engines.spark.reader import read_snapshot
from engines.table.timeline import REPLACE, State
from workloads.generator import batch_df, batch_updates_df


def engine(path, **kw) -> ClusteringEngine:
    ccfg = kw.pop("clustering", ClusteringConfig(small_file_limit=1 << 30, target_file_size=1 << 30))
    return ClusteringEngine(new_table(path), Option2Config(clustering=ccfg, **kw))


def test_inline_mode_clusters_on_third_commit_into_two_even_files(spark, tmp_path) -> None:
    """The article's inline plan scaled down: batches of 96/213/182 units, target 300 units ->
    clustering on the third commit; 491 units in two ~245-unit files (not 300 + 191)."""
    unit_rows = 20
    sizes = [96, 213, 182]
    ws = spec(num_partitions=1, num_batches=3, batch_records=1)
    probe = new_table(tmp_path / "probe")
    from engines.spark.insert import insert_new_file_groups

    per_row = insert_new_file_groups(probe, batch_df(spark, ws.model_copy(update={"batch_records": 2000}), 0)
                                     ).bytes_written / 2000
    unit = unit_rows * per_row
    e = engine(tmp_path / "t", mode="inline", inline_max_commits=3,
               clustering=ClusteringConfig(small_file_limit=int(400 * unit), target_file_size=int(300 * unit),
                                           max_bytes_per_group=int(2000 * unit)))
    done = []
    for i, n in enumerate(sizes):
        e.ingest(batch_df(spark, ws.model_copy(update={"batch_records": n * unit_rows}), i))
        done.append([r.kind for r in e.after_commit()])
    assert done[0] == [] and done[1] == [] and "clustering" in done[2]
    snap = e.snapshot()
    assert len(snap) == 2
    a, b = sorted(s.size_bytes for s in snap)
    assert b <= a * 1.10 and b < 300 * unit
    replace = e.table.refresh().completed([REPLACE])
    assert len(replace) == 1
    assert keys(e.table) == hudi_keys(e.table) and len(keys(e.table)) == sum(sizes) * unit_rows


def test_snapshot_isolation_with_concurrent_readers(spark, tmp_path) -> None:
    ws = spec(num_batches=6)
    e = engine(tmp_path / "t", cleaner_commits_retained=2)
    ingest(spark, e, ws, range(6))
    expected = len(truth_keys(ws, 5))
    outcomes: list[object] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                outcomes.append(read_snapshot(spark, e.table.storage, e.snapshot()).df.count())
            except Exception as exc:  # noqa: BLE001
                outcomes.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    instant = e.schedule()
    assert hudi_keys(e.table) == truth_keys(ws, 5)  # pending plan: nothing changes
    e.execute(instant)
    assert hudi_keys(e.table) == truth_keys(ws, 5)
    ingest(spark, e, ws.model_copy(update={"num_batches": 9}), range(6, 8))  # push replaced FGs out of the window
    cleaned = e.clean()
    stop.set()
    for t in threads:
        t.join()
    assert cleaned is not None and cleaned.files_deleted > 0
    assert outcomes and all(o == expected or o > expected for o in outcomes), [o for o in outcomes if o != expected][:3]
    assert all(not isinstance(o, Exception) for o in outcomes)
    assert keys(e.table) == hudi_keys(e.table)


def test_time_travel_to_retained_instant_and_cleaner_window(spark, tmp_path) -> None:
    ws = spec(num_batches=6)
    e = engine(tmp_path / "t", cleaner_commits_retained=3)
    ingest(spark, e, ws, range(3))
    c3 = e.table.refresh().completed()[-1].timestamp
    e.execute(e.schedule())
    assert e.clean() is None  # the replaced file groups are still inside the retained window
    assert keys(e.table, e.table.view().snapshot(as_of=c3)) == truth_keys(ws, 2) == hudi_keys(e.table, c3)
    ingest(spark, e, ws, range(3, 5))
    assert e.clean() is None  # R plus 2 commits: R is still the earliest retained instant
    ingest(spark, e, ws, range(5, 6))  # 3 completed commits after R: its replaced groups leave the window
    physical_before = len(e.table.view().base_files)
    res = e.clean()
    assert res is not None and len(e.table.view().base_files) == physical_before - res.files_deleted
    assert keys(e.table) == truth_keys(ws, 5)


def test_update_conflict_rejected_insert_proceeds(spark, tmp_path) -> None:
    ws = spec(num_batches=4, corrections_fraction=0.05)
    e = engine(tmp_path / "t")
    ingest(spark, e, ws, range(3))
    instant = e.schedule()
    listing = sorted((x.path, x.size) for x in e.table.storage.list("", recursive=True))
    with pytest.raises(ClusteringUpdateConflictError, match=instant):
        e.upsert(batch_updates_df(spark, ws, 3))
    assert sorted((x.path, x.size) for x in e.table.storage.list("", recursive=True)) == listing
    e.ingest(batch_df(spark, ws, 3))  # a pure insert in the same window
    e.execute(instant)
    res = e.upsert(batch_updates_df(spark, ws, 3))  # after clustering the update goes through
    assert res.operation == "UPSERT" and len(keys(e.table)) == len(truth_keys(ws, 3))


def test_killed_clustering_is_rolled_back_and_rerun(spark, tmp_path) -> None:
    ws = spec(num_batches=4)

    class Boom(RuntimeError):
        pass

    def fail_after_group(step: str) -> None:
        if step == "clustering.after_group_written":
            raise Boom(step)

    e = engine(tmp_path / "t", clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=1 << 30,
                                                           max_bytes_per_group=400_000))
    ingest(spark, e, ws, range(4))
    instant = e.schedule()
    e.on_step = fail_after_group
    with pytest.raises(Boom):
        e.execute(instant)
    assert e.table.refresh().get(instant).state == State.INFLIGHT
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)  # partial output invisible
    e.on_step = None
    assert e.rollback_inflight() == [instant]
    assert e.table.refresh().get(instant).state == State.REQUESTED  # plan kept
    e.execute(instant)
    assert keys(e.table) == truth_keys(ws, 3)


@pytest.mark.parametrize("ordering", ["linear", "zorder", "hilbert"])
def test_sorted_clustering_orderings_keep_rows(spark, tmp_path, ordering) -> None:
    ws = spec(num_batches=3)
    e = engine(tmp_path / "t", ordering=ordering, bloom_filter=False,  # a 300 KB target: data bytes only
               clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=300_000,
                                           sort_columns=("service", "ts"), grouping="size"))
    ingest(spark, e, ws, range(3))
    e.execute(e.schedule())
    assert keys(e.table) == truth_keys(ws, 2)
    snap = e.snapshot()
    if ordering == "linear":  # range-partitioned outputs: disjoint service ranges except at boundaries
        for p in {s.partition for s in snap}:
            ranges = sorted(s.column_stats["service"] for s in snap if s.partition == p)
            assert all(ranges[i][1] <= ranges[i + 1][0] for i in range(len(ranges) - 1))


def _units(spark, tmp_path) -> tuple[float, object]:
    from engines.spark.insert import insert_new_file_groups

    ws = spec(num_partitions=1, num_batches=3, batch_records=2000)
    per_row = insert_new_file_groups(new_table(tmp_path / "probe"), batch_df(spark, ws, 0)).bytes_written / 2000
    return 20 * per_row, ws


def test_async_plan_requested_then_two_even_files(spark, tmp_path) -> None:
    """The article's async plan scaled down: schedule leaves a requested replacecommit; execute
    turns 96+213+182 units into two even files under a 300-unit target."""
    unit, ws = _units(spark, tmp_path)
    e = engine(tmp_path / "t", clustering=ClusteringConfig(small_file_limit=int(400 * unit),
                                                           target_file_size=int(300 * unit)))
    for i, n in enumerate([96, 213, 182]):
        e.ingest(batch_df(spark, ws.model_copy(update={"batch_records": n * 20}), i))
    instant = e.schedule()
    assert e.table.refresh().get(instant).state == State.REQUESTED
    assert len(e.snapshot()) == 3  # nothing visible changes while the plan is pending
    e.execute(instant)
    a, b = sorted(s.size_bytes for s in e.snapshot())
    assert b <= a * 1.10 and b < 300 * unit and len(e.snapshot()) == 2


def test_semi_async_first_execute_rewrites_only_first_batch(spark, tmp_path) -> None:
    """schedule.inline: every commit tries to schedule, never while a plan is pending; the first
    execute rewrites only batch 1's file, the second clusters the rest into two even files."""
    unit, ws = _units(spark, tmp_path)
    e = engine(tmp_path / "t", mode="schedule_inline",
               clustering=ClusteringConfig(small_file_limit=int(400 * unit), target_file_size=int(300 * unit)))
    sizes = [96, 213, 182]
    e.ingest(batch_df(spark, ws.model_copy(update={"batch_records": sizes[0] * 20}), 0))
    e.after_commit()
    first = e.pending_plan()
    assert first is not None and len(e.load_plan(first).groups[0].slices) == 1
    e.ingest(batch_df(spark, ws.model_copy(update={"batch_records": sizes[1] * 20}), 1))
    e.after_commit()
    assert e.pending_plan() == first  # no new plan while one is requested
    r1 = e.execute(first)
    assert r1.files_in == 1 and r1.files_out == 1
    e.ingest(batch_df(spark, ws.model_copy(update={"batch_records": sizes[2] * 20}), 2))
    e.after_commit()
    second = e.pending_plan()
    assert second is not None and second != first
    r2 = e.execute(second)
    assert r2.files_in == 3 and r2.files_out == 2
    a, b = sorted(s.size_bytes for s in e.snapshot())
    assert b <= a * 1.10 and b < 300 * unit
    assert len(keys(e.table)) == sum(sizes) * 20 == len(hudi_keys(e.table))
