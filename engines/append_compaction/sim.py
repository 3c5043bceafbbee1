"""Option 1 on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

APPEND ingest (a batch sorted by its ``sort_columns``, files rolled at the max file size), and
base-file compaction planned by the engine's own pure planner
(:func:`engines.append_compaction.planner.plan_base_file_compaction`). In the RFC order the old
files are deleted as the compaction commits; with ``commit_before_delete`` the cleaner takes them.
"""

from __future__ import annotations

from typing import Any

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.planner import plan_base_file_compaction
from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice


class AppendCompactionSim:
    """Option 1: APPEND, then base-file compaction."""

    writes_batches_once = True
    maintenance_kind = "compaction"
    maintenance_action = "commit"

    def __init__(self, planner: CompactionConfig, options: dict[str, Any]) -> None:
        self.planner = planner
        self.options = options

    def inserts(self, max_file: int) -> CowConfig | None:
        return None

    def ingest_order(self) -> list[str]:
        return list(self.options.get("sort_columns", ()))

    def cleans_after_ingest(self) -> bool:
        return False

    def maintains(self) -> bool:
        return True

    def plan(self, candidates: list[FileSlice]) -> list[tuple[str, list[FileSlice], int]]:
        plan = plan_base_file_compaction(candidates, self.planner)
        if not plan:
            return []
        by_path = {s.path: s for s in candidates}
        return [(op.partition_path, [by_path[p] for p in op.base_file_paths], int(op.metrics["estimatedOutputFiles"]))
                for op in plan.operations]

    def rewrite_sort_columns(self) -> list[str]:
        return list(self.options.get("sort_columns", ()))

    def deletes_inputs_at_once(self) -> bool:
        return self.options.get("order", "rfc") == "rfc"

    def cleans_after_maintenance(self) -> bool:
        return self.options.get("order") == "commit_before_delete"
