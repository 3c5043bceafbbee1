"""Option 1 (RFC-19 "APPEND + HoodieBaseFileCompactionPlan") planning configuration; fields, types
and defaults from the registry (:mod:`engines.config.registry`)."""

from __future__ import annotations

from dataclasses import dataclass

from engines.config.registry import O1, settings

PLANNER_KEYS = ("small_file_limit", "target_file_size", "min_files_per_partition", "partitions", "partition_regex",
                "max_bytes_per_operation")


@dataclass(frozen=True)
class CompactionConfig(settings(*PLANNER_KEYS, kind=O1, frozen=True)):
    """Files below ``small_file_limit`` are merged into evenly sized outputs of at most
    ``target_file_size``, per partition with at least ``min_files_per_partition`` of them."""

    def __post_init__(self) -> None:
        self.check_settings()
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))
