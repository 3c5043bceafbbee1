"""Option 2 on MERGE_ON_READ on the simulator's metadata-only table (:class:`bench.simulate.behaviour.SimBehaviour`).

What differs from copy-on-write Option 2 (:mod:`engines.clustering.sim`), as
:class:`engines.clustering_mor.engine.MorClusteringEngine` does it:

- every write is a ``deltacommit``; a batch's inserts go to new base files rolled at the max file size
  (:func:`engines.files.writer.write_partition_rows`, fileIds minted as that writer mints them);
- a batch's corrections go to one new log file per file group holding an updated key
  (:func:`engines.files.deltacommit.write_deltacommit`), sized by the real log format
  (:mod:`bench.simulate.logsize`);
- after every deltacommit, MOR compaction when due (every ``compact_max_delta_commits`` deltacommits,
  the shared pure planner :func:`engines.mor_compaction.planner.plan_compaction`), then the cleaner;
- clustering as Option 2's, its groups' logs merged into parquet outputs of ``ceil(rows / outputs)`` rows;
- with ``insert_small_file_limit`` > 0 (Hudi's MOR small-file handling, option2_mor_logs), a batch's
  inserts first fill the small base-only file groups' new log files: which groups, and how many
  records each takes, by the engine's own pure functions (:meth:`MorClusteringSim.log_insert_targets`:
  :func:`engines.clustering_mor.small_files.small_file_targets` over the simulated slices, the average
  record size by :func:`engines.clustering_mor.small_files.average_record_bytes` over the simulated
  writes' base files, the rows split by :func:`engines.files.deltacommit.fill_groups`).

Not modelled: the engine's own inline clustering (``mode: inline``) and compaction scheduled by the
maintenance round (``compaction_inline: false``): :meth:`MorClusteringSim.unmodelled` names them and
the simulator refuses such an engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from engines.clustering.sim import ClusteringSim
from engines.clustering_mor.small_files import average_record_bytes, small_file_targets
from engines.config.registry import O2M, default
from engines.cow_baseline.config import CowConfig
from engines.files.deltacommit import SmallFileTarget
from engines.mor_compaction.planner import MAX_DELTA_COMMITS, CompactionConfig, SliceLogs


class MorClusteringSim(ClusteringSim):
    """Option 2 on MERGE_ON_READ: deltacommits, log files, compaction and clustering."""

    writes_batches_once = False  # as the engine: its updates are log blocks, not a batch's Parquet bytes
    merge_on_read: ClassVar[bool] = True

    def __init__(self, planner: Any, options: dict[str, Any]) -> None:
        reason = self.unmodelled(options)
        if reason:
            raise ValueError(f"the simulator has no model of {reason}")
        super().__init__(planner, options)
        self.compaction = CompactionConfig(max_delta_commits=int(options.get("compact_max_delta_commits",
                                                                             MAX_DELTA_COMMITS)))
        self.compaction_inline = bool(options.get("compaction_inline", True))
        self.insert_small_file_limit = int(options.get("insert_small_file_limit", 0) or 0)
        self.small_file_group_candidates = int(options.get("small_file_group_candidates",
                                                           default("small_file_group_candidates", O2M)))

    @staticmethod
    def pads_inserts(options: dict[str, Any]) -> bool:
        """Whether this engine's config appends inserts to small file groups' logs (its ingest commits
        then write Avro log blocks, not Parquet bytes per record)."""
        return int(options.get("insert_small_file_limit", 0) or 0) > 0

    @staticmethod
    def unmodelled(options: dict[str, Any]) -> str | None:
        """What of this engine's config the simulator does not model, or None."""
        if options.get("mode", "manual") != "manual":
            return "MERGE_ON_READ clustering run by the engine itself (mode inline)"
        if not options.get("compaction_inline", True):
            return "MERGE_ON_READ compaction scheduled by the maintenance round (compaction_inline false)"
        return None

    def inserts(self, max_file: int) -> CowConfig | None:
        return None  # new base files rolled at the max file size (the table core's writer, no UpsertPartitioner)

    def max_file_size(self, max_file: int) -> int:
        return int(self.options.get("max_file_size", max_file))

    def log_insert_targets(self, slices: Iterable[SliceLogs], writes: Iterable[tuple[int, int]],
                           max_file: int) -> list[SmallFileTarget]:
        """The file groups that take a deltacommit's inserts into their logs, with the records each may
        take, as the engine chooses them (:meth:`engines.clustering_mor.engine.MorClusteringEngine._small_files`):
        ``slices`` the latest slices (no pending plan holds one: the simulator executes each plan as it
        schedules it), ``writes`` each completed write's (base-file bytes, records), newest first. Empty
        with ``insert_small_file_limit`` 0."""
        limit = self.insert_small_file_limit
        if limit <= 0:
            return []
        return small_file_targets(slices, limit, self.small_file_group_candidates, self.max_file_size(max_file),
                                  average_record_bytes(writes, limit), {})

    def upserts_by_merge(self) -> bool:
        return False

    def cleans_after_ingest(self) -> bool:
        return True  # the engine's after_commit: compaction when due, then the cleaner
