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


def test_rows_the_driver_built_a_batch_from_are_read_without_a_job(spark) -> None:
    import pyarrow as pa
    import pytest

    from engines.spark.arrow_frame import frame_from_arrow
    from engines.spark.batch_stats import batch_rows, known_rows, remember_rows

    ws = spec(num_partitions=2, batch_records=700)
    rows = batch_table(ws, 0)
    df = frame_from_arrow(spark, rows).cache()
    assert known_rows(df) is None
    fetched, jobs = _jobs(spark, lambda: batch_rows(df))
    assert fetched.equals(rows) and jobs >= 1
    remember_rows(df, rows)
    held, jobs = _jobs(spark, lambda: batch_rows(df))
    assert held is rows and jobs == 0
    with pytest.raises(ValueError, match="schema"):
        remember_rows(df, rows.drop_columns(["message"]))
    with pytest.raises(ValueError, match="cached"):
        remember_rows(frame_from_arrow(spark, rows), rows)
    assert known_rows(frame_from_arrow(spark, rows)) is None
    assert isinstance(held, pa.Table)
