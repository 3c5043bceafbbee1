"""One MERGE_ON_READ ``deltacommit`` (table version 6), written without Spark.

It runs through the timeline (requested → inflight → completed, :mod:`engines.table.transaction`):
rows of keys the table does not hold go to new base files (the shared base-file writer, as an
insert); rows of keys it holds, and deletes, go to one new log file per touched file slice
(``.log.<last version + 1>``, :mod:`engines.table.logfile`): one Avro data block, then a delete
block. Every deltacommit writes new log files and never appends to one, as Apache Hudi 1.2 does
(and every Hudi on storage without append, such as object stores), so a log file belongs to one
instant and a rollback deletes it. The completed instant is Hudi's commit metadata with a
``HoodieDeltaWriteStat`` per log file (``baseFile``, ``logFiles``, ``logVersion``, ``logOffset``).

Keys are located by reading the latest slices' record keys (a full scan: right for the table
core's tests; an index for benchmark-sized tables comes with the MOR engine). Routing is
non-global, as Hudi's default index: a key is looked up in the partition its row names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engines.files.writer import WriteSpec, write_partition_rows
from engines.table.logfile import LogFileName, avro_data_block, delete_block
from engines.table.model import META_COLUMNS, WriteStat
from engines.table.mor import DeltaWriteStat, committed_instants, merge_slice
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import DELTACOMMIT
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write
from engines.table.view import MergeSlice

WRITE_TOKEN = "0-0-0"  # <taskPartition>-<stage>-<attempt>; fixed so reruns give the same names
_KEY = "_hoodie_record_key"


def _key_index(table: HudiTable, slices: Sequence[MergeSlice], committed: set[str]) -> dict[tuple[str, str], MergeSlice]:
    """(partition path, record key) -> the slice holding it now."""
    index: dict[tuple[str, str], MergeSlice] = {}
    for slice_ in slices:
        base, logs, _ = merge_slice(table, slice_, committed, [])
        keys = ([] if base is None else base.column(_KEY).to_pylist()) + [r[_KEY] for r in logs]
        for key in keys:
            index[(slice_.partition, key)] = slice_
    return index


def _log_records(rows: pa.Table, table: HudiTable, instant: str, partition: str, file_id: str) -> list[dict[str, Any]]:
    data_cols = [c for c in rows.column_names if c not in META_COLUMNS]
    out = []
    for i, row in enumerate(rows.select(data_cols).to_pylist()):
        meta = {"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{i}",
                "_hoodie_record_key": str(row[table.record_key]), "_hoodie_partition_path": partition,
                "_hoodie_file_name": file_id}
        out.append({**meta, **row})
    return out


def write_deltacommit(table: HudiTable, upserts: pa.Table | None, deletes: Iterable[tuple[str, str]] = (),
                      operation: str = "upsert") -> CommitResult:
    """One deltacommit: new keys to base files, updates and deletes ((record key, partition value)
    pairs) to log files; see the module docstring."""
    table.check_writable(merge_on_read=True)
    deletes = list(deletes)
    if (upserts is None or upserts.num_rows == 0) and not deletes:
        raise EmptyBatchError("a deltacommit needs rows to upsert or keys to delete")
    part_col = table.partition_fields[0]
    schema = table.latest_schema()
    if upserts is not None:
        check_compatible(schema, upserts.schema, "the upserted rows")
        schema = avro_schema_string(upserts.schema)
    if schema is None:
        raise EmptyBatchError("the first deltacommit of a table must write rows (its schema)")
    with table.lock:
        view = table.view(read_footers=False)
        slices = view.merge_slices()
        index = _key_index(table, slices, committed_instants(table, None))
        inst = table.start(DELTACOMMIT)
        stats: list[WriteStat] = []
        updates: dict[tuple[str, str], tuple[MergeSlice, list[int], list[tuple[str, str]]]] = {}
        inserts: list[int] = []
        if upserts is not None:
            keys = pc.cast(upserts.column(table.record_key), pa.string()).to_pylist()
            parts = pc.cast(upserts.column(part_col), pa.string()).to_pylist()
            for i, (key, value) in enumerate(zip(keys, parts, strict=True)):
                found = index.get((table.partition_path(value), key))
                if found is None:
                    inserts.append(i)
                else:
                    updates.setdefault(found.file_group, (found, [], []))[1].append(i)
        for key, value in deletes:
            found = index.get((table.partition_path(value), key))
            if found is not None:  # a key the table does not hold: nothing to delete
                updates.setdefault(found.file_group, (found, [], []))[2].append((key, found.partition))
        if inserts:
            spec = WriteSpec(table.base_uri, inst.timestamp, part_col, table.record_key, table.hive_style,
                             bloom=table.bloom)
            stats += write_partition_rows(spec, [upserts.take(inserts)], task=0, attempt=0)
        last_version: dict[tuple[str, str, str], int] = {}
        for log in view.log_files:
            k = (log.partition, log.name.file_id, log.name.base_instant)
            last_version[k] = max(last_version.get(k, 0), log.name.version)
        for group in sorted(updates):
            slice_, rows, dels = updates[group]
            version = last_version.get((slice_.partition, slice_.file_id, slice_.base_instant), 0) + 1
            name = LogFileName(slice_.file_id, slice_.base_instant, version, WRITE_TOKEN).name
            path = f"{slice_.partition}/{name}" if slice_.partition else name
            data = b""
            if rows:
                records = _log_records(upserts.take(rows), table, inst.timestamp, slice_.partition, slice_.file_id)
                data += avro_data_block(inst.timestamp, schema, records)
            if dels:
                data += delete_block(inst.timestamp, schema, dels)
            table.storage.write_atomic(path, data, overwrite=False)
            stats.append(DeltaWriteStat(
                file_id=slice_.file_id, partition=slice_.partition, path=path, num_writes=len(rows),
                file_size=len(data), prev_commit=slice_.base_instant, num_inserts=0, num_update_writes=len(rows),
                num_deletes=len(dels), base_file=slice_.base.path.rsplit("/", 1)[-1] if slice_.base else "",
                log_files=[name], log_version=version))
        return commit_write(table, inst, stats, operation.upper(), schema)
