"""One MERGE_ON_READ ``deltacommit`` (table version 6), written without Spark.

It runs through the timeline (requested → inflight → completed, :mod:`engines.table.transaction`):
rows of keys the table does not hold go to new base files (the shared base-file writer, as an
insert); rows of keys it holds, and deletes, go to one new log file per touched file slice
(``.log.<last version + 1>``, :mod:`engines.table.logfile`): one Avro data block, then a delete
block. Every deltacommit writes new log files and never appends to one, as Apache Hudi 1.2 does
(and every Hudi on storage without append, such as object stores), so a log file belongs to one
instant and a rollback deletes it. The completed instant is Hudi's commit metadata with a
``HoodieDeltaWriteStat`` per log file (``baseFile``, ``logFiles``, ``logVersion``, ``logOffset``).

An update or delete of a file group under a pending compaction or clustering plan is refused
(:class:`PendingServiceConflictError`, before any instant is written): the plan has fixed the
slice's logs it merges, and a log written after it would be lost by the replacecommit or land in
a slice whose base instant is older than the write (Hudi writes such logs to the pending
compaction's new slice, and its Spark writers reject updates to clustering groups by default,
``SparkRejectUpdateStrategy``). Inserts go to new file groups and always proceed.

Keys are located by ``locate`` (the MOR engine's :class:`engines.clustering_mor.key_index.KeyIndex`)
or, without one, by reading the latest slices' record keys (a full scan: right for the table
core's tests). Routing is non-global, as Hudi's default index: a key is looked up in the partition
its row names. ``small_files`` (Hudi's MOR small-file handling, :mod:`engines.clustering_mor.small_files`)
names file groups that take a number of a partition's inserts: those rows go to the group's new
log file with its updates (counted as inserts in its write stat), the rest to new base files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from engines.files.gate import deltacommit_inserts_route, record_route
from engines.files.writer import WriteSpec, write_partition_rows
from engines.table import faults, plans
from engines.table.logfile import LogFileName, avro_data_block, delete_block
from engines.table.model import META_COLUMNS, WriteStat
from engines.table.mor import DeltaWriteStat, committed_instants, merge_slice
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import DELTACOMMIT, MOR_COMPACTION, REPLACE
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write
from engines.table.view import MergeSlice

WRITE_TOKEN = "0-0-0"  # <taskPartition>-<stage>-<attempt>; fixed so reruns give the same names
_KEY = "_hoodie_record_key"


Locate = Callable[[Sequence[str], Sequence[str]], list[str | None]]  # (partition paths, keys) -> fileIds


class SmallFileTarget(NamedTuple):
    """A file group that takes up to ``records`` of its partition's inserts into its log."""

    partition: str
    file_id: str
    records: int


def fill_groups(targets: Iterable[SmallFileTarget], partition: str, inserts: int) -> list[tuple[SmallFileTarget, int]]:
    """How many of ``partition``'s ``inserts`` (in the batch's order) each of its groups takes: the
    first up to its room, then the next, in ``targets``' order; groups that take none are left out.
    The inserts after the last taken go to new base files."""
    out = []
    for t in targets:
        if t.partition != partition or t.records <= 0 or inserts <= 0:
            continue
        taken = min(t.records, inserts)
        out.append((t, taken))
        inserts -= taken
    return out


class PendingServiceConflictError(ValueError):
    """A deltacommit updating file groups a pending compaction or clustering plan holds."""


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


def _full_scan_locator(table: HudiTable, slices: Sequence[MergeSlice]) -> Locate:
    index = _key_index(table, slices, committed_instants(table, None))

    def locate(partitions: Sequence[str], keys: Sequence[str]) -> list[str | None]:
        found = [index.get((p, k)) for p, k in zip(partitions, keys, strict=True)]
        return [None if s is None else s.file_id for s in found]
    return locate


