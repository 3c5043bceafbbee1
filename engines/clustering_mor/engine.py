"""RFC-19 Option 2 on MERGE_ON_READ: deltacommits, compaction and clustering (outputs parquet).

| call                  | what                                                                              |
| --------------------- | --------------------------------------------------------------------------------- |
| ``ingest`` / ``upsert`` | one ``deltacommit`` (:func:`engines.files.deltacommit.write_deltacommit`): keys the table holds go to their group's new log file; new keys to new base files rolled at ``max_file_size`` or, with ``insert_small_file_limit`` > 0, up to each small group's room into its log (:mod:`engines.clustering_mor.small_files`) |
| ``delete``            | a delete block in the holding group's new log file                                 |
| ``after_commit``      | auto clean; with ``compaction_inline`` the compaction round when due (every ``compact_max_delta_commits`` deltacommits); in ``mode: inline`` clustering every ``inline_max_commits`` commits |
| ``schedule``          | a clustering plan (and, without ``compaction_inline``, a compaction first when due) |
| ``execute``           | the given or earliest pending plan of either service                               |

Keys are located by :class:`engines.clustering_mor.key_index.KeyIndex` (read once, then kept in step
with the timeline), not by a scan of the table per write. Compaction is
:class:`engines.mor_compaction.service.MorCompactionService` run as one
:class:`engines.maintenance_round.MaintenanceRound`; clustering is Option 2's executor, which on a
MERGE_ON_READ table merges each slice's logs and writes parquet (:mod:`engines.clustering.mor`).

The exclusion rule holds through both planners (whichever is scheduled second skips the groups the
other holds and names them in its plan; compaction ignores replaced groups). A deltacommit that
updates a group under a pending plan is refused (:class:`PendingServiceConflictError`: this engine
keeps the table core's refusal rather than filing the log under the pending compaction's new slice),
so a write first executes a pending compaction (``compaction_inline``, as Hudi's inline compaction
runs pending ones first), and the runner's inline rounds execute the clustering they schedule before
the next batch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from engines.base import MaintenanceResult
from engines.clustering.config import PLANNER_KEYS, ClusteringConfig
from engines.clustering.engine import ClusteringEngine
from engines.clustering_mor.key_index import KeyIndex
from engines.clustering_mor.small_files import average_record_bytes, small_file_targets
from engines.config.registry import BLOOM, O2M, setting, settings
from engines.files.deltacommit import SmallFileTarget, write_deltacommit
from engines.maintenance_round import CleanAt, Trigger, after_commit_round, earliest_pending, execute_pending
from engines.mor_compaction.executor import planning_slices
from engines.mor_compaction.planner import CompactionConfig
from engines.mor_compaction.service import MorCompactionService
from engines.table import faults, plans
from engines.table.bloom import BloomFields
from engines.table.logfile import LogFileName
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, DELTACOMMIT, MOR_COMPACTION, REPLACE
from engines.table.transaction import CommitResult

MODES: tuple[str, ...] = setting("mode", O2M).parse.choices  # type: ignore[attr-defined]


@dataclass
class MorOption2Config(BloomFields, settings(kind=O2M, exclude=(*PLANNER_KEYS, *BLOOM))):
    """Every key of the kind in the config registry but the clustering planner's (in ``clustering``)."""

    clustering: ClusteringConfig = field(default_factory=ClusteringConfig)

    def __post_init__(self) -> None:
        self.check_settings()  # each value by its registry entry's parser
        if self.insert_small_file_limit > self.max_file_size:
            raise ValueError("insert_small_file_limit must not exceed max_file_size")
        CompactionConfig(max_delta_commits=self.compact_max_delta_commits)  # validates it
        self.check_bloom()

    @property
    def compaction(self) -> CompactionConfig:
        return CompactionConfig(max_delta_commits=self.compact_max_delta_commits)

    # what Option 2's clustering executor reads (engines.clustering.engine): a MERGE_ON_READ group is
    # merged and sorted linearly by the plan's sort columns, one group at a time
    @property
    def effective_ordering(self) -> str:
        return "linear" if self.clustering.sort_columns else "none"

    max_parallel_groups = 1
    clustering_split = "even"


