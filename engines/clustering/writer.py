"""Option 2 ingestion: insert with small-file limit 0, upsert and delete with a simple index.

Decisions:
- ``insert`` never merges into existing files (``hoodie.parquet.small.file.limit=0``): every batch
  makes new file groups, as Hudi's UpsertPartitioner cuts them (new buckets of max file size /
  estimated record size records: :func:`engines.cow_baseline.insert.insert_with_buckets`), or, with
  ``insert_split="bytes"``, rolled at the max file size of bytes written. Pure inserts have no
  current location, so a pending clustering plan never blocks them (hudi-semantics.md §5.3).
- ``upsert`` / ``delete`` are the copy-on-write merge every COW design shares
  (:mod:`engines.cow_baseline.upsert`, re-exported here): a pending clustering plan holds its file
  groups, and the update strategy says what an update touching them does.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from engines.cow_baseline.config import CowConfig
from engines.cow_baseline.insert import insert_with_buckets
from engines.cow_baseline.upsert import ClusteringUpdateConflictError, UpdateStrategy, merge_write
from engines.spark.insert import insert_new_file_groups
from engines.table import faults
from engines.table.table import HudiTable
from engines.table.transaction import CommitResult

__all__ = ["ClusteringUpdateConflictError", "UpdateStrategy", "insert", "merge_write"]


def insert(table: HudiTable, df: DataFrame, sizing: CowConfig | None, max_file_size: int, row_group_rows: int,
           on_step: faults.StepHook = None) -> CommitResult:
    """Insert with small-file limit 0: new file groups only, in Hudi's buckets (``sizing``, its
    small-file limit 0) or, without ``sizing``, rolled at ``max_file_size`` bytes written."""
    if sizing is not None:
        if sizing.small_file_limit != 0:
            raise ValueError("Option 2 inserts never merge into small files: the sizing's small-file limit must be 0")
        return insert_with_buckets(table, df, sizing, row_group_rows, on_step)
    return insert_new_file_groups(table, df, operation="INSERT", target_file_bytes=max_file_size,
                                  row_group_rows=row_group_rows, on_step=on_step)
