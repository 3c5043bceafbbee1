"""The article's three test plans (inline, async, semi-async), scaled down: 1 MB -> one "unit" of
about 10 rows, with the article's limits in the same units (ingest max file 120, clustering
small-file limit 200, target 300); plus the async service thread and the mode gates."""

from __future__ import annotations

import pytest
from engine_helpers import hudi_keys, keys, new_table, spec

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.clustering.modes import commits_since_last_clustering, hudi_configs
from engines.spark.insert import insert_new_file_groups
from engines.table.bloom import BloomConfig
from engines.table.timeline import COMMIT, REPLACE, State
from workloads.generator import batch_df

UNIT_ROWS = 10
ROW_GROUP = 100
WS = spec(num_partitions=1, num_batches=8, batch_records=1)


@pytest.fixture(scope="module")
def unit(spark, tmp_path_factory) -> float:
    """Bytes of one unit (UNIT_ROWS rows) as our writer stores them."""
    t = new_table(tmp_path_factory.mktemp("probe"))
    t.bloom = BloomConfig(enabled=False)  # units of data bytes: no ~431 KB footer bloom filter per file
    res = insert_new_file_groups(t, batch_df(spark, WS.model_copy(update={"batch_records": 3000}), 0),
                                 row_group_rows=ROW_GROUP)
    return res.bytes_written / 3000 * UNIT_ROWS


def engine(path, unit: float, **kw) -> ClusteringEngine:
    cfg = ClusteringConfig(small_file_limit=int(200 * unit), target_file_size=int(300 * unit))
    return ClusteringEngine(new_table(path), Option2Config(
        clustering=cfg, max_file_size=int(120 * unit), row_group_rows=ROW_GROUP, bloom_filter=False,
        insert_split="bytes", **kw))  # the article's batches as one file each, sized in data units


def ingest(spark, e: ClusteringEngine, b: int, units: float) -> None:
    e.ingest(batch_df(spark, WS.model_copy(update={"batch_records": int(units * UNIT_ROWS)}), b))


def assert_two_even_files(e: ClusteringEngine, unit: float, total_units: float) -> None:
    sizes = sorted(s.size_bytes for s in e.snapshot())
    assert len(sizes) == 2, [round(s / unit) for s in sizes]
    assert sizes[1] <= sizes[0] * 1.10 and sizes[1] < 300 * unit  # ~245 + ~245, not 300 + 191
    assert sum(sizes) == pytest.approx(total_units * unit, rel=0.2)


def test_inline_plan_clusters_on_third_commit_into_two_even_files(spark, tmp_path, unit) -> None:
    e = engine(tmp_path / "t", unit, mode="inline", inline_max_commits=3)
    files, kinds = [], []
    for b, n in enumerate([96, 213, 182]):
        ingest(spark, e, b, n)
        files.append(len(e.table.view().base_files))
        kinds.append([r.kind for r in e.after_commit()])
    assert files == [1, 3, 5]  # +1 small; +1 max +1 small; +1 max +1 small
    assert kinds[:2] == [[], []] and kinds[2] == ["clustering"]
    timeline = e.table.refresh()
    assert [(i.action, i.state) for i in timeline.instants] == [(COMMIT, State.COMPLETED)] * 3 + [
        (REPLACE, State.COMPLETED)]
    assert_two_even_files(e, unit, 491)
    assert keys(e.table) == hudi_keys(e.table) and len(keys(e.table)) == 491 * UNIT_ROWS


def test_async_plan_offline_schedule_then_execute(spark, tmp_path, unit) -> None:
    """HoodieClusteringJob --mode schedule leaves a requested replacecommit; --mode execute writes
    two ~245-unit files; scheduleAndExecute does both in one call."""
    e = engine(tmp_path / "t", unit)
    for b, n in enumerate([96, 213, 182]):
        ingest(spark, e, b, n)
        assert e.after_commit() == []
    instant = e.schedule()
    assert e.table.refresh().get(instant).state == State.REQUESTED
    assert len(e.snapshot()) == 5 and len(e.table.view().base_files) == 5  # layout unchanged
    res = e.execute()  # the earliest pending plan
    assert res.instant == instant and res.files_in == 5 and res.files_out == 2
    assert_two_even_files(e, unit, 491)
    f = engine(tmp_path / "u", unit)
    for b, n in enumerate([96, 213, 182]):
        ingest(spark, f, b, n)
    assert [r.kind for r in f.schedule_and_execute()] == ["clustering"]
    assert_two_even_files(f, unit, 491)


