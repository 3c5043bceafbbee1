"""Named crash-injection points per engine kind, from the one list of point names
(:data:`engines.table.faults.POINTS`): every step boundary the engines mark with
:func:`engines.table.faults.step`, plus ``*.mid_write`` / ``clustering.mid_group`` inside a running
Spark write job (:func:`engines.table.faults.killed_mid_action`). ``name:n`` targets the n-th time a
point is reached."""

from __future__ import annotations

from typing import Any

from engines.kinds import kind_of
from engines.table.faults import POINTS

# storage.before_rename: the 1st is hoodie.properties at table creation, the 3rd the first commit's
# completed instant (after its inflight file): a crash between temp write and rename at both.
INGEST = [*POINTS["ingest"], "storage.before_rename", "storage.before_rename:3"]
CLEAN = list(POINTS["clean"])
# Two deletes of Option 1's RFC order: the first and the second old file.
OPTION1_DELETES = ("option1.after_old_file_deleted", "option1.after_old_file_deleted:2")
OPTION1 = [q for p in POINTS["option1"] for q in (OPTION1_DELETES if p == OPTION1_DELETES[0] else (p,))]
OPTION2 = list(POINTS["clustering"])
ROLLBACK = [p for p in POINTS["rollback"] if p.startswith("rollback.")]
# Option 2 on MERGE_ON_READ: deltacommits and MOR clustering are written without a Spark job (no mid_* point)
MOR_INGEST = ["timeline.deltacommit.after_requested", *(p for p in INGEST if p.startswith("ingest.") and "mid_" not in p),
              "storage.before_rename", "storage.before_rename:3"]
MOR_OPTION2 = [p for p in OPTION2 if "mid_" not in p] + list(POINTS["mor_compaction"])


def points_for_kind(kind: str, config: dict[str, Any] | None = None) -> list[str]:
    """Every injection point an engine of ``kind`` passes through in a scenario run (its registry
    entry says which table service's points it marks, and whether it cleans after every commit)."""
    entry = kind_of(kind)
    if entry.fault_points == "option1":
        cfg = config or {}
        if cfg.get("order", "rfc") == "rfc":
            return INGEST + OPTION1
        # commit-before-delete leaves the old files to the cleaner unless told to delete them at once
        immediate = cfg.get("cbd_delete", "cleaner") == "immediate"
        return INGEST + [p for p in OPTION1 if immediate or p not in OPTION1_DELETES] + CLEAN
    if entry.fault_points == "clustering":
        return INGEST + OPTION2 + CLEAN
    if entry.fault_points == "mor_compaction":
        return MOR_INGEST + MOR_OPTION2 + CLEAN
    if entry.cleans_after_commit:  # the baseline: ingest and its automatic clean
        return INGEST + CLEAN
    return []


def reduced_points(kind: str, config: dict[str, Any] | None = None) -> list[str]:
    """The subset ``make test`` runs: the points where the designs differ."""
    points = kind_of(kind).fault_points
    if points == "option1":
        return ["option1.before_commit", "option1.after_new_files_written"]
    if points == "clustering":
        return ["clustering.after_group_written", "clustering.before_replacecommit"]
    if points == "mor_compaction":
        return ["compaction.after_group_written", "clustering.before_replacecommit"]
    return ["ingest.after_files_written"]


def rollback_trigger(kind: str) -> str:
    """The write crash whose recovery a ``rollback.*`` point kills: the engine's mid-write point."""
    return {"option1": "option1.after_new_files_written", "clustering": "clustering.after_group_written",
            "mor_compaction": "compaction.after_group_written"}.get(kind_of(kind).fault_points or "", "ingest.after_files_written")
