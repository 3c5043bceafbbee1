"""Every config key, once: its Hudi name, our shorthand, default, type and parser, unit, the engine
kinds that honour it, and one line of doc (as hudi-rs keeps Hudi's keys in
``crates/core/src/config/table.rs``). Defaults are Apache Hudi 0.12's (hudi-semantics.md §1.3, §7.1).

Built from it: the engines' config dataclasses (:func:`settings`), the scenario's shared sizing,
``layoutbench validate`` and the engine factory (:mod:`bench.hoodie_conf`), ``layoutbench service
--hoodie-conf`` and ``docs/config.md`` (:mod:`engines.config.docs`). Adding a ``hoodie.*`` key is
one :class:`Setting` here.

A shorthand means one thing per engine kind; where two kinds read it differently (the clustering
plan's small-file limit is not the insert's) it has one entry per meaning. A ``hoodie.*`` key may
set several fields of one kind (``hoodie.parquet.max.file.size`` is Option 1's roll size and its
compaction target, as in Hudi's copy-on-write). Real Hudi (kind ``hudi``) takes every ``hoodie.*``
key listed here, passed through unchanged.

Sizes are written here and nowhere else (tests/test_sizes_defined_once.py scans for them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, make_dataclass
from typing import Any

from engines.config import parsers as p

KIB = 1 << 10  # a kernel's memory figures (ru_maxrss, /proc) count these
MB = 1 << 20  # the byte unit of every *_mb key, report and log line
GB = 1 << 30
DECIMAL_GB = 10**9  # bytes, for a price table that counts decimal gigabytes
DECIMAL_TB = 10**12  # bytes: the ledger's "$ per TB ingested"

COW, O1, AO, O2, DELTA, HUDI = "cow_baseline", "append_compaction", "append_only", "clustering", "delta_peer", "hudi"
O2M = "clustering_mor"  # Option 2 on MERGE_ON_READ: Option 2's plan keys, its own ingest and compaction keys
OURS = (COW, O1, AO, O2, O2M)  # the kinds over our own Hudi tables: they read hoodie.* keys through this registry
BLOOM_TYPES = ("DYNAMIC_V0", "SIMPLE")
# Real Hudi's presets (the ``hudi`` kinds' ``preset`` key): the ones that cluster, the MERGE_ON_READ ones.
CLUSTERING_PRESETS = ("hudi_clustering", "hudi_mor_clustering")
MOR_PRESETS = ("hudi_mor", "hudi_mor_clustering")
COW_PRESETS = ("hudi_cow", "hudi_clustering")
PRESET_NAMES = ("hudi_cow", "hudi_clustering", "hudi_mor", "hudi_mor_clustering")
# The hudi kinds' fields the engine reads itself (engines/hudi/engine.py: which options, its clustering
# service, its stream sink); every other field of theirs reaches Apache Hudi under its key, or is refused.
HUDI_ENGINE_READS = ("preset", "mode", "inline_every", "async_interval_s", "stream_sink")

# Sizes that are not keys: fixed by the writers, named here so no size is written twice.
DICTIONARY_PAGE_LIMIT = 1 * MB  # parquet-mr's parquet.dictionary.page.size: a larger dictionary falls back
SORT_RUN_BYTES = 128 * MB  # uncompressed input bytes one sorting task holds at most
SINGLE_TASK_BYTES = 32 * MB  # below this a rewrite's input is sorted by one task


@dataclass(frozen=True)
class Setting:
    """One config key. ``name`` is our shorthand (the scenario key and the config dataclass field),
    None for a Hudi key no field of ours holds (a value a design fixes, a schedule the scenario's
    maintenance section owns, or a key only real Hudi reads). ``kinds``: the engine kinds whose
    config has the field (or, without a name, which accept the key)."""

    name: str | None
    kinds: tuple[str, ...]
    default: Any
    parse: p.Parser
    unit: str
    doc: str
    hudi: str | None = None
    type: Any = None  # the dataclass field's annotation; from the default's type when None
    maintenance: str | None = None  # a scheduling key: the maintenance.mode it turns on, or "commits"
    # a table-identity key: which of the scenario's identities its value must equal (IDENTITIES)
    identity: str | None = None
    # The hudi kinds: the presets whose writes honour the entry (None: every preset). A key set under
    # another preset would be dropped, so it is refused.
    presets: tuple[str, ...] | None = None
    # The hudi kinds: the key the value goes to under some presets, when not ``hudi``: ((presets, key), ...)
    hudi_for: tuple[tuple[tuple[str, ...], str], ...] = ()
    # The hudi kinds: what the engine writes under the key. A named entry writes its field (None or an
    # empty value: nothing); ``derive(cfg)`` computes it instead; a nameless entry writes its default
    # when ``writes``.
    derive: Callable[[Any], Any] | None = None
    writes: bool = False
    # parsed value -> the fields it sets besides (Hudi 0.12's RECENT_DAYS plan class sets the filter mode)
    implies: tuple[tuple[Any, tuple[tuple[str, Any], ...]], ...] = ()
    # the kinds that read ``hudi`` (None: all of ``kinds``); the others take only the shorthand
    hudi_kinds: tuple[str, ...] | None = None
    # real Hudi's streaming sink writes this default into its options (engines.hudi.config.streaming_sink_options)
    stream: bool = False
    # a scheduling count: (the maintenance.mode that reads it, the maintenance field it must equal)
    counts_for: tuple[str, str] | None = None

    def hudi_key(self, preset: str | None = None) -> str | None:
        """The ``hoodie.*`` key of this entry under real Hudi's ``preset`` (``hudi`` elsewhere)."""
        return next((key for presets, key in self.hudi_for if preset in presets), self.hudi)

    def honoured_by(self, preset: str) -> bool:
        return self.presets is None or preset in self.presets

    @property
    def annotation(self) -> Any:
        if self.type is not None:
            return self.type
        return type(self.default)

    @property
    def mb_name(self) -> str | None:
        """The scenario's MB form of a byte size (``max_file_size`` -> ``max_file_mb``), or None."""
        if self.unit != "bytes" or self.name is None:
            return None
        return (self.name.removesuffix("_size") if self.name.endswith("_file_size") else self.name) + "_mb"


