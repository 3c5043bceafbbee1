"""The ``hudi`` engine's configuration: a preset, the scenario's sizing, and ``hoodie.*`` keys
passed to Apache Hudi unchanged. :func:`hoodie_options` is pure (no Spark): it is the one map of
options every write and table service of the engine uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from engines.config.registry import HUDI, setting, settings
from engines.kinds import kind_of, kind_of_preset

PRESETS: tuple[str, ...] = setting("preset", HUDI).parse.choices  # type: ignore[attr-defined]
MODES: tuple[str, ...] = setting("mode", HUDI).parse.choices  # type: ignore[attr-defined]
# How ``layoutbench stream`` feeds the engine: foreach_batch (bench.stream.engine_stream's foreachBatch
# calls ingest and runs the table services) or hudi (Hudi's own sink, writeStream.format("hudi"),
# which schedules clustering after its commits and executes it on its own async service).
STREAM_SINKS: tuple[str, ...] = setting("stream_sink", HUDI).parse.choices  # type: ignore[attr-defined]
STREAM_WRITER_ID = "layoutbench"  # the sink's checkpoint identifier, as the foreachBatch writer's


@dataclass(frozen=True)
class HudiConfig(settings(kind=HUDI, frozen=True)):
    """``preset`` hudi_cow: upsert with Hudi's small-file handling (the real baseline);
    hudi_clustering: insert with small-file limit 0 and Hudi's clustering (Option 2 as shipped);
    hudi_mor: a MERGE_ON_READ table, upsert (updates and inserts topping up small slices to log
    files), compacted inline every ``compact_max_delta_commits`` deltacommits; hudi_mor_clustering:
    MERGE_ON_READ, hudi_clustering's inserts and clustering, updates to log files, the same compaction.
    ``mode`` for clustering: manual (the runner schedules and executes), inline
    (``hoodie.clustering.inline`` every ``inline_every`` commits, inside the write), async (plans
    scheduled after each write once ``inline_every`` commits passed, as Hudi's streaming sink does,
    and executed by a thread beside ingestion, woken by each plan and every ``async_interval_s``),
    schedule_inline (plans scheduled inside the write, executed by
    :meth:`~engines.hudi.engine.HudiEngine.execute`)."""

    options: dict[str, str] = field(default_factory=dict)  # hoodie.* keys, passed through unchanged
    KIND: ClassVar[str] = "hudi"  # the engine kind this config class is (KIND_OF_PRESET)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"unknown Hudi preset {self.preset!r}; known: {list(PRESETS)}")
        if kind_of_preset(self.preset) != self.KIND:  # the registry says which kind writes each preset
            raise ValueError(f"preset {self.preset!r} is engine kind {kind_of_preset(self.preset)!r} "
                             f"(kind: {kind_of_preset(self.preset)}); kind {self.KIND!r} takes "
                             f"{list(kind_of(self.KIND).presets)}")
        if self.mode not in MODES:
            raise ValueError(f"unknown Hudi clustering mode {self.mode!r}; known: {list(MODES)}")
        if self.stream_sink not in STREAM_SINKS:
            raise ValueError(f"unknown stream_sink {self.stream_sink!r}; known: {list(STREAM_SINKS)} "
                             f"(foreach_batch: our foreachBatch writes each micro-batch; hudi: Hudi's own "
                             f"streaming sink with its async clustering)")
        if self.stream_sink == "hudi" and self.mode != "manual":
            raise ValueError(f"stream_sink 'hudi' runs Hudi's own async clustering inside the sink; mode must be "
                             f"'manual' (got {self.mode!r})")
        if not isinstance(self.options, dict):
            raise ValueError("options must be a map of hoodie.* keys to values")
        bad = sorted(k for k in self.options if not str(k).startswith("hoodie."))
        if bad:
            raise ValueError(f"options may hold only hoodie.* keys (passed to Apache Hudi unchanged); got {bad}")
        if not isinstance(self.sort_columns, tuple):
            object.__setattr__(self, "sort_columns", tuple(self.sort_columns))
        for name in ("small_file_limit", "max_file_size", "target_file_size", "record_size_estimate",
                     "inline_every"):
            if getattr(self, name) < (0 if name == "small_file_limit" else 1):
                raise ValueError(f"{name} must be positive")

    @property
    def clustering(self) -> bool:
        return self.preset in ("hudi_clustering", "hudi_mor_clustering")

    @property
    def merge_on_read(self) -> bool:
        return self.preset in MOR_PRESETS


MOR_PRESETS = ("hudi_mor", "hudi_mor_clustering")


# Which engine kind writes each preset (engines/kinds.py's EngineKind.presets): the MERGE_ON_READ ones are
# kinds of their own, so that a report pairs them with ours by kind.
KIND_OF_PRESET = {p: kind_of_preset(p) for p in PRESETS}


@dataclass(frozen=True)
class HudiMorConfig(HudiConfig):
    """The ``hudi_mor`` kind: the ``hudi_mor`` preset (MERGE_ON_READ upsert, inline compaction)."""

    preset: str = "hudi_mor"
    KIND: ClassVar[str] = "hudi_mor"


@dataclass(frozen=True)
class HudiMorClusteringConfig(HudiConfig):
    """The ``hudi_mor_clustering`` kind: the ``hudi_mor_clustering`` preset (MERGE_ON_READ, clustering
    beside inline compaction)."""

    preset: str = "hudi_mor_clustering"
    KIND: ClassVar[str] = "hudi_mor_clustering"


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def hoodie_options(cfg: HudiConfig, table_name: str, partition_field: str, record_key: str,
                   ordering_field: str = "ts") -> dict[str, str]:
    """Every ``hoodie.*`` option of the engine's writes and table services: table identity
    (version 6, hive-style partitions, as our tables), the preset's write path, the scenario's
    sizing under Hudi's own keys, then ``cfg.options`` unchanged (they win)."""
    retained = cfg.cleaner_commits_retained
    keep_min = max(20, retained + 1)
    opts: dict[str, object] = {
        "hoodie.table.name": table_name,
        "hoodie.datasource.write.table.type": "MERGE_ON_READ" if cfg.merge_on_read else "COPY_ON_WRITE",
        "hoodie.datasource.write.recordkey.field": record_key,
        "hoodie.datasource.write.partitionpath.field": partition_field,
        "hoodie.datasource.write.precombine.field": ordering_field,
        "hoodie.datasource.write.hive_style_partitioning": True,
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.write.table.version": 6,
        "hoodie.metadata.enable": cfg.metadata_table,
        # No timeline server (it is a network server on the driver); markers written directly.
        "hoodie.embed.timeline.server": False,
        "hoodie.write.markers.type": "DIRECT",
        "hoodie.parquet.compression.codec": "snappy",  # as our writer
        "hoodie.parquet.max.file.size": cfg.max_file_size,
        "hoodie.copyonwrite.record.size.estimate": cfg.record_size_estimate,
        "hoodie.clean.automatic": True,
        "hoodie.cleaner.policy": "KEEP_LATEST_COMMITS",
        "hoodie.cleaner.commits.retained": retained,
        "hoodie.keep.min.commits": keep_min,
        "hoodie.keep.max.commits": keep_min + 10,
    }
    if cfg.clustering:
        opts.update({
            "hoodie.datasource.write.operation": cfg.operation or "insert",
            "hoodie.parquet.small.file.limit": 0,
            "hoodie.clustering.plan.strategy.small.file.limit": cfg.small_file_limit,
            "hoodie.clustering.plan.strategy.target.file.max.bytes": cfg.target_file_size,
            "hoodie.clustering.inline": cfg.mode == "inline",
            "hoodie.clustering.inline.max.commits": cfg.inline_every,
            "hoodie.clustering.schedule.inline": cfg.mode == "schedule_inline",
            "hoodie.clustering.async.enabled": cfg.mode == "async",
            "hoodie.clustering.async.max.commits": cfg.inline_every,
        })
        if cfg.sort_columns:
            opts["hoodie.clustering.plan.strategy.sort.columns"] = ",".join(cfg.sort_columns)
    else:
        opts.update({
            "hoodie.datasource.write.operation": cfg.operation or "upsert",
            "hoodie.parquet.small.file.limit": cfg.small_file_limit,
        })
    if cfg.merge_on_read:
        # Updates (and, under hudi_mor, inserts topping up small base-only slices) go to log files; the
        # writer compacts inline once compact_max_delta_commits deltacommits followed the last compaction.
        # Hudi's datasource runs async compaction only inside its streaming sink, so a batch write compacts inline.
        opts.update({
            "hoodie.compact.inline": True,
            "hoodie.compact.inline.trigger.strategy": "NUM_COMMITS",
            "hoodie.compact.inline.max.delta.commits": cfg.compact_max_delta_commits,
            "hoodie.datasource.compaction.async.enable": False,
        })
    opts.update(cfg.options)
    return {k: _text(v) for k, v in opts.items()}


