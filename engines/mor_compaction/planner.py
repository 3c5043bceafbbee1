"""MERGE_ON_READ compaction scheduling as a pure function of file slices (shared with the simulator).

| step      | rule                                                                                  | Hudi                                     |
| --------- | ------------------------------------------------------------------------------------- | ---------------------------------------- |
| trigger   | at least ``max_delta_commits`` deltacommits completed since the last compaction        | ``hoodie.compact.inline.max.delta.commits`` (5), NUM_COMMITS |
| candidate | the latest slice of a visible file group with at least one log file                    | ``BaseHoodieCompactionPlanGenerator``: slices with logs |
| filter    | ``min_log_files`` / ``min_log_bytes`` (0 / 0: every slice with logs, Hudi's default)   | LogFileNumBased / LogFileSizeBased strategies (stated here as thresholds) |
| exclusion | skip groups in a pending clustering plan and groups a completed replacecommit replaced, recording each in the plan (``SKIPPED_KEY``) | ``getFileGroupsInPendingClustering`` excluded; replaced groups are not in the view |
| order     | by (partition, fileId)                                                                 | ``hoodie.compaction.strategy`` default orders by log size; ours is stable for determinism |

No I/O: the caller hands the slices (:class:`SliceLogs`), the pending clustering groups and the
replaced groups. Hudi's default strategy (``LogFileSizeBasedCompactionStrategy`` with no IO cap
in 1.x, every slice with logs) is ``min_log_files=0, min_log_bytes=0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engines.config.registry import MB, O2M, default
from engines.mor_compaction.plan import CompactionOperation, CompactionPlan, SkippedGroup

MAX_DELTA_COMMITS: int = default("compact_max_delta_commits", O2M)  # hoodie.compact.inline.max.delta.commits


@dataclass(frozen=True)
class SliceLogs:
    """What the planner needs of one latest file slice."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None  # the base file's name, None for log files only
    base_bytes: int
    log_files: tuple[str, ...]  # names, oldest version first
    log_bytes: int

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition, self.file_id)


@dataclass(frozen=True)
class CompactionConfig:
    max_delta_commits: int = MAX_DELTA_COMMITS
    min_log_files: int = 0
    min_log_bytes: int = 0

    def __post_init__(self) -> None:
        if self.max_delta_commits < 1:
            raise ValueError("max_delta_commits must be at least 1")
        if self.min_log_files < 0 or self.min_log_bytes < 0:
            raise ValueError("min_log_files and min_log_bytes must not be negative")


def due(deltacommits_since_last: int, config: CompactionConfig) -> bool:
    """Hudi's NUM_COMMITS trigger: enough deltacommits since the last compaction."""
    return deltacommits_since_last >= config.max_delta_commits


def plan_compaction(slices: Iterable[SliceLogs], config: CompactionConfig,
                    pending_clustering: Mapping[tuple[str, str], str] | None = None,
                    replaced: Mapping[tuple[str, str], str] | None = None) -> CompactionPlan | None:
    """The plan over ``slices`` (the trigger is the caller's, :func:`due`); None when no slice
    qualifies (no instant is written then)."""
    pending_clustering = pending_clustering or {}
    replaced = replaced or {}
    ops: list[CompactionOperation] = []
    skipped: list[SkippedGroup] = []
    for s in sorted(slices, key=lambda s: s.file_group):
        if not s.log_files or len(s.log_files) < config.min_log_files or s.log_bytes < config.min_log_bytes:
            continue
        if s.file_group in replaced:
            skipped.append(SkippedGroup(*s.file_group, "replaced", replaced[s.file_group]))
            continue
        if s.file_group in pending_clustering:
            skipped.append(SkippedGroup(*s.file_group, "pending_clustering", pending_clustering[s.file_group]))
            continue
        metrics = {"TOTAL_LOG_FILES": float(len(s.log_files)), "TOTAL_LOG_FILES_SIZE": float(s.log_bytes),
                   "TOTAL_IO_READ_MB": float((s.base_bytes + s.log_bytes) // MB)}
        ops.append(CompactionOperation(s.partition, s.file_id, s.base_instant, s.base_file, s.log_files, metrics))
    if not ops:
        return None
    return CompactionPlan(ops, skipped, {"planner": "layoutbench.mor_compaction"})
