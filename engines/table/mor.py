"""MERGE_ON_READ reads over the table core: snapshot (merged), time travel and read-optimized.

Reads. The table composes what a read needs, as hudi-rs's table does: the view's slices
(:meth:`FileSystemView.merge_slices`: a base file and the log files naming its instant) and the
timeline's completed instants. A slice's log blocks apply in file order when their
``INSTANT_TIME`` is a completed data instant at or before the read's instant and no rollback
command block names it; a key's winner is the write with the greatest ordering field
(``hoodie.table.precombine.field``), the later write winning ties (Hudi's EVENT_TIME_ORDERING,
``DefaultHoodieRecordPayload``); a delete block's key removes every earlier write of it (Hudi's
natural-order delete, which is what Hudi and our writer put in delete blocks; a delete carrying
its own ordering value is applied the same way). The read-optimized read is the slices' base files alone.
Corrupt log blocks never raise: every read returns them (:class:`MergedRead`).

Writes are ``engines.files.deltacommit.write_deltacommit`` (the base files it writes need the
shared base-file writer); a log file's write stat is :class:`DeltaWriteStat`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engines.table.logfile import LOG_BASE_VERSION, CorruptBlock, LogBlock, read_log_bytes
from engines.table.model import FileSlice, WriteStat
from engines.table.table import HudiTable
from engines.table.view import MergeSlice

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
    # only the base rows whose key a log names are decided in Python (a slice's logs hold few keys)
    touched = pc.is_in(base.column(_KEY), value_set=pa.array(list(latest), base.schema.field(_KEY).type))
    hits = pa.array(pc.indices_nonzero(touched.combine_chunks()).to_pylist(), pa.int64())
    keys = base.column(_KEY).take(hits).to_pylist()
    base_order = base.column(order).take(hits).to_pylist() if order in base.column_names else [None] * len(keys)
    keep = pc.invert(touched).to_numpy().copy()
    for i, key, value in zip(hits.to_pylist(), keys, base_order, strict=True):
        record = latest[key]
        base_wins = record is not None and order is not None and _ordering(value) > _ordering(record.get(order))
        keep[i] = base_wins
        if base_wins:
            latest[key] = None  # the base row stays; the older log write is dropped
    return base.filter(pa.array(keep)), [r for r in latest.values() if r is not None], len(blocks)


def committed_instants(table: HudiTable, as_of: str | None) -> set[str]:
    return {i.timestamp for i in table.refresh().completed_data_instants()
            if as_of is None or i.timestamp <= as_of}


def snapshot_read(table: HudiTable, as_of: str | None = None) -> MergedRead:
    """The snapshot (or time travel as of ``as_of``): every slice's logs merged over its base."""
    view = table.view(read_footers=False)
    committed = committed_instants(table, as_of)
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


@dataclass(frozen=True)
class LogOverlay:
    """The log side of a MERGE_ON_READ snapshot, for a query engine that reads base files itself:
    the slices that have log files (with their base file, or log files only) and the data instants
    a read applies (:func:`merge_slice`). Slices without logs read as plain base files."""

    table: HudiTable
    slices: tuple[MergeSlice, ...]
    committed: frozenset[str]

    @property
    def log_bytes(self) -> int:
        return sum(s.log_bytes for s in self.slices)

    @property
    def log_files(self) -> int:
        return sum(len(s.logs) for s in self.slices)


def query_snapshot(table: HudiTable, as_of: str | None = None,
                   read_footers: bool = True) -> tuple[list[FileSlice], LogOverlay | None]:
    """(every latest slice's base file, the slices with logs) from one view of the table; the
    overlay is None on a COPY_ON_WRITE table or when no slice has a log file."""
    view = table.view(read_footers=read_footers)
    if not table.merge_on_read:
        return view.snapshot(as_of), None
    slices = view.merge_slices(as_of)
    with_logs = tuple(s for s in slices if s.logs)
    bases = [s.base for s in slices if s.base is not None]
    if not with_logs:
        return bases, None
    committed = frozenset(i.timestamp for i in view.timeline.completed_data_instants()
                          if as_of is None or i.timestamp <= as_of)
    return bases, LogOverlay(table, with_logs, committed)


def merged_rows(overlay: LogOverlay, schema: pa.Schema | None = None) -> MergedRead:
    """The rows of ``overlay``'s slices, each slice's logs merged over its base, as one table in
    ``schema`` (a base file's, so that merged and plain slices union; None: the merge's own)."""
    corrupt: list[CorruptBlock] = []
    parts: list[pa.Table] = []
    records: list[dict[str, Any]] = []
    applied = 0
    for slice_ in overlay.slices:
        base, logs, n = merge_slice(overlay.table, slice_, set(overlay.committed), corrupt)
        applied += n
        if base is not None:
            parts.append(base if schema is None else base.select(schema.names).cast(schema))
        records += logs
    if schema is not None:
        parts = [*parts, pa.Table.from_pylist(records, schema=schema)] if records else parts
        rows = pa.concat_tables(parts) if parts else schema.empty_table()
    else:
        rows = _concat(parts, records)
    return MergedRead(rows, corrupt, applied, overlay.log_bytes)


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