class MorClusteringEngine(ClusteringEngine):
    """Option 2 over one MERGE_ON_READ table; see the module docstring."""

    writes_batches_once = False  # updates and padded inserts are log blocks, not a batch's Parquet bytes

    def __init__(self, table: HudiTable, config: MorOption2Config, name: str | None = None,  # type: ignore[override]
                 on_step: faults.StepHook = None) -> None:
        table.check_writable(merge_on_read=True)
        super().__init__(table, config, name=name or "option2_mor", on_step=on_step)  # type: ignore[arg-type]
        self.config: MorOption2Config = config  # type: ignore[assignment]
        self.index = KeyIndex(table)
        self.compaction = MorCompactionService(table, config.compaction, config.cleaner_commits_retained, on_step)

    # -- writes ---------------------------------------------------------------------------------
    def ingest(self, df: Any) -> CommitResult:
        """One deltacommit of the batch (new keys inserted, earlier keys updated)."""
        return self.upsert(df)

    def upsert(self, df: Any) -> CommitResult:
        return self._write(_arrow(df), ())

    def delete(self, keys_df: Any) -> CommitResult:
        keys = _arrow(keys_df)
        part_col = self.table.partition_fields[0]
        pairs = list(zip(keys.column(self.table.record_key).cast(pa.string()).to_pylist(),
                         keys.column(part_col).cast(pa.string()).to_pylist(), strict=True))
        return self._write(None, pairs, "delete")

    def _write(self, rows: pa.Table | None, deletes: Any, operation: str = "upsert") -> CommitResult:
        with self._mutex:
            if self.config.compaction_inline:
                execute_pending(self.compaction)  # runAnyPendingCompactions: a write never meets a pending compaction
            return write_deltacommit(self.table, rows, deletes, operation, locate=self.index.locate,
                                     small_files=self._small_files(), target_file_bytes=self.config.max_file_size,
                                     row_group_rows=self.config.row_group_rows, on_step=self.on_step)

    def _small_files(self) -> list[SmallFileTarget]:
        cfg = self.config
        if cfg.insert_small_file_limit <= 0:
            return []
        view = self.table.view(read_footers=False)
        held = {**plans.pending_file_groups(view.timeline, REPLACE),
                **plans.pending_file_groups(view.timeline, MOR_COMPACTION)}
        return small_file_targets(planning_slices(view), cfg.insert_small_file_limit, cfg.small_file_group_candidates,
                                  cfg.max_file_size, self._record_bytes(), held)

    def _record_bytes(self) -> float:
        """Bytes per record of the newest write's base files (small_files.average_record_bytes)."""
        def writes() -> Iterator[tuple[int, int]]:  # newest first, read only as far as needed
            for inst in reversed(self.table.refresh().completed([DELTACOMMIT, COMMIT, REPLACE])):
                stats = [s for s in self.table.commit_metadata(inst).write_stats
                         if LogFileName.parse(s.path.rsplit("/", 1)[-1]) is None]
                yield sum(s.file_size for s in stats), sum(s.num_writes for s in stats)
        return average_record_bytes(writes(), self.config.insert_small_file_limit)

    # -- modes ----------------------------------------------------------------------------------
    def after_commit(self) -> list[MaintenanceResult]:
        """Auto clean, the inline compaction round when due, then (``mode: inline``) clustering."""
        out: list[MaintenanceResult] = []
        if self.config.compaction_inline:
            with self._mutex:
                out += after_commit_round(self.compaction, Trigger.INLINE, clean=CleanAt.NONE)

        def due() -> bool:
            return self.config.mode == "inline" and self._commits_since_clustering() >= self.config.inline_max_commits

        return out + after_commit_round(self, Trigger.INLINE, due=due, round_cleans=True)

    def _commits_since_clustering(self) -> int:
        timeline = self.table.refresh()
        last = [i.timestamp for i in timeline if i.action == REPLACE]
        return sum(1 for i in timeline.completed([DELTACOMMIT]) if not last or i.timestamp > last[-1])

    # -- the maintenance round's calls ----------------------------------------------------------
    def schedule(self) -> str | None:
        """A clustering plan; without ``compaction_inline`` a due compaction is scheduled instead."""
        if not self.config.compaction_inline:
            with self._mutex:
                instant = self.compaction.schedule()
            if instant is not None:
                return instant
        return super().schedule()

    def pending_plan(self) -> str | None:
        return earliest_pending(self.table, (REPLACE, MOR_COMPACTION))

    def execute_instant(self, instant: str) -> MaintenanceResult | None:
        found = self.table.refresh().get(instant)
        if found is not None and found.action == MOR_COMPACTION:
            with self._mutex:
                return self.compaction.execute(instant)
        return self.execute_plan(instant)


def _arrow(df: Any) -> pa.Table:
    """A batch as Arrow: as given, or a Spark DataFrame's rows (the driver's own when it built it)."""
    if isinstance(df, pa.Table):
        return df
    from engines.spark.batch_stats import batch_rows

    return batch_rows(df)
