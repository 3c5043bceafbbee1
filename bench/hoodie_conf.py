"""One config language: Apache Hudi's ``hoodie.*`` keys mapped onto our engines' configs.

The same keys configure a scenario's engines (``build_engine``), are checked by ``layoutbench
validate`` (:mod:`bench.scenario`) and configure ``layoutbench service --hoodie-conf``, so a Hudi
config table (the clustering article's) pasted into a scenario drives our engines and real Hudi
alike. A key one of our engines does not implement is refused, naming it; the scenario's own
sizing keys stay as shorthands. Pure: no Spark.

Keys that say *when* table services run (``hoodie.clustering.inline``, ``.schedule.inline``,
``.async.enabled``, ``.inline.max.commits``, ``.async.max.commits``) are the scenario's
``maintenance`` section in our harness, which schedules every engine alike: in a scenario they
are accepted when they agree with it and refused, naming both, when they do not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engines.kinds import KINDS
from engines.table.bloom import TYPES as BLOOM_TYPES

Parser = Callable[[str], Any]
# key -> (planner, engine, both (planner field, engine field) or none, the config fields it sets, parser)
Mapping_ = dict[str, tuple[str, tuple[str, ...], Parser]]


class HoodieConfError(ValueError):
    """A ``hoodie.*`` key or value our engine cannot honour; the message names it."""


def _int(v: Any) -> int:
    return int(float(v)) if isinstance(v, str) else int(v)


def _float(v: Any) -> float:
    return float(v)


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if str(v).lower() not in ("true", "false"):
        raise ValueError(f"expected true or false, got {v!r}")
    return str(v).lower() == "true"


def _columns(v: Any) -> tuple[str, ...]:
    items = v if isinstance(v, list | tuple) else str(v).split(",")
    return tuple(str(c).strip() for c in items if str(c).strip())


def _zero_only(v: Any) -> int:
    if _int(v) != 0:
        raise ValueError("Option 2 inserts never merge into small files (the article's setting is 0); "
                         f"got {v!r}")
    return 0


def _update_strategy(v: Any) -> str:
    name = str(v).rsplit(".", 1)[-1].lower()
    for short, cls in (("reject", "sparkrejectupdatestrategy"), ("allow", "sparkallowupdatestrategy")):
        if name in (short, cls):
            return short
    raise ValueError(f"expected SparkRejectUpdateStrategy or SparkAllowUpdateStrategy, got {v!r}")


def _operation(v: Any) -> str:
    op = str(v).lower()
    if op not in ("insert", "bulk_insert"):
        raise ValueError(f"the baseline writes with insert or bulk_insert, got {v!r}")
    return op


def _bloom_type(v: Any) -> str:
    name = str(v).upper()
    if name not in BLOOM_TYPES:
        raise ValueError(f"expected one of {list(BLOOM_TYPES)}, got {v!r}")
    return name


_CLEAN: Mapping_ = {
    "hoodie.cleaner.commits.retained": ("engine", ("cleaner_commits_retained",), _int),
    # the bloom filter every base file carries in its footer (engines.table.bloom)
    "hoodie.parquet.bloom.filter.enabled": ("engine", ("bloom_filter",), _bool),
    "hoodie.bloom.index.filter.type": ("engine", ("bloom_filter_type",), _bloom_type),
    "hoodie.index.bloom.num_entries": ("engine", ("bloom_num_entries",), _int),
    "hoodie.index.bloom.fpp": ("engine", ("bloom_fpp",), _float),
    "hoodie.bloom.index.filter.dynamic.max.entries": ("engine", ("bloom_dynamic_max_entries",), _int),
}
_CLUSTERING: Mapping_ = {
    "hoodie.clustering.plan.strategy.small.file.limit": ("planner", ("small_file_limit",), _int),
    "hoodie.clustering.plan.strategy.target.file.max.bytes": ("planner", ("target_file_size",), _int),
    "hoodie.clustering.plan.strategy.max.bytes.per.group": ("planner", ("max_bytes_per_group",), _int),
    "hoodie.clustering.plan.strategy.max.num.groups": ("planner", ("max_num_groups",), _int),
    "hoodie.clustering.plan.strategy.sort.columns": ("planner", ("sort_columns",), _columns),
    "hoodie.clustering.plan.strategy.single.group.clustering.enabled": (
        "planner", ("single_group_clustering_enabled",), _bool),
    "hoodie.clustering.plan.partition.filter.mode": ("planner", ("partition_filter_mode",), lambda v: str(v).upper()),
    "hoodie.clustering.plan.strategy.daybased.lookback.partitions": ("planner", ("lookback_partitions",), _int),
    "hoodie.clustering.plan.strategy.daybased.skipfromlatest.partitions": (
        "planner", ("skip_from_latest_partitions",), _int),
    "hoodie.clustering.plan.strategy.cluster.begin.partition": ("planner", ("begin_partition",), str),
    "hoodie.clustering.plan.strategy.cluster.end.partition": ("planner", ("end_partition",), str),
    "hoodie.clustering.plan.strategy.partition.selected": ("planner", ("partitions",), _columns),
    "hoodie.clustering.plan.strategy.partition.regex.pattern": ("planner", ("partition_regex",), str),
    "hoodie.layout.optimize.strategy": ("engine", ("ordering",), lambda v: str(v).lower()),
    "hoodie.clustering.max.parallelism": ("engine", ("max_parallel_groups",), _int),
    "hoodie.clustering.preserve.commit.metadata": ("engine", ("preserve_commit_metadata",), _bool),
    "hoodie.clustering.updates.strategy": ("engine", ("update_strategy",), _update_strategy),
    "hoodie.clean.automatic": ("engine", ("auto_clean",), _bool),
    "hoodie.parquet.max.file.size": ("engine", ("max_file_size",), _int),  # inserts cut new files by it
    "hoodie.parquet.small.file.limit": ("none", (), _zero_only),
    # how the insert cuts a batch into new files (Hudi's UpsertPartitioner, small-file limit 0)
    "hoodie.copyonwrite.record.size.estimate": ("engine", ("record_size_estimate",), _int),
    "hoodie.record.size.estimation.threshold": ("engine", ("record_size_estimation_threshold",), _float),
    "hoodie.copyonwrite.insert.split.size": ("engine", ("insert_split_size",), _int),
    "hoodie.copyonwrite.insert.auto.split": ("engine", ("auto_split_inserts",), _bool),
    **_CLEAN,
}
_COMPACTION: Mapping_ = {
    "hoodie.parquet.small.file.limit": ("planner", ("small_file_limit",), _int),
    # as in Hudi's copy-on-write: the size inserts roll at and the size small files are merged up to
    "hoodie.parquet.max.file.size": ("both", ("target_file_size", "max_file_size"), _int),
    **_CLEAN,
}
_COW: Mapping_ = {
    "hoodie.parquet.small.file.limit": ("planner", ("small_file_limit",), _int),
    "hoodie.parquet.max.file.size": ("planner", ("max_file_size",), _int),
    "hoodie.copyonwrite.record.size.estimate": ("planner", ("record_size_estimate",), _int),
    "hoodie.record.size.estimation.threshold": ("planner", ("record_size_estimation_threshold",), _float),
    "hoodie.copyonwrite.insert.split.size": ("planner", ("insert_split_size",), _int),
    "hoodie.copyonwrite.insert.auto.split": ("planner", ("auto_split_inserts",), _bool),
    "hoodie.datasource.write.operation": ("engine", ("operation",), _operation),
    "hoodie.clean.automatic": ("engine", ("auto_clean",), _bool),
    **_CLEAN,
}
# the bloom keys and the engine field each sets (every kind of ours takes them)
BLOOM_KEYS: dict[str, str] = {k: v[1][0] for k, v in _CLEAN.items() if "bloom" in k}
# the maps, by the name a kind's registry entry gives (engines.kinds.EngineKind.hoodie_keys)
KEYS: dict[str, Mapping_] = {"clustering": _CLUSTERING, "compaction": _COMPACTION, "cow": _COW}

# When services run: the scenario's maintenance section (mode the key turns on, or None).
SCHEDULE_KEYS: dict[str, str | None] = {
    "hoodie.clustering.inline": "inline",
    "hoodie.clustering.schedule.inline": "schedule_inline",
    "hoodie.clustering.async.enabled": "async",
    "hoodie.clustering.inline.max.commits": None,
    "hoodie.clustering.async.max.commits": None,
}
# Why a key Hudi has is not one of ours, where that is worth saying.
NOT_OURS: dict[tuple[str, str], str] = {
    ("compaction", "hoodie.copyonwrite.record.size.estimate"): "Option 1's appends roll files at real "
    "bytes written, not at a record-size estimate",
}


def is_hoodie(key: str) -> bool:
    return key.startswith("hoodie.")


def split_hoodie(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the ``hoodie.*`` keys of ``config``, the rest: our own shorthands)."""
    return ({k: v for k, v in config.items() if is_hoodie(k)}, {k: v for k, v in config.items() if not is_hoodie(k)})


