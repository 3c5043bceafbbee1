"""The tasks of a rewrite without a shuffle, as pure pyarrow functions: the same in a Spark task or in
the driver (:mod:`engines.spark.arrow_rewrite` runs them).

- Unsorted: :func:`write_run` writes a contiguous run of the input rows, in input order.
- Sorted, two stages: :func:`sort_run` sorts one input run by (sort columns, record key), nulls first,
  writes it as an uncompressed Arrow IPC file under ``.hoodie/.temp/<instant>/`` and returns keys sampled
  every ``1/SAMPLES_PER_RUN`` of its rows; :func:`merge_range` binary-searches one output's key range in
  every sorted run, merges it chunk by chunk (``CHUNK_ROWS``) and writes one file.
- Sorted, small inputs: :func:`sort_and_write` sorts every row in one task and writes the outputs as
  near-equal row runs.

Everything is a pure function of the inputs, so reruns write the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
import pyarrow.fs as pafs

from engines.files.inputs import Inputs, read_run, rebatch
from engines.files.ordering import sort_keys as sort_keys  # the one rule; arrow_rewrite's name for it
from engines.files.splits import Key, Run, search, sort_indices, sort_key, split_rows
from engines.files.writer import WriteSpec, filesystem_for, write_partition_rows
from engines.table.model import WriteStat

CHUNK_ROWS = 262_144  # rows merged at a time by an output task
SAMPLES_PER_RUN = 2048
TEMP_DIR = ".hoodie/.temp"


def write_run(spec: WriteSpec, inputs: Inputs, run: Iterable[Run], task: int, attempt: int) -> list[WriteStat]:
    """Unsorted rewrite task: the rows of ``run`` in input order, written as task ``task``."""
    fs, root = filesystem_for(spec.base_uri)
    return write_partition_rows(spec, rebatch(read_run(fs, root, inputs, run), spec.row_group_rows), task, attempt)


def _open_ipc(fs: pafs.FileSystem, path: str) -> pa.Table:
    source = pa.memory_map(path) if isinstance(fs, pafs.LocalFileSystem) else fs.open_input_file(path)
    return pa.ipc.open_file(source).read_all()


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
