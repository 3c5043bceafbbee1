"""Clustering modes with Hudi 0.12.1's semantics and config names (hudi-semantics.md §1.1, §4);
``schedule_rules="1.2"`` gates ``schedule_inline`` as Apache Hudi 1.2 does (below).

| mode | Hudi configs | schedules | executes |
| --- | --- | --- | --- |
| ``inline`` | ``hoodie.clustering.inline=true``, ``inline.max.commits`` | writer, after a commit, once ``inline.max.commits`` commits completed since the last clustering instant | writer, synchronously, after first running any pending plan |
| ``async`` | ``hoodie.clustering.async.enabled=true``, ``async.max.commits`` | writer, after a commit, once ``async.max.commits`` commits completed; *not* blocked by pending plans (their file groups are excluded) | :class:`engines.async_service.AsyncService`, a thread beside ingestion |
| ``schedule_inline`` | ``hoodie.clustering.schedule.inline=true`` | writer, after *every* commit, only if no clustering is pending (no commit gate in 0.12.1; 1.2: also once ``async.max.commits`` commits completed) | an explicit ``execute`` (HoodieClusteringJob) |
| ``manual`` | none (HoodieClusteringJob) | ``schedule`` (no commit gate) | ``execute`` / ``schedule_and_execute`` |

Decisions:
- Schedule rules (``schedule_rules``): ``0.12.1``, the article's Hudi, schedules a semi-async plan
  after any commit when none is pending. ``1.2``, the Apache Hudi the ``hudi`` engine runs:
  ``BaseHoodieTableServiceClient.runTableServicesInline`` schedules only when no clustering is
  pending (``getLastPendingClusterInstant``), and ``ClusteringPlanActionExecutor.createClusteringPlan``
  then refuses the plan while fewer than ``hoodie.clustering.async.max.commits`` commits completed
  since the last clustering instant: its gate is ``(isAsyncClusteringEnabled() ||
  scheduleInlineClustering()) && getAsyncClusterMaxCommits() > commitsSinceLastClustering``
  (read from the 1.2.0 bundle's bytecode). So semi-async counts ``async.max.commits``, not
  ``inline.max.commits``. Inline and async gates are the same in both.
- "Commits since the last clustering" counts completed commit / deltacommit / replacecommit
  instants strictly after the newest replacecommit in *any* state (0.12.1), so the counter does
  not include the replacecommit itself and restarts at a pending plan.
- After a commit the writer first cleans (``hoodie.clean.automatic``: Hudi's ``postCommit``
  cleans before inline table services), then runs the mode's clustering.
- The async service (:class:`engines.async_service.AsyncService`) executes pending plans earliest
  first when woken (after a plan is scheduled) or every ``async_interval_s`` seconds; failures are
  recorded and the plan stays pending (the next execution rolls the inflight attempt back and
  re-runs it). ``close`` lets the running execution finish.
"""

from __future__ import annotations

from typing import Literal

from engines.config.registry import O2, setting
from engines.table.timeline import REPLACE, Timeline

Mode = Literal["inline", "async", "schedule_inline", "manual"]
MODES: tuple[str, ...] = setting("mode", O2).parse.choices  # type: ignore[attr-defined]
COUNTED_ACTIONS = ("commit", "deltacommit", REPLACE)
SCHEDULE_RULES: tuple[str, ...] = setting("schedule_rules", O2).parse.choices  # type: ignore[attr-defined]


def hudi_configs(mode: str, inline_max_commits: int, async_max_commits: int) -> dict[str, str]:
    """The Hudi write configs a mode corresponds to (recorded in reports and plan metadata)."""
    if mode not in MODES:
        raise ValueError(f"unknown clustering mode {mode!r}; expected one of {MODES}")
    return {
        "hoodie.clustering.inline": str(mode == "inline").lower(),
        "hoodie.clustering.inline.max.commits": str(inline_max_commits),
        "hoodie.clustering.async.enabled": str(mode == "async").lower(),
        "hoodie.clustering.async.max.commits": str(async_max_commits),
        "hoodie.clustering.schedule.inline": str(mode == "schedule_inline").lower(),
    }


def last_clustering_instant(timeline: Timeline) -> str | None:
    """Newest replacecommit in any state (0.12.1's ``lastInstant`` of the replace timeline)."""
    replaces = [i.timestamp for i in timeline.instants if i.action == REPLACE]
    return max(replaces) if replaces else None


def commits_since_last_clustering(timeline: Timeline) -> int:
    last = last_clustering_instant(timeline) or "0"
    return sum(1 for i in timeline.completed(COUNTED_ACTIONS) if i.timestamp > last)


def may_schedule(mode: str, timeline: Timeline, inline_max_commits: int, async_max_commits: int,
                 rules: str = "0.12.1") -> bool:
    """The scheduling gate of ``mode`` (``ClusteringPlanActionExecutor`` + the writer's post-commit
    rules) under the Hudi version ``rules`` (module docstring)."""
    if rules not in SCHEDULE_RULES:
        raise ValueError(f"unknown schedule_rules {rules!r}; expected one of {SCHEDULE_RULES}")
    if mode == "inline":
        return commits_since_last_clustering(timeline) >= inline_max_commits
    if mode == "async":
        return commits_since_last_clustering(timeline) >= async_max_commits
    if mode == "schedule_inline":
        if timeline.pending([REPLACE]):
            return False
        return rules == "0.12.1" or commits_since_last_clustering(timeline) >= async_max_commits
    if mode == "manual":
        return True
    raise ValueError(f"unknown clustering mode {mode!r}; expected one of {MODES}")
