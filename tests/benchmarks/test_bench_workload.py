"""Workload generation speed (``make bench-micro``; reported): rows/s for a 1 MB and a 100 MB batch
on the session's Spark, and generation time as a share of writing the same batch (goal <= 25%)."""

from __future__ import annotations

import statistics
import time

import pytest

from workloads.generator import batch_df, batch_num_records
from workloads.spec import WorkloadSpec


@pytest.mark.benchmark(group="workload")
@pytest.mark.parametrize("mb", [1.0, 100.0])
def test_generation_rate_and_share_of_write(spark, tmp_path, benchmark, mb) -> None:
    spec = WorkloadSpec(seed=1, num_batches=3, batch_mb=mb, num_partitions=1)
    rows = batch_num_records(spec, 0)
    gen, write = [], []
    for i in range(3):
        t0 = time.perf_counter()
        batch_df(spark, spec, i).write.format("noop").mode("overwrite").save()
        gen.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        batch_df(spark, spec, i).write.mode("overwrite").parquet(str(tmp_path / f"b{i}"))
        write.append(time.perf_counter() - t0)
    g, w = statistics.median(gen), statistics.median(write)
    info = {"mb": mb, "rows": rows, "rows_per_s": round(rows / g), "generate_s": round(g, 3),
            "generate_and_write_s": round(w, 3), "generation_share": round(g / w, 3)}
    print("\n", info)
    benchmark.extra_info.update(info)
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
