"""Option 2 clustering: save a plan, execute it with snapshot isolation (hudi-semantics.md §2, §3).

Decisions:
- Schedule writes ``<T>.replacecommit.requested`` (the requested-replace Avro wrapper holding the
  seed's ``HoodieClusteringPlan``); the ordering is recorded in the plan's ``extraMetadata`` so a
  re-execution after a crash sorts the same way.
- Execute: an inflight attempt left by a crash is first rolled back (its files removed, plan
  kept), then requested -> inflight (empty content, as Hudi), then one Spark job per group on a
  pool of ``max_parallel_groups`` threads (Hudi's ``hoodie.clustering.max.parallelism``). A group
  reads exactly the plan's slice paths, orders its rows (none / linear / z-order / Hilbert) and
  spreads them over ``numOutputFiles`` tasks of near-equal row counts (contiguous runs of the
  input without a sort, disjoint key ranges with one; :mod:`engines.spark.rewrite`), and each
  task writes one new file group: 489 MB at a 300 MB target gives two ~245 MB files. A task rolls to a further file only past
  1.1 x target (Hudi's ``hoodie.parquet.compression.ratio`` headroom), so the target holds even
  when a range partition is skewed.
- Nothing is visible until ``<T>.replacecommit`` (operationType ``CLUSTER``,
  ``partitionToReplaceFileIds`` = every file group of the plan) is written atomically; stray files
  of ``T`` not in the write stats are deleted first (marker reconciliation).
- ``preserve_commit_metadata`` keeps each row's ``_hoodie_commit_time``/``seqno``
  (``hoodie.clustering.preserve.commit.metadata``, default true); otherwise rows are re-stamped.
- Metrics come from metadata: bytes/files in from the plan's slices, out from the write stats.
- ``on_step`` receives the bare names in :data:`STEPS`; the fault point is ``clustering.<step>``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from engines.base import MaintenanceResult
from engines.clustering.config import ClusteringConfig
from engines.clustering.ordering import effective_ordering
from engines.clustering.plan import ClusteringGroup, ClusteringPlan, RequestedReplace
from engines.clustering.planner import plan_clustering
from engines.spark.insert import write_spec_for
from engines.spark.rewrite import rewrite_files
from engines.spark.session import get_spark
from engines.table import faults, plans
from engines.table.model import WriteStat
from engines.table.rollback import rollback_inflight
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, Instant, State, TimelineError
from engines.table.transaction import commit_write

STEPS = ("after_plan_saved", "after_inflight", "after_group_written", "after_all_groups",
         "before_replacecommit", "after_replacecommit")
POINTS = tuple(f"clustering.{s}" for s in STEPS)
ROLL_HEADROOM = 1.1  # a task opens a second file only past 1.1 x target (Hudi's compression-ratio slack)

StepHook = Callable[[str], None] | None


def _step(name: str, on_step: StepHook) -> None:
    if on_step is not None:
        on_step(name)
    faults.point(f"clustering.{name}")


def pending_instants(table: HudiTable) -> list[Instant]:
    """Pending clustering instants, earliest first."""
    return table.refresh().pending([REPLACE])


def load_plan(table: HudiTable, instant: str) -> ClusteringPlan:
    """The clustering plan saved as ``instant`` (:func:`engines.table.plans.load_plan`)."""
    return RequestedReplace.from_avro(plans.load_plan(table.refresh(), instant, REPLACE)).plan


def schedule(table: HudiTable, config: ClusteringConfig, ordering: str | None = None,
             on_step: StepHook = None) -> str | None:
    """Plan from the current snapshot and save it as requested; None (no instant) when nothing qualifies."""
    with table.lock:
        view = table.view()
        plan = plan_clustering(view.snapshot(), config, plans.pending_file_groups(view.timeline, REPLACE))
        if plan is None:
            return None
        plan.extra_metadata["ordering"] = effective_ordering(ordering, plan.sort_columns)
        timeline = table.refresh()
        ts = table.clock.next(timeline.last_timestamp())
        timeline.create_requested(ts, REPLACE, RequestedReplace(plan).encode())
    _step("after_plan_saved", on_step)
    return ts


def _data_columns(table: HudiTable, group: ClusteringGroup) -> list[str]:
    """Data columns of the group's first file (by path), in file order: the columns given statistics."""
    first = min(s.path for s in group.slices)
    names = table.storage.parquet_metadata(first).schema.to_arrow_schema().names
    return [c for c in names if not c.startswith("_hoodie_")]


