"""The registry of engine kinds: one entry per kind, the only place a kind is named.

Each entry says where the kind's classes live and what the kind is: its design family and label
(what reports group and print), its table format and types, and its capabilities (the table
service it runs, whether its bytes measure a batch, whether the simulator replays it, whether it
competes in the verdict or stands beside it as a reference). Runner, crash test, stream, simulator
and reports ask these questions here instead of comparing kind strings.

It lives in ``engines/`` because both ``bench`` and ``reports`` ask it, and ``reports`` must not
import ``bench``. Class paths are strings (``"module:Class"``) loaded on demand: importing this
module loads no engine, no Spark, no pyarrow (:mod:`bench.scenario` validates kinds with it).

Adding an engine is its package under ``engines/`` plus one entry in :data:`KINDS` (or, for a package
outside the tree, one :func:`register` call: the entry with its own config keys).
:func:`bench.engine_factory.build_engine` builds a ``builder="table"`` kind generically: its config
dataclass from the scenario's shared sizing and the engine's own config, its planner config (when
it has one) resolved the same way, then ``Engine(table, config, name=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

# Design families: what a report groups engines into.
BASELINE = "Baseline"
OPTION_1 = "Option 1"
OPTION_2 = "Option 2"
CONTROL = "No maintenance (control)"
DELTA_PEER = "Delta peer"
APACHE_HUDI = "Apache Hudi"

Role = Literal["design", "control", "reference"]
Builder = Literal["table", "delta", "hudi"]
Service = Literal["compaction", "clustering", "optimize"]


class UnknownKind(ValueError):
    """An engine kind no registry entry names."""


@dataclass(frozen=True)
class EngineKind:
    """One engine kind: where its classes live (``"module:Class"``) and what it is."""

    family: str  # the design it represents (BASELINE, OPTION_1, ...): reports group by it
    label: str  # one line saying what it does, for listings and reports
    engine: str
    config: str
    planner: str | None = None  # its pure planner's config, when it has one (shared with the simulator)
    planner_field: str | None = None  # the engine config's field that holds the planner config
    builder: Builder = "table"  # table: built over one of our Hudi tables; delta / hudi: a builder of its own
    # design: competes in the verdict; control / reference: a column beside it, outside the tally
    role: Role = "design"
    table_format: Literal["hudi", "delta"] = "hudi"  # hudi: Hudi's layout, which hudi-rs and Apache Hudi read
    table_types: tuple[str, ...] = ("COPY_ON_WRITE",)
    # the table service of ours the driver runs for it (a planner and an executor); None: none
    # (the baseline only cleans, the control does nothing, Apache Hudi runs its own inside its writer)
    service: Service | None = None
    maintains: bool = True  # False: nothing is ever planned, rewritten or cleaned (the control)
    # it has an upsert (workload.update_fraction's corrections); False: inserts only (InsertsOnlyError)
    takes_updates: bool = True
    cleans_after_commit: bool = False  # Hudi's automatic clean after every commit (the COW baseline)
    # its inserts top up small files inside the write (copy-on-write): WA approaches limit / (2 x batch)
    merges_at_ingest: bool = False
    # the family of fault points (engines.table.faults.POINTS) its table service passes through
    fault_points: str | None = None
    # the config registry's kind whose keys it reads (engines.config.registry; hoodie.* ones through
    # bench.hoodie_conf); None: none of ours (its own config keys, hoodie.* ones passed through or refused)
    settings: str | None = None
    needs_hudi_bundle: bool = False  # its Spark session loads Apache Hudi's bundle
    driver_runs_services: bool = True  # beside a stream its services run in the driver (config mode: manual)
    sim: str | None = None  # its behaviour on the simulator's metadata-only table (None: not simulated)
    # a reference engine's counterpart: the kind of ours "Ours next to Apache Hudi" pairs it with
    # (reports.hudi_fidelity); None: paired by preset (preset_pairs)
    pairs_with: str | None = None
    presets: tuple[str, ...] = ()  # the Apache Hudi presets (config key preset) it writes, its default first
    # config keys of its own (engines.config.registry.Setting, their kinds naming its settings group), declared
    # with the entry (:func:`register`): a kind outside the tree brings its keys without editing that registry
    keys: tuple[Any, ...] = ()
    preset_pairs: tuple[tuple[str, str], ...] = ()  # (preset, the kind of ours it pairs with) when pairs_with is None

    @property
    def in_verdict(self) -> bool:
        """Whether it competes in the verdict (an RFC design), not a reference column beside it."""
        return self.role == "design"

    @property
    def simulated(self) -> bool:
        """Whether the simulator replays it (its package has a ``sim.py``)."""
        return self.sim is not None

    @property
    def is_apache_hudi(self) -> bool:
        """Whether Apache Hudi itself writes its tables (its own builder, not our table core)."""
        return self.builder == "hudi"

    def pair_for(self, preset: str | None) -> str | None:
        """The kind of ours a reference engine of this kind with ``preset`` (None: the default) pairs with."""
        if self.pairs_with is not None:
            return self.pairs_with
        return dict(self.preset_pairs).get(preset or (self.presets[0] if self.presets else ""))

    @property
    def hudi_rs_reads(self) -> bool:
        """Whether its tables are Hudi tables that hudi-rs (and Apache Hudi) read."""
        return self.table_format == "hudi"

    def load(self, which: str) -> Any:
        """The object named by field ``which``."""
        module, _, name = getattr(self, which).partition(":")
        return getattr(import_module(module), name)


_O1_CONFIG = "engines.append_compaction.engine:Option1Config"
_O1_PLANNER = "engines.append_compaction.config:CompactionConfig"

KINDS: dict[str, EngineKind] = {
    "cow_baseline": EngineKind(
        BASELINE, "COW baseline: Hudi's small-file assignment, merging inserts into small files",
        "engines.cow_baseline.engine:CowBaselineEngine", "engines.cow_baseline.engine:CowEngineConfig",
        "engines.cow_baseline.config:CowConfig", "planner", cleans_after_commit=True, merges_at_ingest=True,
        settings="cow_baseline",
        sim="engines.cow_baseline.sim:CowBaselineSim"),
    "append_compaction": EngineKind(
        OPTION_1, "Option 1: APPEND ingest and base-file compaction",
        "engines.append_compaction.engine:AppendCompactionEngine", _O1_CONFIG, _O1_PLANNER, "compaction",
        service="compaction", fault_points="option1", settings="append_compaction",
        sim="engines.append_compaction.sim:AppendCompactionSim"),
    "clustering": EngineKind(
        OPTION_2, "Option 2: insert ingest and clustering with snapshot isolation",
        "engines.clustering.engine:ClusteringEngine", "engines.clustering.engine:Option2Config",
        "engines.clustering.config:ClusteringConfig", "clustering", service="clustering",
        fault_points="clustering", settings="clustering", sim="engines.clustering.sim:ClusteringSim"),
    "clustering_mor": EngineKind(
        OPTION_2, "Option 2 on MERGE_ON_READ: deltacommits (updates in logs), compaction and clustering",
        "engines.clustering_mor.engine:MorClusteringEngine", "engines.clustering_mor.engine:MorOption2Config",
        "engines.clustering.config:ClusteringConfig", "clustering", table_types=("MERGE_ON_READ",),
        service="clustering", fault_points="mor_compaction", settings="clustering_mor",
        sim="engines.clustering_mor.sim:MorClusteringSim"),
    "delta_peer": EngineKind(
        DELTA_PEER, "delta-rs peer: append, OPTIMIZE / Z-ORDER, VACUUM",
        "engines.delta_peer.engine:DeltaPeerEngine", "engines.delta_peer.engine:DeltaPeerConfig",
        builder="delta", role="reference", table_format="delta", table_types=("delta",), service="optimize",
        takes_updates=False),
    "hudi": EngineKind(
        APACHE_HUDI, "Apache Hudi through its Spark datasource: the real COW baseline and clustering",
        "engines.hudi.engine:HudiEngine", "engines.hudi.config:HudiConfig", builder="hudi", role="reference",
        needs_hudi_bundle=True, driver_runs_services=False, merges_at_ingest=True,
        presets=("hudi_cow", "hudi_clustering"),
        preset_pairs=(("hudi_cow", "cow_baseline"), ("hudi_clustering", "clustering"))),
    "hudi_mor": EngineKind(
        APACHE_HUDI, "Apache Hudi MERGE_ON_READ: upsert, updates to log files, inline compaction every N deltacommits",
        "engines.hudi.engine:HudiEngine", "engines.hudi.config:HudiMorConfig", builder="hudi", role="reference",
        table_types=("MERGE_ON_READ",), settings="hudi", needs_hudi_bundle=True, driver_runs_services=False,
        pairs_with="clustering_mor", presets=("hudi_mor",)),
    "hudi_mor_clustering": EngineKind(
        APACHE_HUDI, "Apache Hudi MERGE_ON_READ: inserts to new base files, updates to log files, clustering and "
        "inline compaction",
        "engines.hudi.engine:HudiEngine", "engines.hudi.config:HudiMorClusteringConfig", builder="hudi",
        role="reference", table_types=("MERGE_ON_READ",), settings="hudi", needs_hudi_bundle=True,
        driver_runs_services=False, pairs_with="clustering_mor", presets=("hudi_mor_clustering",)),
    # the control keeps Option 1's settings, unused
    "append_only": EngineKind(
        CONTROL, "the control: Option 1's APPEND ingest, never maintained",
        "engines.append_only.engine:AppendOnlyEngine", _O1_CONFIG, _O1_PLANNER, "compaction", role="control",
        maintains=False, takes_updates=False, settings="append_only", sim="engines.append_only.sim:AppendOnlySim"),
}
FAMILY_ORDER = (BASELINE, OPTION_1, OPTION_2, CONTROL, DELTA_PEER, APACHE_HUDI)  # the order reports list them in


def register(name: str, entry: EngineKind) -> None:
    """Add kind ``name`` to the registry, with the config keys its entry declares (``keys``)."""
    if name in KINDS:
        raise ValueError(f"engine kind {name!r} is registered already")
    if entry.keys:
        from engines.config.registry import declare

        declare(entry.keys)
    KINDS[name] = entry


def unregister(name: str) -> None:
    """Remove kind ``name`` from the registry, and the config keys its entry declared."""
    entry = KINDS.pop(name)
    if entry.keys:
        from engines.config.registry import withdraw

        withdraw(entry.keys)


def kind_of(kind: str) -> EngineKind:
    """The registry entry of ``kind``; :class:`UnknownKind` names the known kinds."""
    try:
        return KINDS[kind]
    except KeyError:
        raise UnknownKind(f"unknown engine kind {kind!r}; known: {', '.join(KINDS)}") from None


TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def kind_for_table_type(kind: str, table_type: str) -> str:
    """The kind that runs ``kind``'s design on ``table_type`` tables (a scenario's ``table_type``
    config key): ``kind`` itself when its entry writes them, else the kind of the same family that
    does. A ``ValueError`` names the kind, the field and the kinds that have that table type."""
    entry = kind_of(kind)
    wanted = table_type.upper()
    if wanted not in TABLE_TYPES:
        raise ValueError(f"table_type {table_type!r}: expected one of {', '.join(TABLE_TYPES)}")
    if wanted in entry.table_types:
        return kind
    for name, other in KINDS.items():
        if other.family == entry.family and wanted in other.table_types:
            return name
    having = [n for n, k in KINDS.items() if wanted in k.table_types]
    raise ValueError(f"engine kind {kind!r} has no {wanted} (config key table_type): it writes "
                     f"{', '.join(entry.table_types)} tables; the kinds that write {wanted} tables: "
                     f"{', '.join(having) or 'none'}")


def family_of(kind: str) -> str:
    """The design family of ``kind``; a kind the registry no longer names (an old run's) keeps its name."""
    entry = KINDS.get(kind)
    return entry.family if entry is not None else kind


def design_families() -> tuple[str, ...]:
    """The families that compete in the verdict (the RFC designs), in :data:`FAMILY_ORDER`."""
    present = {k.family for k in KINDS.values() if k.in_verdict}
    return tuple(f for f in FAMILY_ORDER if f in present) + tuple(sorted(present - set(FAMILY_ORDER)))


def kind_of_preset(preset: str) -> str:
    """The kind that writes Apache Hudi preset ``preset``; :class:`UnknownKind` names the known presets."""
    for name, k in KINDS.items():
        if preset in k.presets:
            return name
    known = [p for k in KINDS.values() for p in k.presets]
    raise UnknownKind(f"unknown Hudi preset {preset!r}; known: {', '.join(known)}")


def kinds_with(**capabilities: Any) -> list[str]:
    """The kinds whose entries have every given field value, in registry order."""
    return [name for name, k in KINDS.items() if all(getattr(k, f) == v for f, v in capabilities.items())]


def engines_with(engines: dict[str, Any], **capabilities: Any) -> list[str]:
    """The names of ``engines`` (name -> its info with ``kind``, as run.json's ``engines``), in order,
    whose kind's entry has every given field value (:func:`kinds_with`)."""
    kinds = set(kinds_with(**capabilities))
    return [name for name, info in engines.items() if str((info or {}).get("kind")) in kinds]