def _s(name: str | None, kinds: Iterable[str], default: Any, parse: p.Parser, unit: str, doc: str,
       hudi: str | None = None, type: Any = None, maintenance: str | None = None,  # noqa: A002
       identity: str | None = None, **hudi_kind: Any) -> Setting:
    return Setting(name, tuple(kinds), default, parse, unit, doc, hudi, type, maintenance, identity, **hudi_kind)


_CS = "hoodie.clustering.plan.strategy."
# What a table-identity key must name: the scenario gives each (bench.hoodie_conf.identity), and a
# key that names another is refused, naming both. The record key, ordering field and key generator
# are the workload's (workloads.spec), the table is named after its engine.
IDENTITIES = {"table_name": "the engine's name (each engine's table is named after it)",
              "record_key": "the workload's record key", "partition_column": "the workload's partition column",
              "ordering_field": "the workload's ordering field", "key_generator": "the key generator of the "
              "workload's one record-key column and one partition column"}
SIMPLE_KEY_GENERATOR = "org.apache.hudi.keygen.SimpleKeyGenerator"
SIZE_PLAN_STRATEGY = "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
RECENT_DAYS_PLAN_STRATEGY = ("org.apache.hudi.client.clustering.plan.strategy."
                             "SparkRecentDaysClusteringPlanStrategy")  # Hudi 0.12's; gone from 1.2
SORT_AND_SIZE_EXECUTION = "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
_IDENTIFIED = (*(COW, O1, AO, O2, O2M), HUDI)


def keep_min_commits(retained: int) -> int:
    """Real Hudi's archiver floor: above the cleaner's retention (Hudi requires it), at least 20."""
    return max(20, retained + 1)

_SIZED = (COW, O1, AO, O2, O2M, DELTA, HUDI)
_O2S = (O2, O2M)  # the keys Option 2 has on both table types
_O1S = (O1, AO)  # Option 1's ingest settings, which the control (APPEND ingest, never maintained) honours too
_BLOOMED = OURS  # real Hudi takes the hoodie.* keys, passed through
_STR_OPT = str | None
_COLS = tuple[str, ...]
_COLS_OPT = tuple[str, ...] | None

