"""Grouping strategies: which eligible files of a partition are rewritten together.

- ``size``: Hudi's packing (master ``PartitionAwareClusteringPlanStrategy``): largest first, close
  a group when adding a file would exceed ``max_bytes_per_group``; the last group is kept only
  if it has >1 file, sort columns are set or single-group clustering is enabled.
- ``sort_overlap``: the seed's rule — files whose sort-column ranges overlap go together.
  Connected components of the interval-overlap graph on the first sort column (files without
  its statistics are left out); components of one file are not rewritten (they are already
  disjoint from every other file, so rewriting them gains nothing for range pruning); large
  components are split in range order by the byte cap, and a part continues only while the next
  file overlaps the part's own union, so every group is connected by its own members.
- ``key_range``: files ordered by min record key, packed contiguously up to the byte cap.
- ``commit_time``: files ordered by base instant, packed contiguously up to the byte cap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engines.clustering.config import ClusteringConfig
from engines.table.model import FileSlice

Grouper = Callable[[list[FileSlice], ClusteringConfig], list[list[FileSlice]]]


def _pack_in_order(files: list[FileSlice], cap: int) -> list[list[FileSlice]]:
    groups: list[list[FileSlice]] = []
    cur: list[FileSlice] = []
    total = 0
    for f in files:
        if cur and total + f.size_bytes > cap:
            groups.append(cur)
            cur, total = [], 0
        cur.append(f)
        total += f.size_bytes
    if cur:
        groups.append(cur)
    return groups


def group_by_size(files: list[FileSlice], config: ClusteringConfig) -> list[list[FileSlice]]:
    ordered = sorted(files, key=lambda s: (-s.size_bytes, s.path))
    groups = _pack_in_order(ordered, config.max_bytes_per_group)
    if groups and len(groups[-1]) == 1 and not (config.sort_columns or config.single_group_clustering_enabled):
        groups.pop()
    return groups


def _range(s: FileSlice, column: str) -> tuple[Any, Any] | None:
    return s.column_stats.get(column)


def group_by_sort_overlap(files: list[FileSlice], config: ClusteringConfig) -> list[list[FileSlice]]:
    if not config.sort_columns:
        return group_by_size(files, config)
    col = config.sort_columns[0]
    ranged = sorted((f for f in files if _range(f, col) is not None),
                    key=lambda f: (_range(f, col)[0], _range(f, col)[1], f.path))  # type: ignore[index]
    # one pass in range order: a group takes the next file while that file overlaps the group's
    # union and fits the byte cap. Splitting a connected component by the cap alone could leave a
    # group whose files meet only through a file packed into the group before it.
    parts: list[list[FileSlice]] = []
    cur: list[FileSlice] = []
    cur_hi: Any = None
    total = 0
    for f in ranged:
        lo, hi = _range(f, col)  # type: ignore[misc]
        if cur and lo <= cur_hi and total + f.size_bytes <= config.max_bytes_per_group:
            cur.append(f)
            cur_hi = max(cur_hi, hi)
            total += f.size_bytes
        else:
            if cur:
                parts.append(cur)
            cur, cur_hi, total = [f], hi, f.size_bytes
    if cur:
        parts.append(cur)
    return [part for part in parts if len(part) >= 2]


def group_by_key_range(files: list[FileSlice], config: ClusteringConfig) -> list[list[FileSlice]]:
    key = config.record_key_column

    def min_key(s: FileSlice) -> tuple[int, Any, str]:
        rng = s.column_stats.get(key)
        return (0, rng[0], s.path) if rng else (1, "", s.path)

    return _pack_in_order(sorted(files, key=min_key), config.max_bytes_per_group)


def group_by_commit_time(files: list[FileSlice], config: ClusteringConfig) -> list[list[FileSlice]]:
    return _pack_in_order(sorted(files, key=lambda s: (s.instant, s.path)), config.max_bytes_per_group)


STRATEGIES: dict[str, Grouper] = {
    "size": group_by_size,
    "sort_overlap": group_by_sort_overlap,
    "key_range": group_by_key_range,
    "commit_time": group_by_commit_time,
}
