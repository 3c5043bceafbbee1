"""An engine entry's config resolved against its scenario: the shared ``sizing``, then the engine's own
``config`` (our shorthands, ``*_mb`` sizes, Apache Hudi's ``hoodie.*`` keys) read through the config
registry (:mod:`bench.hoodie_conf`), and the pure planner config built from them.

The one resolution the engine factory, the simulator and the scenario's own validation share; it
imports no scenario module at run time (the scenario validates with it).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from bench.hoodie_conf import HoodieConfError, read_config, scenario_context
from bench.scenario_error import ScenarioError
from engines.config.registry import MB
from engines.kinds import KINDS

if TYPE_CHECKING:
    from bench.scenario import EngineSpec, Scenario


def apply_config(cls: type, base: dict[str, Any], overrides: dict[str, Any], where: str) -> Any:
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


def engine_config(spec: EngineSpec, scenario: Scenario) -> dict[str, Any]:
    """The engine's own config as ``{field: value}``: its shorthands, ``*_mb`` sizes and ``hoodie.*``
    keys read through the registry (:mod:`bench.hoodie_conf`; scheduling keys checked against the
    maintenance section, identity keys against the workload). ``ScenarioError`` names the engine and the key."""
    try:
        return read_config(spec.kind, spec.config, f"engine {spec.name!r} ({spec.kind})",
                           **scenario_context(scenario, spec.name))
    except HoodieConfError as exc:
        raise ScenarioError(str(exc)) from None


def config_values(spec: EngineSpec, scenario: Scenario) -> tuple[dict[str, Any], dict[str, Any]]:
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


def planner_class(kind: str) -> type | None:
    """The pure planner config class of ``kind``, None for a kind without one of our planners."""
    entry = KINDS.get(kind)
    return entry.load("planner") if entry is not None and entry.planner else None


def resolve_planner(spec: EngineSpec, scenario: Scenario) -> tuple[Any, dict[str, Any]]:
    """The pure planner config of ``spec`` (the scenario's sizing, then the engine's overrides) and
    the engine-level config keys left over. The one resolution both
    :func:`bench.engine_factory.build_engine` and the simulator use; ``ScenarioError`` names the engine and any bad key. Kinds without one of our
    planners (delta_peer, hudi) give ``(None, config)``."""
    common, config = config_values(spec, scenario)
    cls = planner_class(spec.kind)
    if cls is None:
        return None, config
    planner_over, engine_over = _split(config, {f.name for f in dataclasses.fields(cls)})
    return apply_config(cls, common, planner_over, f"engine {spec.name!r} ({spec.kind})"), engine_over


def build_config(spec: EngineSpec, scenario: Scenario) -> Any:
    """The engine's whole config object, as its engine gets it (pure: no Spark, no table): the one
    code path that decides whether a config is valid, for :func:`build_engine` and ``layoutbench
    validate`` alike. ``ScenarioError`` names the engine and the problem."""
    where = f"engine {spec.name!r} ({spec.kind})"
    entry = KINDS.get(spec.kind)
    if entry is None:
        raise ScenarioError(f"{where}: unknown engine kind; known: {', '.join(KINDS)}")
    common, config = config_values(spec, scenario)
    if entry.builder == "delta":
        return apply_config(entry.load("config"), {**common, "partition_column": scenario.workload.partition_column},
                      config, where)
    if entry.builder == "hudi":
        return apply_config(entry.load("config"), common, config, where)
    planner, engine_over = resolve_planner(spec, scenario)
    base = {**common, entry.planner_field: planner} if entry.planner_field else common
    return apply_config(entry.load("config"), base, engine_over, where)
