"""Sizes, defined once: the byte unit and the Hudi defaults that every engine config, the write
path and the scenario's ``sizing`` start from (hudi-semantics.md §1.3, §7.1; Hudi 0.12's defaults).
"""

from __future__ import annotations

MB = 1 << 20

PARQUET_SMALL_FILE_LIMIT = 100 * MB  # hoodie.parquet.small.file.limit
PARQUET_MAX_FILE_SIZE = 120 * MB  # hoodie.parquet.max.file.size
RECORD_SIZE_ESTIMATE = 1024  # hoodie.copyonwrite.record.size.estimate
RECORD_SIZE_ESTIMATION_THRESHOLD = 1.0  # hoodie.record.size.estimation.threshold
INSERT_SPLIT_SIZE = 500_000  # hoodie.copyonwrite.insert.split.size (records; used without auto split)
ROW_GROUP_ROWS = 65_536  # rows per Parquet row group written by our tasks
CLEANER_COMMITS_RETAINED = 10  # hoodie.cleaner.commits.retained

# hoodie.clustering.plan.strategy.*
CLUSTERING_SMALL_FILE_LIMIT = 300 * MB  # small.file.limit
CLUSTERING_TARGET_FILE_MAX_BYTES = 1024 * MB  # target.file.max.bytes
CLUSTERING_MAX_BYTES_PER_GROUP = 2048 * MB  # max.bytes.per.group