def keys_of(kind: str) -> Mapping_ | None:
    """The ``hoodie.*`` map engine kind ``kind`` takes (None: it takes none of ours)."""
    entry = KINDS.get(kind)
    return KEYS[entry.hoodie_keys] if entry is not None and entry.hoodie_keys else None


def known_keys(kind: str) -> list[str]:
    return sorted(keys_of(kind) or {})


def translate(kind: str, conf: Mapping[str, Any], where: str = "",
              schedule: tuple[str, int] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``conf``'s ``hoodie.*`` keys as (planner config fields, engine config fields) for ``kind``.

    ``schedule`` is the scenario's (maintenance mode, every_commits): the scheduling keys must agree
    with it; without it (the service, whose --mode decides) they are refused like any key we do
    not implement. Raises :class:`HoodieConfError` naming the first bad key."""
    keys = keys_of(kind)
    prefix = f"{where}: " if where else ""
    if keys is None:
        raise HoodieConfError(f"{prefix}engine kind {kind!r} takes no hoodie.* keys")
    planner: dict[str, Any] = {}
    engine: dict[str, Any] = {}
    for key, value in conf.items():
        if key in SCHEDULE_KEYS and schedule is not None and keys is not _COW:  # the baseline schedules nothing
            _check_schedule(key, value, schedule, prefix)
            continue
        if key not in keys:
            why = NOT_OURS.get((KINDS[kind].hoodie_keys, key))
            raise HoodieConfError(f"{prefix}{key}: not a key our {kind} engine implements"
                                  + (f" ({why})" if why else "") + f"; known: {', '.join(known_keys(kind))}")
        target, fields, parse = keys[key]
        try:
            parsed = parse(value)
        except (TypeError, ValueError) as exc:
            raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None
        if target == "both":  # the planner's field, then the engine's
            planner[fields[0]], engine[fields[1]] = parsed, parsed
        elif target != "none":
            for name in fields:
                (planner if target == "planner" else engine)[name] = parsed
    return planner, engine


def bloom_fields(conf: Mapping[str, Any]) -> dict[str, Any]:
    """The bloom keys of ``conf`` (the others ignored) as engine config fields: every kind of ours
    takes them alike, and Apache Hudi's ``options`` carry them too."""
    out: dict[str, Any] = {}
    for key, value in conf.items():
        if key in BLOOM_KEYS:
            try:
                out[BLOOM_KEYS[key]] = _CLEAN[key][2](value)
            except (TypeError, ValueError) as exc:
                raise HoodieConfError(f"{key}={value}: {exc}") from None
    return out


def _check_schedule(key: str, value: Any, schedule: tuple[str, int], prefix: str) -> None:
    mode, every = schedule
    try:
        if SCHEDULE_KEYS[key] is not None:
            on = _bool(value)
            if on != (mode == SCHEDULE_KEYS[key]):
                raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.mode "
                                      f"{mode!r} (the maintenance section schedules every engine)")
            return
        n = _int(value)
    except ValueError as exc:
        raise HoodieConfError(f"{prefix}{key}={value}: {exc}") from None
    if key == "hoodie.clustering.inline.max.commits" and mode == "inline" and n != every:
        raise HoodieConfError(f"{prefix}{key}={value} disagrees with the scenario's maintenance.every_commits "
                              f"{every} (the maintenance section schedules every engine)")
    if key == "hoodie.clustering.async.max.commits" and mode == "async":
        raise HoodieConfError(f"{prefix}{key}: the harness's async service runs every "
                              "maintenance.async_interval_s, not after a number of commits")