SETTINGS: tuple[Setting, ...] = (
    # -- file sizes ------------------------------------------------------------------------------
    _s("small_file_limit", (COW, O1, DELTA, HUDI), 100 * MB, p.non_negative, "bytes",
       "files below this are small: the baseline's inserts top them up, Option 1 compacts them, delta-rs "
       "OPTIMIZE picks them (real Hudi's clustering presets: their clustering plan's limit, "
       "hoodie.clustering.plan.strategy.small.file.limit)",
       hudi="hoodie.parquet.small.file.limit", type=int, hudi_for=((CLUSTERING_PRESETS, _CS + "small.file.limit"),)),
    _s("small_file_limit", _O2S, 300 * MB, p.non_negative, "bytes",
       "files below this are clustered", hudi=_CS + "small.file.limit", type=int),
    _s(None, (O2,), 0, p.zero_only("Option 2 inserts never merge into small files (the article's setting is 0)"),
       "bytes", "fixed at 0: Option 2's inserts never top up a small file", hudi="hoodie.parquet.small.file.limit"),
    _s(None, (HUDI,), 0, p.non_negative, "bytes",
       "real Hudi's clustering presets write 0 (Option 2 as shipped: inserts never top up a small file); "
       "another value is passed to Hudi", hudi="hoodie.parquet.small.file.limit", presets=CLUSTERING_PRESETS,
       writes=True),
    _s("insert_small_file_limit", (O2M,), 0, p.non_negative, "bytes",
       "MERGE_ON_READ inserts: 0 writes them to new base files; above 0 appends them as log blocks to the "
       "smallest base-only file groups below it (Hudi's MOR small-file handling)",
       hudi="hoodie.parquet.small.file.limit", type=int),
    _s("small_file_group_candidates", (O2M,), 1, p.positive, "count",
       "MERGE_ON_READ inserts: small file groups per partition that take inserts in one deltacommit",
       hudi="hoodie.merge.small.file.group.candidates.limit"),
    _s(None, (O2M, HUDI), "MERGE_ON_READ",
       p.fixed("MERGE_ON_READ", "this kind writes MERGE_ON_READ tables", fold=str.upper),
       "name", "MERGE_ON_READ", hudi="hoodie.datasource.write.table.type", presets=MOR_PRESETS, writes=True),
    _s("max_file_size", _SIZED, 120 * MB, p.positive, "bytes", "the size an insert rolls a new file at",
       hudi="hoodie.parquet.max.file.size", type=int),
    _s("target_file_size", (*_O2S, HUDI), 1024 * MB, p.positive, "bytes",
       "the size of a clustering group's output files", hudi=_CS + "target.file.max.bytes", type=int,
       presets=CLUSTERING_PRESETS),
    _s("target_file_size", (O1,), 120 * MB, p.positive, "bytes",
       "a compaction's outputs are evenly sized, each at most this (Hudi's max file size sets it too)",
       hudi="hoodie.parquet.max.file.size", type=int),
    _s("target_file_size", (DELTA,), 120 * MB, p.positive, "bytes", "OPTIMIZE's target file size", type=int),
    _s("max_bytes_per_group", _O2S, 2048 * MB, p.positive, "bytes", "a clustering group reads at most this",
       hudi=_CS + "max.bytes.per.group", type=int),
    _s("max_bytes_per_operation", (O1,), None, p.optional_positive, "bytes",
       "split a partition's small files into several compaction operations of at most this", type=int | None),
    _s("row_group_rows", (COW, O1, AO, *_O2S, DELTA), 65_536, p.positive, "rows",
       "rows per Parquet row group our writers write"),
    # -- how an insert cuts a batch into files (Hudi's UpsertPartitioner) ----------------------------
    _s("record_size_estimate", (COW, O2, HUDI), 1024, p.positive, "bytes/record",
       "the average record size before a commit wrote enough to measure it",
       hudi="hoodie.copyonwrite.record.size.estimate"),
    _s(None, _O1S, None, p.refused("Option 1's appends roll files at real bytes written, not at a record-size "
                                   "estimate"), "bytes/record", "not Option 1's: its appends roll at real bytes",
       hudi="hoodie.copyonwrite.record.size.estimate"),
    _s("record_size_estimation_threshold", (COW, O2), 1.0, p.number, "ratio",
       "a commit measures the record size once it wrote more than this x the small-file limit",
       hudi="hoodie.record.size.estimation.threshold"),
    _s("insert_split_size", (COW, O2), 500_000, p.positive, "records",
       "records per new bucket when auto split is off", hudi="hoodie.copyonwrite.insert.split.size"),
    _s("auto_split_inserts", (COW, O2), True, p.boolean, "bool",
       "size new buckets from the max file size and the record size", hudi="hoodie.copyonwrite.insert.auto.split"),
    _s("insert_split", (O2,), "hudi", p.choice("hudi", "bytes"), "name",
       "hudi: UpsertPartitioner's buckets; bytes: one file per partition and task, rolled at the max file size"),
    # -- the clustering plan -------------------------------------------------------------------------
    _s("max_num_groups", _O2S, 30, p.positive, "count", "clustering groups per plan at most",
       hudi=_CS + "max.num.groups"),
    _s("sort_columns", (*_O2S, HUDI), (), p.columns, "columns", "the columns a clustering sorts its groups by",
       hudi=_CS + "sort.columns", type=_COLS, presets=CLUSTERING_PRESETS),
    _s("sort_columns", (*_O1S, DELTA), (), p.columns, "columns",
       "Option 1: ingest and compaction sort by these; delta-rs: OPTIMIZE Z-ORDER by these", type=_COLS),
    _s("single_group_clustering_enabled", _O2S, True, p.boolean, "bool",
       "a group of one file is clustered (0.14+)", hudi=_CS + "single.group.clustering.enabled"),
    _s("partition_filter_mode", _O2S, "NONE", p.choice("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", fold=str.upper),
       "name", "which partitions a plan considers", hudi="hoodie.clustering.plan.partition.filter.mode"),
    _s("lookback_partitions", _O2S, 2, p.non_negative, "partitions", "RECENT_DAYS: this many latest partitions",
       hudi=_CS + "daybased.lookback.partitions"),
    _s("skip_from_latest_partitions", _O2S, 0, p.non_negative, "partitions", "RECENT_DAYS: skip this many latest",
       hudi=_CS + "daybased.skipfromlatest.partitions"),
    _s("begin_partition", _O2S, None, p.optional_text, "partition", "SELECTED_PARTITIONS: from this partition",
       hudi=_CS + "cluster.begin.partition", type=_STR_OPT),
    _s("end_partition", _O2S, None, p.optional_text, "partition", "SELECTED_PARTITIONS: to this partition",
       hudi=_CS + "cluster.end.partition", type=_STR_OPT),
    _s("partitions", (*_O2S, O1), None, p.optional_columns, "partitions", "only these partitions",
       hudi=_CS + "partition.selected", type=_COLS_OPT, hudi_kinds=_O2S),
    _s("partition_regex", (*_O2S, O1), None, p.optional_text, "regex", "only partitions fully matching this",
       hudi=_CS + "partition.regex.pattern", type=_STR_OPT, hudi_kinds=_O2S),
    _s("grouping", _O2S, None, p.choice("size", "sort_overlap", "key_range", "commit_time", optional=True), "name",
       "how files are grouped; none: sort_overlap with sort columns, else size", type=_STR_OPT),
    # -- the clustering executor ---------------------------------------------------------------------
    _s("ordering", (O2,), None,
       p.choice("none", "linear", "zorder", "hilbert", fold=lambda s: s.lower().replace("-", "").replace("_", ""),
                optional=True),
       "name", "how a sorted group is laid out (Hudi's spellings: linear, z-order, ZORDER, hilbert); "
       "none: linear with sort columns", hudi="hoodie.layout.optimize.strategy", type=_STR_OPT),
    _s("max_parallel_groups", (O2,), 2, p.positive, "count", "groups rewritten at once",
       hudi="hoodie.clustering.max.parallelism"),
    _s("preserve_commit_metadata", _O2S, True, p.boolean, "bool", "rewritten rows keep their commit time",
       hudi="hoodie.clustering.preserve.commit.metadata"),
    _s("update_strategy", (O2,), "reject",
       p.class_or_short((("reject", "SparkRejectUpdateStrategy"), ("allow", "SparkAllowUpdateStrategy"))),
       "name", "an update to a file group under clustering is refused (reject) or written (allow)",
       hudi="hoodie.clustering.updates.strategy"),
    _s("clustering_split", (O2,), "even", p.choice("even", "hudi"), "name",
       "an unsorted group's rows: even runs (ours) or whole input files in plan order (Apache Hudi 1.2)"),
    # -- when services run (the engine's own modes; a scenario's maintenance section sets manual) ------
    _s("mode", (COW, DELTA), "manual", p.choice("manual"), "name", "no table service of its own to schedule"),
    _s("mode", (O1,), "manual", p.choice("inline", "async", "manual"), "name", "when the engine compacts by itself"),
    _s("mode", (O2,), "manual", p.choice("inline", "async", "schedule_inline", "manual"), "name",
       "when the engine clusters by itself"),
    _s("mode", (HUDI,), "manual", p.choice("manual", "inline", "async", "schedule_inline"), "name",
       "when Apache Hudi clusters (hoodie.clustering.inline / .schedule.inline / .async.enabled)",
       presets=CLUSTERING_PRESETS),
    _s("inline_every", (O1,), 10, p.positive, "commits", "inline mode: compact every this many commits"),
    _s("inline_every", (HUDI,), 4, p.positive, "commits",
       "hoodie.clustering.inline.max.commits and .async.max.commits", presets=CLUSTERING_PRESETS),
    _s("inline_max_commits", _O2S, 4, p.positive, "commits", "inline mode: cluster every this many commits"),
    _s("async_max_commits", (O2,), 4, p.positive, "commits", "async mode: schedule after this many commits"),
    _s("mode", (O2M,), "manual", p.choice("inline", "manual"), "name",
       "inline: the engine clusters every inline_max_commits commits by itself (compaction: compaction_inline)"),
    _s("compact_max_delta_commits", (O2M, HUDI), 5, p.positive, "deltacommits",
       "MERGE_ON_READ: schedule a compaction once this many deltacommits completed since the last one",
       hudi="hoodie.compact.inline.max.delta.commits", presets=MOR_PRESETS),
    _s("compaction_inline", (O2M,), True, p.boolean, "bool",
       "compact inside the writer after the deltacommit that makes one due (false: only a maintenance round's "
       "execute runs a pending compaction)", hudi="hoodie.compact.inline"),
    _s(None, (HUDI,), True, p.fixed("true", "real Hudi's MERGE_ON_READ presets compact inside the write every "
                                    "compact_max_delta_commits deltacommits (no maintenance round compacts them): "
                                    "false would leave every log file uncompacted"),
       "bool", "real Hudi's MERGE_ON_READ presets compact inline", hudi="hoodie.compact.inline",
       presets=MOR_PRESETS, writes=True),
    _s(None, (HUDI,), "NUM_COMMITS",
       p.fixed("NUM_COMMITS", "the MERGE_ON_READ presets compact every compact_max_delta_commits deltacommits, as "
                              "clustering_mor does", fold=str.upper),
       "name", "compaction is due after hoodie.compact.inline.max.delta.commits deltacommits",
       hudi="hoodie.compact.inline.trigger.strategy", presets=MOR_PRESETS, writes=True),
    _s(None, (HUDI,), False, p.fixed("false", "a batch write compacts inline; Hudi's datasource runs async "
                                     "compaction only inside its streaming sink"),
       "bool", "off: a batch write compacts inline", hudi="hoodie.datasource.compaction.async.enable",
       presets=MOR_PRESETS, writes=True),
    _s("schedule_rules", (O2,), "0.12.1", p.choice("0.12.1", "1.2"), "name",
       "whose scheduling gates: the article's Hudi 0.12.1 or Apache Hudi 1.2 (no Hudi key says this)"),
    _s("async_interval_s", (O1,), 2.0, p.number, "seconds", "async mode: the service's poll period"),
    _s("async_interval_s", (O2,), 1.0, p.number, "seconds", "async mode: the service's poll period"),
    _s("async_interval_s", (HUDI,), 5.0, p.number, "seconds", "async mode: the service thread's poll period",
       presets=CLUSTERING_PRESETS),
    _s(None, (O1, *_O2S, HUDI), False, p.boolean, "bool", "inline clustering: the maintenance section's mode inline",
       hudi="hoodie.clustering.inline", maintenance="inline", presets=CLUSTERING_PRESETS,
       derive=lambda c: c.mode == "inline"),
    _s(None, (O1, *_O2S, HUDI), False, p.boolean, "bool",
       "semi-async clustering: the maintenance section's mode schedule_inline",
       hudi="hoodie.clustering.schedule.inline", maintenance="schedule_inline", presets=CLUSTERING_PRESETS,
       derive=lambda c: c.mode == "schedule_inline"),
    _s(None, (O1, *_O2S, HUDI), False, p.boolean, "bool", "async clustering: the maintenance section's mode async",
       hudi="hoodie.clustering.async.enabled", maintenance="async", presets=CLUSTERING_PRESETS,
       derive=lambda c: c.mode == "async"),
    _s(None, (O1, *_O2S, HUDI), 4, p.positive, "commits",
       "inline: must equal maintenance.every_commits; refused in another mode (nothing would read it)",
       hudi="hoodie.clustering.inline.max.commits", maintenance="commits", counts_for=("inline", "every_commits"),
       presets=CLUSTERING_PRESETS,
       derive=lambda c: c.inline_every),
    _s(None, (O1, *_O2S, HUDI), 4, p.positive, "commits",
       "async: must equal maintenance.async_max_commits (the async service waits for that many commits after "
       "the last maintenance); refused in another mode (semi-async schedules after every commit)",
       hudi="hoodie.clustering.async.max.commits", maintenance="commits",
       counts_for=("async", "async_max_commits"), presets=CLUSTERING_PRESETS,
       derive=lambda c: c.inline_every),
    # -- Option 1 ------------------------------------------------------------------------------------
    _s("order", (O1,), "rfc", p.choice("rfc", "commit_before_delete"), "name",
       "rfc: delete the old files, then commit (the RFC's steps); commit_before_delete: the reverse"),
    _s("cbd_delete", (O1,), "cleaner", p.choice("cleaner", "immediate"), "name",
       "commit_before_delete: the replaced files go with the cleaner, or right after the commit"),
    _s("max_parallel_operations", (O1,), 2, p.positive, "count", "compaction operations rewritten at once"),
    _s("preserve_commit_time", (O1,), False, p.boolean, "bool",
       "compacted rows keep their _hoodie_commit_time (as clustering's preserve.commit.metadata); off: re-stamped, "
       "and an incremental pull re-emits them"),
    _s("min_files_per_partition", (O1,), 2, p.positive, "count", "a partition with fewer small files is skipped"),
    # -- cleaning --------------------------------------------------------------------------------------
    _s("cleaner_commits_retained", (COW, O1, O2, O2M, DELTA, HUDI), 10, p.positive, "commits",
       "KEEP_LATEST_COMMITS: files a reader of the last this many commits needs are kept",
       hudi="hoodie.cleaner.commits.retained"),
    _s("auto_clean", (COW, *_O2S, HUDI), True, p.boolean, "bool", "clean after each commit", hudi="hoodie.clean.automatic"),
    # -- the footer bloom filter (engines.table.bloom) -------------------------------------------------
    _s("bloom_filter", _BLOOMED, True, p.boolean, "bool", "every base file carries Hudi's record-key bloom filter",
       hudi="hoodie.parquet.bloom.filter.enabled"),
    _s("bloom_filter_type", _BLOOMED, "DYNAMIC_V0", p.choice(*BLOOM_TYPES, fold=str.upper), "name",
       "the filter's type", hudi="hoodie.bloom.index.filter.type"),
    _s("bloom_num_entries", _BLOOMED, 60_000, p.positive, "keys", "keys one filter row is sized for",
       hudi="hoodie.index.bloom.num_entries"),
    _s("bloom_fpp", _BLOOMED, 1e-9, p.fraction, "ratio", "the filter's false-positive rate",
       hudi="hoodie.index.bloom.fpp"),
    _s("bloom_dynamic_max_entries", _BLOOMED, 100_000, p.positive, "keys", "DYNAMIC_V0: keys at most",
       hudi="hoodie.bloom.index.filter.dynamic.max.entries"),
    # -- the writers --------------------------------------------------------------------------------
    _s("operation", (COW,), "insert", p.choice("insert", "bulk_insert", fold=str.lower), "name",
       "insert: Hudi's small-file handling; bulk_insert: new files only (a reference point)",
       hudi="hoodie.datasource.write.operation"),
    _s("operation", (HUDI,), None, p.choice("insert", "upsert", "bulk_insert", fold=str.lower, optional=True), "name",
       "the write operation; none: the preset's (upsert for hudi_cow and hudi_mor, insert for the clustering ones)",
       hudi="hoodie.datasource.write.operation", type=_STR_OPT,
       derive=lambda c: c.operation or ("insert" if c.preset in CLUSTERING_PRESETS else "upsert")),
    _s("min_files", (DELTA,), 2, p.at_least(2, "one file cannot be compacted"), "count", "OPTIMIZE compacts a partition with at least this many files"),
    _s("compression", (DELTA,), "SNAPPY", p.choice("SNAPPY", fold=str.upper), "name",
       "the Parquet codec (as every engine's, for a fair comparison)"),
    # -- Apache Hudi itself -------------------------------------------------------------------------
    _s("preset", (HUDI,), "hudi_cow", p.choice(*PRESET_NAMES),
       "name", "hudi_cow: upsert with small-file handling; hudi_clustering: insert and clustering (Option 2 as "
       "shipped); hudi_mor: MERGE_ON_READ upsert, updates to log files, inline compaction; hudi_mor_clustering: "
       "MERGE_ON_READ, inserts to new base files, updates to log files, clustering and inline compaction"),
    _s("metadata_table", (HUDI,), False, p.boolean, "bool", "Hudi's metadata table", hudi="hoodie.metadata.enable"),
    _s("stream_sink", (HUDI,), "foreach_batch", p.choice("foreach_batch", "hudi"), "name",
       "layoutbench stream: our foreachBatch writer, or Hudi's own streaming sink"),
    _s(None, _IDENTIFIED, "snappy",
       p.fixed("snappy", "every engine writes snappy: another codec would undo the fair comparison"), "name",
       "every engine writes snappy; another codec would undo the fair comparison",
       hudi="hoodie.parquet.compression.codec", writes=True),
    # -- the table's identity: accepted when it names the scenario's, refused naming both otherwise -----
    *(_s(None, _IDENTIFIED, None, p.text, unit, doc, hudi=key, identity=ident,
         writes=key != "hoodie.datasource.write.table.name") for key, ident, unit, doc in (
        ("hoodie.table.name", "table_name", "name", "the table's name: the engine's"),
        ("hoodie.datasource.write.table.name", "table_name", "name", "the table's name: the engine's"),
        ("hoodie.datasource.write.recordkey.field", "record_key", "column", "the record key: the workload's trace_id"),
        ("hoodie.datasource.write.partitionpath.field", "partition_column", "column",
         "the partition column: the workload's partition_column"),
        ("hoodie.datasource.write.precombine.field", "ordering_field", "column", "the ordering field: ts"),
        ("hoodie.datasource.write.keygenerator.class", "key_generator", "class",
         "SimpleKeyGenerator (one record-key column, one partition column)"),
    )),
    _s(None, (HUDI,), "COPY_ON_WRITE", p.fixed("COPY_ON_WRITE", "the hudi kind writes copy-on-write tables; "
                                               "MERGE_ON_READ is the kinds hudi_mor and hudi_mor_clustering (the "
                                               "report pairs engines by kind)", fold=str.upper),
       "name", "COPY_ON_WRITE", hudi="hoodie.datasource.write.table.type", presets=COW_PRESETS, writes=True),
    _s(None, (HUDI,), True, p.fixed("true", "our tables' partition folders are hive-style (dt=...), as the "
                                    "readers expect"), "bool", "hive-style partition folders, as ours",
       hudi="hoodie.datasource.write.hive_style_partitioning", writes=True),
    # -- the clustering strategies: the ones our planner and executor are --------------------------------
    _s(None, _O2S, SIZE_PLAN_STRATEGY,
       p.implemented_class((SIZE_PLAN_STRATEGY, RECENT_DAYS_PLAN_STRATEGY), "the clustering plan strategies we "
                           "implement are SparkSizeBasedClusteringPlanStrategy and Hudi 0.12's "
                           "SparkRecentDaysClusteringPlanStrategy (SELECTED_PARTITIONS is "
                           "hoodie.clustering.plan.partition.filter.mode)"),
       "class", "the size-based plan strategy (our planner); the recent-days one is it with "
       "partition_filter_mode RECENT_DAYS", hudi=_CS + "class",
       implies=((RECENT_DAYS_PLAN_STRATEGY, (("partition_filter_mode", "RECENT_DAYS"),)),)),
    _s(None, (HUDI,), SIZE_PLAN_STRATEGY,
       p.implemented_class((SIZE_PLAN_STRATEGY,), "real Hudi's clustering plan strategy here is "
                           "SparkSizeBasedClusteringPlanStrategy (Apache Hudi 1.2 has no "
                           "SparkRecentDaysClusteringPlanStrategy: RECENT_DAYS and SELECTED_PARTITIONS are "
                           "hoodie.clustering.plan.partition.filter.mode)"),
       "class", "the size-based plan strategy, Hudi's default", hudi=_CS + "class", presets=CLUSTERING_PRESETS),
    _s(None, (*_O2S, HUDI), SORT_AND_SIZE_EXECUTION,
       p.implemented_class((SORT_AND_SIZE_EXECUTION,), "the clustering execution strategy we implement is "
                           "SparkSortAndSizeExecutionStrategy"),
       "class", "sort (by the sort columns) and size the groups' outputs (our executor)",
       hudi="hoodie.clustering.execution.strategy.class", presets=CLUSTERING_PRESETS),
    *(_s(None, (HUDI,), None, p.positive, "tasks", f"Spark tasks of Hudi's {op} shuffle (Hudi's quick-start "
         "sets 2)", hudi=f"hoodie.{op}.shuffle.parallelism") for op in ("insert", "upsert", "bulkinsert", "delete")),
    # real Hudi only, checked against the values Apache Hudi 1.2 implements (its enums, read from the bundle)
    _s(None, (HUDI,), 6, p.choice("6", "8", "9"), "version",
       "the table version Hudi writes: 6, as ours (Hudi 1.2 writes 6, 8 and 9)",
       hudi="hoodie.write.table.version", writes=True),
    _s(None, (HUDI,), False, p.boolean, "bool", "off: no network server on the driver",
       hudi="hoodie.embed.timeline.server", writes=True),
    _s(None, (HUDI,), "DIRECT", p.choice("DIRECT", "TIMELINE_SERVER_BASED", fold=str.upper), "name",
       "markers written directly (no timeline server)", hudi="hoodie.write.markers.type", writes=True),
    _s(None, (HUDI,), "KEEP_LATEST_COMMITS",
       p.choice("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS", fold=str.upper),
       "name", "the cleaner keeps the files of the last cleaner_commits_retained commits",
       hudi="hoodie.cleaner.policy", writes=True),
    _s(None, (HUDI,), None, p.positive, "commits",
       "the archiver keeps at least this many commits (written: max(20, cleaner_commits_retained + 1))",
       hudi="hoodie.keep.min.commits", derive=lambda c: keep_min_commits(c.cleaner_commits_retained)),
    _s(None, (HUDI,), None, p.positive, "commits",
       "the archiver keeps at most this many commits (written: hoodie.keep.min.commits + 10)",
       hudi="hoodie.keep.max.commits", derive=lambda c: keep_min_commits(c.cleaner_commits_retained) + 10),
    _s(None, (HUDI,), None, p.choice("INMEMORY", "BLOOM", "GLOBAL_BLOOM", "SIMPLE", "GLOBAL_SIMPLE", "BUCKET",
                                     "FLINK_STATE", "RECORD_INDEX", "GLOBAL_RECORD_LEVEL_INDEX",
                                     "RECORD_LEVEL_INDEX", fold=str.upper),
       "name", "the writer's index (Hudi's default)", hudi="hoodie.index.type"),
    _s(None, (HUDI,), 120 * MB, p.positive, "bytes", "Parquet row-group size (Hudi's default; not written)",
       hudi="hoodie.parquet.block.size"),
    _s(None, (HUDI,), None, p.choice("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
                                     "PARTITION_PATH_REPARTITION_AND_SORT", fold=str.upper),
       "name", "bulk_insert's sort", hudi="hoodie.bulkinsert.sort.mode"),
    # Hudi's streaming sink (layoutbench stream with stream_sink hudi): written into the sink's options
    _s(None, (HUDI,), "layoutbench", p.text, "name", "the streaming sink's writer id (the foreachBatch writer's)",
       hudi="hoodie.datasource.write.streaming.checkpoint.identifier", stream=True),
    _s(None, (HUDI,), False, p.fixed("false", "a failed micro-batch must fail the stream: skipping it would lose "
                                     "its rows"), "bool", "false: a failed micro-batch fails",
       hudi="hoodie.datasource.write.streaming.ignore.failed.batch", stream=True),
)

