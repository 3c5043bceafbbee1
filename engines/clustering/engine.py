"""RFC-19 Option 2: clustering with snapshot isolation (what Apache Hudi shipped), as an ``Engine``.

The engine wires the pieces together; each has its own module and docstring:
- ``writer``: insert with small-file limit 0; upsert / delete with a simple index; the update
  strategy (reject with :class:`ClusteringUpdateConflictError`, or allow) for file groups under a
  pending plan; pure inserts always proceed.
- ``planner`` (pure, shared with the simulator) -> ``executor``: ``<T>.replacecommit.requested``
  -> inflight -> one Spark job per group (``max_parallel_groups`` at a time), evenly sized
  outputs, ordering none / linear / z-order / Hilbert (``ordering``) -> ``<T>.replacecommit``
  with ``partitionToReplaceFileIds`` and operationType ``CLUSTER``.
- ``engines/table/cleaner`` (KEEP_LATEST_COMMITS, ``cleaner_commits_retained``) removes replaced
  file groups once they leave the retained window; ``engines/table/rollback`` rolls back a
  killed execution (plan kept) before it is executed again.
- ``modes``: inline / async / schedule_inline / manual with Hudi's gates; ``schedule``,
  ``execute`` and ``schedule_and_execute`` are HoodieClusteringJob's three modes.

Decisions: ``on_step`` observes every step by its fault point's name (``clustering.*``,
``clean.*``, ``rollback.*``, ``ingest.*``: :data:`engines.table.faults.POINTS`). Execution is the
shared skeleton of :mod:`engines.service_executor`; this engine supplies a group's rewrite and the
replacecommit. Instant-creating calls of this engine are serialised by an
in-process mutex so an async service thread and the ingesting thread never race for instant
times (the table's writer lock is re-entrant across threads of one process).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from engines.async_service import AsyncService
from engines.base import MaintenanceResult, TableEngine, clean_result
from engines.clustering import executor, modes
from engines.clustering.config import PLANNER_KEYS, ClusteringConfig, IngestSizing, ingest_sizing
from engines.clustering.plan import ClusteringGroup, ClusteringPlan
from engines.clustering.planner import plan_clustering
from engines.clustering.writer import ClusteringUpdateConflictError, insert, merge_write
from engines.config.registry import BLOOM, O2, settings
from engines.files.ordering import effective_ordering
from engines.maintenance_round import Trigger, after_commit_round, earliest_pending
from engines.service_executor import Committed, PlanExecutor
from engines.table import faults, plans
from engines.table import rollback as table_rollback
from engines.table.bloom import BloomFields
from engines.table.cleaner import run_clean
from engines.table.model import FileSlice, WriteStat
from engines.table.table import HudiTable
from engines.table.timeline import MOR_COMPACTION, REPLACE, Instant, State
from engines.table.transaction import CommitResult

__all__ = ["ClusteringEngine", "ClusteringUpdateConflictError", "Option2Config"]


@dataclass
class Option2Config(BloomFields, settings(kind=O2, exclude=(*PLANNER_KEYS, *BLOOM))):
    """Every key of the kind in the registry but the planner's (the bloom filter's through
    :class:`BloomFields`; the insert's sizing as :class:`IngestSizing` reads them), and the
    clustering planner's config. Inserts roll new files at ``max_file_size``; clustering
    outputs are sized by the planner's ``target_file_size``."""

    clustering: ClusteringConfig = field(default_factory=ClusteringConfig)

    def __post_init__(self) -> None:
        self.check_settings()  # each value by its registry entry's parser
        effective_ordering(self.ordering, self.clustering.sort_columns)  # validates the name
        self.ingest_sizing.cow_config(self.max_file_size)  # validates the insert sizing
        self.check_bloom()

    @property
    def ingest_sizing(self) -> IngestSizing:
        return ingest_sizing(self.__dict__)

    @property
    def effective_ordering(self) -> str:
        return effective_ordering(self.ordering, self.clustering.sort_columns)

    @property
    def hudi_configs(self) -> dict[str, str]:
        return modes.hudi_configs(self.mode, self.inline_max_commits, self.async_max_commits)


