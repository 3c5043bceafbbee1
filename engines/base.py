"""The one protocol every engine implements; the runner knows nothing option-specific.

An engine owns one table. ``ingest`` commits one batch; ``after_commit`` runs whatever the
engine's mode does inline after a commit (inline compaction/clustering, cleaning) and returns
the maintenance it performed; ``schedule``/``execute``/``clean``/``pending_plan`` are the calls a
maintenance round makes (:mod:`engines.maintenance_round`: the runner, a CLI-driven job or an async
thread).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from engines.maintenance_round import (
    MaintenanceResult,
    MaintenanceRound,
    TableService,
    execute_pending,
    plan_to_execute,
)
from engines.table.model import FileSlice
from engines.table.probe import HudiProbe, TableProbe
from engines.table.table import HudiTable
from engines.table.transaction import CommitResult

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from engines.async_service import AsyncService


def clean_result(res: object) -> MaintenanceResult | None:
    """A cleaner run (``engines.table.cleaner.CleanResult``) as a maintenance result; None if it did nothing."""
    if getattr(res, "instant", None) is None:
        return None
    return MaintenanceResult(kind="clean", instant=res.instant, duration_s=res.duration_s,  # type: ignore[attr-defined]
                             files_deleted=res.files_deleted,  # type: ignore[attr-defined]
                             details={"bytes_freed": res.bytes_freed,  # type: ignore[attr-defined]
                                      "earliest_commit_to_retain": res.earliest_commit_to_retain})  # type: ignore[attr-defined]


class InsertsOnlyError(ValueError):
    """An update reached an engine that takes inserts only."""


@runtime_checkable
class Engine(TableService, Protocol):
    """An engine over one table: the calls below, and a maintenance round's four calls
    (``schedule``, ``execute``, ``clean``, ``pending_plan``) from
    :class:`engines.maintenance_round.TableService`."""

    name: str
    table: HudiTable | None  # None for an engine over another format (see ``table_format``)
    table_format: str  # "hudi" (our tables and Apache Hudi's: hudi-rs reads them) or "delta"
    writes_batches_once: bool  # each batch is written once as new files: its bytes measure the batch
    own_batch_bytes: bool  # write amplification against its own ingest bytes (another file format)
    # its ingest of a small runner batch reads it through Spark (the runner fills Spark's cache before
    # the clock starts), not from the driver's rows (engines.spark.batch_stats.known_rows)
    reads_batch_in_spark: bool

    def ingest(self, df: DataFrame) -> CommitResult:
        """Commit one batch."""
        ...

    def upsert(self, df: DataFrame) -> CommitResult:
        """Commit one batch of inserts and updates; :class:`InsertsOnlyError` where it takes inserts only."""
        ...

    def committed_extras(self) -> list[dict[str, str]]:
        """The extra metadata of every completed commit, oldest first (none before the first write)."""
        ...

    def after_commit(self) -> list[MaintenanceResult]:
        """Inline work the engine's mode does after each commit (may be none)."""
        ...

    def probe(self) -> TableProbe:
        """What the runner reads from the engine's table (snapshot, files, writes, audit)."""
        ...

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        """The live file slices readers see."""
        ...

    def close(self) -> None:
        """Stop background threads (async modes) and wait for them."""
        ...


class TableEngine:
    """Defaults of an engine over one of our Hudi tables (a base class; a new engine overrides what
    it does): no table service, cleaning none, its probe reads the table through the view."""

    name: str
    table: HudiTable
    table_format = "hudi"
    writes_batches_once = False
    own_batch_bytes = False
    reads_batch_in_spark = False
    _service: AsyncService | None = None  # an async mode's service thread (engines.async_service)

    @property
    def async_results(self) -> list[MaintenanceResult]:
        """What the engine's async service executed so far (none without one)."""
        return self._service.results if self._service is not None else []

    @property
    def async_errors(self) -> list[str]:
        """Failures the engine's async service recorded (it goes on after each)."""
        return self._service.errors if self._service is not None else []

    def upsert(self, df: DataFrame) -> CommitResult:
        raise InsertsOnlyError(f"{self.name} takes inserts only: it has no update path")

    def committed_extras(self) -> list[dict[str, str]]:
        table = self.table
        return [table.commit_metadata(i).extra for i in table.refresh().completed(["commit", "deltacommit", "replacecommit"])]

    def after_commit(self) -> list[MaintenanceResult]:
        return []

    def schedule(self) -> str | None:
        return None

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        """Execute the plan ``instant``, the earliest pending one when None
        (:func:`engines.maintenance_round.plan_to_execute`); None when there is none. An engine
        with a table service overrides :meth:`execute_instant`, not this."""
        found = plan_to_execute(self, instant)
        return None if found is None else self.execute_instant(found)

    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        """Execute the pending plan ``instant`` and complete it (no table service here: nothing)."""
        return None

    def clean(self) -> MaintenanceResult | None:
        return None

    def pending_plan(self) -> str | None:
        return None

    def schedule_and_execute(self) -> list[MaintenanceResult]:
        """One maintenance round (:class:`engines.maintenance_round.MaintenanceRound`): schedule a
        plan, execute it, clean (HoodieClusteringJob's ``scheduleAndExecute``); what it did."""
        return MaintenanceRound(self).run()

    def run_pending(self) -> list[MaintenanceResult]:
        """Execute every pending plan, earliest first (:func:`engines.maintenance_round.execute_pending`)."""
        return execute_pending(self)

    def probe(self) -> TableProbe:
        return HudiProbe(self.table)

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        return self.table.view().snapshot(as_of)

    def close(self) -> None:
        return None


class TableServiceModes(TableEngine):
    """Inline / async / manual scheduling of an engine's table service (mixin).

    inline: ``after_commit`` schedules and executes once ``inline_every`` commits completed since
    the last service instant; async: :class:`engines.async_service.AsyncService` schedules and
    executes every ``async_interval_s`` seconds beside ingestion; manual: only explicit calls.
    """

    name: str
    table: HudiTable
    _service_actions: tuple[str, ...] = ()

    def _start_modes(self, mode: str, inline_every: int, async_interval_s: float) -> None:
        from engines.async_service import AsyncService

        self._mode = mode
        self._inline_every = inline_every
        self._service = (AsyncService(self.schedule_and_execute, f"async-{self.name}", async_interval_s)
                         if mode == "async" else None)

    def commits_since_last_service(self) -> int:
        timeline = self.table.refresh()
        service = [i.timestamp for i in timeline.instants if i.action in self._service_actions]
        last = service[-1] if service else ""
        return sum(1 for i in timeline.completed(["commit"]) if i.timestamp > last)

    def after_commit(self) -> list[MaintenanceResult]:
        if self._mode != "inline" or self.commits_since_last_service() < self._inline_every:
            return []
        return self.schedule_and_execute()

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
