"""Micro-benchmark (``make bench-micro``): our Spark write path vs a plain ``df.write.parquet`` of
the same ~1 MB batch, medians over >= 20 batches in the same run (goal <= 1.3x). Reported, not asserted."""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime, timedelta

import pytest

from engines.spark.insert import insert_new_file_groups
from engines.table.table import HudiTable, TableConfig, logical_clock

ROUNDS = 20


def one_mb_batch(spark, i: int):
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [(t0 + timedelta(seconds=j), "2026-01-01", f"svc{j % 20}", f"host{j % 50}", "INFO",
             f"k{i:03d}-{j:06d}", float(j % 1000), "m" * 160) for j in range(5000)]
    return spark.createDataFrame(
        rows, "ts timestamp, dt string, service string, host string, level string, trace_id string, "
              "latency_ms double, message string").cache()


@pytest.mark.benchmark(group="write-path")
def test_ingest_vs_plain_spark_append(spark, tmp_path, benchmark) -> None:
    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    ours, plain = [], []
    batches = [one_mb_batch(spark, i) for i in range(ROUNDS)]
    for df in batches:
        df.count()
    for df in batches:
        t = time.perf_counter()
        insert_new_file_groups(table, df, num_tasks=1)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        df.coalesce(1).write.mode("append").parquet(str(tmp_path / "plain"))
        plain.append(time.perf_counter() - t)
    ratio = statistics.median(ours) / statistics.median(plain)
    benchmark.extra_info.update({"ours_median_s": statistics.median(ours), "plain_median_s": statistics.median(plain),
                                 "ratio": ratio, "goal": 1.3})
    print(f"\nwrite path: ours {statistics.median(ours):.3f}s, plain {statistics.median(plain):.3f}s, ratio {ratio:.2f}")
    benchmark.pedantic(lambda: insert_new_file_groups(table, batches[0], num_tasks=1), rounds=3, iterations=1)


@pytest.mark.benchmark(group="write-path")
def test_append_ingest_vs_plain_spark_append(spark, tmp_path, benchmark) -> None:
    """T3: Option 1's APPEND ingest (the engine's public ``ingest``: write, commit metadata, timeline)
    of the workload's 1 MB batches vs ``df.write.partitionBy(dt).parquet`` of the same cached batch."""
    from engines.append_compaction.engine import AppendCompactionEngine, Option1Config
    from workloads.generator import batch_df
    from workloads.spec import WorkloadSpec

    spec = WorkloadSpec(seed=7, num_batches=ROUNDS, batch_mb=1.0, num_partitions=1)
    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", spec.partition_column, "trace_id"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    engine = AppendCompactionEngine(table, Option1Config())
    batches = [batch_df(spark, spec, b).cache() for b in range(ROUNDS)]
    for df in batches:
        df.count()
    ours, plain = [], []
    for df in batches:
        t = time.perf_counter()
        engine.ingest(df)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        df.write.mode("append").partitionBy(spec.partition_column).parquet(str(tmp_path / "plain"))
        plain.append(time.perf_counter() - t)
    engine.close()
    ratio = statistics.median(ours) / statistics.median(plain)
    benchmark.extra_info.update({"ours_median_s": statistics.median(ours), "plain_median_s": statistics.median(plain),
                                 "ratio": ratio, "goal": 1.3})
    print(f"\nAPPEND ingest: ours {statistics.median(ours):.3f}s, plain {statistics.median(plain):.3f}s, "
          f"ratio {ratio:.2f}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
