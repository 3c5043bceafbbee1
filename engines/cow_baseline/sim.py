"""The COW baseline on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

Its ingest assigns inserts with Hudi's UpsertPartitioner rule (:func:`engines.cow_baseline.assign.assign_inserts`,
the planner config itself), merging into small files; it has no table service (a maintenance step
plans nothing, then cleans), and Hudi's automatic clean runs after every commit.
"""

from __future__ import annotations

from engines.cow_baseline.config import CowConfig
from engines.sim import KindSim


class CowBaselineSim(KindSim):
    """The baseline: UpsertPartitioner ingest, the cleaner after every commit, nothing to rewrite."""

    writes_batches_once = False  # a merge rewrites old rows with the batch's
    planner: CowConfig

    def inserts(self, max_file: int) -> CowConfig | None:
        return self.planner

    def cleans_after_ingest(self) -> bool:
        return True
