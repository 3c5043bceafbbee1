"""Which design an engine kind belongs to: the one lookup from ``run.json``'s ``engines[name].kind``
to its family (the engine registry will carry it; only :func:`family_of` changes then)."""

from __future__ import annotations

from typing import Any

_FAMILIES = {"cow_baseline": "Baseline", "append_compaction": "Option 1", "clustering": "Option 2",
             "delta_peer": "Delta peer", "hudi": "Apache Hudi", "append_only": "No maintenance (control)"}
DESIGNS = ("Baseline", "Option 1", "Option 2")  # the designs that compete; the others are reference columns
FAMILY_ORDER = (*DESIGNS, "No maintenance (control)", "Delta peer", "Apache Hudi")


def family_of(kind: str) -> str:
    """The design family of an engine kind (an unknown kind is its own family, a reference)."""
    return _FAMILIES.get(kind, kind)


def engine_families(run: dict[str, Any]) -> dict[str, str]:
    """Engine name -> family, in run.json order."""
    return {name: family_of(str(info.get("kind", "?"))) for name, info in (run.get("engines") or {}).items()}
