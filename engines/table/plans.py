"""Pending table-service plans, as the table's timeline holds them.

The one place that reads a plan from its ``<t>.<action>.requested`` file (:func:`load_plan`) and
the one place that answers "which files and file groups do pending plans read"
(:func:`pending_inputs`). The view (pending clustering file groups, pending compaction paths), the
cleaner (files it must not delete), rollback (can a plan be kept?) and both engines (load the plan
they execute; exclude planned file groups from a new plan) go through here.

Plans are the Avro records of ``engines/table/avro``: a clustering plan (``replacecommit``) inside
the requested-replace wrapper, a base-file compaction plan (``basefilecompaction``), a
MERGE_ON_READ compaction plan (``compaction``: Hudi's ``HoodieCompactionPlan``, whose operations
name a file slice by fileId, base instant, base file name and log file names). The engine
packages turn a record into their own Python objects (``ClusteringPlan.from_avro``,
``BaseFileCompactionPlan.from_avro``); this module needs none of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engines.table.avro import (
    BASE_FILE_COMPACTION_PLAN,
    COMPACTION_PLAN,
    REQUESTED_REPLACE,
    PlanFileError,
    decode_plan,
)
from engines.table.timeline import (
    COMPACTION,
    MOR_COMPACTION,
    REPLACE,
    Instant,
    State,
    Timeline,
    TimelineError,
)

PLAN_SCHEMAS = {REPLACE: REQUESTED_REPLACE, COMPACTION: BASE_FILE_COMPACTION_PLAN, MOR_COMPACTION: COMPACTION_PLAN}
PLAN_ACTIONS = (REPLACE, COMPACTION, MOR_COMPACTION)
_KINDS = {REPLACE: "clustering", COMPACTION: "base-file compaction", MOR_COMPACTION: "compaction"}
# A clustering plan's input slices (path, base instant, size, rows per fileId, group by group): the
# seed's HoodieClusteringGroup names file ids only, so our plans keep the paths in extraMetadata.
SLICES_KEY = "layoutbench.groupSlices"


@dataclass(frozen=True)
class PlanInputs:
    """What one pending plan reads: its base files and their file groups."""

    instant: str
    action: str
    paths: tuple[str, ...]
    file_groups: tuple[tuple[str, str], ...]  # (partition, fileId)


def requested_source(timeline: Timeline, instant: Instant) -> str:
    """The plan file's path under the table, for error messages."""
    return f"{timeline.folder}/{timeline.file_name(instant, State.REQUESTED)}"


def load_plan(timeline: Timeline, instant: str | Instant, action: str) -> dict[str, Any]:
    """The decoded plan record of ``instant``, a ``REPLACE`` or ``COMPACTION`` instant of ``timeline``.

    :class:`TimelineError` when the timeline has no such instant of that action; :class:`PlanFileError`
    (naming the file) when the file is unreadable or holds no plan."""
    if action not in PLAN_SCHEMAS:
        raise ValueError(f"no plan for action {action!r}; expected one of {PLAN_ACTIONS}")
    ts = instant.timestamp if isinstance(instant, Instant) else instant
    inst = timeline.get(ts)
    if inst is None or inst.action != action:
        raise TimelineError(f"{ts} is not a {_KINDS[action]} instant of {timeline.storage.uri}")
    source = requested_source(timeline, inst)
    record = decode_plan(PLAN_SCHEMAS[action], timeline.read(inst, State.REQUESTED), source)
    if action == REPLACE and not record.get("clusteringPlan"):
        raise PlanFileError(f"{source} holds no clustering plan")
    return record


def plan_inputs(instant: str, action: str, record: dict[str, Any]) -> PlanInputs:
    """The base files and file groups a decoded plan record reads."""
    paths: list[str] = []
    groups: list[tuple[str, str]] = []
    if action == MOR_COMPACTION:  # names relative to the partition, as Hudi writes them
        for op in record.get("operations") or []:
            partition = op.get("partitionPath") or ""
            names = ([op["dataFilePath"]] if op.get("dataFilePath") else []) + list(op.get("deltaFilePaths") or [])
            paths += [f"{partition}/{n}" if partition else n for n in names]
            groups.append((partition, op.get("fileId") or ""))
        return PlanInputs(instant, action, tuple(paths), tuple(groups))
    if action == COMPACTION:
        for op in record.get("operations") or []:
            partition = op.get("partitionPath") or ""
            for path in op.get("baseFilePaths") or []:
                paths.append(path)
                groups.append((partition, path.rsplit("/", 1)[-1].split("_", 1)[0]))
        return PlanInputs(instant, action, tuple(paths), tuple(groups))
    plan = record.get("clusteringPlan") or {}
    slices = json.loads((plan.get("extraMetadata") or {}).get(SLICES_KEY) or "[]")
    for i, group in enumerate(plan.get("clusteringGroups") or []):
        partition = group.get("partitionPath") or ""
        groups += [(partition, fid) for fid in group.get("fileIds") or []]
        if i < len(slices):  # plans written by Apache Hudi name file ids only
            paths += [s[0] for s in slices[i]]
    return PlanInputs(instant, action, tuple(paths), tuple(groups))


def pending_inputs(timeline: Timeline, actions: tuple[str, ...] = PLAN_ACTIONS) -> list[PlanInputs]:
    """What every pending plan of ``actions`` reads, earliest instant first."""
    return [plan_inputs(inst.timestamp, inst.action, load_plan(timeline, inst, inst.action))
            for inst in timeline.pending(actions)]


def pending_file_groups(timeline: Timeline, action: str = REPLACE) -> dict[tuple[str, str], str]:
    """(partition, fileId) -> plan instant for every file group of a pending ``action`` plan.

    A file group in two pending clustering plans is a broken timeline (the planner excludes planned
    groups): :class:`TimelineError` naming both."""
    out: dict[tuple[str, str], str] = {}
    for p in pending_inputs(timeline, (action,)):
        for key in p.file_groups:
            if key in out and action in (REPLACE, MOR_COMPACTION):
                raise TimelineError(f"file group {key} is in two pending {_KINDS[action]} plans: {out[key]} "
                                    f"and {p.instant}")
            out[key] = p.instant
    return out


def pending_paths(timeline: Timeline, actions: tuple[str, ...] = PLAN_ACTIONS) -> dict[str, str]:
    """Base file path -> plan instant for every file a pending plan of ``actions`` reads."""
    return {path: p.instant for p in pending_inputs(timeline, actions) for path in p.paths}