def write_deltacommit(table: HudiTable, upserts: pa.Table | None, deletes: Iterable[tuple[str, str]] = (),
                      operation: str = "upsert", *, locate: Locate | None = None,
                      small_files: Sequence[SmallFileTarget] = (), target_file_bytes: int | None = None,
                      row_group_rows: int | None = None, on_step: faults.StepHook = None) -> CommitResult:
    """One deltacommit: new keys to base files (or, up to ``small_files``' counts, to those groups'
    logs), updates and deletes ((record key, partition value) pairs) to log files; see the module
    docstring."""
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
        by_group = {s.file_group: s for s in slices}
        locate = locate or _full_scan_locator(table, slices)
        stats: list[WriteStat] = []
        updates: dict[tuple[str, str], tuple[MergeSlice, list[int], list[tuple[str, str]]]] = {}
        inserts: list[int] = []
        log_inserts: dict[tuple[str, str], int] = {}  # file group -> its rows (in ``updates``) that are inserts
        new_keys: dict[str, list[int]] = {}  # partition path -> its rows of new keys, in the batch's order

        def slice_of(partition: str, file_id: str) -> MergeSlice:
            found = by_group.get((partition, file_id))
            if found is None:
                raise ValueError(f"the key index names file group {file_id} of partition {partition!r}, which the "
                                 "table's view does not hold; nothing was written")
            return found

        if upserts is not None:
            keys = pc.cast(upserts.column(table.record_key), pa.string()).to_pylist()
            values = pc.cast(upserts.column(part_col), pa.string())
            paths = {v: table.partition_path(v) for v in pc.unique(values).to_pylist()}  # once per partition
            parts = [paths[v] for v in values.to_pylist()]
            for i, (part, fid) in enumerate(zip(parts, locate(parts, keys), strict=True)):
                if fid is not None:
                    updates.setdefault((part, fid), (slice_of(part, fid), [], []))[1].append(i)
                else:
                    new_keys.setdefault(part, []).append(i)
            for part, rows_of_part in new_keys.items():
                start = 0
                for target, taken in fill_groups(small_files, part, len(rows_of_part)):
                    group = (part, target.file_id)
                    updates.setdefault(group, (slice_of(*group), [], []))[1].extend(rows_of_part[start:start + taken])
                    log_inserts[group] = log_inserts.get(group, 0) + taken
                    start += taken
                inserts += rows_of_part[start:]
            inserts.sort()  # the batch's order across partitions, as the rows came
        deletes = [(key, table.partition_path(value)) for key, value in deletes]
        for (key, part), fid in zip(deletes, locate([p for _, p in deletes], [k for k, _ in deletes]), strict=True):
            if fid is not None:  # a key the table does not hold: nothing to delete
                updates.setdefault((part, fid), (slice_of(part, fid), [], []))[2].append((key, part))
        held = {**plans.pending_file_groups(view.timeline, REPLACE),
                **plans.pending_file_groups(view.timeline, MOR_COMPACTION)}
        conflicts = sorted(g for g in updates if g in held)
        if conflicts:
            named = ", ".join(f"{fid} of {part!r} (plan {held[(part, fid)]})" for part, fid in conflicts)
            raise PendingServiceConflictError(
                f"{operation} refused: it updates file groups under a pending compaction or clustering: {named}; "
                "execute or roll back the plan first. Nothing was written")
        inst = table.start(DELTACOMMIT)
        if inserts:
            sizes = {k: v for k, v in (("target_file_bytes", target_file_bytes), ("row_group_rows", row_group_rows))
                     if v is not None}
            spec = WriteSpec.for_table(table, inst.timestamp, **sizes)
            record_route("deltacommit inserts", deltacommit_inserts_route(len(inserts)), table.base_uri)
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
                file_size=len(data), prev_commit=slice_.base_instant, num_inserts=log_inserts.get(group, 0),
                num_update_writes=len(rows) - log_inserts.get(group, 0),
                num_deletes=len(dels), base_file=slice_.base.path.rsplit("/", 1)[-1] if slice_.base else "",
                log_files=[name], log_version=version))
        faults.step("ingest.after_files_written", on_step)
        faults.step("ingest.before_complete", on_step)
        return commit_write(table, inst, stats, operation.upper(), schema)