def cluster_group(table: HudiTable, group: ClusteringGroup, plan: ClusteringPlan, instant: str, index: int,
                  ordering: str, row_group_rows: int, preserve_commit_metadata: bool) -> list[WriteStat]:
    """One Spark job: read the group's files, order, write ``numOutputFiles`` evenly sized new file groups."""
    spec = write_spec_for(table, instant, row_group_rows=row_group_rows, file_id_prefix=f"group-{index}",
                          stats_columns=_data_columns(table, group),
                          preserve_commit_metadata=preserve_commit_metadata,
                          target_file_bytes=int(plan.target_file_size * ROLL_HEADROOM))
    return rewrite_files(get_spark(), table.storage, group.slices, spec, group.num_output_files,
                         ordering, plan.sort_columns, fault_point="clustering.mid_group")  # type: ignore[arg-type]


def execute(table: HudiTable, instant: str, ordering: str | None = None, max_parallel_groups: int = 2,
            row_group_rows: int = 65_536, preserve_commit_metadata: bool = True,
            on_step: StepHook = None) -> MaintenanceResult:
    """Execute the pending plan ``instant`` and complete its replacecommit (see module docstring)."""
    if max_parallel_groups < 1:
        raise ValueError("max_parallel_groups must be at least 1")
    t0 = time.perf_counter()
    rolled_back = None
    with table.lock:
        inst = table.refresh().get(instant)
        if inst is None or inst.action != REPLACE or inst.is_completed:
            raise TimelineError(f"clustering {instant} is not pending in {table.base_uri}")
        if inst.state == State.INFLIGHT:  # a failed earlier attempt: roll back, keep the plan, re-run
            rolled_back = rollback_inflight(table, inst, keep_plan=True)
        plan = load_plan(table, instant)
        missing = [s.path for g in plan.groups for s in g.slices if not table.storage.exists(s.path)]
        if missing:
            raise TimelineError(f"clustering plan {instant} references {len(missing)} file(s) that no longer exist "
                                f"(first: {missing[0]}); it cannot be executed and stays pending")
        inflight = table.refresh().transition_to_inflight(Instant(instant, REPLACE, State.REQUESTED))
    _step("after_inflight", on_step)
    order = plan.extra_metadata.get("ordering") or effective_ordering(ordering, plan.sort_columns)

    failed = threading.Event()

    def run(ig: tuple[int, ClusteringGroup]) -> list[WriteStat]:
        if failed.is_set():  # a failed group fails the attempt: groups not yet started never start
            return []
        try:
            out = cluster_group(table, ig[1], plan, instant, ig[0], order, row_group_rows, preserve_commit_metadata)
            _step("after_group_written", on_step)
        except BaseException:
            failed.set()
            raise
        return out

    with ThreadPoolExecutor(max_workers=min(max_parallel_groups, max(1, len(plan.groups)))) as pool:
        futures = [pool.submit(run, ig) for ig in enumerate(plan.groups)]
        stats = [s for f in futures for s in f.result()]
    _step("after_all_groups", on_step)
    if not stats:
        raise TimelineError(f"clustering plan {instant} produced 0 write stats; the instant stays inflight")
    replaced: dict[str, list[str]] = {}
    for g in plan.groups:
        replaced.setdefault(g.partition_path, []).extend(g.file_ids)
    _step("before_replacecommit", on_step)
    with table.lock:
        commit_write(table, inflight, stats, "CLUSTER", table.latest_schema(), replaced=replaced,
                     extra={"ordering": order, "sortColumns": ",".join(plan.sort_columns),
                            "preserveCommitMetadata": str(preserve_commit_metadata).lower()})
    _step("after_replacecommit", on_step)
    sizes = sorted(s.file_size for s in stats)
    return MaintenanceResult(
        kind="clustering", instant=instant, duration_s=time.perf_counter() - t0,
        files_in=sum(len(g.slices) for g in plan.groups), files_out=len(stats),
        bytes_read=sum(g.total_bytes for g in plan.groups), bytes_written=sum(sizes),
        records=sum(s.num_writes for s in stats),
        details={"groups": len(plan.groups), "ordering": order, "output_sizes": sizes,
                 "rolled_back_attempt": rolled_back.instant if rolled_back else None})
