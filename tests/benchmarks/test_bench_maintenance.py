"""Maintenance benchmarks (``make bench-micro``; reported, not asserted): ~150 MB of 1 MB files
compacted (Option 1) and clustered unsorted / sorted by (service, ts) (Option 2), each as a ratio to
pyarrow rewriting the same files into the same number of outputs with 2 threads in the same run;
and the selective query after sorted clustering vs the small-file layout and vs an ideal layout
written once, sorted, with the same row-group size."""

from __future__ import annotations

import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.queries import SUITE, choose_params, run_query
from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.engine import AppendCompactionEngine, Option1Config
from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.spark.insert import insert_new_file_groups
from engines.table.model import FileSlice
from engines.table.table import HudiTable, TableConfig
from workloads.generator import batch_df, batch_table
from workloads.spec import WorkloadSpec

MB = 1 << 20
SPEC = WorkloadSpec(seed=8, num_batches=150, batch_mb=1.0, num_partitions=1)
TARGET = 40 * MB
ROW_GROUP = 50_000


def pyarrow_rewrite(table: HudiTable, slices: list[FileSlice], outputs: int, out_dir: Path, sort: bool) -> float:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        data = pa.concat_tables(pool.map(lambda s: pq.read_table(table.storage.abs(s.path)), slices))
    if sort:
        data = data.sort_by([("service", "ascending"), ("ts", "ascending")])
    step = -(-data.num_rows // outputs)
    parts = [data.slice(i * step, step) for i in range(outputs)]
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda ip: pq.write_table(ip[1], out_dir / f"{ip[0]}.parquet", row_group_size=ROW_GROUP),
                      enumerate(parts)))
    return time.perf_counter() - t0


def small_file_table(spark, path: Path) -> HudiTable:
    table = HudiTable.create(str(path), TableConfig("b", "dt", "trace_id"))
    for b in range(SPEC.num_batches):
        insert_new_file_groups(table, batch_df(spark, SPEC, b), num_tasks=1, row_group_rows=ROW_GROUP)
    return table


def median_query(spark, table_storage, slices, name, params, runs=5) -> float:
    return statistics.median(run_query(spark, table_storage, slices, SUITE[name], params, False).latency_s
                             for _ in range(runs))


@pytest.mark.benchmark(group="maintenance")
def test_maintenance_vs_pyarrow(spark, tmp_path, benchmark) -> None:
    figures = {}
    truth = pa.concat_tables([batch_table(SPEC, b) for b in range(SPEC.num_batches)])
    params = choose_params(truth)
    for name in ("option1", "option2", "option2_sorted"):
        table = small_file_table(spark, tmp_path / name)
        before = table.view().snapshot()
        small_q = median_query(spark, table.storage, before, "service_hours", params)
        if name == "option1":
            engine = AppendCompactionEngine(table, Option1Config(
                compaction=CompactionConfig(small_file_limit=TARGET, target_file_size=TARGET), row_group_rows=ROW_GROUP))
        else:
            sort = ("service", "ts") if name == "option2_sorted" else ()
            engine = ClusteringEngine(table, Option2Config(clustering=ClusteringConfig(
                small_file_limit=TARGET, target_file_size=TARGET, sort_columns=sort), row_group_rows=ROW_GROUP))
        instant = engine.schedule()
        plan = engine.load_plan(instant)
        outputs = (sum(int(op.metrics["estimatedOutputFiles"]) for op in plan.operations) if name == "option1"
                   else sum(g.num_output_files for g in plan.groups))
        # the reference first: Option 1 in the RFC's order deletes its inputs
        ref = pyarrow_rewrite(table, before, outputs, tmp_path / f"{name}_pa", sort=name == "option2_sorted")
        t0 = time.perf_counter()
        res = engine.execute(instant)
        ours = time.perf_counter() - t0
        after = table.view().snapshot()
        figures[name] = {"input_mb": round(sum(s.size_bytes for s in before) / MB, 1), "files_in": len(before),
                         "files_out": res.files_out, "ours_s": round(ours, 2), "pyarrow_s": round(ref, 2),
                         "ratio": round(ours / ref, 2), "selective_query_small_files_s": round(small_q, 3),
                         "selective_query_after_s": round(median_query(spark, table.storage, after, "service_hours",
                                                                       params), 3)}
    ideal_dir = tmp_path / "ideal"
    ideal = HudiTable.create(str(ideal_dir), TableConfig("i", "dt", "trace_id"))
    rows = spark.createDataFrame(truth.to_pandas(), schema=batch_df(spark, SPEC, 0).schema)
    insert_new_file_groups(ideal, rows, num_tasks=1, sort_columns=["service", "ts"], row_group_rows=ROW_GROUP,
                           target_file_bytes=TARGET)
    figures["ideal_sorted_layout_query_s"] = round(median_query(spark, ideal.storage, ideal.view().snapshot(),
                                                                "service_hours", params), 3)
    print("\n" + json.dumps(figures, indent=2))
    benchmark.extra_info.update(figures)
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
