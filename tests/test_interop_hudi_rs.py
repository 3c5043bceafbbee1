"""Interop: tables written by our Spark path read identically with hudi-rs (PyPI ``hudi``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import hudi
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engines.files.writer import WriteSpec
from engines.spark.insert import insert_new_file_groups
from engines.spark.reader import read_snapshot
from engines.spark.writer import write_dataframe
from engines.table.avro import REQUESTED_REPLACE, encode_plan
from engines.table.table import HudiTable, TableConfig, logical_clock
from engines.table.timeline import REPLACE
from engines.table.transaction import commit_write

pytestmark = pytest.mark.interop


def batch(spark, start: int, n: int):
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [(t0 + timedelta(minutes=i * 7), f"2026-01-0{1 + i % 3}", f"svc{i % 4}", f"k{i:06d}", float(i % 97))
            for i in range(start, start + n)]
    return spark.createDataFrame(rows, "ts timestamp, dt string, service string, trace_id string, latency_ms double")


def hudi_rows(base: str, as_of: str | None = None) -> pa.Table:
    t = hudi.HudiTableBuilder.from_base_uri(base).build()
    opts = hudi.HudiReadOptions()
    if as_of:
        opts = opts.with_as_of_timestamp(as_of)
    batches = t.read(opts)
    return pa.Table.from_batches(batches) if batches else pa.table({"_hoodie_record_key": pa.array([], pa.string())})


def hudi_file_groups(base: str) -> set[tuple[str, str]]:
    t = hudi.HudiTableBuilder.from_base_uri(base).build()
    return {(s.partition_path, s.file_id) for s in t.get_file_slices()}


def our_keys(table: HudiTable, as_of: str | None = None) -> list[str]:
    keys: list[str] = []
    for s in table.view().snapshot(as_of=as_of):
        keys += pq.read_table(table.storage.abs(s.path), columns=["_hoodie_record_key"]).column(0).to_pylist()
    return sorted(keys)


@pytest.fixture()
def table(tmp_path):
    return HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id"),
                            clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))


def test_inserts_read_identically(spark, table) -> None:
    c1 = insert_new_file_groups(table, batch(spark, 0, 300))
    insert_new_file_groups(table, batch(spark, 300, 200))
    rows = hudi_rows(table.base_uri)
    assert sorted(rows.column("_hoodie_record_key").to_pylist()) == our_keys(table)
    assert rows.num_rows == 500
    assert hudi_file_groups(table.base_uri) == {s.file_group for s in table.view().snapshot()}
    assert sorted(hudi_rows(table.base_uri, c1.instant).column("_hoodie_record_key").to_pylist()) == our_keys(
        table, c1.instant)
    scan = read_snapshot(spark, table.storage, table.view().snapshot())
    assert scan.df.count() == 500
    # meta columns are populated
    assert rows.column("_hoodie_commit_time").null_count == 0
    assert set(rows.column("_hoodie_partition_path").to_pylist()) == {"dt=2026-01-01", "dt=2026-01-02",
                                                                       "dt=2026-01-03"}


def _cluster_partition(spark, table: HudiTable, partition: str, complete: bool) -> str:
    """Rewrite every file group of one partition into one new file group under a replacecommit."""
    snap = [s for s in table.view().snapshot() if s.partition == partition]
    plan = {"operationType": "CLUSTER", "clusteringPlan": {
        "clusteringGroups": [{"fileIds": [s.file_id for s in snap], "partitionPath": partition, "metrics": None}],
        "targetFileSize": 1 << 30, "sortColumns": None, "extraMetadata": None, "version": 1},
        "extraMetadata": None, "version": 1}
    with table.lock:
        inst = table.start(REPLACE, content=encode_plan(REQUESTED_REPLACE, plan))
        df = spark.read.parquet(*[table.storage.abs(s.path) for s in snap]).coalesce(1)
        stats = write_dataframe(df, WriteSpec.for_table(table, inst.timestamp))
        if complete:
            commit_write(table, inst, stats, "CLUSTER", table.latest_schema(),
                         replaced={partition: [s.file_id for s in snap]})
    return inst.timestamp


def test_completed_and_pending_replacecommit(spark, table) -> None:
    c1 = insert_new_file_groups(table, batch(spark, 0, 300))
    insert_new_file_groups(table, batch(spark, 300, 300))
    before = our_keys(table)
    r = _cluster_partition(spark, table, "dt=2026-01-01", complete=True)
    after = hudi_rows(table.base_uri)
    assert sorted(after.column("_hoodie_record_key").to_pylist()) == before == our_keys(table)
    assert hudi_file_groups(table.base_uri) == {s.file_group for s in table.view().snapshot()}
    assert len([s for s in table.view().snapshot() if s.partition == "dt=2026-01-01"]) == 1
    # time travel to before the replace still sees the old file groups
    assert our_keys(table, c1.instant) == sorted(
        hudi_rows(table.base_uri, c1.instant).column("_hoodie_record_key").to_pylist())
    # a pending replacecommit (new files on disk, no completed instant) is invisible to both readers
    p = _cluster_partition(spark, table, "dt=2026-01-02", complete=False)
    assert p > r
    assert sorted(hudi_rows(table.base_uri).column("_hoodie_record_key").to_pylist()) == before == our_keys(table)
    assert hudi_file_groups(table.base_uri) == {s.file_group for s in table.view().snapshot()}
