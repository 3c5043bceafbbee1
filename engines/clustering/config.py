"""Option 2 clustering plan configuration, with Hudi's config names and defaults
(hudi-semantics.md §1.3-1.4; prefix ``hoodie.clustering.plan.strategy.`` unless noted)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engines.cow_baseline.config import CowConfig
from engines.table.sizes import (
    CLUSTERING_MAX_BYTES_PER_GROUP,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
    INSERT_SPLIT_SIZE,
    RECORD_SIZE_ESTIMATE,
    RECORD_SIZE_ESTIMATION_THRESHOLD,
)

INSERT_SPLITS = ("hudi", "bytes")


@dataclass(frozen=True)
class ClusteringConfig:
    small_file_limit: int = CLUSTERING_SMALL_FILE_LIMIT  # small.file.limit
    target_file_size: int = CLUSTERING_TARGET_FILE_MAX_BYTES  # target.file.max.bytes
    max_bytes_per_group: int = CLUSTERING_MAX_BYTES_PER_GROUP  # max.bytes.per.group
    max_num_groups: int = 30  # max.num.groups
    sort_columns: tuple[str, ...] = ()  # sort.columns
    single_group_clustering_enabled: bool = True  # single.group.clustering.enabled (0.14+)
    partition_filter_mode: Literal["NONE", "RECENT_DAYS", "SELECTED_PARTITIONS"] = "NONE"  # hoodie.clustering.plan.partition.filter.mode
    lookback_partitions: int = 2  # daybased.lookback.partitions
    skip_from_latest_partitions: int = 0  # daybased.skipfromlatest.partitions
    begin_partition: str | None = None  # cluster.begin.partition
    end_partition: str | None = None  # cluster.end.partition
    partitions: tuple[str, ...] | None = None  # partition.selected
    partition_regex: str | None = None  # partition.regex.pattern
    grouping: Literal["size", "sort_overlap", "key_range", "commit_time"] | None = None  # None: sort_overlap with sort columns, else size
    record_key_column: str = "_hoodie_record_key"

    def __post_init__(self) -> None:
        for name in ("target_file_size", "max_bytes_per_group", "max_num_groups"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if not isinstance(self.sort_columns, tuple):
            object.__setattr__(self, "sort_columns", tuple(self.sort_columns))
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))

    @property
    def effective_grouping(self) -> str:
        return self.grouping or ("sort_overlap" if self.sort_columns else "size")


@dataclass(frozen=True)
class IngestSizing:
    """How Option 2's insert (``hoodie.parquet.small.file.limit=0``) cuts a batch into new file groups.

    ``insert_split`` ``hudi`` (the default, Hudi's UpsertPartitioner): per partition, new buckets of
    ``max_file_size // average record size`` records, the average being
    ``record_size_estimate`` until a commit (not a replacecommit) wrote more than
    ``record_size_estimation_threshold`` × small-file limit bytes — with limit 0, any commit — and
    that commit's bytes / records after (:func:`engines.cow_baseline.assign.average_record_size`).
    ``bytes``: one file per partition and task, rolled when its written bytes reach
    ``max_file_size`` (no estimate; how our ingest cut files before it followed Hudi)."""

    insert_split: Literal["hudi", "bytes"] = "hudi"
    record_size_estimate: int = RECORD_SIZE_ESTIMATE  # hoodie.copyonwrite.record.size.estimate
    record_size_estimation_threshold: float = RECORD_SIZE_ESTIMATION_THRESHOLD  # hoodie.record.size.estimation.threshold
    insert_split_size: int = INSERT_SPLIT_SIZE  # hoodie.copyonwrite.insert.split.size
    auto_split_inserts: bool = True  # hoodie.copyonwrite.insert.auto.split

    def __post_init__(self) -> None:
        if self.insert_split not in INSERT_SPLITS:
            raise ValueError(f"unknown insert_split {self.insert_split!r}; expected one of {list(INSERT_SPLITS)}")

    def cow_config(self, max_file_size: int) -> CowConfig | None:
        """The UpsertPartitioner config of this ingest (small-file limit 0), or None for ``bytes``."""
        if self.insert_split == "bytes":
            return None
        return CowConfig(small_file_limit=0, max_file_size=max_file_size, record_size_estimate=self.record_size_estimate,
                         record_size_estimation_threshold=self.record_size_estimation_threshold,
                         insert_split_size=self.insert_split_size, auto_split_inserts=self.auto_split_inserts)


INGEST_FIELDS = tuple(IngestSizing.__dataclass_fields__)


def ingest_sizing(options: dict) -> IngestSizing:
    """The :class:`IngestSizing` named by an engine's config keys (the others ignored)."""
    return IngestSizing(**{k: v for k, v in options.items() if k in INGEST_FIELDS})
