"""Option 1 (RFC-19 "APPEND + HoodieBaseFileCompactionPlan") planning configuration."""

from __future__ import annotations

from dataclasses import dataclass

from engines.table.sizes import PARQUET_MAX_FILE_SIZE, PARQUET_SMALL_FILE_LIMIT


@dataclass(frozen=True)
class CompactionConfig:
    small_file_limit: int = PARQUET_SMALL_FILE_LIMIT  # files below this are merged
    target_file_size: int = PARQUET_MAX_FILE_SIZE  # outputs are evenly sized, each <= this
    min_files_per_partition: int = 2  # a partition with fewer small files is skipped
    partitions: tuple[str, ...] | None = None  # only these partitions (None = all)
    partition_regex: str | None = None  # only partitions fully matching this
    max_bytes_per_operation: int | None = None  # split a partition's files into several operations

    def __post_init__(self) -> None:
        if self.target_file_size <= 0:
            raise ValueError("target_file_size must be positive")
        if self.min_files_per_partition < 1:
            raise ValueError("min_files_per_partition must be at least 1")
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))
