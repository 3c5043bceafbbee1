"""The one protocol every engine implements; the runner knows nothing option-specific.

An engine owns one table. ``ingest`` commits one batch; ``after_commit`` runs whatever the
engine's mode does inline after a commit (inline compaction/clustering, cleaning) and returns
the maintenance it performed; ``schedule``/``execute``/``clean`` are the explicit calls a
CLI-driven job or an async thread makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pyspark.sql import DataFrame

from engines.spark.insert import CommitResult
from engines.table.model import FileSlice
from engines.table.table import HudiTable


@dataclass
class MaintenanceResult:
    """One table-service run (compaction, clustering, baseline merge, clean, rollback)."""

    kind: str
    instant: str
    duration_s: float
    files_in: int = 0
    files_out: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    records: int = 0
    files_deleted: int = 0
    details: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    name: str
    table: HudiTable

    def ingest(self, df: DataFrame) -> CommitResult:
        """Commit one batch."""
        ...

    def after_commit(self) -> list[MaintenanceResult]:
        """Inline work the engine's mode does after each commit (may be none)."""
        ...

    def schedule(self) -> str | None:
        """Schedule the engine's table service; the plan's instant, or None if nothing to do."""
        ...

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        """Execute a scheduled plan (the earliest pending one when ``instant`` is None)."""
        ...

    def clean(self) -> MaintenanceResult | None:
        """Run the cleaner once."""
        ...

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        """The live file slices readers see."""
        ...

    def close(self) -> None:
        """Stop background threads (async modes) and wait for them."""
        ...
