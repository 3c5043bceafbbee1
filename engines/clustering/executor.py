"""Option 2 clustering: save a plan, execute it with snapshot isolation (hudi-semantics.md §2, §3).

Decisions:
- Schedule writes ``<T>.replacecommit.requested`` (the requested-replace Avro wrapper holding the
  seed's ``HoodieClusteringPlan``); the ordering is recorded in the plan's ``extraMetadata`` so a
  re-execution after a crash sorts the same way.
- Execute (the shared skeleton of :mod:`engines.service_executor`): an inflight attempt left by a
  crash is first rolled back (its files removed, plan kept), then requested -> inflight (empty
  content, as Hudi), then one Spark job per group on a pool of ``max_parallel_groups`` threads
  (Hudi's ``hoodie.clustering.max.parallelism``). A group
  reads exactly the plan's slice paths, orders its rows (none / linear / z-order / Hilbert) and
  spreads them over ``numOutputFiles`` tasks of near-equal row counts (contiguous runs of the
  input without a sort, disjoint key ranges with one; :mod:`engines.spark.rewrite`), and each
  task writes one new file group: 489 MB at a 300 MB target gives two ~245 MB files. With
  ``clustering_split="hudi"`` and no sort, each task takes whole input files in the plan's order
  instead, as Apache Hudi 1.2 does (:func:`engines.files.splits.split_files`). A task rolls to a further file only past
  1.1 x target (Hudi's ``hoodie.parquet.compression.ratio`` headroom), so the target holds even
  when a range partition is skewed.
- Nothing is visible until ``<T>.replacecommit`` (operationType ``CLUSTER``,
  ``partitionToReplaceFileIds`` = every file group of the plan) is written atomically; stray files
  of ``T`` not in the write stats are deleted first (marker reconciliation).
- ``preserve_commit_metadata`` keeps each row's ``_hoodie_commit_time``/``seqno``
  (``hoodie.clustering.preserve.commit.metadata``, default true); otherwise rows are re-stamped.
- Metrics come from metadata: bytes/files in from the plan's slices, out from the write stats.
- ``on_step`` observes the fault points' names (:data:`POINTS`).
"""

from __future__ import annotations

from engines.clustering.config import ClusteringConfig
from engines.clustering.plan import ClusteringGroup, ClusteringPlan, RequestedReplace
from engines.clustering.planner import plan_clustering
from engines.clustering.replacecommit import commit as commit  # re-exported: the engine's and tests' name
from engines.clustering.replacecommit import load_plan as load_plan
from engines.files.ordering import effective_ordering
from engines.files.writer import WriteSpec
from engines.service_executor import ServicePoints
from engines.spark.rewrite import rewrite_files
from engines.spark.session import get_spark
from engines.table import faults, plans
from engines.table.model import WriteStat
from engines.table.table import HudiTable
from engines.table.timeline import MOR_COMPACTION, REPLACE

POINTS = tuple(p for p in faults.POINTS["clustering"] if not p.endswith(".mid_group"))
SHARED_POINTS = ServicePoints(after_inflight="clustering.after_inflight", after_rewrite="clustering.after_all_groups",
                              after_unit="clustering.after_group_written")
ROLL_HEADROOM = 1.1  # a task opens a second file only past 1.1 x target (Hudi's compression-ratio slack)


def schedule(table: HudiTable, config: ClusteringConfig, ordering: str | None = None,
             on_step: faults.StepHook = None) -> str | None:
    """Plan from the current snapshot and save it as requested; None (no instant) when nothing qualifies."""
    with table.lock:
        view = table.view()
        plan = plan_clustering(view.snapshot(), config, plans.pending_file_groups(view.timeline, REPLACE),
                               plans.pending_file_groups(view.timeline, MOR_COMPACTION))
        if plan is None:
            return None
        plan.extra_metadata["ordering"] = effective_ordering(ordering, plan.sort_columns)
        timeline = table.refresh()
        ts = table.clock.next(timeline.last_timestamp())
        timeline.create_requested(ts, REPLACE, RequestedReplace(plan).encode())
    faults.step("clustering.after_plan_saved", on_step)
    return ts


def _data_columns(table: HudiTable, group: ClusteringGroup) -> list[str]:
    """Data columns of the group's first file (by path), in file order: the columns given statistics."""
    first = min(s.path for s in group.slices)
    names = table.storage.parquet_metadata(first).schema.to_arrow_schema().names
    return [c for c in names if not c.startswith("_hoodie_")]


def cluster_group(table: HudiTable, group: ClusteringGroup, plan: ClusteringPlan, instant: str, index: int,
                  ordering: str, row_group_rows: int, preserve_commit_metadata: bool,
                  split: str = "even") -> list[WriteStat]:
    """One Spark job: read the group's files, order, write ``numOutputFiles`` new file groups (evenly
    sized, or with ``split`` hudi and no sort, whole input files each). On a MERGE_ON_READ table
    the slices' logs are merged over their bases first (:mod:`engines.clustering.mor`)."""
    if table.merge_on_read:
        from engines.clustering.mor import cluster_merged_group

        return cluster_merged_group(table, group, plan, instant, index, row_group_rows, preserve_commit_metadata,
                                    ordering)
    spec = WriteSpec.for_table(table, instant, row_group_rows=row_group_rows, file_id_prefix=f"group-{index}",
                          stats_columns=_data_columns(table, group),
                          preserve_commit_metadata=preserve_commit_metadata,
                          target_file_bytes=int(plan.target_file_size * ROLL_HEADROOM))
    return rewrite_files(get_spark(), table.storage, group.slices, spec, group.num_output_files,
                         ordering, plan.sort_columns, fault_point="clustering.mid_group",  # type: ignore[arg-type]
                         split=split)  # type: ignore[arg-type]
