"""RFC-19 Option 1: APPEND writes + ``HoodieBaseFileCompactionPlan`` (schedule / execute).

Decisions where the RFC is silent, taken as a Hudi committer would:
- APPEND ingest is Hudi's insert with the small-file lookup off: one new file group per partition
  per batch (rolled at the max file size), completed as ``<t>.commit`` with operationType
  ``INSERT`` (a Java reader must parse the enum) and ``extraMetadata.writeMode=APPEND``.
- New file ids of a compaction are fresh ``<uuid>-<n>`` file groups named with the compaction
  instant, exactly like an insert's; old small files are separate file groups that disappear.
- The completed instant is ``<t>.commit`` (Hudi's own compaction completes as a commit), its
  write stats list the merged files, operationType ``COMPACT``; the requested/inflight files are
  ``<t>.basefilecompaction.*``, which Hudi readers ignore. Commit-before-delete must tell readers
  which file groups the new files replace, and Hudi readers (hudi-rs included) honour
  ``partitionToReplaceFileIds`` only on replacecommits, so that variant completes as
  ``<t>.replacecommit`` — the mechanism Option 2 uses.
- ``order="rfc"`` (default) deletes the old files, then commits — the RFC's steps 6-7.
  ``order="commit_before_delete"`` lists the old file ids in ``partitionToReplaceFileIds`` of the
  completed instant (our view hides them from then on). Deleting them right after the commit
  (``cbd_delete="immediate"``) still breaks a reader that listed its files before the commit, so
  the default (``cbd_delete="cleaner"``) leaves them to the KEEP_LATEST_COMMITS cleaner: fixing the
  RFC's order converges to Option 2's snapshot isolation.
- The rewrite stamps its rows with the compaction instant (``_hoodie_commit_time``), as Hudi's
  compaction does; ``preserve_commit_time`` keeps each row's own, as Hudi's clustering does with
  ``hoodie.clustering.preserve.commit.metadata``, so an incremental query does not re-emit them.
- Each operation is one rewrite (:mod:`engines.spark.rewrite`) into ``ceil(total/target)``
  evenly sized files, one Spark task each, streaming its rows (bounded memory): contiguous runs
  of the input files without sort columns, disjoint sorted key ranges with them.
- Operations run concurrently on a thread pool of ``max_parallel_operations`` Spark jobs; execution
  is the shared skeleton of :mod:`engines.service_executor` (this engine supplies an operation's
  merge and the commit order).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from pyspark.sql import DataFrame

from engines.append_compaction.config import PLANNER_KEYS, CompactionConfig
from engines.append_compaction.plan import BaseFileCompactionOperation, BaseFileCompactionPlan
from engines.append_compaction.planner import plan_base_file_compaction
from engines.base import MaintenanceResult, TableServiceModes, clean_result
from engines.config.registry import BLOOM, O1, settings
from engines.cow_baseline.upsert import merge_write
from engines.files.writer import WriteSpec
from engines.maintenance_round import earliest_pending
from engines.service_executor import Committed, MissingPlanInputError, PlanExecutor, ServicePoints
from engines.spark.insert import insert_new_file_groups
from engines.spark.rewrite import rewrite
from engines.spark.session import get_spark
from engines.table import faults, plans
from engines.table.bloom import BloomFields
from engines.table.model import FileSlice, WriteStat, parse_base_file_name
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, Instant
from engines.table.transaction import CommitResult, commit_write

__all__ = ["AppendCompactionEngine", "MissingPlanInputError", "Option1Config"]


@dataclass
class Option1Config(BloomFields, settings(kind=O1, exclude=(*PLANNER_KEYS, *BLOOM))):
    """Every key of the kind in the registry but the planner's (the bloom filter's through
    :class:`BloomFields`), and the planner's config. The compaction's target size is the planner's
    ``target_file_size``; ``max_file_size`` is where appends roll a new file."""

    compaction: CompactionConfig = field(default_factory=CompactionConfig)

    def __post_init__(self) -> None:
        self.check_settings()
        self.check_bloom()


def append_batch(table: HudiTable, config: Option1Config, df: DataFrame, on_step: faults.StepHook = None) -> CommitResult:
    """APPEND: the batch as new base files, no index lookup, no small-file merge."""
    return insert_new_file_groups(
        table, df, operation="INSERT", target_file_bytes=config.max_file_size,
        row_group_rows=config.row_group_rows, sort_columns=list(config.sort_columns) or None,
        extra={"writeMode": "APPEND"}, on_step=on_step)


class AppendCompactionEngine(TableServiceModes, PlanExecutor):
    """Option 1 over one table; see the module docstring for the decisions."""

    _service_actions = (COMPACTION,)
    writes_batches_once = True
    service_kind = "compaction"
    action = COMPACTION
    points = ServicePoints(after_inflight="option1.after_inflight", after_rewrite="option1.after_new_files_written")

    def __init__(self, table: HudiTable, config: Option1Config, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        self.table = table
        table.bloom = config.bloom  # every file this engine writes carries Hudi's footer bloom filter
        self.config = config
        self.name = name or ("option1_rfc" if config.order == "rfc" else "option1_cbd")
        self.on_step = on_step
        self._mutex = threading.RLock()
        self._start_modes(config.mode, config.inline_every, config.async_interval_s)

    # -- ingest -------------------------------------------------------------------------------
    def ingest(self, df: DataFrame) -> CommitResult:
        return append_batch(self.table, self.config, df, self.on_step)

    def upsert(self, df: DataFrame) -> CommitResult:
        """Hudi's upsert on a table written with APPEND: the normal COW merge (the file group holding an
        updated key gets a new slice, its other rows keep their commit time). A file group a pending
        base-file compaction reads is refused, naming the plan (the compaction would replace the group
        with its pre-update rows), before anything is written."""
        with self._mutex:
            return merge_write(self.table, df, None, "UPSERT", "reject", self.config.row_group_rows,
                               self.config.max_file_size, self.on_step, held_by=(COMPACTION,))

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        return self.table.view().snapshot(as_of)

    # -- schedule -----------------------------------------------------------------------------
    def plan(self) -> BaseFileCompactionPlan | None:
        view = self.table.view()
        return plan_base_file_compaction(view.snapshot(), self.config.compaction,
                                         plans.pending_paths(view.timeline, (COMPACTION,)))

    def schedule(self) -> str | None:
        """scheduleBaseFileCompaction: save the plan as ``<t>.basefilecompaction.requested``."""
        with self._mutex, self.table.lock:
            plan = self.plan()
            if plan is None:
                return None
            timeline = self.table.refresh()
            ts = self.table.clock.next(timeline.last_timestamp())
            timeline.create_requested(ts, COMPACTION, plan.encode())
        faults.step("option1.after_plan_saved", self.on_step)
        return ts

    def pending_plan(self) -> str | None:
        return earliest_pending(self.table, (COMPACTION,))

    def load_plan(self, instant: str) -> BaseFileCompactionPlan:
        """The compaction plan saved as ``instant`` (:func:`engines.table.plans.load_plan`)."""
        return BaseFileCompactionPlan.from_avro(plans.load_plan(self.table.refresh(), instant, COMPACTION))

    # -- execute (the shared skeleton of engines.service_executor) -----------------------------
    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        """compactBaseFile: inflight → merge each operation → delete old + commit (in the configured order)."""
        return self.execute_plan(instant)

    @property
    def max_parallel(self) -> int:
        return self.config.max_parallel_operations

    def plan_inputs(self, plan: BaseFileCompactionPlan) -> list[str]:
        return plan.file_paths

    def plan_units(self, plan: BaseFileCompactionPlan) -> tuple[BaseFileCompactionOperation, ...]:
        return plan.operations

    def bytes_read(self, plan: BaseFileCompactionPlan) -> int:
        return sum(self.table.storage.size(p) for p in plan.file_paths)

    def rewrite_unit(self, plan: BaseFileCompactionPlan, instant: str, index: int,
                     unit: BaseFileCompactionOperation) -> list[WriteStat]:
        return self._merge(unit, instant, index)

    def commit(self, plan: BaseFileCompactionPlan, inflight: Instant, stats: list[WriteStat]) -> Committed:
        """The RFC's order (delete the old files, then commit) or commit-before-delete."""
        old_ids = {op.partition_path: [p.rsplit("/", 1)[-1].split("_", 1)[0] for p in op.base_file_paths]
                   for op in plan.operations}
        extra = {"order": self.config.order, "writeMode": "BASE_FILE_COMPACTION"}
        if self.config.preserve_commit_time:
            extra["preserveCommitTime"] = "true"
        deleted_before = deleted_after = 0
        if self.config.order == "rfc":
            deleted_before = self._delete_old(plan)
            faults.step("option1.before_commit", self.on_step)
            commit_write(self.table, inflight, stats, "COMPACT", self.table.latest_schema(), extra=extra)
            faults.step("option1.after_commit", self.on_step)
        else:
            faults.step("option1.before_commit", self.on_step)
            commit_write(self.table, inflight, stats, "COMPACT", self.table.latest_schema(),
                         replaced=old_ids, extra=extra)
            faults.step("option1.after_commit", self.on_step)
            if self.config.cbd_delete == "immediate":
                self._delete_old(plan)
                deleted_after = len(plan.file_paths)
        return Committed(deleted_before + deleted_after,
                         {"order": self.config.order, "operations": len(plan.operations),
                          "deleted_before_commit": deleted_before, "cbd_delete": self.config.cbd_delete})

    def _merge(self, op: BaseFileCompactionOperation, instant: str, index: int) -> list[WriteStat]:
        spark = get_spark()
        view_slices = [_plan_slice(op.partition_path, p, instant) for p in op.base_file_paths]
        n_out = int(op.metrics.get("estimatedOutputFiles", 1)) or 1
        spec = WriteSpec.for_table(self.table, instant, row_group_rows=self.config.row_group_rows,
                              stats_columns=self._stats_columns(), file_id_prefix=f"operation-{index}",
                              preserve_commit_metadata=self.config.preserve_commit_time)
        sort = list(self.config.sort_columns)
        return rewrite(spark, self.table.storage, view_slices, spec, n_out, "linear" if sort else "none", sort,
                       fault_point="option1.mid_write")

    def _stats_columns(self) -> list[str]:
        from engines.table.schema import data_fields

        schema = self.table.latest_schema()
        return list(data_fields(schema)) if schema else []

    def _delete_old(self, plan: BaseFileCompactionPlan) -> int:
        deleted = 0
        for path in plan.file_paths:
            if self.table.storage.delete(path, missing_ok=True):
                deleted += 1
            faults.step("option1.after_old_file_deleted", self.on_step)
        return deleted

    def clean(self) -> MaintenanceResult | None:
        """RFC order deletes old files during execute; commit-before-delete leaves them to the cleaner."""
        if self.config.order == "rfc":
            return None
        from engines.table.cleaner import run_clean

        res = run_clean(self.table, self.config.cleaner_commits_retained)
        return clean_result(res)


def _plan_slice(partition: str, path: str, instant: str) -> FileSlice:
    """A plan's base file as a slice: file id and commit time from its name (Hudi's
    ``<fileId>_<writeToken>_<commitTime>.parquet``), so the rewrite reads inputs in commit order."""
    parsed = parse_base_file_name(path.rsplit("/", 1)[-1])
    file_id, base_instant = (parsed[0], parsed[2]) if parsed else (path.rsplit("/", 1)[-1].split("_", 1)[0], instant)
    return FileSlice(partition, file_id, base_instant, path, 0, 0)
