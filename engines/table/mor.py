"""MERGE_ON_READ reads and writes over the table core (table version 6).

Reads. The table composes what a read needs, as hudi-rs's table does: the view's slices
(:meth:`FileSystemView.merge_slices`: a base file and the log files naming its instant) and the
timeline's completed instants. A slice's log blocks apply in file order when their
``INSTANT_TIME`` is a completed data instant at or before the read's instant and no rollback
command block names it; a key's winner is the write with the greatest ordering field
(``hoodie.table.precombine.field``), the later write winning ties (Hudi's EVENT_TIME_ORDERING,
``DefaultHoodieRecordPayload``); a delete block's key (written with no ordering value) removes
every earlier write of it. The read-optimized read is the slices' base files alone.
Corrupt log blocks never raise: every read returns them (:class:`MergedRead`).

Writes. :func:`write_deltacommit` runs one ``deltacommit`` through the timeline (requested →
inflight → completed): rows of keys the table does not hold go to new base files (the shared
base-file writer); rows of keys it holds, and deletes, go to one new log file per touched file
slice (``.log.<last version + 1>``): one Avro data block, then a delete block. Every deltacommit
writes new log files and never appends to one, as Hudi does on storage without append (object
stores), so a log file belongs to one instant and a rollback deletes it. Keys are located by
reading the latest slices' record keys (a full scan, fine for the table core's tests; an index
for benchmark-sized tables comes with the MOR engine).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engines.files.writer import WriteSpec, write_partition_rows
from engines.table.logfile import (
    LOG_BASE_VERSION,
    CorruptBlock,
    LogBlock,
    LogFileName,
    avro_data_block,
    delete_block,
    read_log_bytes,
)
from engines.table.model import META_COLUMNS, WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import DELTACOMMIT
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write
from engines.table.view import MergeSlice

WRITE_TOKEN = "0-0-0"  # <taskPartition>-<stage>-<attempt>; fixed so reruns give the same names
_KEY = "_hoodie_record_key"


@dataclass
class DeltaWriteStat(WriteStat):
    """Hudi's ``HoodieDeltaWriteStat``: a log file's write stat (``path`` is the log file)."""

    base_file: str = ""
    log_files: list[str] = field(default_factory=list)
    log_version: int = LOG_BASE_VERSION
    log_offset: int = 0


@dataclass
class MergedRead:
    """The rows a read returns and the corrupt log blocks it skipped (each names file and offset)."""

    rows: pa.Table
    corrupt: list[CorruptBlock]
    log_blocks_applied: int = 0
    log_bytes: int = 0


# -- reading ------------------------------------------------------------------------------------
def _visible_blocks(table: HudiTable, slice_: MergeSlice, committed: set[str],
                    corrupt: list[CorruptBlock]) -> list[LogBlock]:
    blocks: list[LogBlock] = []
    for log in slice_.logs:
        result = read_log_bytes(table.storage.read_bytes(log.path), log.path)
        corrupt += result.corrupt
        blocks += result.blocks
    rolled_back = {b.rollback_target for b in blocks if b.rollback_target}
    return [b for b in blocks if b.instant in committed and b.instant not in rolled_back
            and b.rollback_target is None]


def _ordering(value: Any) -> Any:
    return (value is not None, value)  # a null ordering value sorts first


def merge_slice(table: HudiTable, slice_: MergeSlice, committed: set[str],
                corrupt: list[CorruptBlock]) -> tuple[pa.Table | None, list[dict[str, Any]], int]:
    """(base rows that survive, winning log records, blocks applied) of one slice."""
    base = pq.read_table(table.storage.abs(slice_.base.path)) if slice_.base is not None else None
    blocks = _visible_blocks(table, slice_, committed, corrupt)
    order = table.ordering_field
    latest: dict[str, dict[str, Any] | None] = {}  # key -> winning log record, None when deleted
    for block in blocks:
        for record in block.records:
            key = record[_KEY]
            current = latest.get(key)
            if current is None or order is None or _ordering(record.get(order)) >= _ordering(current.get(order)):
                latest[key] = record
        for key, _partition in block.deleted_keys:
            latest[key] = None
    if base is None or not latest:
        return base, [r for r in latest.values() if r is not None], len(blocks)
    keys = base.column(_KEY).to_pylist()
    base_order = base.column(order).to_pylist() if order in base.column_names else [None] * len(keys)
    keep = []
    for key, value in zip(keys, base_order, strict=True):
        if key not in latest:
            keep.append(True)
            continue
        record = latest[key]
        base_wins = record is not None and order is not None and _ordering(value) > _ordering(record.get(order))
        keep.append(base_wins)
        if base_wins:
            latest[key] = None  # the base row stays; the older log write is dropped
    return base.filter(pa.array(keep)), [r for r in latest.values() if r is not None], len(blocks)


def _committed(table: HudiTable, as_of: str | None) -> set[str]:
    return {i.timestamp for i in table.refresh().completed_data_instants()
            if as_of is None or i.timestamp <= as_of}


def snapshot_read(table: HudiTable, as_of: str | None = None) -> MergedRead:
    """The snapshot (or time travel as of ``as_of``): every slice's logs merged over its base."""
    view = table.view(read_footers=False)
    committed = _committed(table, as_of)
    corrupt: list[CorruptBlock] = []
    parts: list[pa.Table] = []
    records: list[dict[str, Any]] = []
    applied = log_bytes = 0
    for slice_ in view.merge_slices(as_of):
        base, logs, n = merge_slice(table, slice_, committed, corrupt)
        applied += n
        log_bytes += slice_.log_bytes
        if base is not None:
            parts.append(base)
        records += logs
    return MergedRead(_concat(parts, records), corrupt, applied, log_bytes)


def read_optimized_read(table: HudiTable, as_of: str | None = None) -> MergedRead:
    """The read-optimized view: the latest slices' base files, their logs not applied."""
    parts = [pq.read_table(table.storage.abs(s.base.path))
             for s in table.view(read_footers=False).merge_slices(as_of) if s.base is not None]
    return MergedRead(_concat(parts, []), [])


def _concat(parts: list[pa.Table], records: list[dict[str, Any]]) -> pa.Table:
    if records:
        schema = parts[0].schema if parts else None
        parts = [*parts, pa.Table.from_pylist(records, schema=schema)]
    if not parts:
        return pa.table({})
    return pa.concat_tables(parts, promote_options="default")


# -- writing ------------------------------------------------------------------------------------
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
        index = _key_index(table, slices, _committed(table, None))
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
