"""The maintenance round mapped onto Apache Hudi's own calls (engines/hudi/engine.py), with the real
bundle: a pending plan is found, not scheduled again, and a MERGE_ON_READ compaction left pending
is executed by Hudi's ``compact``."""

from __future__ import annotations

from pathlib import Path

from engines.config.registry import MB
from engines.hudi.config import HudiMorConfig
from engines.hudi.engine import HudiEngine
from engines.maintenance_round import MaintenanceRound, Runs
from engines.spark.arrow_frame import frame_from_arrow
from engines.table.mor import snapshot_read
from engines.table.timeline import MOR_COMPACTION, REPLACE
from workloads.generator import batch_table, batch_updates_table
from workloads.spec import WorkloadSpec
from workloads.truth import expected_table

SPEC = WorkloadSpec(seed=11, num_batches=2, batch_records=1200, num_partitions=2, late_fraction=0.1,
                    corrections_fraction=0.15)


def test_a_pending_clustering_plan_is_found_not_scheduled_again(spark, tmp_path: Path) -> None:
    """schedule_inline: the write plans; ``schedule()`` then plans nothing new, so ``Runs.NEW``
    (HoodieClusteringJob's scheduleAndExecute) executes nothing and the round's FIND executes it."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec, load_scenario
    from workloads.generator import batch_df

    scenario = load_scenario(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "hudi_small.yaml")
    spec = EngineSpec(name="h", kind="hudi", config={"preset": "hudi_clustering", "mode": "schedule_inline",
                                                     "inline_every": 2})
    engine = build_engine(spec, scenario, str(tmp_path / "h"))
    try:
        for b in range(2):
            engine.ingest(batch_df(spark, scenario.workload, b))
            engine.after_commit()
        pending = engine.pending_plan()
        assert pending is not None and engine.table.refresh().get(pending).action == REPLACE
        assert engine.schedule() is None  # not the pending plan passed off as a new one
        new = MaintenanceRound(engine, Runs.NEW)
        new.run()
        assert new.scheduled is None and new.executed == [] and engine.pending_plan() == pending
        found = MaintenanceRound(engine, Runs.NEW_OR_EARLIEST)
        found.run()
        assert found.scheduled is None and [r.instant for r in found.executed] == [pending]
        assert found.executed[0].kind == "clustering" and engine.table.refresh().get(pending).is_completed
        assert engine.pending_plan() is None
    finally:
        engine.close()


def test_a_pending_mor_compaction_is_found_and_compacted_by_hudi(spark, tmp_path: Path) -> None:
    """hudi_mor: a compaction Hudi's write client scheduled and nobody executed is the round's
    pending plan, and ``execute`` runs it through Hudi's ``compact``."""
    cfg = HudiMorConfig(small_file_limit=2 * MB, max_file_size=4 * MB, target_file_size=4 * MB,
                        compact_max_delta_commits=50)  # no inline compaction in these writes
    engine = HudiEngine(str(tmp_path / "t"), cfg, "h")
    try:
        for b in range(SPEC.num_batches):
            engine.ingest(frame_from_arrow(spark, batch_table(SPEC, b)))
            engine.upsert(frame_from_arrow(spark, batch_updates_table(SPEC, b)))
        assert engine.pending_plan() is None
        options = engine.options
        engine.options = {**options, "hoodie.compact.inline.max.delta.commits": "1"}
        empty = spark._jvm.org.apache.hudi.common.util.Option.empty()
        planned = engine._with_client("schedule compaction", lambda c: c.scheduleCompaction(empty))
        engine.options = options
        assert planned.isPresent()
        instant = str(planned.get())
        assert engine.table.refresh().get(instant).action == MOR_COMPACTION
        assert engine.pending_plan() == instant

        rnd = MaintenanceRound(engine, Runs.NEW_OR_EARLIEST)
        rnd.run()
        assert [(r.kind, r.instant) for r in rnd.executed] == [("compaction", instant)]
        assert rnd.executed[0].files_in >= rnd.executed[0].files_out > 0
        assert engine.table.refresh().get(instant).is_completed and engine.pending_plan() is None
        truth = expected_table(SPEC, SPEC.num_batches - 1)
        assert snapshot_read(engine.table).rows.num_rows == truth.num_rows
    finally:
        engine.close()
