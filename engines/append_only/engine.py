"""``append_only``: Option 1's APPEND ingest and nothing else.

No table service is ever planned, run or cleaned: every batch stays as the small files it was
written as. Beside the designs it shows what the small files cost queries when nobody fixes them,
and so what each fix buys. Sizing and write settings are Option 1's (``Option1Config``); its
compaction and mode settings are ignored.
"""

from __future__ import annotations

from engines.append_compaction.engine import AppendCompactionEngine
from engines.base import MaintenanceResult


class AppendOnlyEngine(AppendCompactionEngine):
    """APPEND writes; schedule, execute and clean do nothing."""

    def schedule(self) -> str | None:
        return None

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        return None

    def clean(self) -> MaintenanceResult | None:
        return None

    def after_commit(self) -> list[MaintenanceResult]:
        return []

    def schedule_and_execute(self) -> list[MaintenanceResult]:
        return []