def streaming_sink_options(cfg: HudiConfig, options: dict[str, str], async_max_commits: int,
                           async_clustering: bool = True) -> dict[str, str]:
    """The options of ``writeStream.format("hudi")`` (Hudi's ``HoodieStreamingSink``): the engine's
    ``options`` with clustering moved to the sink's async service — after each commit the writer
    schedules a plan once ``async_max_commits`` commits have passed since the last one
    (``hoodie.clustering.async.enabled`` / ``.max.commits``; inline scheduling off), and the sink
    hands it to its ``SparkStreamingAsyncClusteringService`` in the same JVM. The sink's checkpoint
    (the micro-batch id in each commit's extraMetadata, key ``_hudi_streaming_sink_checkpoint``) is
    written under ``STREAM_WRITER_ID``. A failed micro-batch is never skipped
    (``ignore.failed.batch`` false). With ``async_clustering`` false (a stream without
    maintenance) nothing is scheduled. ``cfg.options`` still win."""
    if async_max_commits < 1:
        raise ValueError("async_max_commits must be at least 1")
    out = dict(options)
    out.update({
        "hoodie.datasource.write.streaming.checkpoint.identifier": STREAM_WRITER_ID,
        "hoodie.datasource.write.streaming.ignore.failed.batch": "false",
    })
    if cfg.clustering:
        out.update({
            "hoodie.clustering.inline": "false",
            "hoodie.clustering.schedule.inline": "false",
            "hoodie.clustering.async.enabled": _text(async_clustering),
            "hoodie.clustering.async.max.commits": str(async_max_commits),
        })
    out.update({k: _text(v) for k, v in cfg.options.items()})
    return out
