"""A small batch written in the driver (engines.spark.local_write) gives the same files, names and
bytes as the Spark write job it replaces, and an ingest of a counted cached batch runs one Spark job."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import new_table, spec
from pyspark.sql import functions as F

from engines.files.hash_partitioning import hash_partition, string_hash
from engines.files.writer import WriteSpec
from engines.spark.arrow_compat import to_arrow
from engines.spark.batch_stats import partition_counts, remember_rows
from engines.spark.insert import insert_new_file_groups
from engines.spark.local_write import write_locally
from engines.spark.writer import write_dataframe
from workloads.generator import batch_df

VALUES = ["", "a", "ab", "abc", "abcd", "abcde", "2026-01-01", "2026-01-02T07", "é", "日本語", "ÿÿÿ", "x" * 37, None]


def test_hash_partitioning_is_sparks(spark) -> None:
    df = spark.createDataFrame([(v,) for v in VALUES], "v string")
    assert {r[0]: r[1] for r in df.select("v", F.hash("v")).collect()} == {v: string_hash(v) for v in VALUES}
    for n in (1, 2, 3, 7):
        got = {r[0]: r[1] for r in df.repartition(n, "v").select("v", F.spark_partition_id()).collect()}
        assert got == {v: hash_partition(v, n) for v in VALUES}
    with pytest.raises(ValueError, match="num_partitions"):
        hash_partition("a", 0)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


@pytest.mark.parametrize("num_tasks,rows_known", [(1, False), (2, False), (3, False), (None, False),
                                                  (1, True), (3, True), (None, True)])
def test_local_write_is_byte_identical_to_the_spark_job(spark, tmp_path, num_tasks, rows_known) -> None:
    """rows_known: the driver holds the batch's rows (the runner's batches) and sorts them itself."""
    ws = spec(num_partitions=3, batch_records=3000, late_fraction=0.3)
    # a null partition value shifts the Arrow batches of its task; it is written nowhere
    df = batch_df(spark, ws, 2).withColumn("dt", F.when(F.col("trace_id").endswith("7"), None).otherwise(F.col("dt")))
    df = df.cache()
    counts = partition_counts(df, "dt")
    assert None in counts and len(counts) >= 3
    if rows_known:  # held in another order than the sorted one: the driver's sort decides
        remember_rows(df, to_arrow(df.orderBy(F.col("trace_id").desc())))
    old = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "700")  # several batches per task
    try:
        stats = {}
        for how in ("job", "local"):
            table = new_table(tmp_path / how)
            spec_ = WriteSpec.for_table(table, "20260101000000000", row_group_rows=900, target_file_bytes=40_000,
                                   stats_columns=["ts", "service"])
            if how == "job":
                n = num_tasks or len(counts)  # None: one task per partition value, as the insert spreads a batch
                spread = df.coalesce(1) if n == 1 else df.repartition(n, F.col("dt"))
                stats[how] = write_dataframe(spread.sortWithinPartitions("dt", "trace_id"), spec_)
            else:
                stats[how] = write_locally(df, ["dt", "trace_id"], spec_, num_tasks=num_tasks, unique_order=True)
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", old)
        df.unpersist()
    job, local = _files(tmp_path / "job"), _files(tmp_path / "local")
    assert len(job) > 3  # files rolled at the target size, in every partition
    assert local == job
    assert stats["local"] == stats["job"]


def _jobs(spark, fn) -> int:
    sc = spark.sparkContext
    sc.setJobGroup("local-write-test", "count jobs")
    try:
        before = len(sc.statusTracker().getJobIdsForGroup("local-write-test"))
        fn()
        return len(sc.statusTracker().getJobIdsForGroup("local-write-test")) - before
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


@pytest.mark.parametrize("counted", [True, False])
def test_ingest_of_a_cached_batch_is_one_job(spark, tmp_path, counted) -> None:
    ws = spec(num_partitions=3, batch_records=2000, late_fraction=0.3)
    df = batch_df(spark, ws, 3).cache()
    parts = partition_counts(batch_df(spark, ws, 3), "dt")
    if counted:
        partition_counts(df, "dt")  # what the runner does while it generates the batch
    else:
        df.count()  # cached, not counted per partition: the cache's own row count tells it is small
    table = new_table(tmp_path / "t")
    jobs = _jobs(spark, lambda: insert_new_file_groups(table, df))
    df.unpersist()
    assert jobs == 1
    assert sorted({s.partition for s in table.view().snapshot()}) == sorted(f"dt={v}" for v in parts)
    assert sum(s.num_rows for s in table.view().snapshot()) == sum(parts.values())


def test_insert_buckets_merged_in_the_driver_are_byte_identical_to_the_spark_job(spark, tmp_path, monkeypatch) -> None:
    """The COW top-up of small files (engines.cow_baseline.driver_merge) against the Spark job it replaces:
    same files, names and bytes, commit after commit, over several batches of two partitions; the crash
    point inside the write job is passed once per commit on either route."""
    import engines.cow_baseline.insert as cow_insert
    from engines.cow_baseline.config import CowConfig
    from engines.files.gate import Route
    from engines.table import faults

    ws = spec(num_partitions=2, batch_records=1500, late_fraction=0.3)
    # small enough that every batch tops up a small file per partition and some start new file groups
    cfg = CowConfig(small_file_limit=900_000, max_file_size=1_000_000, record_size_estimate=300,
                    insert_split_size=500)
    merged_in_driver = []
    real = cow_insert.base_inputs

    def counted(*args, **kwargs):
        route, found = real(*args, **kwargs)
        merged_in_driver.append(route.in_driver and len(found) > 0)
        return route, found

    def spark_job(*args, **kwargs):
        return Route(False, "the Spark job, for the test"), {}

    old = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "700")  # several batches per bucket
    mid_write = {"job": 0, "local": 0}
    try:
        for how in ("job", "local"):
            monkeypatch.setattr(cow_insert, "base_inputs", counted if how == "local" else spark_job)
            stop = faults.observe(lambda p, how=how: mid_write.__setitem__(how, mid_write[how] + (p == "ingest.mid_write")))
            table = new_table(tmp_path / how)
            for b in range(6):
                df = batch_df(spark, ws, b).cache()
                cow_insert.insert_with_buckets(table, df, cfg, row_group_rows=400)
                df.unpersist()
            stop()
    finally:
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", old)
    job, local = _files(tmp_path / "job"), _files(tmp_path / "local")
    assert sum(merged_in_driver) >= 2  # small files were topped up in the driver
    assert mid_write == {"job": 6, "local": 6}
    assert len(job) > 8 and local == job
