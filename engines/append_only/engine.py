"""``append_only``: Option 1's APPEND ingest and nothing else.

No table service is ever planned, run or cleaned: every batch stays as the small files it was
written as. Beside the designs it shows what the small files cost queries when nobody fixes them,
and so what each fix buys. Sizing and write settings are Option 1's (``Option1Config``); its
compaction and mode settings are ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.append_compaction.engine import Option1Config, append_batch
from engines.base import TableEngine
from engines.table import faults
from engines.table.table import HudiTable
from engines.table.transaction import CommitResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class AppendOnlyEngine(TableEngine):
    """APPEND writes; the table engine's defaults (no service, no cleaner) for everything else."""

    writes_batches_once = True

    def __init__(self, table: HudiTable, config: Option1Config, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        table.bloom = config.bloom  # every file this engine writes carries Hudi's footer bloom filter
        self.table = table
        self.config = config
        self.name = name or "append_only"
        self.on_step = on_step

    def ingest(self, df: DataFrame) -> CommitResult:
        """APPEND, as Option 1 writes a batch."""
        return append_batch(self.table, self.config, df, self.on_step)