class ClusteringEngine(TableEngine, PlanExecutor):
    """Option 2 over one table; see the module docstring."""

    writes_batches_once = True
    service_kind = "clustering"
    action = REPLACE
    points = executor.SHARED_POINTS

    def __init__(self, table: HudiTable, config: Option2Config, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        self.table = table
        table.bloom = config.bloom  # every file this engine writes carries Hudi's footer bloom filter
        self.config = config
        self.name = name or ("option2_sorted" if config.clustering.sort_columns else "option2")
        self.on_step = on_step
        self._mutex = threading.RLock()
        self._service: AsyncService | None = None
        if config.mode == "async":
            self._service = AsyncService(self.run_pending, f"async-{self.name}", config.async_interval_s)

    # -- writes ---------------------------------------------------------------------------------
    def ingest(self, df: DataFrame) -> CommitResult:
        """Insert with small-file limit 0: new file groups only, cut as ``insert_split`` says; never
        blocked by pending clustering."""
        with self._mutex:
            return insert(self.table, df, self.config.ingest_sizing.cow_config(self.config.max_file_size),
                          self.config.max_file_size, self.config.row_group_rows, self.on_step)

    def upsert(self, df: DataFrame) -> CommitResult:
        with self._mutex:
            return merge_write(self.table, df, None, "UPSERT", self.config.update_strategy,
                               self.config.row_group_rows, self.config.max_file_size, self.on_step)

    def delete(self, keys_df: DataFrame) -> CommitResult:
        with self._mutex:
            return merge_write(self.table, None, keys_df, "DELETE", self.config.update_strategy,
                               self.config.row_group_rows, self.config.max_file_size, self.on_step)

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        return self.table.view().snapshot(as_of)

    # -- modes ----------------------------------------------------------------------------------
    def after_commit(self) -> list[MaintenanceResult]:
        """The writer's post-commit work in this mode: auto clean, then clustering (module ``modes``)
        as :func:`engines.maintenance_round.after_commit_round` orders it: inline runs the pending
        plans, then schedules and executes; the other modes schedule and wake the async service."""
        mode = self.config.mode
        if mode == "manual":
            return []

        def due() -> bool:
            return modes.may_schedule(mode, self.table.refresh(), self.config.inline_max_commits,
                                      self.config.async_max_commits, self.config.schedule_rules)

        inline = mode == "inline"
        return after_commit_round(self, Trigger.INLINE if inline else Trigger.ASYNC, due=due,
                                  run_pending_first=inline, notify=self._notify_service)

    def _notify_service(self) -> None:
        if self._service is not None:
            self._service.notify()

    def wait_async(self, timeout: float | None = None) -> bool:
        """Async mode: wait until the service has executed everything queued."""
        return self._service.wait_idle(timeout) if self._service is not None else True

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None

    # -- clustering (HoodieClusteringJob: schedule / execute / scheduleAndExecute) --------------
    def plan(self) -> ClusteringPlan | None:
        """The plan a schedule would save now (nothing written)."""
        view = self.table.view()
        return plan_clustering(view.snapshot(), self.config.clustering, plans.pending_file_groups(view.timeline, REPLACE),
                               plans.pending_file_groups(view.timeline, MOR_COMPACTION))

    def schedule(self) -> str | None:
        with self._mutex:
            return executor.schedule(self.table, self.config.clustering, self.config.effective_ordering,
                                     self.on_step)

    def pending_plan(self) -> str | None:
        """The earliest pending clustering instant (what ``execute()`` without an instant picks)."""
        return earliest_pending(self.table, (REPLACE,))

    def load_plan(self, instant: str) -> ClusteringPlan:
        return executor.load_plan(self.table, instant)

    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        return self.execute_plan(instant)

    # -- the parts of the shared execute skeleton (engines.service_executor) -------------------
    @property
    def max_parallel(self) -> int:
        return self.config.max_parallel_groups

    def plan_inputs(self, plan: ClusteringPlan) -> list[str]:
        return [s.path for g in plan.groups for s in g.slices]

    def plan_units(self, plan: ClusteringPlan) -> list[ClusteringGroup]:
        return plan.groups

    def bytes_read(self, plan: ClusteringPlan) -> int:
        return sum(g.total_bytes for g in plan.groups)

    def _ordering(self, plan: ClusteringPlan) -> str:
        """The ordering the plan was saved with (a re-execution sorts the same way)."""
        return plan.extra_metadata.get("ordering") or effective_ordering(self.config.effective_ordering,
                                                                         plan.sort_columns)

    def rewrite_unit(self, plan: ClusteringPlan, instant: str, index: int, unit: ClusteringGroup) -> list[WriteStat]:
        return executor.cluster_group(self.table, unit, plan, instant, index, self._ordering(plan),
                                      self.config.row_group_rows, self.config.preserve_commit_metadata,
                                      self.config.clustering_split)

    def commit(self, plan: ClusteringPlan, inflight: Instant, stats: list[WriteStat]) -> Committed:
        return executor.commit(self.table, plan, inflight, stats, self._ordering(plan),
                               self.config.preserve_commit_metadata, self.on_step)

    def rollback_inflight(self) -> list[str]:
        """Roll back every inflight (failed or killed) clustering, keeping its plan; returns their instants."""
        out = []
        with self._mutex:
            for inst in self.table.refresh().pending([REPLACE]):
                if inst.state == State.INFLIGHT:
                    table_rollback.rollback_inflight(self.table, inst, keep_plan=True, on_step=self.on_step)
                    out.append(inst.timestamp)
        return out

    def clean(self) -> MaintenanceResult | None:
        if not self.config.auto_clean:
            return None
        with self._mutex:
            res = run_clean(self.table, self.config.cleaner_commits_retained, on_step=self.on_step)
        return clean_result(res)
