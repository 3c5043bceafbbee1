"""Apache Hudi's MERGE_ON_READ as reference engines (``hudi_mor``, ``hudi_mor_clustering``): the real
bundle writes the table (upserts to log files, inline compaction), our readers read it: the table
core's merge against hudi-rs's row count and the ground truth, and the query suite over it."""

from __future__ import annotations

from pathlib import Path

import hudi
import pytest

from bench.queries import SUITE, choose_params, run_query
from engines.config.registry import MB
from engines.hudi.config import HudiMorClusteringConfig, HudiMorConfig
from engines.hudi.engine import HudiEngine
from engines.kinds import kind_of
from engines.spark.arrow_frame import frame_from_arrow
from engines.table.mor import query_snapshot, snapshot_read
from engines.table.timeline import DELTACOMMIT, MOR_COMPACTION
from workloads.generator import batch_table, batch_updates_table
from workloads.spec import WorkloadSpec
from workloads.truth import expected_table

pytestmark = pytest.mark.slow

SPEC = WorkloadSpec(seed=11, num_batches=4, batch_records=1200, num_partitions=2, late_fraction=0.1,
                    corrections_fraction=0.15)


def hudi_rs_rows(base: str) -> int:
    batches = hudi.HudiTableBuilder.from_base_uri(base).build().read(hudi.HudiReadOptions())
    return sum(b.num_rows for b in batches)


def write(engine: HudiEngine, spark) -> list:
    """Every batch as Hudi's write, then its corrections as Hudi's upsert; what the engine did inside."""
    maintenance = []
    for b in range(SPEC.num_batches):
        engine.ingest(frame_from_arrow(spark, batch_table(SPEC, b)))
        maintenance += engine.after_commit()
        updates = batch_updates_table(SPEC, b)
        if updates.num_rows:
            engine.upsert(frame_from_arrow(spark, updates))
            maintenance += engine.after_commit()
    return maintenance


@pytest.mark.parametrize("config", [HudiMorConfig, HudiMorClusteringConfig])
def test_our_readers_read_apache_hudis_mor_tables(spark, tmp_path: Path, config) -> None:
    cfg = config(small_file_limit=2 * MB, max_file_size=4 * MB, target_file_size=4 * MB, compact_max_delta_commits=3,
                 mode="inline", inline_every=3)
    engine = HudiEngine(str(tmp_path / "t"), cfg, "h")
    done = write(engine, spark)
    table = engine.table
    table.refresh()
    assert table.merge_on_read
    actions = [i.action for i in table.timeline.instants if i.is_completed]
    assert actions.count(DELTACOMMIT) == 2 * SPEC.num_batches - 1  # batch 0 has no corrections
    compactions = [m for m in done if m.kind == "compaction"]
    assert compactions and MOR_COMPACTION in actions and all(m.files_in >= m.files_out > 0 for m in compactions)
    truth = expected_table(SPEC, SPEC.num_batches - 1)
    merged = snapshot_read(table)
    assert merged.corrupt == []
    assert merged.rows.num_rows == hudi_rs_rows(engine.uri) == truth.num_rows
    got = sorted(zip(merged.rows.column("trace_id").to_pylist(), merged.rows.column("latency_ms").to_pylist(),
                     strict=True))
    want = sorted(zip(truth.column("trace_id").to_pylist(), truth.column("latency_ms").to_pylist(), strict=True))
    assert got == want
    slices, overlay = query_snapshot(table)
    assert overlay is not None and overlay.log_bytes > 0  # corrections after the last compaction sit in logs
    params = choose_params(truth, SPEC.partition_column, 6)
    for query in SUITE.values():
        run = run_query(spark, table.storage, slices, query, params, overlay=overlay)
        assert run.error is None and run.result == query.reference(truth, params), query.name
        assert run.log_bytes_merged == overlay.log_bytes
    if cfg.clustering:
        assert any(m.kind == "clustering" for m in done) or "replacecommit" in actions


def test_mor_kinds_are_reference_columns_paired_with_option2_on_mor() -> None:
    for name in ("hudi_mor", "hudi_mor_clustering"):
        entry = kind_of(name)
        assert entry.builder == "hudi" and not entry.in_verdict and entry.needs_hudi_bundle
        assert entry.table_types == ("MERGE_ON_READ",) and entry.pairs_with == "clustering_mor"