def test_async_mode_thread_beside_ingestion(spark, tmp_path, unit) -> None:
    e = engine(tmp_path / "t", unit, mode="async", async_max_commits=3, async_interval_s=0.2)
    try:
        for b, n in enumerate([96, 213]):
            ingest(spark, e, b, n)
            e.after_commit()
        assert e.pending_plan() is None  # 2 commits < async.max.commits
        ingest(spark, e, 2, 182)
        e.after_commit()  # schedules; the service thread executes
        assert e.wait_async(120)
        assert e.async_errors == [] and [r.kind for r in e.async_results] == ["clustering"]
        assert_two_even_files(e, unit, 491)
        assert commits_since_last_clustering(e.table.refresh()) == 0
    finally:
        e.close()


def test_semi_async_plan(spark, tmp_path, unit) -> None:
    """schedule.inline: each commit tries to schedule, never while a plan is pending. Execute 1
    rewrites only batch 1's file; insert 14.6 units schedules plan 2 over every small file, which
    execute 2 turns into two even files (~503 units)."""
    e = engine(tmp_path / "t", unit, mode="schedule_inline")
    ingest(spark, e, 0, 96)
    e.after_commit()
    first = e.pending_plan()
    assert first is not None and [len(g.slices) for g in e.load_plan(first).groups] == [1]
    for b, n in ((1, 213), (2, 182)):
        ingest(spark, e, b, n)
        e.after_commit()
        assert [i.timestamp for i in e.table.refresh().pending([REPLACE])] == [first]  # no new plan
    r1 = e.execute()
    assert (r1.instant, r1.files_in, r1.files_out) == (first, 1, 1)
    assert len(e.snapshot()) == 5
    ingest(spark, e, 3, 14.6)
    e.after_commit()
    second = e.pending_plan()
    assert second is not None and second != first
    assert sum(len(g.slices) for g in e.load_plan(second).groups) == 6  # clustered 96 + 4 ingest files + 14.6
    r2 = e.execute()
    assert (r2.files_in, r2.files_out) == (6, 2)
    assert_two_even_files(e, unit, 505.6)
    assert len(keys(e.table)) == int(96 * 10) + 2130 + 1820 + 146 == len(hudi_keys(e.table))


def test_semi_async_with_hudi_1_2_rules_waits_for_async_max_commits(spark, tmp_path, unit) -> None:
    """schedule_rules 1.2 (ClusteringPlanActionExecutor: schedule.inline gated by async.max.commits):
    no plan until 3 commits completed since the last clustering, none while one is pending."""
    e = engine(tmp_path / "t", unit, mode="schedule_inline", schedule_rules="1.2", async_max_commits=3,
               inline_max_commits=1)  # inline.max.commits is not the semi-async gate
    pending = []
    for b, n in enumerate([96, 213, 182, 50]):
        ingest(spark, e, b, n)
        e.after_commit()
        pending.append(len(e.table.refresh().pending([REPLACE])))
    assert pending == [0, 0, 1, 1]
    e.execute()
    ingest(spark, e, 4, 50)
    e.after_commit()
    assert not e.table.refresh().pending([REPLACE])  # 2 commits since the clustering: not yet
    with pytest.raises(ValueError, match="schedule_rules"):
        Option2Config(schedule_rules="0.14")  # type: ignore[arg-type]


def test_hudi_config_names() -> None:
    assert hudi_configs("schedule_inline", 4, 3) == {
        "hoodie.clustering.inline": "false", "hoodie.clustering.inline.max.commits": "4",
        "hoodie.clustering.async.enabled": "false", "hoodie.clustering.async.max.commits": "3",
        "hoodie.clustering.schedule.inline": "true"}
    with pytest.raises(ValueError, match="mode='sometimes': expected one of"):  # the registry's parser
        Option2Config(mode="sometimes")  # type: ignore[arg-type]
