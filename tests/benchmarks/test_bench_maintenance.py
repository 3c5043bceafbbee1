"""Maintenance benchmark (``make bench-micro``; reported, not asserted).

``LAYOUTBENCH_BENCH_MB`` (default 150) MB of 1 MB files in one partition, written once and copied
for every case: Option 1 compaction, Option 2 clustering unsorted, and clustering sorted by
(service, ts). Each case's time is a ratio to pyarrow doing the same rewrite (same files in, same
number of outputs, same row-group size; sorted for the sorted case) with 2 threads in the same
run, as the median of ``LAYOUTBENCH_BENCH_REPEATS`` (default 3) pairs — goal <= 1.5x. Then the
selective query (one service, three hours; median of 7 rounds, layouts queried in turn) after
sorted clustering vs the small-file layout (goal >= 3x faster) and vs an ideal layout written
once, sorted, with the same row-group size (goal within 1.25x). Row groups of 10k rows let the
query skip row groups.
"""

from __future__ import annotations

import json
import os
import shutil
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
from engines.spark.rewrite import read_files
from engines.table.model import FileSlice
from engines.table.table import HudiTable, TableConfig
from workloads.generator import batch_df, batch_table
from workloads.spec import WorkloadSpec

MB = 1 << 20
TOTAL_MB = int(os.environ.get("LAYOUTBENCH_BENCH_MB", "150"))
REPEATS = int(os.environ.get("LAYOUTBENCH_BENCH_REPEATS", "3"))
SPEC = WorkloadSpec(seed=8, num_batches=TOTAL_MB, batch_mb=1.0, num_partitions=1)
TARGET = 40 * MB
ROW_GROUP = 10_000
CASES = {"option1": None, "unsorted": (), "sorted": ("service", "ts")}


def pyarrow_rewrite(table: HudiTable, slices: list[FileSlice], outputs: int, out_dir: Path, sort: bool) -> float:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        data = pa.concat_tables(pool.map(lambda s: pq.read_table(table.storage.abs(s.path)), slices))
    if sort:
        data = data.sort_by([("service", "ascending"), ("ts", "ascending")])
    step = -(-data.num_rows // outputs)
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda i: pq.write_table(data.slice(i * step, step), out_dir / f"{i}.parquet",
                                               row_group_size=ROW_GROUP), range(outputs)))
    return time.perf_counter() - t0


def interleaved_query_medians(spark, tables: dict[str, HudiTable], params, rounds: int = 7) -> dict[str, float]:
    """Median latency of the selective query per layout, layouts taken in turn every round (load drift
    on a shared machine then hits every layout alike)."""
    snaps = {k: t.view().snapshot() for k, t in tables.items()}
    times: dict[str, list[float]] = {k: [] for k in tables}
    for _ in range(rounds):
        for k, t in tables.items():
            times[k].append(run_query(spark, t.storage, snaps[k], SUITE["service_hours"], params, False).latency_s)
    return {k: statistics.median(v) for k, v in times.items()}


def engine_for(table: HudiTable, case: str) -> AppendCompactionEngine | ClusteringEngine:
    sort = CASES[case]
    if sort is None:
        return AppendCompactionEngine(table, Option1Config(compaction=CompactionConfig(
            small_file_limit=TARGET, target_file_size=TARGET), row_group_rows=ROW_GROUP))
    return ClusteringEngine(table, Option2Config(clustering=ClusteringConfig(
        small_file_limit=TARGET, target_file_size=TARGET, sort_columns=sort), row_group_rows=ROW_GROUP))


def run_case(tmp_path: Path, case: str, repeat: int) -> tuple[float, float, HudiTable, dict]:
    """(ours, pyarrow) seconds of one rewrite of a fresh copy of the small-file table."""
    path = tmp_path / f"{case}-{repeat}"
    shutil.copytree(tmp_path / "small", path)
    table = HudiTable.open(str(path))
    engine = engine_for(table, case)
    instant = engine.schedule()
    plan = engine.load_plan(instant)
    outputs = (sum(int(op.metrics["estimatedOutputFiles"]) for op in plan.operations) if case == "option1"
               else sum(g.num_output_files for g in plan.groups))
    # the reference first: Option 1 in the RFC's order deletes its inputs
    ref = pyarrow_rewrite(table, table.view().snapshot(), outputs, tmp_path / f"{case}-{repeat}-pa",
                          sort=case == "sorted")
    t0 = time.perf_counter()
    res = engine.execute(instant)
    ours = time.perf_counter() - t0
    shutil.rmtree(tmp_path / f"{case}-{repeat}-pa")
    return ours, ref, table, {"files_out": res.files_out,
                              "output_mb": [round(s.size_bytes / MB, 1) for s in table.view().snapshot()]}


@pytest.mark.benchmark(group="maintenance")
def test_maintenance_vs_pyarrow_and_selective_query(spark, tmp_path, benchmark) -> None:
    base = HudiTable.create(str(tmp_path / "small"), TableConfig("b", "dt", "trace_id"))
    for b in range(SPEC.num_batches):
        insert_new_file_groups(base, batch_df(spark, SPEC, b), num_tasks=1, row_group_rows=ROW_GROUP)
    params = choose_params(pa.concat_tables([batch_table(SPEC, b) for b in range(SPEC.num_batches)]))
    small = base.view().snapshot()
    figures: dict[str, object] = {"input_mb": round(sum(s.size_bytes for s in small) / MB, 1), "files_in": len(small)}
    layouts = {"small_files": base}
    for case in CASES:
        pairs, last = [], None
        for r in range(REPEATS):
            ours, ref, table, info = run_case(tmp_path, case, r)
            pairs.append((ours, ref))
            if last is not None:
                shutil.rmtree(last.base_uri)
            last = table
        assert last is not None
        layouts[case] = last
        figures[case] = {**info, "ours_s": [round(o, 2) for o, _ in pairs],
                         "pyarrow_2_threads_s": [round(p, 2) for _, p in pairs],
                         "ratio": round(statistics.median(o / p for o, p in pairs), 2)}
        print(case, json.dumps(figures[case]), flush=True)
    ideal = HudiTable.create(str(tmp_path / "ideal"), TableConfig("i", "dt", "trace_id"))
    rows = read_files(spark, base.storage, small)  # same rows, no driver-side copy
    insert_new_file_groups(ideal, rows, num_tasks=1, sort_columns=["service", "ts"], row_group_rows=ROW_GROUP,
                           target_file_bytes=TARGET)
    layouts["ideal"] = ideal
    queries = interleaved_query_medians(spark, layouts, params)
    figures["query_s"] = {k: round(v, 3) for k, v in queries.items()}
    figures["query_speedup_vs_small_files"] = round(queries["small_files"] / queries["sorted"], 2)
    figures["query_vs_ideal"] = round(queries["sorted"] / queries["ideal"], 2)
    print("\n" + json.dumps(figures, indent=2))
    benchmark.extra_info.update(figures)
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
