"""MERGE_ON_READ compaction: schedule a ``HoodieCompactionPlan``, execute it, roll a killed one back.

| step     | timeline                                           | files                                  | fault point                       |
| -------- | -------------------------------------------------- | -------------------------------------- | --------------------------------- |
| schedule | ``<T>.compaction.requested`` (the plan, Avro)      | none                                   | ``compaction.after_plan_saved``   |
| start    | ``<T>.compaction.inflight`` (empty, as Hudi)       | none                                   | ``compaction.after_inflight``     |
| merge    | inflight                                           | per operation one new base file ``<fileId>_0-0-0_<T>.parquet``: the plan's logs merged over its base (:func:`engines.table.mor.merge_slice`) | ``compaction.after_group_written`` (each), ``compaction.before_commit`` |
| commit   | ``<T>.commit`` (operationType ``COMPACT``)         | leftovers of ``T`` removed first       | ``compaction.after_commit``       |

Apache Hudi 0.x and 1.x alike: a pending compaction is the ``compaction`` action, and it completes
as a ``commit`` with the compaction's own instant time (``HoodieTimeline.COMPACTION_ACTION``,
``CompactHelpers.completeInflightCompaction``); the new base file starts the new file slice at
``T``, so a snapshot reads it with the logs written after it, and read-optimized equals snapshot
for a compacted group until its next deltacommit. Records keep their ``_hoodie_commit_time``
(Hudi's compaction preserves the record metadata).

Recovery: a killed execution leaves ``T`` inflight; :func:`execute` (and ``rollback.recover``)
first rolls it back (its new base files deleted, the plan kept: the old slices are untouched) and
the plan runs again, so no row is lost or duplicated. Refused before any state change, each with
one error naming the file group: a plan operation on a group a completed replacecommit replaced,
one on a group a pending clustering plan holds, and one whose slice no longer matches the view.
Deltacommits updating a group under a pending compaction are refused by the writer
(:mod:`engines.files.deltacommit`), so the plan's logs are all the slice has when it runs.

Base files are written by the shared base-file writer (``engines.files.writer``), the instant
files and plan through the table's storage.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pyarrow as pa

from engines.files.writer import WriteSpec, write_empty_file, write_partition_rows
from engines.mor_compaction.plan import CompactionOperation, CompactionPlan
from engines.mor_compaction.planner import CompactionConfig, SliceLogs, due, plan_compaction
from engines.table import faults, plans
from engines.table import rollback as table_rollback
from engines.table.avro import COMPACTION_PLAN, encode_plan
from engines.table.model import META_COLUMNS, WriteStat
from engines.table.mor import committed_instants, merge_slice
from engines.table.table import HudiTable
from engines.table.timeline import (
    DELTACOMMIT,
    MOR_COMPACTION,
    REPLACE,
    Instant,
    State,
    Timeline,
    TimelineError,
)
from engines.table.transaction import commit_write
from engines.table.view import FileSystemView, MergeSlice

POINTS = faults.POINTS["mor_compaction"]


class CompactionPlanError(ValueError):
    """A compaction plan that cannot be executed on this table (named group, table unchanged)."""


@dataclass
class CompactionResult:
    instant: str
    operations: int
    log_files_merged: int
    bytes_written: int
    rolled_back_first: bool
    duration_s: float
    stats: list[WriteStat] = field(default_factory=list)


def planning_slices(view: FileSystemView) -> list[SliceLogs]:
    """The latest slices of the view, as the pure planner takes them."""
    return [SliceLogs(s.partition, s.file_id, s.base_instant,
                      s.base.path.rsplit("/", 1)[-1] if s.base is not None else None,
                      s.base.size_bytes if s.base is not None else 0,
                      tuple(log.path.rsplit("/", 1)[-1] for log in s.logs), s.log_bytes)
            for s in view.merge_slices()]


def deltacommits_since_last_compaction(timeline: Timeline) -> int:
    """Completed deltacommits after the last compaction instant (completed or pending)."""
    compactions = [i.timestamp for i in timeline if i.action == MOR_COMPACTION]
    last = compactions[-1] if compactions else ""
    return sum(1 for i in timeline.completed([DELTACOMMIT]) if i.timestamp > last)


def load_plan(table: HudiTable, instant: str) -> CompactionPlan:
    """The compaction plan saved as ``instant``."""
    return CompactionPlan.from_avro(plans.load_plan(table.refresh(), instant, MOR_COMPACTION))


def schedule(table: HudiTable, config: CompactionConfig, force: bool = False,
             on_step: faults.StepHook = None) -> str | None:
    """Plan over the latest slices and save ``<T>.compaction.requested``; None when the trigger is
    not met (unless ``force``) or no slice qualifies. Groups a pending clustering holds, and
    replaced groups, are skipped and named in the plan."""
    table.check_writable(merge_on_read=True)
    with table.lock:
        view = table.view(read_footers=False)
        timeline = view.timeline
        if not force and not due(deltacommits_since_last_compaction(timeline), config):
            return None
        plan = plan_compaction(planning_slices(view), config, plans.pending_file_groups(timeline, REPLACE),
                               timeline.replaced_file_groups())
        if plan is None:
            return None
        timeline = table.refresh()
        ts = table.clock.next(timeline.last_timestamp())
        timeline.create_requested(ts, MOR_COMPACTION, encode_plan(COMPACTION_PLAN, plan.to_avro()))
    faults.step("compaction.after_plan_saved", on_step)
    return ts


def check_plan(table: HudiTable, instant: str, plan: CompactionPlan) -> dict[tuple[str, str], MergeSlice]:
    """The view's slice of every operation; :class:`CompactionPlanError` naming the first group
    that is replaced, under a pending clustering, or no longer the slice the plan names."""
    view = table.view(read_footers=False)
    replaced = view.timeline.replaced_file_groups()
    clustering = plans.pending_file_groups(view.timeline, REPLACE)
    current = {s.file_group: s for s in view.merge_slices()}
    out: dict[tuple[str, str], MergeSlice] = {}
    for op in plan.operations:
        group = op.file_group
        if group in replaced:
            raise CompactionPlanError(
                f"compaction {instant} names file group {group[1]} of partition {group[0]!r}, which replacecommit "
                f"{replaced[group]} replaced: compaction ignores replaced file groups; nothing was written")
        if group in clustering:
            raise CompactionPlanError(
                f"compaction {instant} names file group {group[1]} of partition {group[0]!r}, which pending "
                f"clustering {clustering[group]} holds; nothing was written")
        s = current.get(group)
        logs = {log.path.rsplit("/", 1)[-1] for log in s.logs} if s is not None else set()
        if s is None or s.base_instant != op.base_instant or not set(op.log_files) <= logs:
            raise CompactionPlanError(
                f"compaction {instant} names slice {op.base_instant} of file group {group[1]} of partition "
                f"{group[0]!r} with logs {list(op.log_files)}, which the table no longer has; nothing was written")
        out[group] = s
    return out


def _merged_rows(table: HudiTable, s: MergeSlice, op: CompactionOperation, committed: set[str]) -> pa.Table:
    planned = MergeSlice(s.partition, s.file_id, s.base_instant, s.base,
                         tuple(log for log in s.logs if log.path.rsplit("/", 1)[-1] in op.log_files))
    base, records, _ = merge_slice(table, planned, committed, [])
    if base is None:
        return pa.Table.from_pylist(records)
    return pa.concat_tables([base, pa.Table.from_pylist(records, schema=base.schema)]) if records else base


def compact_operation(table: HudiTable, s: MergeSlice, op: CompactionOperation, instant: str,
                      committed: set[str]) -> WriteStat:
    """One new base file of ``op``'s file group at ``instant``: its planned logs merged over its base."""
    rows = _merged_rows(table, s, op, committed)
    spec = WriteSpec(table.base_uri, instant, table.partition_fields[0], table.record_key, table.hive_style,
                     target_file_bytes=1 << 62, preserve_commit_metadata=True, file_id_override=op.file_id,
                     bloom=table.bloom)
    if rows.num_rows:
        (stat,) = write_partition_rows(spec, [rows], task=0, attempt=0)
    else:  # every row of the slice deleted: an empty base file ends the slice's logs
        data = rows.select([c for c in rows.column_names if c not in META_COLUMNS]).schema
        value = op.partition.split("=", 1)[1] if table.hive_style and op.partition else op.partition
        stat = write_empty_file(spec, value, data)
    stat.prev_commit = op.base_instant
    stat.num_update_writes = stat.num_writes
    stat.num_inserts = 0
    return stat


