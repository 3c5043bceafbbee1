"""Build an engine from a scenario's engine entry, from its line in the registry of kinds
(:mod:`engines.kinds`).

The scenario's shared ``sizing`` gives every engine the same small-file limit, target/max file
size, row-group size and cleaner retention; an engine's own ``config`` may override its keys,
with our shorthands or with Apache Hudi's ``hoodie.*`` keys (:mod:`bench.hoodie_conf`). Unknown
config keys are an error naming the engine and the key.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from bench.hoodie_conf import HoodieConfError, bloom_fields, split_hoodie, translate
from bench.scenario import EngineSpec, Scenario, ScenarioError
from engines.base import Engine
from engines.kinds import KINDS, kind_of
from engines.table.bloom import BloomConfig, bloom_of
from engines.table.sizes import MB
from engines.table.table import HudiTable, TableConfig, logical_clock

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


def open_table(scenario: Scenario, table_path: str, name: str) -> HudiTable:
    clock = logical_clock(LOGICAL_START) if scenario.deterministic_instants else None
    cfg = TableConfig(name=name, partition_field=scenario.workload.partition_column, record_key="trace_id")
    return HudiTable.create(table_path, cfg, clock=clock, exist_ok=True)


def hoodie_overrides(spec: EngineSpec, scenario: Scenario) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine's ``hoodie.*`` keys as (planner fields, engine fields), through the one map
    (:mod:`bench.hoodie_conf`); scheduling keys are checked against the maintenance section."""
    hoodie, _ = split_hoodie(spec.config)
    if not hoodie:
        return {}, {}
    try:
        return translate(spec.kind, hoodie, f"engine {spec.name!r} ({spec.kind})",
                         schedule=(scenario.maintenance.mode, scenario.maintenance.every_commits))
    except HoodieConfError as exc:
        raise ScenarioError(str(exc)) from None


def _values(spec: EngineSpec, scenario: Scenario) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the scenario's shared sizing as config values, the engine's own config with ``*_mb`` keys in
    bytes; ``hoodie.*`` keys left out for our engines, which take them through :func:`hoodie_overrides`)."""
    sizing = scenario.sizing
    own = split_hoodie(spec.config)[1] if kind_of(spec.kind).hoodie_keys else spec.config
    mb = {k: v for k, v in own.items() if k.endswith("_mb")}
    config = {k: v for k, v in own.items() if not k.endswith("_mb")}
    config.update({k[:-3] + ("_size" if k.endswith("_file_mb") else ""): int(v * MB) for k, v in mb.items()})
    common = {
        "small_file_limit": int(sizing.small_file_limit_mb * MB),
        "target_file_size": int(sizing.target_file_mb * MB),
        "max_file_size": int(sizing.max_file_mb * MB),
        "row_group_rows": sizing.row_group_rows,
        "cleaner_commits_retained": sizing.cleaner_commits_retained,
        "commits_retained": sizing.cleaner_commits_retained,
        "mode": "manual",
    }
    return common, config


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
    where = f"engine {spec.name!r} ({spec.kind})"
    planner_over, engine_over = _split(config, {f.name for f in dataclasses.fields(cls)})
    planner_h, engine_h = hoodie_overrides(spec, scenario)
    both = sorted((set(planner_h) & set(planner_over)) | (set(engine_h) & set(engine_over)))
    if both:
        raise ScenarioError(f"{where}: {both} set both by a hoodie.* key and by its shorthand; keep one")
    return _apply(cls, common, {**planner_h, **planner_over}, where), {**engine_h, **engine_over}


def engine_bloom(spec: EngineSpec, scenario: Scenario) -> BloomConfig:
    """The footer bloom filter ``spec``'s base files carry, from its bloom keys (shorthands or
    ``hoodie.*``, also in real Hudi's ``options``): Hudi's default for our kinds and real Hudi, none
    for delta-rs (no Hudi footer). The runner's reference write, the simulator and the calibration
    size files by it."""
    if not kind_of(spec.kind).hudi_rs_reads:  # no Hudi footer
        return BloomConfig(enabled=False)
    if _planner_class(spec.kind) is not None:
        return bloom_of(resolve_planner(spec, scenario)[1])
    hoodie, own = split_hoodie(spec.config or {})
    if isinstance(own.get("options"), dict):  # real Hudi's pass-through keys
        hoodie = {**hoodie, **own["options"]}
    return bloom_of({**own, **bloom_fields(hoodie)})


def build_engine(spec: EngineSpec, scenario: Scenario, table_path: str) -> Engine:
    """The engine of ``spec`` over a (new or existing) table at ``table_path``: generically from its
    registry entry (:mod:`engines.kinds`) for kinds over our Hudi tables."""
    sizing = scenario.sizing
    where = f"engine {spec.name!r} ({spec.kind})"
    entry = KINDS.get(spec.kind)
    if entry is None:
        raise ScenarioError(f"{where}: unknown engine kind; known: {', '.join(KINDS)}")
    common, config = _values(spec, scenario)
    if entry.builder == "delta":
        cfg = _apply(entry.load("config"), {**common, "partition_column": scenario.workload.partition_column},
                     config, where)
        return entry.load("engine")(table_path, cfg, name=spec.name)
    if entry.builder == "hudi":  # Apache Hudi creates its table with the first write
        from engines.hudi.config import lift_hoodie_keys

        hudi = {**common, "target_file_size": int(sizing.target_file_mb * MB), "mode": "manual"}
        cfg = _apply(entry.load("config"), hudi, lift_hoodie_keys(config), where)
        return entry.load("engine")(table_path, cfg, spec.name, partition_field=scenario.workload.partition_column)
    planner, engine_over = resolve_planner(spec, scenario)
    base = {**common, entry.planner_field: planner} if entry.planner_field else common
    cfg = _apply(entry.load("config"), base, engine_over, where)
    return entry.load("engine")(open_table(scenario, table_path, spec.name), cfg, name=spec.name)
