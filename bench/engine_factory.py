"""Build an engine from a scenario's engine entry, from its line in the registry of kinds
(:mod:`engines.kinds`).

The scenario's shared ``sizing`` gives every engine the same small-file limit, target/max file
size, row-group size and cleaner retention; an engine's own ``config`` may override its keys,
with our shorthands or with Apache Hudi's ``hoodie.*`` keys, read through the config registry
(:mod:`bench.hoodie_conf`, :mod:`engines.config.registry`). A bad key is an error naming the
engine and the key.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bench.engine_config import build_config, planner_class, resolve_planner
from bench.hoodie_conf import hudi_bloom
from bench.scenario import EngineSpec, Scenario, ScenarioError
from engines.base import Engine
from engines.kinds import KINDS, kind_of
from engines.table.bloom import BloomConfig, bloom_of
from engines.table.properties import UnsupportedTableError
from engines.table.table import HudiTable, TableConfig, logical_clock
from workloads.spec import ORDERING_FIELD, RECORD_KEY

LOGICAL_START = datetime(2026, 1, 1, tzinfo=UTC)


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


def engine_bloom(spec: EngineSpec, scenario: Scenario) -> BloomConfig:
    """The footer bloom filter ``spec``'s base files carry, from its bloom keys (shorthands or
    ``hoodie.*``, also in real Hudi's ``options``): Hudi's default for our kinds and real Hudi, none
    for delta-rs (no Hudi footer). The runner's reference write, the simulator and the calibration
    size files by it."""
    if not kind_of(spec.kind).hudi_rs_reads:  # no Hudi footer
        return BloomConfig(enabled=False)
    if planner_class(spec.kind) is not None:
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
