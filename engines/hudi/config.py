"""The ``hudi`` engine's configuration: a preset, the scenario's sizing, and ``hoodie.*`` keys
passed to Apache Hudi unchanged. :func:`hoodie_options` is pure (no Spark): it is the one map of
options every write and table service of the engine uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import ClassVar

from engines.config.registry import (
    CLUSTERING_PRESETS,
    HUDI,
    MOR_PRESETS,
    SETTINGS,
    SIMPLE_KEY_GENERATOR,
    hudi_default,
    hudi_preset_keys,
    setting,
    settings,
)
from engines.kinds import kind_of, kind_of_preset

PRESETS: tuple[str, ...] = setting("preset", HUDI).parse.choices  # type: ignore[attr-defined]
MODES: tuple[str, ...] = setting("mode", HUDI).parse.choices  # type: ignore[attr-defined]
# How ``layoutbench stream`` feeds the engine: foreach_batch (bench.stream.engine_stream's foreachBatch
# calls ingest and runs the table services) or hudi (Hudi's own sink, writeStream.format("hudi"),
# which schedules clustering after its commits and executes it on its own async service).
STREAM_SINKS: tuple[str, ...] = setting("stream_sink", HUDI).parse.choices  # type: ignore[attr-defined]
# the sink's checkpoint identifier, as the foreachBatch writer's (the registry's default of Hudi's key)
STREAM_WRITER_ID: str = hudi_default("hoodie.datasource.write.streaming.checkpoint.identifier")
# the scheduling keys the sink's options carry: inline and semi-async off, async as the stream asks
SINK_SCHEDULE_KEYS = ("hoodie.clustering.inline", "hoodie.clustering.schedule.inline",
                      "hoodie.clustering.async.enabled", "hoodie.clustering.async.max.commits")


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
        if self.stream_sink not in STREAM_SINKS:
            raise ValueError(f"unknown stream_sink {self.stream_sink!r}; known: {list(STREAM_SINKS)} "
                             f"(foreach_batch: our foreachBatch writes each micro-batch; hudi: Hudi's own "
                             f"streaming sink with its async clustering)")
        self.check_settings()  # each value by its registry entry's parser (preset and mode among them)
        if kind_of_preset(self.preset) != self.KIND:  # the registry says which kind writes each preset
            raise ValueError(f"preset {self.preset!r} is engine kind {kind_of_preset(self.preset)!r} "
                             f"(kind: {kind_of_preset(self.preset)}); kind {self.KIND!r} takes "
                             f"{list(kind_of(self.KIND).presets)}")
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

    @property
    def clustering(self) -> bool:
        return self.preset in CLUSTERING_PRESETS

    @property
    def merge_on_read(self) -> bool:
        return self.preset in MOR_PRESETS



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
    """Every ``hoodie.*`` option of the engine's writes and table services, generated from the
    config registry's entries of real Hudi under ``cfg.preset`` (:func:`registry.hudi_preset_keys`):
    the table's identity, each field of ``cfg`` under the key it goes to under the preset, the
    values the engine fixes (the entries' defaults) or derives; then ``cfg.options`` unchanged (they win)."""
    identity = {"table_name": table_name, "record_key": record_key, "partition_column": partition_field,
                "ordering_field": ordering_field, "key_generator": SIMPLE_KEY_GENERATOR}
    opts: dict[str, object] = {}
    for key, s in hudi_preset_keys(cfg.preset).items():
        if s.derive is not None:
            value = s.derive(cfg)
        elif s.name is not None:
            value = getattr(cfg, s.name)
        elif s.writes:
            value = identity[s.identity] if s.identity else s.default
        else:
            continue
        if value is None or value == ():
            continue
        opts[key] = ",".join(value) if isinstance(value, tuple) else value
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
    out.update({s.hudi: _text(s.default) for s in SETTINGS if s.stream and s.hudi})
    if cfg.clustering:  # the scheduling keys as the sink's async service reads them (their registry derive)
        sink = SimpleNamespace(mode="async" if async_clustering else "manual", inline_every=async_max_commits)
        own = hudi_preset_keys(cfg.preset)
        out.update({key: _text(own[key].derive(sink)) for key in SINK_SCHEDULE_KEYS})  # type: ignore[misc]
    out.update({k: _text(v) for k, v in cfg.options.items()})
    return out
