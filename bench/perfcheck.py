"""The CI gate's scenario and baseline, and the same-run calibration it divides timings by
(``layoutbench perf-check``; the gate itself is :mod:`reports.perfcheck`)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from runresults import Results

ROOT = Path(__file__).resolve().parents[1]
CI_SCENARIO = ROOT / "bench" / "scenarios" / "ci.yaml"
BASELINE = ROOT / "bench" / "baselines" / "ci.json"


def calibrate_same_run(results: Results) -> dict[str, float]:
    """Reference timings measured now, on this machine: what the engine timings are divided by.

    ``spark_plain_append_s``: median of 5 plain Spark Parquet writes of batch 0;
    ``pyarrow_rewrite_s``: pyarrow read + write of the first engine's live files at the last checkpoint.
    """
    from engines.spark.session import get_spark
    from workloads.generator import batch_df
    from workloads.spec import WorkloadSpec

    spark = get_spark()
    spec = WorkloadSpec.model_validate(results.run["scenario"]["workload"])
    df = batch_df(spark, spec, 0).cache()
    df.count()
    plain = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):
            t0 = time.perf_counter()
            df.coalesce(1).write.parquet(f"{tmp}/p{i}")
            plain.append(time.perf_counter() - t0)
    df.unpersist()
    files = results.table("files")
    last = files[files.checkpoint == files.checkpoint.max()]
    paths = []
    for engine, info in results.run["engines"].items():
        live = last[(last.engine == engine) & last.live]
        paths += [str(Path(info["table_path"]) / p) for p in live.path]
        if paths:
            break
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, p in enumerate(paths):
            pq.write_table(pq.read_table(p), f"{tmp}/{i}.parquet", compression="snappy")
    return {"spark_plain_append_s": statistics.median(plain), "pyarrow_rewrite_s": time.perf_counter() - t0}
