"""RFC-19 Option 2: clustering with snapshot isolation (what Apache Hudi shipped).

Ingest is insert with small-file limit 0 (every batch makes new file groups); upsert and delete
use a simple index (incoming keys looked up in the live slices of their partitions) and rewrite
the touched file groups as new slices. Updates touching a file group of a pending clustering plan
are rejected (``SparkRejectUpdateStrategy``: nothing is written) or, under ``allow``, land in the
old file group (``SparkAllowUpdateStrategy``; Hudi documents that the clustering commit may then
lose them). Pure inserts always proceed.

Clustering: ``<t>.replacecommit.requested`` holds the plan; execute moves it to inflight, runs one
Spark job per group (``max_parallel_groups`` at a time), writes ``numOutputFiles`` evenly sized
files per group ordered none / linear / z-order / Hilbert, and completes ``<t>.replacecommit``
with ``partitionToReplaceFileIds`` and operationType ``CLUSTER``. New file groups are invisible
until then; replaced ones stay on storage until the cleaner (KEEP_LATEST_COMMITS) removes them.
A killed execution is rolled back (partial files removed, plan kept) and executed again.
Modes follow Hudi's configs: ``inline`` (``hoodie.clustering.inline`` + ``inline.max.commits``),
``async`` (``hoodie.clustering.async.enabled`` + ``async.max.commits``, a thread), and
``schedule_inline`` (``hoodie.clustering.schedule.inline``: every commit tries to schedule, no new
plan while one is pending; execution is an explicit call, as HoodieClusteringJob would do).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engines.base import MaintenanceResult, TableServiceModes, clean_result
from engines.clustering.config import ClusteringConfig
from engines.clustering.plan import ClusteringGroup, ClusteringPlan, RequestedReplace
from engines.clustering.planner import plan_clustering
from engines.spark.insert import (
    CommitResult,
    arrow_schema_of,
    commit_write,
    fire,
    insert_new_file_groups,
    write_spec_for,
)
from engines.spark.rewrite import read_files, rewrite
from engines.spark.session import get_spark
from engines.table import faults
from engines.table.cleaner import run_clean
from engines.table.model import FileSlice, WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, REPLACE, Instant, State, TimelineError

EXECUTE_STEPS = ("clustering.after_plan_saved", "clustering.after_inflight", "clustering.after_group_written",
                 "clustering.after_all_groups", "clustering.before_replacecommit", "clustering.after_replacecommit")


class ClusteringUpdateConflictError(RuntimeError):
    """An upsert/delete touching file groups under a pending clustering plan (reject strategy)."""


@dataclass
class Option2Config:
    clustering: ClusteringConfig = field(default_factory=ClusteringConfig)
    mode: Literal["inline", "async", "schedule_inline", "manual"] = "manual"
    inline_max_commits: int = 4
    async_max_commits: int = 4
    async_interval_s: float = 2.0
    ordering: Literal["none", "linear", "zorder", "hilbert"] | None = None  # None: linear with sort columns
    max_parallel_groups: int = 2
    update_strategy: Literal["reject", "allow"] = "reject"
    preserve_commit_metadata: bool = True
    cleaner_commits_retained: int = 10
    auto_clean: bool = True
    target_file_size: int = 120 * (1 << 20)
    max_file_size: int = 120 * (1 << 20)
    row_group_rows: int = 65_536

    def __post_init__(self) -> None:
        if self.max_parallel_groups < 1 or self.cleaner_commits_retained < 1:
            raise ValueError("max_parallel_groups and cleaner_commits_retained must be at least 1")

    @property
    def effective_ordering(self) -> str:
        return self.ordering or ("linear" if self.clustering.sort_columns else "none")


class ClusteringEngine(TableServiceModes):
    """Option 2 over one table; see the module docstring."""

    _service_actions = (REPLACE,)
    writes_batches_once = True

    def __init__(self, table: HudiTable, config: Option2Config, name: str | None = None,
                 on_step: Callable[[str], None] | None = None) -> None:
        self.table = table
        self.config = config
        self.name = name or ("option2_sorted" if config.clustering.sort_columns else "option2")
        self.on_step = on_step
        every = config.inline_max_commits if config.mode == "inline" else config.async_max_commits
        self._start_modes("inline" if config.mode == "inline" else config.mode, every, config.async_interval_s)

    def _step(self, name: str) -> None:
        if self.on_step is not None:
            self.on_step(name)
        faults.point(name)

    def _stats_columns(self, schema: object = None) -> list[str]:
        from engines.table.schema import data_fields

        s = self.table.latest_schema()
        return list(data_fields(s)) if s else []

    # -- writes -------------------------------------------------------------------------------
    def ingest(self, df: DataFrame) -> CommitResult:
        """Insert with small-file limit 0: new file groups only."""
        return insert_new_file_groups(self.table, df, operation="INSERT", target_file_bytes=self.config.max_file_size,
                                      row_group_rows=self.config.row_group_rows, on_step=self._step)

    def after_commit(self) -> list[MaintenanceResult]:
        if self.config.mode == "schedule_inline":
            if not self.table.refresh().pending([REPLACE]):
                self.schedule()
            return []
        return super().after_commit()

    def upsert(self, df: DataFrame) -> CommitResult:
        return self._merge_write(df, None, "UPSERT")

    def delete(self, keys_df: DataFrame) -> CommitResult:
        return self._merge_write(None, keys_df, "DELETE")

    def _merge_write(self, updates: DataFrame | None, deletes: DataFrame | None, operation: str) -> CommitResult:
        """Simple index: find each incoming key's file group, rewrite touched groups as new slices."""
        spark = get_spark()
        table = self.table
        key, part_col = table.record_key, table.partition_fields[0]
        incoming = updates if updates is not None else deletes
        assert incoming is not None
        if updates is not None:
            check_compatible(table.latest_schema(), arrow_schema_of(updates), "the upsert batch")
        with table.lock:
            view = table.view()
            partitions = {table.partition_path(r[0]) for r in incoming.select(part_col).distinct().collect()}
            live = [s for s in view.snapshot() if s.partition in partitions]
            located = (read_files(spark, table.storage, live, keep_meta=True)
                       .select(F.col("_hoodie_record_key").alias("_k"), F.col("_hoodie_file_name").alias("_f"))
                       if live else None)
            in_keys = incoming.select(F.col(key).alias("_k")).distinct()
            hits = in_keys.join(located, "_k").select("_f").distinct().collect() if located is not None else []
            touched_names = {r["_f"] for r in hits}
            touched = [s for s in live if s.file_name in touched_names]
            pending = view.pending_clustering_file_groups()
            conflicts = sorted({(s.file_group, pending[s.file_group]) for s in touched if s.file_group in pending})
            if conflicts and self.config.update_strategy == "reject":
                plans = sorted({c[1] for c in conflicts})
                groups = ", ".join(f"{p}/{f}" for (p, f), _ in conflicts)
                raise ClusteringUpdateConflictError(
                    f"{operation} touches file group(s) under pending clustering plan(s) {', '.join(plans)}: "
                    f"{groups}; updates to file groups in pending clustering are not supported "
                    f"(hoodie.clustering.updates.strategy=reject); nothing was written")
            instant = table.start(COMMIT)
            stats: list[WriteStat] = []
            data_cols = [c for c in (updates.columns if updates is not None else [])]
            for s in touched:
                spec = write_spec_for(table, instant.timestamp, file_id_override=s.file_id,
                                      row_group_rows=self.config.row_group_rows, stats_columns=self._stats_columns())
                old = read_files(spark, table.storage, [s])
                remaining = old.join(incoming.select(F.col(key).alias("_dk")), old[key] == F.col("_dk"), "left_anti")
                new_rows = None
                if updates is not None:
                    new_rows = updates.join(old.select(F.col(key).alias("_uk")), updates[key] == F.col("_uk"),
                                            "left_semi").select(*data_cols)
                    remaining = remaining.select(*data_cols).unionByName(new_rows)
                out = rewrite(spark, table.storage, [], spec, 1, extra=remaining)
                for st in out:
                    st.prev_commit = s.instant
                stats += out
            if updates is not None:
                located_keys = located.select("_k") if located is not None else None
                fresh = updates if located_keys is None else updates.join(
                    located_keys, updates[key] == F.col("_k"), "left_anti").select(*data_cols)
                if not fresh.isEmpty():
                    spec = write_spec_for(table, instant.timestamp, row_group_rows=self.config.row_group_rows,
                                          stats_columns=self._stats_columns(), target_file_bytes=self.config.max_file_size,
                                          file_id_prefix="upsert-inserts")
                    from engines.spark.writer import write_dataframe

                    n = max(1, fresh.select(part_col).distinct().count())
                    stats += write_dataframe(fresh.repartition(n, F.col(part_col)).sortWithinPartitions(part_col, key),
                                             spec)
            fire("ingest.before_complete", self._step)
            schema = avro_schema_string(arrow_schema_of(updates)) if updates is not None else table.latest_schema()
            return commit_write(table, instant, stats, operation, schema,
                                extra={"conflictingFileGroups": str(len(conflicts))} if conflicts else None)

    def snapshot(self, as_of: str | None = None) -> list[FileSlice]:
        return self.table.view().snapshot(as_of)

    # -- clustering ---------------------------------------------------------------------------
    def plan(self) -> ClusteringPlan | None:
        view = self.table.view()
        return plan_clustering(view.snapshot(), self.config.clustering, view.pending_clustering_file_groups())

    def schedule(self) -> str | None:
        with self.table.lock:
            plan = self.plan()
            if plan is None:
                return None
            plan.extra_metadata["ordering"] = self.config.effective_ordering
            timeline = self.table.refresh()
            ts = self.table.clock.next(timeline.last_timestamp())
            timeline.create_requested(ts, REPLACE, RequestedReplace(plan).encode())
        self._step("clustering.after_plan_saved")
        return ts

    def pending_plan(self) -> str | None:
        pending = self.table.refresh().pending([REPLACE])
        return pending[0].timestamp if pending else None

    def load_plan(self, instant: str) -> ClusteringPlan:
        inst = self.table.refresh().get(instant)
        if inst is None or inst.action != REPLACE:
            raise TimelineError(f"{instant} is not a clustering instant of {self.table.base_uri}")
        return RequestedReplace.decode(self.table.timeline.read(inst, State.REQUESTED),
                                       f".hoodie/{instant}.replacecommit.requested").plan

    def rollback_inflight(self) -> list[str]:
        from engines.table.rollback import rollback_instant

        out = []
        for inst in self.table.refresh().pending([REPLACE]):
            if inst.state == State.INFLIGHT:
                rollback_instant(self.table, inst)
                out.append(inst.timestamp)
        return out

    def execute(self, instant: str | None = None) -> MaintenanceResult | None:
        instant = instant or self.pending_plan()
        if instant is None:
            return None
        t0 = time.perf_counter()
        with self.table.lock:
            inst = self.table.refresh().get(instant)
            if inst is None or inst.is_completed:
                raise TimelineError(f"clustering {instant} is not pending in {self.table.base_uri}")
            if inst.state == State.INFLIGHT:  # a failed earlier attempt: roll back, keep the plan, re-run
                from engines.table.rollback import rollback_instant

                rollback_instant(self.table, inst)
            plan = self.load_plan(instant)
            missing = [s.path for g in plan.groups for s in g.slices if not self.table.storage.exists(s.path)]
            if missing:
                raise TimelineError(f"clustering plan {instant} references {len(missing)} file(s) that no longer "
                                    f"exist (first: {missing[0]}); it cannot be executed")
            inflight = self.table.refresh().transition_to_inflight(Instant(instant, REPLACE, State.REQUESTED))
            self._step("clustering.after_inflight")
            with ThreadPoolExecutor(max_workers=self.config.max_parallel_groups) as pool:
                results = list(pool.map(lambda ig: self._cluster_group(ig[1], plan, instant, ig[0]),
                                        enumerate(plan.groups)))
            stats = [s for r in results for s in r]
            self._step("clustering.after_all_groups")
            replaced: dict[str, list[str]] = {}
            for g in plan.groups:
                replaced.setdefault(g.partition_path, []).extend(g.file_ids)
            self._step("clustering.before_replacecommit")
            commit_write(self.table, inflight, stats, "CLUSTER", self.table.latest_schema(), replaced=replaced,
                         extra={"ordering": plan.extra_metadata.get("ordering", self.config.effective_ordering),
                                "sortColumns": ",".join(plan.sort_columns)})
            self._step("clustering.after_replacecommit")
        files_in = sum(len(g.slices) for g in plan.groups)
        return MaintenanceResult(
            kind="clustering", instant=instant, duration_s=time.perf_counter() - t0, files_in=files_in,
            files_out=len(stats), bytes_read=sum(g.total_bytes for g in plan.groups),
            bytes_written=sum(s.file_size for s in stats), records=sum(s.num_writes for s in stats),
            details={"groups": len(plan.groups), "ordering": self.config.effective_ordering})

    def _cluster_group(self, group: ClusteringGroup, plan: ClusteringPlan, instant: str,
                       index: int) -> list[WriteStat]:
        spec = write_spec_for(self.table, instant, row_group_rows=self.config.row_group_rows,
                              file_id_prefix=f"group-{index}",
                              stats_columns=self._stats_columns(),
                              preserve_commit_metadata=self.config.preserve_commit_metadata)
        ordering = plan.extra_metadata.get("ordering", self.config.effective_ordering)
        out = rewrite(get_spark(), self.table.storage, group.slices, spec, group.num_output_files,
                      ordering if plan.sort_columns else "none", plan.sort_columns)  # type: ignore[arg-type]
        self._step("clustering.after_group_written")
        return out

    def clean(self) -> MaintenanceResult | None:
        if not self.config.auto_clean:
            return None
        res = run_clean(self.table, self.config.cleaner_commits_retained,
                        on_step=lambda s: self.on_step(f"clean.{s}") if self.on_step else None)
        return clean_result(res)