INSERT_SIZING = ("record_size_estimate", "record_size_estimation_threshold", "insert_split_size", "auto_split_inserts")
BLOOM = ("bloom_filter", "bloom_filter_type", "bloom_num_entries", "bloom_fpp", "bloom_dynamic_max_entries")


def declare(keys: Iterable[Setting]) -> None:
    """Add the config keys an engine kind's registry entry declares (engines.kinds.register)."""
    global SETTINGS
    SETTINGS = SETTINGS + tuple(s for s in keys if s not in SETTINGS)


def withdraw(keys: Iterable[Setting]) -> None:
    """Remove keys :func:`declare` added (engines.kinds.unregister)."""
    global SETTINGS
    gone = set(map(id, keys))
    SETTINGS = tuple(s for s in SETTINGS if id(s) not in gone)


def setting(name: str, kind: str | None = None) -> Setting:
    """The entry of shorthand ``name`` for ``kind`` (any kind when the name has one meaning)."""
    found = [s for s in SETTINGS if s.name == name and (kind is None or kind in s.kinds)]
    if len(found) != 1:
        raise KeyError(f"{name!r} has {len(found)} entries" + (f" for kind {kind!r}" if kind else ""))
    return found[0]


def default(name: str, kind: str | None = None) -> Any:
    return setting(name, kind).default


