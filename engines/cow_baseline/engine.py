"""The copy-on-write small-file baseline: Hudi's default insert path (hudi-semantics.md §7).

Per batch, :func:`engines.cow_baseline.insert.insert_with_buckets`: the UpsertPartitioner's
small-file top-ups and new buckets (:func:`engines.cow_baseline.assign.assign_inserts`), each
small file rewritten in full as a new slice of its file group. Older slices stay for the cleaner
(KEEP_LATEST_COMMITS). ``operation="bulk_insert"`` skips sizing entirely (reference point).
``upsert`` is the table's COW merge (:func:`engines.cow_baseline.upsert.merge_write`, every COW design's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from engines.base import MaintenanceResult, TableEngine, clean_result
from engines.config.registry import BLOOM, COW, settings
from engines.cow_baseline.config import PLANNER_KEYS, CowConfig
from engines.cow_baseline.insert import insert_with_buckets
from engines.cow_baseline.upsert import merge_write
from engines.spark.insert import insert_new_file_groups
from engines.table import faults
from engines.table.bloom import BloomFields
from engines.table.cleaner import run_clean
from engines.table.table import HudiTable
from engines.table.transaction import CommitResult


@dataclass
class CowEngineConfig(BloomFields, settings(kind=COW, exclude=(*PLANNER_KEYS, *BLOOM))):
    """Every key of the kind in the registry but the UpsertPartitioner's (the bloom filter's through
    :class:`BloomFields`), and the UpsertPartitioner's config."""

    planner: CowConfig = field(default_factory=CowConfig)


class CowBaselineEngine(TableEngine):
    """Baseline engine; its "table service" is the cleaner (the merge happens at ingest)."""

    writes_batches_once = False

    def __init__(self, table: HudiTable, config: CowEngineConfig, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        self.table = table
        table.bloom = config.bloom  # every file this engine writes carries Hudi's footer bloom filter
        self.config = config
        self.name = name or ("baseline" if config.operation == "insert" else "baseline_bulk_insert")
        self.on_step = on_step

    def ingest(self, df: DataFrame) -> CommitResult:
        cfg = self.config.planner
        if self.config.operation == "bulk_insert":
            return insert_new_file_groups(self.table, df, operation="BULK_INSERT", target_file_bytes=cfg.max_file_size,
                                          row_group_rows=self.config.row_group_rows, on_step=self.on_step)
        return insert_with_buckets(self.table, df, cfg, self.config.row_group_rows, self.on_step)

    def upsert(self, df: DataFrame) -> CommitResult:
        """Hudi COW's upsert: each file group holding an updated key is merged into a new slice (its other
        rows keep their commit time), keys it does not hold become new file groups. No plan of this
        engine ever holds a file group, so nothing refuses an update."""
        return merge_write(self.table, df, None, "UPSERT", "reject", self.config.row_group_rows,
                           self.config.planner.max_file_size, self.on_step)

    def after_commit(self) -> list[MaintenanceResult]:
        if not self.config.auto_clean:
            return []
        res = self.clean()
        return [res] if res is not None else []

    def clean(self) -> MaintenanceResult | None:
        res = run_clean(self.table, self.config.cleaner_commits_retained)
        return clean_result(res)
