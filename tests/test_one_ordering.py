"""One ordering for every clustering writer (engines.files.ordering.order_table): sort columns (or their
z-order/Hilbert key), then the record key, nulls first, whichever table type and route writes the files."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_mor_core import new_table

from engines.clustering import executor as clustering
from engines.clustering.config import ClusteringConfig
from engines.clustering.mor import execute_merged
from engines.files.deltacommit import write_deltacommit
from engines.files.ordering import order_table


def _rows(lo: int, n: int, ts: int) -> pa.Table:
    ids = range(lo, lo + n)
    return pa.table({"trace_id": [f"k{(i * 7919) % 100000:05d}" for i in ids], "dt": ["2026-01-01"] * n,
                     "ts": pa.array([ts] * n, pa.int64()),
                     "v": [None if i % 11 == 0 else f"s{i % 17}" for i in ids],
                     "n": pa.array([None if i % 13 == 0 else i % 29 for i in ids], pa.int64())})


@pytest.mark.parametrize("ordering", [None, "zorder", "hilbert"])
def test_mor_clustering_orders_as_copy_on_write_does(tmp_path, ordering) -> None:
    table = new_table(tmp_path)
    for b in range(2):
        write_deltacommit(table, _rows(b * 400, 400, b), [])
    write_deltacommit(table, _rows(100, 50, 9), [])  # updates, merged from the logs
    cols = ("v", "n")
    ts = clustering.schedule(table, ClusteringConfig(sort_columns=cols, grouping="size"), ordering)
    (out,) = execute_merged(table, ts)
    written = pq.read_table(f"{table.base_uri}/{out.path}").select(["trace_id", "v", "n"])
    keys = written.column("trace_id").to_pylist()
    assert keys == order_table(written, ordering, cols, "trace_id").column("trace_id").to_pylist()
    if ordering is None:  # linear: nulls first, ties broken by the record key
        v = written.column("v").to_pylist()
        assert v[: v.count(None)] == [None] * v.count(None)
        rows = list(zip(v, written.column("n").to_pylist(), keys, strict=True))
        ties = [(a, b) for a, b in zip(rows, rows[1:], strict=False) if a[:2] == b[:2]]
        assert ties and all(a[2] < b[2] for a, b in ties)


@pytest.mark.parametrize("curve", ["zorder", "hilbert"])
def test_spark_and_the_driver_compute_one_curve_order(spark, curve) -> None:
    from engines.spark.ordering import with_curve_key

    rows = _rows(0, 600, 1).select(["trace_id", "v", "n"])
    df = spark.createDataFrame(rows.to_pandas())
    by_spark = [r[0] for r in with_curve_key(df, ["v", "n"], curve).orderBy("_curve_key", "trace_id")
                .select("trace_id").collect()]
    assert by_spark == order_table(rows, curve, ["v", "n"], "trace_id").column("trace_id").to_pylist()
