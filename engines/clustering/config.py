"""Option 2 clustering plan configuration, with Hudi's config names and defaults
(hudi-semantics.md §1.3-1.4; prefix ``hoodie.clustering.plan.strategy.`` unless noted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engines.table.sizes import (
    CLUSTERING_MAX_BYTES_PER_GROUP,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
)


@dataclass(frozen=True)
class ClusteringConfig:
    small_file_limit: int = CLUSTERING_SMALL_FILE_LIMIT  # small.file.limit
    target_file_size: int = CLUSTERING_TARGET_FILE_MAX_BYTES  # target.file.max.bytes
    max_bytes_per_group: int = CLUSTERING_MAX_BYTES_PER_GROUP  # max.bytes.per.group
    max_num_groups: int = 30  # max.num.groups
    sort_columns: tuple[str, ...] = ()  # sort.columns
    single_group_clustering_enabled: bool = True  # single.group.clustering.enabled (0.14+)
    partition_filter_mode: Literal["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS"] = "NONE"  # hoodie.clustering.plan.partition.filter.mode
    lookback_partitions: int = 2  # daybased.lookback.partitions
    skip_from_latest_partitions: int = 0  # daybased.skipfromlatest.partitions
    begin_partition: str | None = None  # cluster.begin.partition
    end_partition: str | None = None  # cluster.end.partition
    partitions: tuple[str, ...] | None = None  # partition.selected
    partition_regex: str | None = None  # partition.regex.pattern
    grouping: Literal["size", "sort_overlap", "key_range", "commit_time"] | None = None  # None: sort_overlap with sort columns, else size
    record_key_column: str = "_hoodie_record_key"

    def __post_init__(self) -> None:
        for name in ("target_file_size", "max_bytes_per_group", "max_num_groups"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if not isinstance(self.sort_columns, tuple):
            object.__setattr__(self, "sort_columns", tuple(self.sort_columns))
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))

    @property
    def effective_grouping(self) -> str:
        return self.grouping or ("sort_overlap" if self.sort_columns else "size")