def clustering_job_gates(conf: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """For ``service --design clustering`` (HoodieClusteringJob): the scheduling keys as the gates
    Hudi's ``ClusteringPlanActionExecutor`` applies to a schedule — with ``hoodie.clustering.inline``
    or ``.async.enabled`` true, no plan until that many commits (``.inline.max.commits`` /
    ``.async.max.commits``, default 4) followed the last clustering. ``.schedule.inline`` does not
    gate a job's schedule. Returns (the other keys, {gating key: commits needed})."""
    rest = {k: v for k, v in conf.items() if k not in SCHEDULE_KEYS}
    try:
        on = {flag: _bool(conf.get(flag, False)) for flag in ("hoodie.clustering.inline", "hoodie.clustering.async.enabled")}
        counts = {k: _int(conf.get(k, 4)) for k in ("hoodie.clustering.inline.max.commits",
                                                  "hoodie.clustering.async.max.commits")}
        _bool(conf.get("hoodie.clustering.schedule.inline", False))
    except ValueError as exc:
        bad = next(k for k in SCHEDULE_KEYS if k in conf)
        raise HoodieConfError(f"{bad}: {exc}") from None
    gates = {}
    if on["hoodie.clustering.inline"]:
        gates["hoodie.clustering.inline.max.commits"] = counts["hoodie.clustering.inline.max.commits"]
    if on["hoodie.clustering.async.enabled"]:
        gates["hoodie.clustering.async.max.commits"] = counts["hoodie.clustering.async.max.commits"]
    return rest, gates
