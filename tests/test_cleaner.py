"""Cleaner (KEEP_LATEST_COMMITS): replaced file groups leave only after the retained window; files
a retained instant or a pending plan needs are never deleted."""

from __future__ import annotations

from engine_helpers import hudi_keys, keys, new_table, spec, truth_keys

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.table.cleaner import CLEAN_STEPS, DEFAULT_COMMITS_RETAINED, plan_clean, run_clean
from engines.table.timeline import CLEAN, COMMIT
from workloads.generator import batch_df


def engine(path, **kw) -> ClusteringEngine:
    return ClusteringEngine(new_table(path), Option2Config(
        clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=1 << 30), row_group_rows=500, **kw))


def test_replaced_groups_deleted_only_after_retained_commits(spark, tmp_path) -> None:
    ws = spec(num_batches=6, batch_records=600)
    e = engine(tmp_path / "t", cleaner_commits_retained=3)
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    res = e.execute(e.schedule())
    assert plan_clean(e.table.view(), 3).files_to_delete == [] and e.clean() is None
    for b in (3, 4):
        e.ingest(batch_df(spark, ws, b))
        assert e.clean() is None  # R and fewer than 3 commits after it: R still inside the window
    e.ingest(batch_df(spark, ws, 5))
    plan = plan_clean(e.table.view(), 3)
    replaced = {f.path for f in e.table.view().base_files if f.instant < res.instant}
    assert {f.path for f in plan.files_to_delete} == replaced and plan.bytes > 0
    steps: list[str] = []
    out = run_clean(e.table, 3, on_step=steps.append)
    assert out.files_deleted == len(replaced) and out.bytes_freed == plan.bytes
    assert steps[0] == CLEAN_STEPS[0] and steps.count("clean.after_file_deleted") == len(replaced)
    assert len(e.table.refresh().completed([CLEAN])) == 1
    commits = e.table.refresh().completed([COMMIT])
    for i, c in enumerate(commits):  # every retained instant still reads exactly its rows
        if c.timestamp >= out.earliest_commit_to_retain:
            assert keys(e.table, e.table.view().snapshot(as_of=c.timestamp)) == truth_keys(ws, i)
    assert keys(e.table) == truth_keys(ws, 5) == hudi_keys(e.table)
    assert DEFAULT_COMMITS_RETAINED == Option2Config().cleaner_commits_retained == 10


def test_pending_plan_inputs_are_never_cleaned(spark, tmp_path) -> None:
    """Allow strategy: an update makes a newer slice of a planned file group; the older slice the
    plan reads must survive the cleaner (hudi-semantics §9 #9257)."""
    ws = spec(num_batches=8, batch_records=600, corrections_fraction=0.05, num_partitions=1)
    e = engine(tmp_path / "t", cleaner_commits_retained=1, update_strategy="allow")
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    from workloads.generator import batch_updates_df

    e.upsert(batch_updates_df(spark, ws, 3))
    for b in (3, 4):
        e.ingest(batch_df(spark, ws, b))
    inputs = {s.path for g in e.load_plan(instant).groups for s in g.slices}
    e.clean()
    assert all(e.table.storage.exists(p) for p in inputs)
    assert e.execute(instant).files_in == len(inputs)
