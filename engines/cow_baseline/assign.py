"""Hudi's UpsertPartitioner insert assignment (hudi-semantics.md §7.2), as a pure function.

Inserts of a partition go first to its small files (latest slice below ``small_file_limit``,
not in a pending clustering plan), each topped up by ``(max_file_size - size) // avg_record_size``
records; the rest go to new file groups of ``max_file_size // avg_record_size`` records each
(auto split) or ``insert_split_size``. Hudi visits small files in view order; we use the view's
(partition, fileId) order so the assignment is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import NamedTuple

from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice


class InsertBucket(NamedTuple):
    """Records routed to one file group: an existing small one (rewritten) or a new one. A named
    tuple: immutable, and cheap to build (a simulated year assigns a few hundred thousand)."""

    partition: str
    file_id: str | None
    num_records: int
    base_slice: FileSlice | None = None

    @property
    def is_new(self) -> bool:
        return self.file_id is None


def rank_ranges(buckets: Sequence[InsertBucket]) -> list[tuple[int, int]]:
    """Per bucket, the batch rows it takes as ``(lo, n)``: bucket ``i`` takes the rows ranked ``[lo, lo + n)``
    by record key within its partition, the buckets of a partition taking consecutive ranges in bucket
    order (every route that writes a bucket, and the simulator, cut the batch this way)."""
    out: list[tuple[int, int]] = []
    taken: dict[str, int] = {}
    for b in buckets:
        lo = taken.get(b.partition, 0)
        taken[b.partition] = lo + b.num_records
        out.append((lo, b.num_records))
    return out


def average_record_size(commits: Iterable[tuple[int, int]], config: CowConfig) -> int:
    """Hudi's estimate from (bytes written, records written) of completed commits, newest first:
    the first commit with bytes > threshold × small-file limit gives ceil(bytes / records);
    otherwise the configured estimate."""
    limit = config.record_size_estimation_threshold * config.small_file_limit
    for total_bytes, records in commits:
        if total_bytes > limit and records > 0:
            return math.ceil(total_bytes / records)
    return config.record_size_estimate


_VIEW_ORDER = attrgetter("partition", "file_id")


def small_files(slices: Iterable[FileSlice], config: CowConfig,
                pending_file_groups: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset()) -> list[FileSlice]:
    if config.small_file_limit <= 0:
        return []
    return sorted((s for s in slices if s.size_bytes < config.small_file_limit
                   and s.file_group not in pending_file_groups), key=_VIEW_ORDER)


def assign_inserts(slices_by_partition: Mapping[str, list[FileSlice]], inserts_by_partition: Mapping[str, int],
                   avg_record_size: int, config: CowConfig,
                   pending_file_groups: frozenset[tuple[str, str]] | set[tuple[str, str]] = frozenset(),
                   ) -> list[InsertBucket]:
    """Buckets per partition: small-file top-ups first, then new file groups."""
    if avg_record_size <= 0:
        raise ValueError(f"average record size must be positive, got {avg_record_size}")
    buckets: list[InsertBucket] = []
    for partition in sorted(inserts_by_partition):
        remaining = int(inserts_by_partition[partition])
        for s in small_files(slices_by_partition.get(partition, []), config, pending_file_groups):
            if remaining <= 0:
                break
            room = (config.max_file_size - s.size_bytes) // avg_record_size
            take = min(room, remaining)
            if take > 0:
                buckets.append(InsertBucket(partition, s.file_id, take, s))
                remaining -= take
        if remaining > 0:
            per_bucket = (config.max_file_size // avg_record_size) if config.auto_split_inserts \
                else config.insert_split_size
            per_bucket = max(1, per_bucket)
            while remaining > 0:
                take = min(per_bucket, remaining)
                buckets.append(InsertBucket(partition, None, take))
                remaining -= take
    return buckets
