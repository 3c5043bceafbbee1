"""The input base files of a rewrite or a top-up, as pyarrow tasks read them without Spark.

:func:`inspect_inputs` reads the footers once and says whether pyarrow can stand in for Spark's read
(every file written by pyarrow, so its footer holds the Arrow schema and pyarrow reads exactly the types
Spark would hand a task, and all of one schema); :func:`read_run` reads a run of rows with row-group
reads; :func:`rebatch` re-cuts a stream of tables into the batches a task writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from engines.files.splits import Run
from engines.table.model import META_COLUMNS, FileSlice, commit_order
from engines.table.storage import Storage

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
