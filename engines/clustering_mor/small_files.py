"""Which file groups take a MERGE_ON_READ deltacommit's inserts into their logs (pure, no I/O).

What we implement is Apache Hudi's MOR small-file handling with its default index (a bloom index,
which cannot index log files): ``SparkUpsertDeltaCommitPartitioner.getSmallFileCandidates``.

| rule        | ours                                                                  | Hudi                                         |
| ----------- | --------------------------------------------------------------------- | -------------------------------------------- |
| off         | ``insert_small_file_limit`` 0: no candidate, every insert to new base files | ``hoodie.parquet.small.file.limit`` <= 0 |
| candidate   | a latest slice with a base file, no log file, base smaller than the limit | "we can not pad slices with existing log-files w/o compacting these" |
| excluded    | groups in a pending compaction or clustering plan                     | pending compaction slices are not listed; ``filterSmallFilesInClustering`` |
| order, cap  | smallest base first (then fileId), at most ``small_file_group_candidates`` per partition | sorted by base size, ``hoodie.merge.small.file.group.candidates.limit`` (1) |
| room        | ``(max_file_size - base bytes) // average record size`` records      | ``UpsertPartitioner.assignInserts``          |
| average     | the newest write whose base files hold more than the limit's bytes: their bytes / records; else ``record_size_estimate`` (1024) | ``AverageRecordSizeUtils`` over base-file stats |

The chosen groups' inserts go to their new log file (:func:`engines.files.deltacommit.write_deltacommit`),
so each is padded once and becomes a compaction candidate: a partition's inserts, in the batch's
order, fill its groups one after another up to each one's room
(:func:`engines.files.deltacommit.fill_groups`), and the rest
go to new base files rolled at the max file size. The simulator calls the same functions
(:mod:`engines.clustering_mor.sim`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engines.config.registry import COW, default
from engines.files.deltacommit import SmallFileTarget
from engines.mor_compaction.planner import SliceLogs

DEFAULT_RECORD_BYTES: int = default("record_size_estimate", COW)  # hoodie.copyonwrite.record.size.estimate


def small_file_targets(slices: Iterable[SliceLogs], limit: int, candidates: int, max_file_size: int,
                       record_bytes: float, held: Mapping[tuple[str, str], str]) -> list[SmallFileTarget]:
    """The groups that take inserts into their logs, per partition, with the records each takes."""
    if limit <= 0:
        return []
    by_partition: dict[str, list[SliceLogs]] = {}
    for s in slices:
        if s.base_file is not None and not s.log_files and s.base_bytes < limit and s.file_group not in held:
            by_partition.setdefault(s.partition, []).append(s)
    out = []
    for partition in sorted(by_partition):
        ranked = sorted(by_partition[partition], key=lambda s: (s.base_bytes, s.file_id))[:candidates]
        for s in ranked:
            records = int((max_file_size - s.base_bytes) // max(record_bytes, 1.0))
            if records > 0:
                out.append(SmallFileTarget(partition, s.file_id, records))
    return out


def average_record_bytes(writes: Iterable[tuple[int, int]], limit: int) -> float:
    """Bytes per record of the newest write (``(base-file bytes, records)``, newest first) whose base
    files hold more than ``limit`` bytes; :data:`DEFAULT_RECORD_BYTES` without one."""
    for total_bytes, records in writes:
        if total_bytes > limit and records > 0:
            return total_bytes / records
    return float(DEFAULT_RECORD_BYTES)
