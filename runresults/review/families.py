"""Which design an engine kind belongs to: the one lookup from ``run.json``'s ``engines[name].kind``
to its family, asked of the engine-kinds registry (engines/kinds.py)."""

from __future__ import annotations

from typing import Any

from engines.kinds import FAMILY_ORDER, design_families, family_of

DESIGNS = design_families()  # the designs that compete; the others are reference columns

__all__ = ["DESIGNS", "FAMILY_ORDER", "design_families", "engine_families", "family_of"]


def engine_families(run: dict[str, Any]) -> dict[str, str]:
    """Engine name -> family, in run.json order."""
    return {name: family_of(str(info.get("kind", "?"))) for name, info in (run.get("engines") or {}).items()}
