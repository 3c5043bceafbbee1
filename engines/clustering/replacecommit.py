"""A clustering plan's two ends on the timeline, for either table type: loading the saved plan
(``<T>.replacecommit.requested``) and committing its execution as the ``<T>.replacecommit`` that replaces
every planned file group. The copy-on-write executor (:mod:`engines.clustering.executor`) and the
MERGE_ON_READ one (:mod:`engines.clustering.mor`) both use them; neither imports the other's writing."""

from __future__ import annotations

from engines.clustering.plan import ClusteringPlan, RequestedReplace
from engines.service_executor import Committed
from engines.table import faults, plans
from engines.table.model import WriteStat
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, Instant
from engines.table.transaction import commit_write


def load_plan(table: HudiTable, instant: str) -> ClusteringPlan:
    """The clustering plan saved as ``instant`` (:func:`engines.table.plans.load_plan`)."""
    return RequestedReplace.from_avro(plans.load_plan(table.refresh(), instant, REPLACE)).plan


def commit(table: HudiTable, plan: ClusteringPlan, inflight: Instant, stats: list[WriteStat], ordering: str,
           preserve_commit_metadata: bool, on_step: faults.StepHook = None) -> Committed:
    """The replacecommit: every file group of the plan replaced, nothing deleted (the cleaner's job)."""
    replaced: dict[str, list[str]] = {}
    for g in plan.groups:
        replaced.setdefault(g.partition_path, []).extend(g.file_ids)
    faults.step("clustering.before_replacecommit", on_step)
    commit_write(table, inflight, stats, "CLUSTER", table.latest_schema(), replaced=replaced,
                 extra={"ordering": ordering, "sortColumns": ",".join(plan.sort_columns),
                        "preserveCommitMetadata": str(preserve_commit_metadata).lower()})
    faults.step("clustering.after_replacecommit", on_step)
    return Committed(0, {"groups": len(plan.groups), "ordering": ordering,
                         "output_sizes": sorted(s.file_size for s in stats)})
