"""A MERGE_ON_READ compaction plan: Apache Hudi's ``HoodieCompactionPlan`` as Python objects.

One :class:`CompactionOperation` per file slice to compact, named as Hudi names it
(``CompactionUtils.buildFromFileSlice``): fileId, partition path, base instant, the base file's
*name* (``dataFilePath``) and the log files' *names* (``deltaFilePaths``), oldest version first, with
Hudi's metrics (``TOTAL_LOG_FILES``, ``TOTAL_LOG_FILES_SIZE``, ``TOTAL_IO_READ_MB``).

The exclusion rule's record lives in the plan's ``extraMetadata`` under :data:`SKIPPED_KEY`: a JSON
list of ``[partition, fileId, reason, instant]`` for every file group with logs the planner left out
because a pending clustering holds it (``pending_clustering``, its instant) or a completed
replacecommit replaced it (``replaced``, the replacing instant). Hudi's own plans carry no such
entry; Hudi ignores extra keys.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SKIPPED_KEY = "layoutbench.skippedFileGroups"
PLAN_VERSION = 2  # HoodieCompactionPlan.version Hudi 0.x/1.x writes (names relative to the partition)


@dataclass(frozen=True)
class CompactionOperation:
    """One file slice to compact: its base file (None for a group of log files only) and logs."""

    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    log_files: tuple[str, ...]
    metrics: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition, self.file_id)

    def path(self, name: str) -> str:
        """A file of this slice, relative to the table's base."""
        return f"{self.partition}/{name}" if self.partition else name

    def to_avro(self) -> dict[str, Any]:
        return {"baseInstantTime": self.base_instant, "deltaFilePaths": list(self.log_files),
                "dataFilePath": self.base_file, "fileId": self.file_id, "partitionPath": self.partition,
                "metrics": dict(self.metrics), "bootstrapFilePath": None}

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> CompactionOperation:
        return cls(d.get("partitionPath") or "", d.get("fileId") or "", d.get("baseInstantTime") or "",
                   d.get("dataFilePath"), tuple(d.get("deltaFilePaths") or ()), dict(d.get("metrics") or {}))


@dataclass(frozen=True)
class SkippedGroup:
    """A file group with logs the planner did not compact, and why."""

    partition: str
    file_id: str
    reason: str  # "pending_clustering" or "replaced"
    instant: str  # the clustering plan's, or the replacing instant

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition, self.file_id)


@dataclass
class CompactionPlan:
    operations: list[CompactionOperation]
    skipped: list[SkippedGroup] = field(default_factory=list)
    extra_metadata: dict[str, str] = field(default_factory=dict)

    @property
    def file_groups(self) -> list[tuple[str, str]]:
        return [op.file_group for op in self.operations]

    def to_avro(self) -> dict[str, Any]:
        extra = dict(self.extra_metadata)
        if self.skipped:
            extra[SKIPPED_KEY] = json.dumps([[s.partition, s.file_id, s.reason, s.instant] for s in self.skipped])
        return {"operations": [op.to_avro() for op in self.operations], "extraMetadata": extra or None,
                "version": PLAN_VERSION, "strategy": None, "preserveHoodieMetadata": True,
                "missingSchedulePartitions": None}

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> CompactionPlan:
        extra = dict(d.get("extraMetadata") or {})
        skipped = [SkippedGroup(*entry) for entry in json.loads(extra.pop(SKIPPED_KEY, "[]"))]
        return cls([CompactionOperation.from_avro(op) for op in d.get("operations") or []], skipped, extra)
