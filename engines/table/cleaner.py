"""Cleaner, KEEP_LATEST_COMMITS (hudi-semantics.md §6.1), planned as a pure function.

With ``retained`` = N and more than N completed data instants, ``earliest`` is the instant at
index ``count - N``. Every file of a file group replaced strictly before ``earliest`` is deleted;
in other file groups the newest committed slice and the newest slice older than ``earliest``
are kept and older committed slices are deleted. Files of pending or failed instants are never
touched (that is rollback's job), nor is any file an open clustering or compaction plan still has
to read (Hudi: "never delete slices needed by pending compaction"; issue #9257), so a reader of
any retained instant keeps its files and a pending plan stays executable. Generic: the COW
baseline (superseded slices) and both options use it.
MERGE_ON_READ: a file slice is its base file and its log files, and they go together: the log
files of every slice whose base file is deleted are deleted with it. ``versions_retained`` = N
selects Hudi's other policy, KEEP_LATEST_FILE_VERSIONS: the newest N committed slices of each
file group are kept, older ones deleted (a replaced group's slices all go once it has been
replaced for a clean), with the same protections.
Instants: ``<t>.clean.requested`` (the plan, JSON) → ``.inflight`` → ``<t>.clean`` (what was
deleted); Hudi readers ignore clean files.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from engines.table import faults, plans
from engines.table.avro import CLEAN_METADATA, encode_plan
from engines.table.logfile import LogFile
from engines.table.table import HudiTable
from engines.table.timeline import CLEAN
from engines.table.view import BaseFile, FileSystemView

CLEAN_STEPS = tuple(p for p in faults.POINTS["clean"] if p.startswith("clean."))
DEFAULT_COMMITS_RETAINED = 10  # hoodie.cleaner.commits.retained


@dataclass
class CleanPlan:
    earliest_commit_to_retain: str | None
    files_to_delete: list[BaseFile] = field(default_factory=list)
    log_files_to_delete: list[LogFile] = field(default_factory=list)  # of the deleted slices (MOR)
    policy: str = "KEEP_LATEST_COMMITS"

    @property
    def files(self) -> list[BaseFile]:
        return self.files_to_delete

    @property
    def paths(self) -> list[str]:
        """Every file the plan deletes: base files, then log files."""
        return [f.path for f in self.files_to_delete] + [f.path for f in self.log_files_to_delete]

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files_to_delete) + sum(f.size for f in self.log_files_to_delete)


@dataclass
class CleanResult:
    instant: str | None
    files_deleted: int
    bytes_freed: int
    duration_s: float
    earliest_commit_to_retain: str | None


class _Slice(Protocol):
    instant: str
    path: str


S = TypeVar("S", bound=_Slice)


def earliest_to_retain(completed_data_instants: Sequence[str], retained: int) -> str | None:
    """The oldest instant a reader may still query, or None while there are at most ``retained``."""
    if retained < 1:
        raise ValueError("cleaner_commits_retained must be at least 1")
    if len(completed_data_instants) <= retained:
        return None
    return completed_data_instants[len(completed_data_instants) - retained]


def doomed_in_group(committed: Sequence[S], earliest: str, replaced_at: str | None = None) -> list[S]:
    """The rule for one file group, its committed slices oldest first (the simulator applies it to
    its simulated slices): all of them when the group was replaced before ``earliest``; else every
    slice older than ``earliest`` but the newest such one, and never the newest slice."""
    if not committed:
        return []
    if replaced_at is not None and replaced_at < earliest:
        return list(committed)
    older = [f for f in committed if f.instant < earliest]
    if not older:
        return []
    newest, newest_older = committed[-1].path, older[-1].path  # the two kept
    return [f for f in older if f.path != newest and f.path != newest_older]


def plan_clean(view: FileSystemView, retained: int = DEFAULT_COMMITS_RETAINED) -> CleanPlan:
    """KEEP_LATEST_COMMITS over ``view`` (no I/O beyond what the view reads); see the module docstring."""
    earliest = earliest_to_retain([i.timestamp for i in view.timeline.completed_data_instants()], retained)
    if earliest is None:
        return CleanPlan(None)
    replaced = view.timeline.replaced_file_groups()
    doomed: list[BaseFile] = []
    for key, files in sorted(view.file_groups().items()):
        committed = [f for f in files if view.is_committed(f.instant)]
        doomed += doomed_in_group(committed, earliest, replaced.get(key))
    protected = plans.pending_paths(view.timeline)  # files pending clustering / compaction plans read
    doomed = [f for f in doomed if f.path not in protected]
    return CleanPlan(earliest, doomed, _logs_of(view, doomed))


def plan_clean_versions(view: FileSystemView, versions_retained: int) -> CleanPlan:
    """KEEP_LATEST_FILE_VERSIONS over ``view``: the newest ``versions_retained`` committed slices of
    each file group stay (none of a group replaced by a completed replace); see the module docstring."""
    if versions_retained < 1:
        raise ValueError("cleaner_file_versions_retained must be at least 1")
    replaced = view.timeline.replaced_file_groups()
    protected = plans.pending_paths(view.timeline)
    doomed: list[BaseFile] = []
    earliest: str | None = None  # readers as of an older instant may need a deleted slice
    for key, files in sorted(view.file_groups().items()):
        committed = [f for f in files if view.is_committed(f.instant)]
        dropped = [f for f in (committed if key in replaced else committed[:-versions_retained])
                   if f.path not in protected]
        if dropped:
            doomed += dropped
            kept = committed[len(committed) - versions_retained] if key not in replaced else None
            bound = kept.instant if kept is not None else replaced[key]
            earliest = bound if earliest is None else max(earliest, bound)
    return CleanPlan(earliest, doomed, _logs_of(view, doomed), "KEEP_LATEST_FILE_VERSIONS")


def _logs_of(view: FileSystemView, doomed: Sequence[BaseFile]) -> list[LogFile]:
    """The log files of the slices whose base files are ``doomed`` (none in a COPY_ON_WRITE table)."""
    if not view.log_files:
        return []
    slices = {(f.partition, f.file_id, f.instant) for f in doomed}
    return [log for log in view.log_files if (log.partition, log.name.file_id, log.name.base_instant) in slices]


def run_clean(table: HudiTable, retained: int = DEFAULT_COMMITS_RETAINED,
              on_step: faults.StepHook = None, versions_retained: int | None = None) -> CleanResult:
    """Plan and execute one clean; no instant is written when there is nothing to delete. ``on_step``
    observes the steps in :data:`CLEAN_STEPS` (the fault points' names). ``versions_retained``
    selects KEEP_LATEST_FILE_VERSIONS (file slices per group) instead of KEEP_LATEST_COMMITS."""
    t0 = time.perf_counter()
    with table.lock:
        view = table.view()
        plan = plan_clean(view, retained) if versions_retained is None else plan_clean_versions(view, versions_retained)
        if not plan.files_to_delete:
            return CleanResult(None, 0, 0, time.perf_counter() - t0, plan.earliest_commit_to_retain)
        body = {"earliestCommitToRetain": plan.earliest_commit_to_retain, "policy": plan.policy,
                "retained": retained if versions_retained is None else versions_retained, "filesToDelete": plan.paths}
        inst = table.start(CLEAN, content=json.dumps(body).encode())
        faults.step("clean.after_clean_requested", on_step)
        deleted = 0
        for path in plan.paths:
            if table.storage.delete(path, missing_ok=True):
                deleted += 1
            faults.step("clean.after_file_deleted", on_step)
        faults.step("clean.before_clean_complete", on_step)
        table.refresh().complete(inst, clean_metadata(inst.timestamp, plan, deleted, t0))
    return CleanResult(inst.timestamp, deleted, plan.bytes, time.perf_counter() - t0, plan.earliest_commit_to_retain)


def clean_metadata(instant: str, plan: CleanPlan, deleted: int, t0: float) -> bytes:
    """The completed clean as Hudi writes it: an Avro ``HoodieCleanMetadata`` container file (Hudi's
    readers decode it, e.g. to refuse time travel before ``earliestCommitToRetain``; JSON made
    every time-travel query on our tables fail in Apache Hudi 1.2)."""
    per_partition: dict[str, list[str]] = {}
    for path in plan.paths:
        partition, _, name = path.rpartition("/")
        per_partition.setdefault(partition, []).append(name)
    record = {
        "startCleanTime": instant, "timeTakenInMillis": int((time.perf_counter() - t0) * 1000),
        "totalFilesDeleted": deleted, "earliestCommitToRetain": plan.earliest_commit_to_retain or "",
        "lastCompletedCommitTimestamp": "", "version": 2, "bootstrapPartitionMetadata": {}, "extraMetadata": {},
        "partitionMetadata": {p: {"partitionPath": p, "policy": plan.policy, "deletePathPatterns": names,
                                  "successDeleteFiles": names, "failedDeleteFiles": [], "isPartitionDeleted": False}
                              for p, names in sorted(per_partition.items())},
    }
    return encode_plan(CLEAN_METADATA, record)
