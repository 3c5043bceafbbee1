"""Rewrites without a Spark shuffle: Spark tasks read the input base files with pyarrow.

Used by :func:`engines.spark.rewrite.rewrite_files` when every input file was written by pyarrow
(its footer holds the Arrow schema, so pyarrow reads exactly the types Spark would hand a task)
and all share one schema; otherwise the Spark path runs.

- Unsorted (ordering ``none``): the input files (oldest commit first, then by path:
  :func:`engines.table.model.commit_order`) are concatenated and cut into
  ``num_outputs`` contiguous runs of near-equal row counts (:func:`splits.split_rows`); one task
  per output reads its run with row-group reads and writes one file. Rows keep their input order.
  Split ``hudi``: the files in the order given (a clustering plan's), whole files per output as
  Apache Hudi's coalesce groups them (:func:`splits.split_files`).
- Sorted (``linear``): stage 1, one task per input run sorts it by (sort columns, record key),
  nulls first, writes it as an uncompressed Arrow IPC file under ``.hoodie/.temp/<instant>/`` and
  returns keys sampled every ``1/SAMPLES_PER_RUN`` of its rows; the driver picks key ranges of
  near-equal row counts (:func:`splits.plan_cuts`); stage 2, one task per output binary-searches
  its range in every sorted run, merges it chunk by chunk (``CHUNK_ROWS``) and writes one file.
  Outputs cover disjoint, ascending key ranges. The temporary directory is removed afterwards
  (and by rollback after a crash). Inputs of at most ``SINGLE_TASK_BYTES`` skip both stages: one
  task sorts every row and writes the outputs as near-equal row runs (:func:`sort_and_write`).
- Small rewrites (at most ``LOCAL_BYTES`` of uncompressed input) run their tasks in the driver
  process, on a thread each: no Spark job, whose fixed cost (scheduling, shipping the task, a Python
  worker's round trip) is larger than the rewrite itself. Task indices and attempt 0 are the same
  as a Spark job's, so the files and bytes are the same too.

Everything is a pure function of the inputs, so reruns write the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TypeVar

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from engines.config.registry import SINGLE_TASK_BYTES, SORT_RUN_BYTES
from engines.spark.splits import Key, Run, plan_cuts, search, sort_indices, sort_key, split_files, split_rows
from engines.spark.writer import WriteSpec, filesystem_for, run_write_job, write_partition_rows
from engines.table.model import META_COLUMNS, FileSlice, WriteStat, commit_order
from engines.table.storage import Storage

# RUN_BYTES: the uncompressed input bytes one sorting task holds at most. Below SINGLE_TASK_BYTES of
# uncompressed input one task sorts and writes every output: a second Spark job and the temporary runs
# cost more than the parallel sort saves (measured on the CI scenario).
RUN_BYTES = SORT_RUN_BYTES
# At most this many uncompressed input bytes, the tasks run in the driver (module docstring). Measured
# on the loaded 2-core machine (unsorted, medians of 4): a 1-task no-op Spark job costs 0.2-0.4 s;
# 3 MB in, 1 output: Spark 0.43 s, driver 0.09 s; 25 MB, 1 output: 0.64 / 0.33 s; 100 MB, 4 outputs:
# 2.64 / 1.94 s. Option 1/2 runs of the default scenario read 1-27 MB on disk (3-85 MB uncompressed).
# The bound is the memory one sorting task holds (RUN_BYTES), so no driver holds more than a task would.
LOCAL_BYTES = RUN_BYTES
T = TypeVar("T")
CHUNK_ROWS = 262_144  # rows merged at a time by an output task
SAMPLES_PER_RUN = 2048
TEMP_DIR = ".hoodie/.temp"
_SORTABLE = (pa.types.is_string, pa.types.is_large_string, pa.types.is_integer, pa.types.is_timestamp,
             pa.types.is_date, pa.types.is_boolean, pa.types.is_binary)


@dataclass(frozen=True)
class Inputs:
    """The input files as the tasks read them."""

    paths: list[str]  # relative to the table base, sorted
    group_rows: list[list[int]]  # rows of each row group, per file
    columns: list[str]
    schema: pa.Schema
    total_bytes: int  # uncompressed, from the row-group metadata
    # the parsed footers, for tasks in the driver: a base file's footer carries Hudi's bloom filter
    # (~431 KB per 60000 keys), parsed once here rather than again by every reader. Not shipped to
    # Spark tasks (:meth:`for_tasks`), which parse their own.
    footers: tuple[pq.FileMetaData, ...] = field(default=(), compare=False, repr=False)

    @property
    def row_counts(self) -> list[int]:
        return [sum(g) for g in self.group_rows]

    def for_tasks(self, local: bool) -> Inputs:
        """These inputs as the tasks get them: with the footers in the driver, without on Spark."""
        return self if local else replace(self, footers=())


def inspect_inputs(storage: Storage, slices: Sequence[FileSlice], keep_meta: bool,
                   keep_order: bool = False) -> Inputs | None:
    """Footers of ``slices`` (in commit order, or as given with ``keep_order``); None when pyarrow
    cannot stand in for Spark's read."""
    paths = list(dict.fromkeys(s.path for s in (slices if keep_order else commit_order(slices))))
    if not paths:
        return None
    with ThreadPoolExecutor(8) as pool:
        footers = list(pool.map(storage.parquet_metadata, paths))
    schemas = []
    for md in footers:
        if b"ARROW:schema" not in (md.metadata or {}):
            return None
        schemas.append(md.schema.to_arrow_schema().remove_metadata())
    if any(not s.equals(schemas[0]) for s in schemas[1:]):
        return None
    columns = [n for n in schemas[0].names if keep_meta or n not in META_COLUMNS]
    schema = pa.schema([schemas[0].field(c) for c in columns])
    return Inputs(paths, [[md.row_group(i).num_rows for i in range(md.num_row_groups)] for md in footers],
                  columns, schema, sum(md.row_group(i).total_byte_size for md in footers
                                       for i in range(md.num_row_groups)), tuple(footers))


