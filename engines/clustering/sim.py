"""Option 2 on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

Insert ingest split as Hudi's UpsertPartitioner splits it with small-file limit 0
(:meth:`engines.clustering.config.IngestSizing.cow_config`; ``insert_split: bytes`` rolls at bytes),
clustering planned by the engine's own pure planner (:func:`engines.clustering.planner.plan_clustering`)
and committed as a replacecommit, the replaced files left to the cleaner.
"""

from __future__ import annotations

from typing import Any

from engines.clustering.config import ClusteringConfig, ingest_sizing
from engines.clustering.planner import plan_clustering
from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice


class ClusteringSim:
    """Option 2: insert, then clustering with snapshot isolation."""

    writes_batches_once = True
    maintenance_kind = "clustering"
    maintenance_action = "replacecommit"

    def __init__(self, planner: ClusteringConfig, options: dict[str, Any]) -> None:
        self.planner = planner
        self.options = options

    def inserts(self, max_file: int) -> CowConfig | None:
        return ingest_sizing(self.options).cow_config(self.options.get("max_file_size", max_file))

    def ingest_order(self) -> list[str]:
        return []

    def cleans_after_ingest(self) -> bool:
        return False

    def maintains(self) -> bool:
        return True

    def plan(self, candidates: list[FileSlice]) -> list[tuple[str, list[FileSlice], int]]:
        plan = plan_clustering(candidates, self.planner)
        return [(g.partition_path, g.slices, g.num_output_files) for g in plan.groups] if plan else []

    def rewrite_sort_columns(self) -> list[str]:
        return list(getattr(self.planner, "sort_columns", ()) or ())

    def deletes_inputs_at_once(self) -> bool:
        return False

    def cleans_after_maintenance(self) -> bool:
        return True
