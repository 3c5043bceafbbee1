"""Clustering scheduling as a pure function of FileSlices (hudi-semantics.md §1).

Eligibility: latest slice of each visible file group, size < small-file limit and <= target, not
in a pending clustering plan, nor in a pending MERGE_ON_READ compaction plan (the exclusion rule:
such groups are skipped and named in the plan's ``extraMetadata`` under :data:`SKIPPED_KEY`, a JSON
list of ``[partition, fileId, "pending_compaction", instant]``). Partition selection: explicit list, else regex, then the filter mode
(NONE / RECENT_DAYS / SELECTED_PARTITIONS). Grouping by the configured strategy; caps: bytes per
group (inside the strategies) and ``max_num_groups`` per partition and overall. Each group writes
``ceil(total / target)`` evenly sized files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from engines.clustering.config import ClusteringConfig
from engines.clustering.plan import ClusteringGroup, ClusteringPlan, group_metrics
from engines.clustering.strategies import STRATEGIES
from engines.table.model import FileSlice
from engines.table.sizing import output_file_count

SKIPPED_KEY = "layoutbench.skippedFileGroups"  # the same key a compaction plan uses for its skipped groups


def select_partitions(partitions: Iterable[str], config: ClusteringConfig) -> list[str]:
    parts = sorted(set(partitions))
    if config.partitions is not None:
        parts = [p for p in parts if p in config.partitions]
    elif config.partition_regex is not None:
        parts = [p for p in parts if re.fullmatch(config.partition_regex, p)]
    if config.partition_filter_mode == "RECENT_DAYS":
        desc = sorted(parts, reverse=True)[max(0, config.skip_from_latest_partitions):]
        parts = sorted(desc if config.lookback_partitions <= 0 else desc[: config.lookback_partitions])
    elif config.partition_filter_mode == "SELECTED_PARTITIONS":
        parts = [p for p in parts if (config.begin_partition is None or p >= config.begin_partition)
                 and (config.end_partition is None or p <= config.end_partition)]
    return parts


def eligible(s: FileSlice, config: ClusteringConfig, pending: set[tuple[str, str]] | frozenset) -> bool:
    return (s.size_bytes < config.small_file_limit and s.size_bytes <= config.target_file_size
            and s.file_group not in pending)


def plan_clustering(slices: Iterable[FileSlice], config: ClusteringConfig,
                    pending_file_groups: Iterable[tuple[str, str]] = frozenset(),
                    compacting: Mapping[tuple[str, str], str] | None = None) -> ClusteringPlan | None:
    """The plan, or None when no group is formed (Hudi writes no instant then). ``compacting``:
    file group -> instant of the pending compaction holding it (skipped, and said so)."""
    compacting = compacting or {}
    pending = set(pending_file_groups) | set(compacting)
    skipped: list[list[str]] = []
    by_partition: dict[str, list[FileSlice]] = {}
    for s in slices:
        by_partition.setdefault(s.partition, []).append(s)
    grouper = STRATEGIES[config.effective_grouping]
    groups: list[ClusteringGroup] = []
    for partition in select_partitions(by_partition, config):
        skipped += [[s.partition, s.file_id, "pending_compaction", compacting[s.file_group]]
                    for s in by_partition[partition] if s.file_group in compacting and eligible(s, config, ())]
        files = [s for s in by_partition[partition] if eligible(s, config, pending)]
        if not files:
            continue
        for members in grouper(files, config)[: config.max_num_groups]:
            n_out = output_file_count(sum(m.size_bytes for m in members), config.target_file_size)
            groups.append(ClusteringGroup(partition, members, n_out, group_metrics(members, n_out)))
    groups = groups[: config.max_num_groups]
    if not groups:
        return None
    extra = {"strategy": config.effective_grouping, "planner": "layoutbench.clustering"}
    if skipped:
        extra[SKIPPED_KEY] = json.dumps(sorted(skipped))
    return ClusteringPlan(groups, config.target_file_size, list(config.sort_columns), extra)
