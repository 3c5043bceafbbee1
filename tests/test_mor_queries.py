"""The query suite over MERGE_ON_READ snapshots: log updates and deletes merged over their base files
(engines/spark/mor_reader.py), every answer verified against the workload's ground truth, with the
read amplification (log bytes merged, the read-optimized view's seconds) as figures."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from bench.queries import SUITE, choose_params, run_query
from engines.files.deltacommit import write_deltacommit
from engines.table.mor import query_snapshot
from engines.table.probe import HudiProbe
from engines.table.table import HudiTable, TableConfig, logical_clock
from workloads.generator import batch_deletes_table, batch_table, batch_updates_table
from workloads.spec import WorkloadSpec
from workloads.truth import expected_table

SPEC = WorkloadSpec(seed=7, num_batches=4, batch_records=1500, num_partitions=2, late_fraction=0.1,
                    corrections_fraction=0.1, delete_fraction=0.02)


def mor_table(tmp_path: Path, spec: WorkloadSpec = SPEC) -> HudiTable:
    """Every batch as a deltacommit of new keys, then its corrections (logs) and deletes."""
    table = HudiTable.create(str(tmp_path / "mor"), TableConfig("mor", spec.partition_column, "trace_id",
                                                                table_type="MERGE_ON_READ", ordering_field="ts"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    for b in range(spec.num_batches):
        write_deltacommit(table, batch_table(spec, b))
        updates, deletes = batch_updates_table(spec, b), batch_deletes_table(spec, b)
        keys = list(zip(deletes.column("trace_id").to_pylist(),
                        [str(v) for v in deletes.column(spec.partition_column).to_pylist()], strict=True))
        if updates.num_rows or keys:
            write_deltacommit(table, updates if updates.num_rows else None, keys)
    return table


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> HudiTable:
    return mor_table(tmp_path_factory.mktemp("morq"))


@pytest.mark.slow
def test_every_suite_query_sees_the_logs_merged(spark, table) -> None:
    truth = expected_table(SPEC, SPEC.num_batches - 1)
    params = choose_params(truth, SPEC.partition_column, 6)
    slices, overlay = query_snapshot(table)
    assert overlay is not None and overlay.log_files > 0
    stale = 0
    for query in SUITE.values():
        run = run_query(spark, table.storage, slices, query, params, overlay=overlay)
        assert run.error is None, run.error
        assert run.result == query.reference(truth, params), query.name
        assert run.log_files_merged == overlay.log_files and run.log_bytes_merged == overlay.log_bytes > 0
        assert run.ro_latency_s is not None and run.ro_latency_s > 0
        assert run.files_scanned >= len(overlay.slices)  # slices with logs are never pruned by base min/max
        base_only = run_query(spark, table.storage, slices, query, params)
        assert base_only.log_bytes_merged is None and base_only.ro_latency_s is None
        stale += base_only.result != run.result
    assert stale >= 2  # the base files alone miss the corrections and deletes: the merge is what answers


def test_probe_audits_merged_rows(table) -> None:
    truth = expected_table(SPEC, SPEC.num_batches - 1)
    probe = HudiProbe(table)
    assert probe.audit(truth.num_rows) == []
    assert any("merged with its log files" in f for f in probe.audit(truth.num_rows + 1))


def test_a_cow_snapshot_has_no_overlay(tmp_path) -> None:
    table = HudiTable.create(str(tmp_path / "cow"), TableConfig("cow", "dt", "trace_id"))
    assert query_snapshot(table) == ([], None)


def test_gate_readers_read_mor_tables_as_of_every_instant(table) -> None:
    """The time-travel gate's readers (ours: the table core's merge; hudi-rs: its own merged read of
    slices with logs) agree with the ground truth's keys as of every deltacommit."""
    from bench.gates.readers import HudiRsSlices, OurReader
    from bench.gates.truth import KeySum, key_hashes

    ours, rs = OurReader(table), HudiRsSlices(table)
    instants = [i.timestamp for i in table.refresh().completed_data_instants()]
    assert len(instants) == 2 * SPEC.num_batches - 1  # batch 0 has neither corrections nor deletes
    for b in range(SPEC.num_batches):
        at = instants[min(2 * b, len(instants) - 1)]  # after batch b's corrections and deletes
        want = KeySum.of(key_hashes(pa.array(expected_table(SPEC, b).column("trace_id").to_pylist())))
        assert ours.key_sum(at) == rs.key_sum(at) == want, (b, at)
