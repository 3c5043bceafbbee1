"""Rewrites without a Spark shuffle: Spark tasks read the input base files with pyarrow.

The tasks themselves are pure pyarrow (:mod:`engines.files.rewrite_tasks`); this module runs them.

Used by :func:`engines.spark.rewrite.rewrite_files` when every input file was written by pyarrow
(its footer holds the Arrow schema, so pyarrow reads exactly the types Spark would hand a task)
and all share one schema; otherwise the Spark path runs.

- Unsorted (ordering ``none``): the input files (oldest commit first, then by path:
  :func:`engines.table.model.commit_order`) are concatenated and cut into
  ``num_outputs`` contiguous runs of near-equal row counts (:func:`engines.files.splits.split_rows`);
  one task per output reads its run with row-group reads and writes one file. Rows keep their input order.
  Split ``hudi``: the files in the order given (a clustering plan's), whole files per output as
  Apache Hudi's coalesce groups them (:func:`engines.files.splits.split_files`).
- Sorted (``linear``): stage 1, one task per input run sorts it by (sort columns, record key),
  nulls first, writes it as an uncompressed Arrow IPC file under ``.hoodie/.temp/<instant>/`` and
  returns keys sampled every ``1/SAMPLES_PER_RUN`` of its rows; the driver picks key ranges of
  near-equal row counts (:func:`engines.files.splits.plan_cuts`); stage 2, one task per output
  binary-searches its range in every sorted run, merges it chunk by chunk (``CHUNK_ROWS``) and writes one file.
  Outputs cover disjoint, ascending key ranges. The temporary directory is removed afterwards
  (and by rollback after a crash). Inputs of at most ``SINGLE_TASK_BYTES`` (the gate's
  :func:`engines.files.gate.sorted_in_one_task`) skip both stages: one
  task sorts every row and writes the outputs as near-equal row runs (:func:`sort_and_write`).
- Small rewrites (:func:`engines.files.gate.choose_route`: at most ``LOCAL_BYTES`` of uncompressed
  input) run their tasks in the driver process, on a thread each: no Spark job, whose fixed cost
  (scheduling, shipping the task, a Python worker's round trip) is larger than the rewrite itself. Task indices and attempt 0 are the same
  as a Spark job's, so the files and bytes are the same too.

Everything is a pure function of the inputs, so reruns write the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pyarrow.fs as pafs
from pyspark.sql import SparkSession

from engines.config.registry import SORT_RUN_BYTES
from engines.files.gate import sorted_in_one_task
from engines.files.inputs import Inputs
from engines.files.job import run_write_job
from engines.files.rewrite_tasks import (
    CHUNK_ROWS,
    TEMP_DIR,
    merge_range,
    sort_and_write,
    sort_keys,
    sort_run,
    write_run,
)
from engines.files.splits import plan_cuts, split_files, split_rows
from engines.files.writer import WriteSpec, filesystem_for
from engines.table.model import WriteStat

# RUN_BYTES: the uncompressed input bytes one sorting task holds at most. Whether one task sorts and
# writes every output instead is the gate's (engines.files.gate.sorted_in_one_task).
RUN_BYTES = SORT_RUN_BYTES
T = TypeVar("T")


def _tasks(spark: SparkSession, n: int, fn: Callable[[int, int], T], local: bool = False) -> list[T]:
    """Run ``fn(index, attempt)`` as ``n`` Spark tasks (``local``: on driver threads, attempt 0);
    their results in index order."""
    if local:
        if n == 1:
            return [fn(0, 0)]
        with ThreadPoolExecutor(min(n, max(1, spark.sparkContext.defaultParallelism))) as pool:
            return list(pool.map(lambda i: fn(i, 0), range(n)))

    def body(index: int, _rows: Iterator[int]) -> Iterator[tuple[int, T]]:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        yield index, fn(index, ctx.attemptNumber() if ctx else 0)

    out = spark.sparkContext.parallelize(range(n), n).mapPartitionsWithIndex(body).collect()
    return [r for _, r in sorted(out, key=lambda x: x[0])]


def rewrite_unsorted(spark: SparkSession, inputs: Inputs, spec: WriteSpec, num_outputs: int,
                     fault_point: str | None, split: str = "even", local: bool = False) -> list[WriteStat]:
    """One task per output: a contiguous run of the input rows, in input order (``split`` even:
    near-equal row counts; hudi: whole files, as Apache Hudi's coalesce); ``local``: the tasks in the driver
    (:func:`engines.files.gate.choose_route`)."""
    splitter = split_files if split == "hudi" else split_rows
    runs = splitter(inputs.row_counts, num_outputs)
    inputs = inputs.for_tasks(local)
    stats = run_write_job(spec, fault_point, lambda: _tasks(
        spark, len(runs), lambda i, a: write_run(spec, inputs, runs[i], i, a), local))
    return sorted((s for per_task in stats for s in per_task), key=lambda s: s.path)


def rewrite_sorted(spark: SparkSession, inputs: Inputs, spec: WriteSpec, num_outputs: int,
                   sort_columns: Sequence[str], fault_point: str | None, local: bool = False) -> list[WriteStat]:
    """Sort runs of the input (stage 1), then merge disjoint key ranges into the outputs (stage 2);
    ``local``: the tasks in the driver."""
    keys = sort_keys(sort_columns, spec.record_key)
    inputs = inputs.for_tasks(local)
    if sorted_in_one_task(inputs.total_bytes):
        stats = run_write_job(spec, fault_point, lambda: _tasks(
            spark, 1, lambda i, a: sort_and_write(spec, inputs, keys, num_outputs, a), local))
        return sorted(stats[0], key=lambda s: s.path)
    parallelism = max(1, spark.sparkContext.defaultParallelism)
    num_runs = parallelism * max(1, math.ceil(inputs.total_bytes / (parallelism * RUN_BYTES)))
    num_runs = max(1, min(num_runs, sum(inputs.row_counts)))
    runs = split_rows(inputs.row_counts, num_runs)
    fs, root = filesystem_for(spec.base_uri)
    temp = f"{root}/{TEMP_DIR}/{spec.instant}/{spec.file_id_prefix or 'rewrite'}"
    run_paths = [f"{temp}/run-{i}.arrow" for i in range(num_runs)]
    try:
        samples = [s for per_run in _tasks(spark, num_runs, lambda i, a: sort_run(spec, inputs, runs[i], keys,
                                                                                   run_paths[i]), local)
                   for s in per_run]
        plan = plan_cuts(samples, num_outputs, CHUNK_ROWS)
        stats = run_write_job(spec, fault_point, lambda: _tasks(
            spark, num_outputs, lambda i, a: merge_range(spec, run_paths, keys, plan[i], i, a) if plan[i] else [],
            local))
    finally:
        if fs.get_file_info(temp).type == pafs.FileType.Directory:
            fs.delete_dir(temp)
    return sorted((s for per_task in stats for s in per_task), key=lambda s: s.path)