def for_kind(kind: str) -> dict[str, Setting]:
    """The shorthands ``kind`` takes, by name."""
    return {s.name: s for s in SETTINGS if s.name is not None and kind in s.kinds}


def hudi_keys(kind: str) -> dict[str, list[Setting]]:
    """The ``hoodie.*`` keys ``kind`` reads, each with the entries it sets (real Hudi: every key here)."""
    out: dict[str, list[Setting]] = {}
    for s in SETTINGS:
        if s.hudi is not None and (kind == HUDI or kind in (s.hudi_kinds or s.kinds)):
            out.setdefault(s.hudi, []).append(s)
    return out


def hudi_preset_keys(preset: str) -> dict[str, Setting]:
    """Real Hudi's own entries under ``preset``, by the key each goes to: what the engine writes
    (:func:`engines.hudi.config.hoodie_options`) and what checks a key under that preset."""
    out: dict[str, Setting] = {}
    for s in SETTINGS:
        key = s.hudi_key(preset)
        if HUDI in s.kinds and key is not None and s.honoured_by(preset):
            if key in out:
                raise ValueError(f"{key} has two entries of the hudi kind under preset {preset!r}")
            out[key] = s
    return out


def hudi_default(key: str) -> Any:
    """The default of Hudi key ``key`` (its first entry's): for prose that quotes Hudi's defaults."""
    return next(s.default for s in SETTINGS if s.hudi == key)


