"""Rollback of failed writes and recovery after a crash (hudi-semantics.md §3.4).

``rollback_instant`` writes ``<r>.rollback.requested`` (naming the failed instant) → ``.inflight``,
deletes every base file written with the failed instant's time, then completes ``<r>.rollback``.
A failed ingest commit is removed from the timeline; a clustering or base-file compaction is
reverted to *requested* so its plan can be executed again — unless the plan's inputs are gone
(Option 1 in the RFC's order, killed after deleting old files), in which case the plan cannot be
re-run and is removed too, and the result records the missing inputs: that is the data loss the
RFC's order risks.

``rollback_inflight(table, instant, keep_plan)`` is the explicit form: ``keep_plan=True`` reverts
a clustering / compaction to requested (re-executable), ``False`` removes the pending instant
(an ingest commit, or a plan given up, as Hudi's rollback-on-conflict does). ``on_step`` observes
the steps in :data:`ROLLBACK_STEPS`, the fault points' names.

A failed ``deltacommit`` (MERGE_ON_READ) loses its base files as above and its log files: every
deltacommit writes log files of its own (:mod:`engines.table.mor`), so they are deleted, as Hudi
1.x's marker-based rollback deletes the log files an instant created. A log file that also holds
blocks of other instants (written by a Hudi that appends) is kept, and a new log file version
holding a rollback command block naming the instant is written next to it instead, which every
reader honours (Hudi's rollback on append-capable storage).

``recover`` runs on open after a crash: it releases a stale lock, finishes interrupted rollbacks
and cleans, and rolls back every inflight write (ingest commits removed; clustering and base-file
compaction reverted to requested, kept for re-execution; requested plans left alone).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from engines.table import faults, plans
from engines.table.logfile import LogFileName, read_log_bytes, rollback_block
from engines.table.table import HudiTable
from engines.table.timeline import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTACOMMIT,
    REPLACE,
    ROLLBACK,
    Instant,
    State,
    TimelineError,
)

ROLLBACK_STEPS = tuple(p for p in faults.POINTS["rollback"] if p.startswith("rollback."))


@dataclass
class RollbackResult:
    rolled_back: str
    action: str
    instant: str | None
    files_deleted: int
    plan_kept: bool
    duration_s: float
    missing_inputs: list[str] = field(default_factory=list)


def rollback_inflight(table: HudiTable, instant: str | Instant, keep_plan: bool,
                      on_step: faults.StepHook = None) -> RollbackResult:
    """Roll back the failed or killed pending instant ``instant``; see the module docstring."""
    timeline = table.refresh()
    ts = instant.timestamp if isinstance(instant, Instant) else instant
    target = timeline.get(ts)
    if target is None or target.is_completed:
        raise TimelineError(f"instant {ts} is not pending in {table.base_uri}: nothing to roll back")
    if keep_plan and target.action not in (REPLACE, COMPACTION):
        raise TimelineError(f"{ts}.{target.action} has no plan to keep; roll it back with keep_plan=False")
    return rollback_instant(table, target, on_step=on_step, keep_plan=keep_plan)


def rollback_instant(table: HudiTable, target: Instant, on_step: faults.StepHook = None,
                     resume: Instant | None = None, keep_plan: bool | None = None) -> RollbackResult:
    """Roll back one pending write instant; ``keep_plan`` None: keep plans of clustering/compaction."""
    t0 = time.perf_counter()
    with table.lock:
        if resume is None:
            body = {"instantToRollback": target.timestamp, "action": target.action}
            rb = table.start(ROLLBACK, content=json.dumps(body).encode())
        else:
            rb = resume if resume.state == State.INFLIGHT else table.refresh().transition_to_inflight(resume)
        faults.step("rollback.after_rollback_requested", on_step)
        deleted = []
        logs: list[tuple[str, LogFileName]] = []
        for entry in table.storage.list("", recursive=True, sizes=False):
            if entry.path.startswith(".hoodie/"):
                continue
            name = entry.path.rsplit("/", 1)[-1]
            if name.endswith(f"_{target.timestamp}.parquet"):
                table.storage.delete(entry.path, missing_ok=True)
                deleted.append(entry.path)
            elif (log := LogFileName.parse(name)) is not None:
                logs.append((entry.path, log))
        if target.action == DELTACOMMIT:
            deleted += _roll_back_logs(table, target.timestamp, rb.timestamp, logs)
        table.storage.delete_dir(f".hoodie/.temp/{target.timestamp}")  # sorted runs of a killed rewrite
        faults.step("rollback.after_partial_files_removed", on_step)
        timeline = table.refresh()
        current = timeline.get(target.timestamp)
        missing: list[str] = []
        if keep_plan is None:
            keep_plan = target.action in (REPLACE, COMPACTION)
        if keep_plan and current is not None:
            inputs = plans.plan_inputs(current.timestamp, current.action,
                                       plans.load_plan(timeline, current, current.action)).paths
            missing = [p for p in inputs if not table.storage.exists(p)]
            keep_plan = not missing
        if current is not None and not current.is_completed:
            if keep_plan:
                timeline.revert_to_requested(current)
            else:
                timeline.delete_pending(current)
        faults.step("rollback.before_rollback_complete", on_step)
        done = {"instantToRollback": target.timestamp, "action": target.action, "deletedFiles": deleted,
                "planKept": keep_plan, "missingPlanInputs": missing}
        table.refresh().complete(rb, json.dumps(done).encode())
    return RollbackResult(target.timestamp, target.action, rb.timestamp, len(deleted), keep_plan,
                          time.perf_counter() - t0, missing)


def _roll_back_logs(table: HudiTable, target: str, rollback: str, logs: list[tuple[str, LogFileName]]) -> list[str]:
    """Delete the log files holding only ``target``'s blocks; mark the others with a rollback block."""
    deleted = []
    versions: dict[tuple[str, str, str], int] = {}
    for path, log in logs:
        group = (path.rpartition("/")[0], log.file_id, log.base_instant)
        versions[group] = max(versions.get(group, 0), log.version)
    for path, log in sorted(logs):
        instants = {b.instant for b in read_log_bytes(table.storage.read_bytes(path), path).blocks}
        if target not in instants:
            continue
        if instants == {target}:
            table.storage.delete(path, missing_ok=True)
            deleted.append(path)
            continue
        partition = path.rpartition("/")[0]
        group = (partition, log.file_id, log.base_instant)
        versions[group] += 1
        marker = LogFileName(log.file_id, log.base_instant, versions[group], log.write_token).name
        table.storage.write_atomic(f"{partition}/{marker}" if partition else marker, rollback_block(rollback, target),
                                   overwrite=False)
    return deleted


def recover(table: HudiTable) -> list[RollbackResult]:
    """Make a crashed table consistent: the snapshot becomes exactly its committed prefix."""
    table.lock.break_stale()
    results = []
    timeline = table.refresh()
    for inst in timeline.pending([ROLLBACK]):
        body = json.loads(timeline.read(inst, State.REQUESTED) or b"{}")
        target = Instant(body["instantToRollback"], body["action"], State.INFLIGHT)
        results.append(rollback_instant(table, target, resume=inst))
    timeline = table.refresh()
    for inst in timeline.pending([CLEAN]):
        # Abandoned, not finished: a clean only deletes files no snapshot needs, so the files it
        # already deleted change no snapshot, and the next clean plans again from the view and
        # deletes what is still due. (Hudi instead re-executes the pending clean's plan; both end
        # with the same files gone.)
        timeline.delete_pending(inst)
    timeline = table.refresh()
    for inst in timeline.pending([COMMIT, DELTACOMMIT, REPLACE, COMPACTION]):
        if inst.action in (REPLACE, COMPACTION) and inst.state == State.REQUESTED:
            continue  # a scheduled plan that never started: keep it for execution
        results.append(rollback_instant(table, inst))
    return results
