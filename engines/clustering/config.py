"""Option 2 clustering plan configuration, with Hudi's config names and defaults
(hudi-semantics.md §1.3-1.4; prefix ``hoodie.clustering.plan.strategy.`` unless noted)."""

from __future__ import annotations

from dataclasses import dataclass

from engines.config.registry import INSERT_SIZING, O2, setting, settings
from engines.cow_baseline.config import CowConfig

INSERT_SPLITS: tuple[str, ...] = setting("insert_split", O2).parse.choices  # type: ignore[attr-defined]
PLANNER_KEYS = ("small_file_limit", "target_file_size", "max_bytes_per_group", "max_num_groups", "sort_columns",
                "single_group_clustering_enabled", "partition_filter_mode", "lookback_partitions",
                "skip_from_latest_partitions", "begin_partition", "end_partition", "partitions", "partition_regex",
                "grouping")


@dataclass(frozen=True)
class ClusteringConfig(settings(*PLANNER_KEYS, kind=O2, frozen=True)):
    """The clustering plan's keys (the registry's, ``hoodie.clustering.plan.strategy.*``);
    ``grouping`` None: sort_overlap with sort columns, else size."""

    record_key_column: str = "_hoodie_record_key"

    def __post_init__(self) -> None:
        self.check_settings()
        if not isinstance(self.sort_columns, tuple):
            object.__setattr__(self, "sort_columns", tuple(self.sort_columns))
        if self.partitions is not None and not isinstance(self.partitions, tuple):
            object.__setattr__(self, "partitions", tuple(self.partitions))

    @property
    def effective_grouping(self) -> str:
        return self.grouping or ("sort_overlap" if self.sort_columns else "size")


@dataclass(frozen=True)
class IngestSizing(settings("insert_split", *INSERT_SIZING, kind=O2, frozen=True)):
    """How Option 2's insert (``hoodie.parquet.small.file.limit=0``) cuts a batch into new file groups.

    ``insert_split`` ``hudi`` (the default, Hudi's UpsertPartitioner): per partition, new buckets of
    ``max_file_size // average record size`` records, the average being
    ``record_size_estimate`` until a commit (not a replacecommit) wrote more than
    ``record_size_estimation_threshold`` × small-file limit bytes — with limit 0, any commit — and
    that commit's bytes / records after (:func:`engines.cow_baseline.assign.average_record_size`).
    ``bytes``: one file per partition and task, rolled when its written bytes reach
    ``max_file_size`` (no estimate; how our ingest cut files before it followed Hudi)."""

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
