"""The tiny kind's engine: Option 1's APPEND writer with every batch sorted by service, nothing else."""

from __future__ import annotations

from dataclasses import replace

from engines.append_compaction.engine import Option1Config
from engines.append_only.engine import AppendOnlyEngine
from engines.table import faults
from engines.table.table import HudiTable

SORT_COLUMNS = ("service",)


class TinyAppendEngine(AppendOnlyEngine):
    """APPEND, each batch sorted by service (its files hold narrow service ranges); no table service."""

    def __init__(self, table: HudiTable, config: Option1Config, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        super().__init__(table, replace(config, sort_columns=SORT_COLUMNS), name or "tiny_append", on_step)
