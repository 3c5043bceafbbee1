"""Option 1 on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

APPEND ingest (a batch sorted by its ``sort_columns``, files rolled at the max file size), and
base-file compaction planned by the engine's own pure planner
(:func:`engines.append_compaction.planner.plan_base_file_compaction`). In the RFC order the old
files are deleted as the compaction commits; with ``commit_before_delete`` the cleaner takes them.
"""

from __future__ import annotations

from typing import ClassVar

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.planner import plan_base_file_compaction
from engines.sim import Group, KindSim
from engines.table.model import FileSlice


class AppendCompactionSim(KindSim):
    """Option 1: APPEND, then base-file compaction."""

    planner: CompactionConfig
    task_file_ids: ClassVar[bool] = True  # append_batch: insert_new_file_groups' tasks name the files

    def ingest_order(self) -> list[str]:
        return list(self.options.get("sort_columns", ()))

    def plan(self, candidates: list[FileSlice]) -> list[Group]:
        plan = plan_base_file_compaction(candidates, self.planner)
        if not plan:
            return []
        by_path = {s.path: s for s in candidates}
        return [(op.partition_path, [by_path[p] for p in op.base_file_paths], int(op.metrics["estimatedOutputFiles"]))
                for op in plan.operations]

    def rewrite_file_id_prefix(self, index: int) -> str | None:
        """``operation-<index>`` (the engine's ``_merge``) when unsorted: one task per output, each its
        first file (engines.spark.arrow_rewrite.rewrite_unsorted). Sorted, a small rewrite is one task
        writing every output, a large one a task per output: left to the counter."""
        return None if self.options.get("sort_columns") else f"operation-{index}"

    def deletes_inputs_at_once(self) -> bool:
        return self.options.get("order", "rfc") == "rfc"

    def cleans_after_maintenance(self) -> bool:
        return self.options.get("order") == "commit_before_delete"
