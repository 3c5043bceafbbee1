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
- clustering as Option 2's, its groups' logs merged into parquet outputs of ``ceil(rows / outputs)`` rows.

Not modelled: inserts padded into small groups' logs (``insert_small_file_limit`` > 0, Hudi's MOR
small-file handling, option2_mor_logs): :meth:`MorClusteringSim.unmodelled` names it and the
simulator refuses such an engine.
"""

from __future__ import annotations

from typing import Any, ClassVar

from engines.clustering.sim import ClusteringSim
from engines.cow_baseline.config import CowConfig
from engines.mor_compaction.planner import MAX_DELTA_COMMITS, CompactionConfig


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

    @staticmethod
    def unmodelled(options: dict[str, Any]) -> str | None:
        """What of this engine's config the simulator does not model, or None."""
        if int(options.get("insert_small_file_limit", 0) or 0) > 0:
            return ("MERGE_ON_READ inserts padded into small file groups' logs (insert_small_file_limit "
                    f"{options['insert_small_file_limit']})")
        if options.get("mode", "manual") != "manual":
            return "MERGE_ON_READ clustering run by the engine itself (mode inline)"
        if not options.get("compaction_inline", True):
            return "MERGE_ON_READ compaction scheduled by the maintenance round (compaction_inline false)"
        return None

    def inserts(self, max_file: int) -> CowConfig | None:
        return None  # new base files rolled at the max file size (the table core's writer, no UpsertPartitioner)

    def max_file_size(self, max_file: int) -> int:
        return int(self.options.get("max_file_size", max_file))

    def upserts_by_merge(self) -> bool:
        return False

    def cleans_after_ingest(self) -> bool:
        return True  # the engine's after_commit: compaction when due, then the cleaner
