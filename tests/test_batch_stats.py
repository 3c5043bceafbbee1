"""A cached batch's rows per partition are counted by one Spark job, whatever number of engines ask."""

from __future__ import annotations

from engine_helpers import spec

from engines.spark.batch_stats import partition_counts
from workloads.generator import batch_df, batch_table


def _jobs(spark, fn) -> tuple[object, int]:
    sc = spark.sparkContext
    sc.setJobGroup("batch-stats-test", "count jobs")
    try:
        before = len(sc.statusTracker().getJobIdsForGroup("batch-stats-test"))
        out = fn()
        return out, len(sc.statusTracker().getJobIdsForGroup("batch-stats-test")) - before
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def test_counted_once_per_cached_batch(spark) -> None:
    ws = spec(num_partitions=3, batch_records=900, late_fraction=0.2)
    truth = batch_table(ws, 1).column("dt").value_counts().to_pylist()
    expected = {d["values"]: d["counts"] for d in truth}
    df = batch_df(spark, ws, 1).cache()
    first, jobs_first = _jobs(spark, lambda: partition_counts(df, "dt"))
    again, jobs_again = _jobs(spark, lambda: partition_counts(df, "dt"))
    assert first == again == expected
    assert jobs_first >= 1 and jobs_again == 0
    again["x"] = 1  # callers get their own copy
    assert partition_counts(df, "dt") == expected
    df.unpersist()
    plain = batch_df(spark, ws, 1)
    counted, jobs = _jobs(spark, lambda: partition_counts(plain, "dt"))
    assert counted == expected and jobs >= 1
    _, jobs = _jobs(spark, lambda: partition_counts(plain, "dt"))
    assert jobs >= 1  # not cached: its rows could change, so it is counted again
