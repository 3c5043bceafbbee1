"""The registry of engine kinds: one line per kind, the only place a kind is named.

Adding an engine is one package under ``engines/`` plus one line here. A kind over one of our Hudi
tables is built generically by :func:`bench.engine_factory.build_engine`: its config dataclass
from the scenario's shared sizing and the engine's own config, its planner config (when it has
one) resolved the same way, then ``Engine(table, config, name=...)``. Kinds over another format or
another writer (``delta_peer``, ``hudi``) have a builder of their own there.

Strings, not imports: :mod:`bench.scenario` validates kinds without loading any engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any


@dataclass(frozen=True)
class EngineKind:
    """Where a kind's classes live (``"module:Class"``)."""

    engine: str
    config: str
    planner: str | None = None  # its pure planner's config, when it has one (shared with the simulator)
    planner_field: str | None = None  # the engine config's field that holds the planner config
    on_table: bool = True  # built over one of our Hudi tables; False: a builder of its own

    def load(self, which: str) -> Any:
        """The class named by field ``which``."""
        module, _, name = getattr(self, which).partition(":")
        return getattr(import_module(module), name)


_O1_CONFIG = "engines.append_compaction.engine:Option1Config"
_O1_PLANNER = "engines.append_compaction.config:CompactionConfig"

KINDS: dict[str, EngineKind] = {
    "cow_baseline": EngineKind("engines.cow_baseline.engine:CowBaselineEngine", "engines.cow_baseline.engine:CowEngineConfig",
                               "engines.cow_baseline.config:CowConfig", "planner"),
    "append_compaction": EngineKind("engines.append_compaction.engine:AppendCompactionEngine", _O1_CONFIG,
                                    _O1_PLANNER, "compaction"),
    "clustering": EngineKind("engines.clustering.engine:ClusteringEngine", "engines.clustering.engine:Option2Config",
                             "engines.clustering.config:ClusteringConfig", "clustering"),
    "delta_peer": EngineKind("engines.delta_peer.engine:DeltaPeerEngine", "engines.delta_peer.engine:DeltaPeerConfig",
                             on_table=False),
    "hudi": EngineKind("engines.hudi.engine:HudiEngine", "engines.hudi.config:HudiConfig", on_table=False),
    # the control keeps Option 1's settings, unused
    "append_only": EngineKind("engines.append_only.engine:AppendOnlyEngine", _O1_CONFIG, _O1_PLANNER, "compaction"),
}
ENGINE_KINDS = tuple(KINDS)
