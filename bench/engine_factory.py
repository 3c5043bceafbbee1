"""Build an engine from a scenario's engine entry, from its line in the registry of kinds
(:mod:`engines.kinds`).

The scenario's shared ``sizing`` gives every engine the same small-file limit, target/max file
size, row-group size and cleaner retention; an engine's own ``config`` may override its keys,
with our shorthands or with Apache Hudi's ``hoodie.*`` keys, read through the config registry
(:mod:`bench.hoodie_conf`, :mod:`engines.config.registry`). A bad key is an error naming the
engine and the key.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from bench.hoodie_conf import HoodieConfError, hudi_bloom, read_config, scenario_context
from bench.scenario import EngineSpec, Scenario, ScenarioError
from engines.base import Engine
from engines.config.registry import MB
from engines.kinds import KINDS, kind_of
from engines.table.bloom import BloomConfig, bloom_of
from engines.table.properties import UnsupportedTableError
from engines.table.table import HudiTable, TableConfig, logical_clock
from workloads.spec import ORDERING_FIELD, RECORD_KEY

LOGICAL_START = datetime(2026, 1, 1, tzinfo=UTC)


def _apply(cls: type, base: dict[str, Any], overrides: dict[str, Any], where: str) -> Any:
    """Instantiate dataclass ``cls`` from ``base`` updated by ``overrides`` (unknown keys rejected)."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(k for k in overrides if k not in names)
    if unknown:
        raise ScenarioError(f"{where}: unknown config keys {unknown}; allowed: {sorted(names)}")
    values = {k: v for k, v in base.items() if k in names}
    values.update(overrides)
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def _split(config: dict[str, Any], keys: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({k: v for k, v in config.items() if k in keys}, {k: v for k, v in config.items() if k not in keys})


def spark_conf_for(scenario: Scenario) -> dict[str, str]:
    """The session settings the scenario's engines need at start-up (Apache Hudi's bundle)."""
    from engines.spark.session import hudi_conf

    return hudi_conf() if any(kind_of(e.kind).needs_hudi_bundle for e in scenario.engines) else {}


def open_table(scenario: Scenario, table_path: str, name: str, table_type: str = "COPY_ON_WRITE") -> HudiTable:
    """The engine's table at ``table_path`` (created as ``table_type`` when new); an existing table of
    another type is refused."""
    clock = logical_clock(LOGICAL_START) if scenario.deterministic_instants else None
    cfg = TableConfig(name=name, partition_field=scenario.workload.partition_column, record_key=RECORD_KEY,
                      table_type=table_type, ordering_field=ORDERING_FIELD if table_type == "MERGE_ON_READ" else None)
    table = HudiTable.create(table_path, cfg, clock=clock, exist_ok=True)
    found = "MERGE_ON_READ" if table.merge_on_read else "COPY_ON_WRITE"
    if found != table_type:
        raise UnsupportedTableError(f"{table.base_uri} is a {found} table; this engine writes {table_type} tables")
    return table


def engine_config(spec: EngineSpec, scenario: Scenario) -> dict[str, Any]:
    """The engine's own config as ``{field: value}``: its shorthands, ``*_mb`` sizes and ``hoodie.*``
    keys read through the registry (:mod:`bench.hoodie_conf`; scheduling keys checked against the
    maintenance section, identity keys against the workload). ``ScenarioError`` names the engine and the key."""
    try:
        return read_config(spec.kind, spec.config, f"engine {spec.name!r} ({spec.kind})",
                           **scenario_context(scenario, spec.name))
    except HoodieConfError as exc:
        raise ScenarioError(str(exc)) from None


def _values(spec: EngineSpec, scenario: Scenario) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the scenario's shared sizing as config values, the engine's own config)."""
    sizing = scenario.sizing
    common = {
        "small_file_limit": int(sizing.small_file_limit_mb * MB),
        "target_file_size": int(sizing.target_file_mb * MB),
        "max_file_size": int(sizing.max_file_mb * MB),
        "row_group_rows": sizing.row_group_rows,
        "cleaner_commits_retained": sizing.cleaner_commits_retained,
        "mode": "manual",
    }
    return common, engine_config(spec, scenario)


def _planner_class(kind: str) -> type | None:
    entry = KINDS.get(kind)
    return entry.load("planner") if entry is not None and entry.planner else None


def resolve_planner(spec: EngineSpec, scenario: Scenario) -> tuple[Any, dict[str, Any]]:
    """The pure planner config of ``spec`` (the scenario's sizing, then the engine's overrides) and
    the engine-level config keys left over. The one resolution both :func:`build_engine` and the
    simulator use; ``ScenarioError`` names the engine and any bad key. Kinds without one of our
    planners (delta_peer, hudi) give ``(None, config)``."""
    common, config = _values(spec, scenario)
    cls = _planner_class(spec.kind)
    if cls is None:
        return None, config
    planner_over, engine_over = _split(config, {f.name for f in dataclasses.fields(cls)})
    return _apply(cls, common, planner_over, f"engine {spec.name!r} ({spec.kind})"), engine_over


def engine_bloom(spec: EngineSpec, scenario: Scenario) -> BloomConfig:
    """The footer bloom filter ``spec``'s base files carry, from its bloom keys (shorthands or
    ``hoodie.*``, also in real Hudi's ``options``): Hudi's default for our kinds and real Hudi, none
    for delta-rs (no Hudi footer). The runner's reference write, the simulator and the calibration
    size files by it."""
    if not kind_of(spec.kind).hudi_rs_reads:  # no Hudi footer
        return BloomConfig(enabled=False)
    if _planner_class(spec.kind) is not None:
        return bloom_of(resolve_planner(spec, scenario)[1])
    return bloom_of(hudi_bloom(spec.config or {}))


def build_engine(spec: EngineSpec, scenario: Scenario, table_path: str) -> Engine:
    """The engine of ``spec`` over a (new or existing) table at ``table_path``: generically from its
    registry entry (:mod:`engines.kinds`) for kinds over our Hudi tables."""
    where = f"engine {spec.name!r} ({spec.kind})"
    entry = KINDS.get(spec.kind)
    if entry is None:
        raise ScenarioError(f"{where}: unknown engine kind; known: {', '.join(KINDS)}")
    cfg = build_config(spec, scenario)
    if entry.builder == "delta":
        return entry.load("engine")(table_path, cfg, name=spec.name)
    if entry.builder == "hudi":  # Apache Hudi creates its table with the first write
        return entry.load("engine")(table_path, cfg, spec.name, partition_field=scenario.workload.partition_column)
    table = open_table(scenario, table_path, spec.name, entry.table_types[0])
    return entry.load("engine")(table, cfg, name=spec.name)


def build_config(spec: EngineSpec, scenario: Scenario) -> Any:
    """The engine's whole config object, as its engine gets it (pure: no Spark, no table): the one
    code path that decides whether a config is valid, for :func:`build_engine` and ``layoutbench
    validate`` alike. ``ScenarioError`` names the engine and the problem."""
    where = f"engine {spec.name!r} ({spec.kind})"
    entry = KINDS.get(spec.kind)
    if entry is None:
        raise ScenarioError(f"{where}: unknown engine kind; known: {', '.join(KINDS)}")
    common, config = _values(spec, scenario)
    if entry.builder == "delta":
        return _apply(entry.load("config"), {**common, "partition_column": scenario.workload.partition_column},
                      config, where)
    if entry.builder == "hudi":
        return _apply(entry.load("config"), common, config, where)
    planner, engine_over = resolve_planner(spec, scenario)
    base = {**common, entry.planner_field: planner} if entry.planner_field else common
    return _apply(entry.load("config"), base, engine_over, where)
