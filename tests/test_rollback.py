"""Rollback of failed instants and crash recovery."""

from __future__ import annotations

import pytest
from engine_helpers import hudi_keys, keys, new_table, spec, truth_keys

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.table.rollback import ROLLBACK_STEPS, recover, rollback_inflight
from engines.table.timeline import COMMIT, REPLACE, State, TimelineError
from workloads.generator import batch_df


class Boom(RuntimeError):
    pass


def engine(path) -> ClusteringEngine:
    return ClusteringEngine(new_table(path), Option2Config(
        clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=1 << 30), row_group_rows=500))


def fail_at(point: str):
    def hook(step: str) -> None:
        if step == point:
            raise Boom(step)
    return hook


def test_rollback_keeps_plan_and_removes_partial_files(spark, tmp_path) -> None:
    ws = spec(num_batches=3, batch_records=600)
    e = engine(tmp_path / "t")
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    e.on_step = fail_at("clustering.before_replacecommit")
    with pytest.raises(Boom):
        e.execute(instant)
    assert [f for f in e.table.view().base_files if f.instant == instant]
    steps: list[str] = []
    res = rollback_inflight(e.table, instant, keep_plan=True, on_step=steps.append)
    assert res.plan_kept and res.files_deleted > 0 and steps == list(ROLLBACK_STEPS)
    assert not [f for f in e.table.view().base_files if f.instant == instant]
    assert e.table.refresh().get(instant).state == State.REQUESTED
    with pytest.raises(TimelineError, match="not pending"):
        rollback_inflight(e.table, "20990101000000000", keep_plan=True)
    e.on_step = None
    e.execute(instant)
    assert keys(e.table) == truth_keys(ws, 2) == hudi_keys(e.table)


def test_recover_after_crashed_ingest_and_clustering(spark, tmp_path) -> None:
    ws = spec(num_batches=4, batch_records=600)
    e = engine(tmp_path / "t")
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    e.on_step = fail_at("clustering.after_group_written")
    with pytest.raises(Boom):
        e.execute(instant)
    e.on_step = fail_at("ingest.before_complete")
    with pytest.raises(Boom):
        e.ingest(batch_df(spark, ws, 3))
    e.on_step = None
    failed_commit = e.table.refresh().pending([COMMIT])[0]
    results = recover(e.table)
    assert {(r.action, r.plan_kept) for r in results} == {(COMMIT, False), (REPLACE, True)}
    timeline = e.table.refresh()
    assert timeline.get(failed_commit.timestamp) is None and timeline.get(instant).state == State.REQUESTED
    assert not e.table.view().uncommitted_files()
    assert keys(e.table) == truth_keys(ws, 2) == hudi_keys(e.table)
    e.execute(instant)  # the kept plan re-executes
    e.ingest(batch_df(spark, ws, 3))
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)