def execute(table: HudiTable, instant: str, on_step: faults.StepHook = None) -> CompactionResult:
    """Execute the pending compaction ``instant`` (the service resolves the earliest one:
    :class:`engines.mor_compaction.service.MorCompactionService`); see the module docstring."""
    table.check_writable(merge_on_read=True)
    t0 = time.perf_counter()
    with table.lock:
        target = table.refresh().get(instant)
        if target is None or target.action != MOR_COMPACTION or target.is_completed:
            raise TimelineError(f"{instant} is not a pending compaction of {table.base_uri}")
        rolled_back = target.state == State.INFLIGHT
        if rolled_back:
            table_rollback.rollback_inflight(table, target, keep_plan=True, on_step=on_step)
        plan = load_plan(table, target.timestamp)
        slices = check_plan(table, target.timestamp, plan)
        committed = committed_instants(table, None)
        requested = Instant(target.timestamp, MOR_COMPACTION, State.REQUESTED)
        inflight = table.refresh().transition_to_inflight(requested)
        faults.step("compaction.after_inflight", on_step)
        stats: list[WriteStat] = []
        for op in plan.operations:
            stats.append(compact_operation(table, slices[op.file_group], op, target.timestamp, committed))
            faults.step("compaction.after_group_written", on_step)
        faults.step("compaction.before_commit", on_step)
        commit_write(table, inflight, stats, "COMPACT", table.latest_schema(),
                     extra={"compactionLogFiles": str(sum(len(op.log_files) for op in plan.operations))})
        faults.step("compaction.after_commit", on_step)
    return CompactionResult(target.timestamp, len(plan.operations), sum(len(op.log_files) for op in plan.operations),
                            sum(s.file_size for s in stats), rolled_back, time.perf_counter() - t0, stats)
