"""The tiny kind on the simulator's table: the control's behaviour, each batch sorted by service."""

from __future__ import annotations

from engines.append_only.sim import AppendOnlySim
from tiny_kind.engine import SORT_COLUMNS


class TinyAppendSim(AppendOnlySim):
    def ingest_order(self) -> list[str]:
        return list(SORT_COLUMNS)
