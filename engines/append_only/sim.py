"""The control on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`):
Option 1's APPEND ingest, and no maintenance step ever plans, rewrites or cleans anything."""

from __future__ import annotations

from engines.append_compaction.sim import AppendCompactionSim
from engines.sim import Group
from engines.table.model import FileSlice


class AppendOnlySim(AppendCompactionSim):
    """Option 1's ingest; nothing else."""

    def maintains(self) -> bool:
        return False

    def upserts_by_merge(self) -> bool:
        return False  # inserts only (its registry entry: takes_updates False)

    def plan(self, candidates: list[FileSlice]) -> list[Group]:
        return []