def sortable(schema: pa.Schema, columns: Sequence[str]) -> bool:
    """Whether the pyarrow sorted path orders these columns exactly as Spark would (strings, binary,
    integers, booleans, dates, timestamps; floats go to Spark, whose NaN ordering differs)."""
    return all(c in schema.names and any(t(schema.field(c).type) for t in _SORTABLE) for c in columns)


def read_run(fs: pafs.FileSystem, root: str, inputs: Inputs, run: Iterable[Run]) -> Iterator[pa.Table]:
    """The rows of ``run`` in order, one row-group slice at a time."""
    for f, start, n in run:
        with fs.open_input_file(f"{root}/{inputs.paths[f]}") as src:
            pf = pq.ParquetFile(src, metadata=inputs.footers[f] if inputs.footers else None)
            offset = 0
            for g, rows in enumerate(inputs.group_rows[f]):
                a, b = max(offset, start), min(offset + rows, start + n)
                if a < b:
                    t = pf.read_row_group(g, columns=inputs.columns, use_threads=False)
                    yield t.slice(a - offset, b - a)
                offset += rows


def rebatch(tables: Iterable[pa.Table], rows: int) -> Iterator[pa.Table]:
    """Re-cut a stream of tables into tables of exactly ``rows`` rows (the last may be shorter)."""
    buf: list[pa.Table] = []
    held = 0
    for t in tables:
        buf.append(t)
        held += t.num_rows
        if held < rows:
            continue
        merged = pa.concat_tables(buf)
        start = 0
        while held - start >= rows:
            yield merged.slice(start, rows)
            start += rows
        buf = [merged.slice(start)] if start < held else []
        held -= start
    if held:
        yield pa.concat_tables(buf)


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
                     fault_point: str | None, split: str = "even") -> list[WriteStat]:
    """One task per output: a contiguous run of the input rows, in input order (``split`` even:
    near-equal row counts; hudi: whole files, as Apache Hudi's coalesce)."""
    splitter = split_files if split == "hudi" else split_rows
    runs = splitter(inputs.row_counts, num_outputs)
    local = inputs.total_bytes <= LOCAL_BYTES
    inputs = inputs.for_tasks(local)

    def task(index: int, attempt: int) -> list[WriteStat]:
        fs, root = filesystem_for(spec.base_uri)
        return write_partition_rows(spec, rebatch(read_run(fs, root, inputs, runs[index]), spec.row_group_rows),
                                    index, attempt)

    stats = run_write_job(spec, fault_point, lambda: _tasks(spark, len(runs), task, local))
    return sorted((s for per_task in stats for s in per_task), key=lambda s: s.path)


def _open_ipc(fs: pafs.FileSystem, path: str) -> pa.Table:
    source = pa.memory_map(path) if isinstance(fs, pafs.LocalFileSystem) else fs.open_input_file(path)
    return pa.ipc.open_file(source).read_all()


