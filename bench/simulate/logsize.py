"""The bytes of a MERGE_ON_READ log file the simulator writes, from the real log format (T21).

A deltacommit writes one log file per file group holding an updated key, and one per small file group
that takes inserts (``insert_small_file_limit`` > 0): one Avro data block
(:func:`engines.table.logfile.avro_data_block`: ``#HUDI#`` magic, header with the instant and the
Avro schema, a length-prefixed datum per record, footer) of the group's rows with Hudi's meta
fields (:func:`engines.files.deltacommit.write_deltacommit`). Two ways:

- **exact** (the simulator has the rows): the block encoded by the real encoder from the batch's
  correction rows (:func:`workloads.truth.corrections_of`) in the group, or the batch's inserted rows
  the group takes (:func:`batch_by_partition`), with the meta fields the engine gives them (instant,
  sequence number, record key, partition path, fileId): the same bytes;
- **estimated** (no rows): ``overhead + records * per_record``, both measured once per workload by
  encoding the first batch with corrections (:func:`log_size_model`), or the first batch's inserted
  rows (:func:`insert_log_size_model`), through the same encoder: the block's fixed bytes (header
  with the schema, framing, footer) and the mean bytes of a record.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from engines.table.logfile import avro_data_block
from engines.table.model import META_COLUMNS, new_file_id
from engines.table.schema import avro_schema_string
from workloads.generator import batch_table
from workloads.spec import WorkloadSpec
from workloads.truth import corrections_of

RECORD_KEY = "trace_id"
_SAMPLE_INSTANT = "20260101000000000"  # an instant's 17 characters (every logical instant has them)


@lru_cache(maxsize=256)
def corrections_by_partition(spec: WorkloadSpec, b: int) -> dict[str, pa.Table]:
    """Batch ``b``'s correction rows per partition path (``<column>=<value>``), in the upsert's order."""
    if spec.corrections_fraction <= 0 or b == 0:
        return {}
    upd = corrections_of(spec, b)
    if upd.num_rows == 0:
        return {}
    values = upd.column(spec.partition_column).cast(pa.string())
    return {f"{spec.partition_column}={v}": upd.filter(pc.equal(values, v))
            for v in sorted(pc.unique(values).to_pylist())}


@lru_cache(maxsize=16)
def batch_by_partition(spec: WorkloadSpec, b: int) -> dict[str, pa.Table]:
    """Batch ``b``'s inserted rows per partition path (``<column>=<value>``), in the batch's order (the
    order the engine's deltacommit hands a partition's inserts to its small file groups)."""
    rows = batch_table(spec, b)
    values = rows.column(spec.partition_column).cast(pa.string())
    return {f"{spec.partition_column}={v}": rows.filter(pc.equal(values, v))
            for v in sorted(pc.unique(values).to_pylist())}


@lru_cache(maxsize=8)
def _schema_json(schema: pa.Schema) -> str:
    return avro_schema_string(schema)


def log_block_bytes(rows: pa.Table, instant: str, partition: str, file_id: str) -> int:
    """The bytes of the log file a deltacommit writes for ``rows`` (one file group's updates, in the
    upsert's order) at ``instant``: the real Avro data block, meta fields as the engine sets them."""
    data_cols = [c for c in rows.column_names if c not in META_COLUMNS]
    keys = rows.column(RECORD_KEY).cast(pa.string()).to_pylist()
    records = [{"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{i}",
                "_hoodie_record_key": keys[i], "_hoodie_partition_path": partition,
                "_hoodie_file_name": file_id, **row}
               for i, row in enumerate(rows.select(data_cols).to_pylist())]
    return len(avro_data_block(instant, _schema_json(rows.schema), records))


class LogSizeModel(NamedTuple):
    """A log file's bytes as ``overhead + records * per_record`` (the estimated mode)."""

    overhead: int
    per_record: float

    def bytes_of(self, records: int) -> int:
        return int(round(self.overhead + records * self.per_record))


def _measured(partition: str, rows: pa.Table) -> LogSizeModel:
    """``rows`` encoded as one file group's log (a fileId of the writer's length): the empty block's
    bytes and the mean bytes a record adds."""
    fid = new_file_id("", _SAMPLE_INSTANT, partition, 0, 0, 0)
    empty = log_block_bytes(rows.slice(0, 0), _SAMPLE_INSTANT, partition, fid)
    full = log_block_bytes(rows, _SAMPLE_INSTANT, partition, fid)
    return LogSizeModel(empty, (full - empty) / max(1, rows.num_rows))


@lru_cache(maxsize=64)
def log_size_model(spec: WorkloadSpec) -> LogSizeModel:
    """The estimated mode's model for ``spec``'s corrections, measured on its first batch with
    corrections as one file group's log; without corrections the overhead of an empty block of the
    batch schema and no per-record bytes."""
    for b in range(1, min(spec.num_batches, 8)):
        parts = corrections_by_partition(spec, b)
        if parts:
            return _measured(*next(iter(parts.items())))
    return LogSizeModel(0, 0.0)


@lru_cache(maxsize=64)
def insert_log_size_model(spec: WorkloadSpec) -> LogSizeModel:
    """The estimated mode's model for inserts appended to small file groups' logs: the first batch's
    first partition's rows encoded as one file group's log."""
    return _measured(*next(iter(batch_by_partition(spec, 0).items())))
