"""``scheduleBaseFileCompaction`` as a pure function of FileSlices (RFC-19 Option 1, steps 1-3).

All small files (size < limit) of every selected partition, except files already in a pending
plan, become one operation per partition (or several when ``max_bytes_per_operation`` caps an
operation, packed in path order); partitions with fewer than ``min_files_per_partition`` small
files are skipped. Deterministic: partitions ascending, files by path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.plan import BaseFileCompactionOperation, BaseFileCompactionPlan
from engines.table.model import FileSlice
from engines.table.sizing import output_file_count


def selected(partition: str, config: CompactionConfig) -> bool:
    if config.partitions is not None and partition not in config.partitions:
        return False
    return config.partition_regex is None or re.fullmatch(config.partition_regex, partition) is not None


def _operation(partition: str, files: list[FileSlice], config: CompactionConfig) -> BaseFileCompactionOperation:
    total = sum(f.size_bytes for f in files)
    return BaseFileCompactionOperation(
        tuple(f.path for f in files), partition,
        {"fileCount": float(len(files)), "totalBytes": float(total),
         "totalRecords": float(sum(f.num_rows for f in files)),
         "estimatedOutputFiles": float(output_file_count(total, config.target_file_size))})


def plan_base_file_compaction(slices: Iterable[FileSlice], config: CompactionConfig,
                              pending_paths: Iterable[str] = frozenset()) -> BaseFileCompactionPlan | None:
    """The plan, or None when no partition has enough small files."""
    pending = set(pending_paths)
    by_partition: dict[str, list[FileSlice]] = {}
    for s in slices:
        if s.size_bytes < config.small_file_limit and s.path not in pending and selected(s.partition, config):
            by_partition.setdefault(s.partition, []).append(s)
    operations: list[BaseFileCompactionOperation] = []
    for partition in sorted(by_partition):
        files = sorted(by_partition[partition], key=lambda s: s.path)
        if len(files) < config.min_files_per_partition:
            continue
        cap = config.max_bytes_per_operation
        group: list[FileSlice] = []
        total = 0
        for f in files:
            if cap is not None and group and total + f.size_bytes > cap:
                operations.append(_operation(partition, group, config))
                group, total = [], 0
            group.append(f)
            total += f.size_bytes
        if len(group) >= min(2, config.min_files_per_partition) or not operations:
            operations.append(_operation(partition, group, config))
    if not operations:
        return None
    return BaseFileCompactionPlan(tuple(operations), {"planner": "layoutbench.append_compaction",
                                                      "smallFileLimit": str(config.small_file_limit),
                                                      "targetFileSize": str(config.target_file_size)})