def _sort_keys(sort_columns: Sequence[str], record_key: str) -> list[str]:
    cols = list(sort_columns)
    return cols + ([record_key] if record_key not in cols else [])


def sorted_rows(fs: pafs.FileSystem, root: str, inputs: Inputs, run: Iterable[Run], keys: Sequence[str]) -> pa.Table:
    """The rows of ``run`` in one table, sorted by ``keys``."""
    parts = list(read_run(fs, root, inputs, run))
    table = (pa.concat_tables(parts) if parts else inputs.schema.empty_table()).combine_chunks()
    return table.take(sort_indices(table, keys))  # take on one chunk per column: ~5x faster


def sort_run(spec: WriteSpec, inputs: Inputs, run: list[Run], keys: Sequence[str],
             path: str) -> list[tuple[Key, int]]:
    """Stage 1 task: sort ``run`` by ``keys`` into the IPC file ``path``; return its sampled keys."""
    fs, root = filesystem_for(spec.base_uri)
    table = sorted_rows(fs, root, inputs, run, keys)
    fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
    with fs.open_output_stream(path) as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=65_536)
    n = table.num_rows
    stride = max(1, math.ceil(n / SAMPLES_PER_RUN))
    picked = table.select(list(keys)).take(pa.array(range(0, n, stride), pa.int64())).to_pydict()
    return [(sort_key(vals), min(stride, n - i * stride))
            for i, vals in enumerate(zip(*(picked[c] for c in keys), strict=True))]


def merge_range(spec: WriteSpec, run_paths: Sequence[str], keys: Sequence[str], cuts: list[Key | None],
                task: int, attempt: int) -> list[WriteStat]:
    """Stage 2 task: the rows of every sorted run between ``cuts[0]`` and ``cuts[-1]``, merged chunk by
    chunk, written as one file."""
    fs, _ = filesystem_for(spec.base_uri)
    tables = [_open_ipc(fs, p) for p in run_paths]
    positions = []
    for t in tables:
        cols = [t.column(c) for c in keys]
        n = t.num_rows

        def key_at(i: int, cols: list[pa.ChunkedArray] = cols) -> Key:
            return sort_key([c[i].as_py() for c in cols])

        pos, lo = [], 0
        for j, k in enumerate(cuts):
            lo = (0 if j == 0 else n) if k is None else search(key_at, n, k, lo)
            pos.append(lo)
        positions.append(pos)

    def chunks() -> Iterator[pa.Table]:
        for j in range(len(cuts) - 1):
            pieces = [t.slice(p[j], p[j + 1] - p[j]) for t, p in zip(tables, positions, strict=True)]
            chunk = pa.concat_tables([x for x in pieces if x.num_rows] or pieces[:1]).combine_chunks()
            if chunk.num_rows:
                yield chunk.take(sort_indices(chunk, keys))

    return write_partition_rows(spec, rebatch(chunks(), spec.row_group_rows), task, attempt)


def sort_and_write(spec: WriteSpec, inputs: Inputs, keys: Sequence[str], num_outputs: int,
                   attempt: int) -> list[WriteStat]:
    """Small inputs, one task: sort every row by ``keys``, cut into ``num_outputs`` near-equal row
    runs (disjoint, ascending key ranges: the record key makes keys unique) and write one file each,
    output ``i`` named as task ``i`` would name it."""
    fs, root = filesystem_for(spec.base_uri)
    table = sorted_rows(fs, root, inputs, [(f, 0, n) for f, n in enumerate(inputs.row_counts)], keys)
    stats: list[WriteStat] = []
    for i, run in enumerate(split_rows([table.num_rows], num_outputs)):
        for _, start, n in run:
            stats += write_partition_rows(spec, rebatch([table.slice(start, n)], spec.row_group_rows), i, attempt)
    return stats


def rewrite_sorted(spark: SparkSession, inputs: Inputs, spec: WriteSpec, num_outputs: int,
                   sort_columns: Sequence[str], fault_point: str | None) -> list[WriteStat]:
    """Sort runs of the input (stage 1), then merge disjoint key ranges into the outputs (stage 2)."""
    keys = _sort_keys(sort_columns, spec.record_key)
    local = inputs.total_bytes <= LOCAL_BYTES
    inputs = inputs.for_tasks(local)
    if inputs.total_bytes <= SINGLE_TASK_BYTES:
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