def hudi_names() -> list[str]:
    return sorted({s.hudi for s in SETTINGS if s.hudi is not None})


def settings(*names: str, kind: str | None = None, frozen: bool = False, exclude: Iterable[str] = ()) -> type:
    """A dataclass holding the fields ``names`` — without names, every shorthand of ``kind`` but
    ``exclude`` — with the registry's types and defaults (``kind``'s entries): the base an engine's
    config class derives from, so it declares none of them, and a new key of the kind is a new field."""
    if not names:
        if kind is None:
            raise ValueError("settings() needs names or a kind")
        names = tuple(n for n in for_kind(kind) if n not in set(exclude))
    specs = []
    for name in names:
        s = setting(name, kind)
        value = field(default_factory=lambda d=s.default: type(d)(d)) if isinstance(s.default, list | dict) \
            else field(default=s.default, metadata={"setting": s})
        specs.append((name, s.annotation, value))
    return make_dataclass(f"Settings_{kind or 'shared'}", specs, frozen=frozen,
                          namespace={"check_settings": check_settings, "__post_init__": check_settings})


def check_settings(cfg: Any) -> None:
    """Each registry field of config ``cfg`` through its entry's parser, the one check of a single
    value (``layoutbench validate`` builds every engine's config, so it refuses what the engine
    would). A config class with checks of its own calls this first. ValueError names the field."""
    for f in fields(cfg):
        s = f.metadata.get("setting")
        if s is None:
            continue
        value = getattr(cfg, f.name)
        try:
            s.parse(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{f.name}={value!r}: {exc}") from None


# The write path's function defaults (derived from the entries, not written again).
PARQUET_MAX_FILE_SIZE = default("max_file_size", COW)
ROW_GROUP_ROWS = default("row_group_rows", COW)
