"""Workload generation speed (``make bench-micro``; reported): rows/s for a 1 MB and a 100 MB batch
on the session's Spark, and generation time as a share of ingesting the same batch (goal <= 25%).

Per round, in turn: generate the batch into Spark (``batch_df`` written to the ``noop`` sink),
then, on the same batch generated and cached beforehand, time our ingest (an insert commit into a
fresh table, as the runner times an engine's ingest) and a plain ``df.write.parquet``. The share
is generation / our ingest; generation / plain write is reported beside it. Medians of 5 rounds.

Each round also times the floor under any generator: an empty Spark job (``range(1)`` to
``noop``) and the same job through an identity ``mapInArrow`` (a Python worker, as generation
uses), both built afresh as ``batch_df`` is. At 1 MB that floor alone is about a third of an
ingest, so no Python-worker generator can meet the 25% share there.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator

import pyarrow as pa
import pytest

from engines.spark.insert import insert_new_file_groups
from engines.spark.session import warm_up
from engines.table.table import HudiTable, TableConfig
from workloads.generator import batch_df, batch_num_records
from workloads.spec import WorkloadSpec

ROUNDS = 5


@pytest.mark.benchmark(group="workload")
@pytest.mark.parametrize("mb", [1.0, 100.0])
def test_generation_rate_and_share_of_ingest(spark, tmp_path, benchmark, mb) -> None:
    spec = WorkloadSpec(seed=1, num_batches=ROUNDS, batch_mb=mb, num_partitions=1)
    warm_up(spark)

    def identity(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:  # pickled by value
        yield from batches

    times: dict[str, list[float]] = {"generate": [], "ingest": [], "plain_write": [], "spark_job_floor": [],
                                     "python_job_floor": []}
    for i in range(ROUNDS):
        t0 = time.perf_counter()
        spark.range(0, 1, 1, 1).write.format("noop").mode("overwrite").save()
        times["spark_job_floor"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        spark.range(0, 1, 1, 1).mapInArrow(identity, "id long").write.format("noop").mode("overwrite").save()
        times["python_job_floor"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        batch_df(spark, spec, i).write.format("noop").mode("overwrite").save()
        times["generate"].append(time.perf_counter() - t0)
        df = batch_df(spark, spec, i).cache()
        df.count()
        table = HudiTable.create(str(tmp_path / f"t{i}"), TableConfig("t", spec.partition_column, "trace_id"))
        t0 = time.perf_counter()
        insert_new_file_groups(table, df)
        times["ingest"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        df.write.mode("overwrite").parquet(str(tmp_path / f"plain{i}"))
        times["plain_write"].append(time.perf_counter() - t0)
        df.unpersist()
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = sum(batch_num_records(spec, i) for i in range(ROUNDS)) / ROUNDS
    info = {"mb": mb, "rows": round(rows), "rows_per_s": round(rows / med["generate"]),
            **{f"{k}_s": round(v, 3) for k, v in med.items()},
            "generation_share_of_ingest": round(med["generate"] / med["ingest"], 3),
            "generation_vs_plain_write": round(med["generate"] / med["plain_write"], 3),
            "python_job_floor_share_of_ingest": round(med["python_job_floor"] / med["ingest"], 3)}
    print("\n", info)
    benchmark.extra_info.update(info)
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
