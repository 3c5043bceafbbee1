"""Option 2 on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

Insert ingest split as Hudi's UpsertPartitioner splits it with small-file limit 0
(:meth:`engines.clustering.config.IngestSizing.cow_config`; ``insert_split: bytes`` rolls at bytes),
clustering planned by the engine's own pure planner (:func:`engines.clustering.planner.plan_clustering`)
and committed as a replacecommit, the replaced files left to the cleaner.
"""

from __future__ import annotations

from engines.clustering.config import ClusteringConfig, ingest_sizing
from engines.clustering.planner import plan_clustering
from engines.cow_baseline.config import CowConfig
from engines.sim import Group, KindSim
from engines.table.model import FileSlice


class ClusteringSim(KindSim):
    """Option 2: insert, then clustering with snapshot isolation."""

    maintenance_kind = "clustering"
    maintenance_action = "replacecommit"
    planner: ClusteringConfig

    def inserts(self, max_file: int) -> CowConfig | None:
        return ingest_sizing(self.options).cow_config(self.options.get("max_file_size", max_file))

    def plan(self, candidates: list[FileSlice]) -> list[Group]:
        plan = plan_clustering(candidates, self.planner)
        return [(g.partition_path, g.slices, g.num_output_files) for g in plan.groups] if plan else []

    def rewrite_sort_columns(self) -> list[str]:
        return list(getattr(self.planner, "sort_columns", ()) or ())
