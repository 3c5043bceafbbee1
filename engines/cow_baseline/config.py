"""Hudi's copy-on-write sizing configs (hudi-semantics.md §7.1), defaults as in Hudi 0.12."""

from __future__ import annotations

from dataclasses import dataclass

from engines.table.sizes import (
    INSERT_SPLIT_SIZE,
    PARQUET_MAX_FILE_SIZE,
    PARQUET_SMALL_FILE_LIMIT,
    RECORD_SIZE_ESTIMATE,
    RECORD_SIZE_ESTIMATION_THRESHOLD,
)


@dataclass(frozen=True)
class CowConfig:
    small_file_limit: int = PARQUET_SMALL_FILE_LIMIT  # hoodie.parquet.small.file.limit
    max_file_size: int = PARQUET_MAX_FILE_SIZE  # hoodie.parquet.max.file.size
    record_size_estimate: int = RECORD_SIZE_ESTIMATE  # hoodie.copyonwrite.record.size.estimate
    record_size_estimation_threshold: float = RECORD_SIZE_ESTIMATION_THRESHOLD  # hoodie.record.size.estimation.threshold
    insert_split_size: int = INSERT_SPLIT_SIZE  # hoodie.copyonwrite.insert.split.size
    auto_split_inserts: bool = True  # hoodie.copyonwrite.insert.auto.split

    def __post_init__(self) -> None:
        if self.max_file_size <= 0 or self.record_size_estimate <= 0 or self.insert_split_size <= 0:
            raise ValueError("max_file_size, record_size_estimate and insert_split_size must be positive")
