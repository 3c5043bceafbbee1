"""The one writer of a COW insert bucket (pure pyarrow): every route calls it, in the driver or inside a
Spark task (:func:`engines.cow_baseline.insert.write_buckets`; the gate
:func:`engines.files.gate.choose_route` decides where).

A bucket is the batch rows of its rank range plus, when it tops up a small file, that file's old rows with
their ``_hoodie_commit_time`` and ``_hoodie_commit_seqno`` (HoodieMergeHandle copies old records as they
are; the new rows get this instant's, the writer's coalesce). :func:`write_bucket` puts both in the bucket's
target schema, sorts them by record key (stable: old rows first among equal keys) and writes one file as
task 0 writes it, in the Arrow batches ``mapInArrow`` would hand that task (they decide the row groups).
"""

from __future__ import annotations

import pyarrow as pa

from engines.files.inputs import rebatch
from engines.files.splits import sort_indices
from engines.files.writer import KEPT_META, WriteSpec, write_partition_rows
from engines.table.model import WriteStat


def _in_schema(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """``rows`` in ``schema``: its columns in order, cast; a kept meta column they lack is null (new rows)."""
    for c in KEPT_META:
        if c in schema.names and c not in rows.column_names:
            rows = rows.append_column(c, pa.nulls(rows.num_rows, pa.string()))
    return rows.select(schema.names).cast(schema)


def write_bucket(spec: WriteSpec, new_rows: pa.Table, old_rows: pa.Table | None, schema: pa.Schema,
                 batch_rows: int, attempt: int = 0) -> list[WriteStat]:
    """Write one bucket with ``spec``: ``old_rows`` (its small file's, with :data:`KEPT_META`; None for a
    new file group) then ``new_rows``, both in the bucket's target ``schema``, sorted by ``spec.record_key``,
    in Arrow batches of ``batch_rows`` rows, as task 0 (``attempt``: the task attempt); the write stats,
    sorted by path."""
    parts = ([] if old_rows is None else [_in_schema(old_rows, schema)]) + [_in_schema(new_rows, schema)]
    merged = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    rows = merged.take(sort_indices(merged, [spec.record_key]))
    # one chunk per batch, as Spark hands it: chunk boundaries move Parquet page boundaries
    chunks = (t.combine_chunks() for t in rebatch([rows], batch_rows))
    return sorted(write_partition_rows(spec, chunks, 0, attempt), key=lambda s: s.path)
