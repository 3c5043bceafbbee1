"""The COW baseline on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

Its ingest assigns inserts with Hudi's UpsertPartitioner rule (:func:`engines.cow_baseline.assign.assign_inserts`,
the planner config itself), merging into small files; it has no table service, and Hudi's
automatic clean runs after every commit.
"""

from __future__ import annotations

from typing import Any

from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice


class CowBaselineSim:
    """The baseline: UpsertPartitioner ingest, the cleaner after every commit, nothing to rewrite."""

    writes_batches_once = False  # a merge rewrites old rows with the batch's
    maintenance_kind = "compaction"
    maintenance_action = "commit"

    def __init__(self, planner: CowConfig, options: dict[str, Any]) -> None:
        self.planner = planner
        self.options = options

    def inserts(self, max_file: int) -> CowConfig | None:
        return self.planner

    def ingest_order(self) -> list[str]:
        return []

    def cleans_after_ingest(self) -> bool:
        return True

    def maintains(self) -> bool:
        return True  # a maintenance step plans nothing, then cleans

    def plan(self, candidates: list[FileSlice]) -> list[tuple[str, list[FileSlice], int]]:
        return []

    def rewrite_sort_columns(self) -> list[str]:
        return list(self.options.get("sort_columns", ()))

    def deletes_inputs_at_once(self) -> bool:
        return False

    def cleans_after_maintenance(self) -> bool:
        return True
