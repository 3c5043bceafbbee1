"""read_snapshot remembers Spark's schema inference: later reads skip the inference job and give the
same DataFrame (schema, column order, rows) as Spark inferring it."""

from __future__ import annotations

from engine_helpers import new_table, spec

from engines.spark import reader
from engines.spark.insert import insert_new_file_groups
from engines.spark.reader import file_uri, read_snapshot
from workloads.generator import batch_df


def test_schema_inferred_once_and_reads_unchanged(spark, tmp_path) -> None:
    table = new_table(tmp_path / "t")
    ws = spec(num_batches=2)
    for b in range(ws.num_batches):
        insert_new_file_groups(table, batch_df(spark, ws, b), num_tasks=1)
    snap = table.view().snapshot()
    paths = [file_uri(table.storage, s.path) for s in snap]
    inferred = spark.read.option("basePath", file_uri(table.storage, "")).parquet(*paths)  # Spark alone
    first = read_snapshot(spark, table.storage, snap).df
    key = reader._inference_key(spark, table.storage, snap[0], file_uri(table.storage, ""))
    assert key is not None and key in reader._INFERRED[spark]
    again = read_snapshot(spark, table.storage, snap).df  # from the remembered schema
    for df in (first, again):
        assert df.schema == inferred.schema and df.columns == inferred.columns  # dt keeps its place
        assert sorted(map(tuple, df.collect())) == sorted(map(tuple, inferred.collect()))
    selective = read_snapshot(spark, table.storage, snap, [("service", "=", "svc-001")]).df
    assert selective.where("service = 'svc-001'").count() == inferred.where("service = 'svc-001'").count()
