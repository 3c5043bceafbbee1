"""Correctness gates measured in every run (T17), one ``gates`` row per (candidate, gate).

A gate reads the table as a user's reader would and compares with the workload's ground truth,
never with our own view of what the table should hold. ``passed`` is None when the gate does not
apply to the engine (no maintenance, no update path, no crash run to attach), and ``detail`` then
says why. This package: ``isolation`` (readers racing maintenance, from the run's isolation
table), ``no_loss`` (crashes at maintenance step boundaries, from a ``crashtest`` run of the same
code), ``concurrent_update`` (an upsert arriving while a plan is pending or inflight), and, after
the last checkpoint, ``incremental`` and ``time_travel`` (``history_gates``: Apache Hudi's and
hudi-rs's incremental and as-of reads against the ground truth per instant).
"""

from __future__ import annotations

from typing import Any


def gate_row(engine: str, gate: str, reader: str, passed: bool | None, checked: int, failures: int,
             figure: float | None, figure_unit: str, detail: str) -> dict[str, Any]:
    """One ``gates`` row (columns of :data:`runresults.TABLES`)."""
    return {"engine": engine, "gate": gate, "reader": reader, "passed": passed, "checked": int(checked),
            "failures": int(failures), "figure": None if figure is None else float(figure),
            "figure_unit": figure_unit, "detail": detail}


def not_applicable(engine: str, gate: str, reader: str, why: str) -> dict[str, Any]:
    """A row for a gate that does not apply to ``engine``: passed None, the reason in ``detail``."""
    return gate_row(engine, gate, reader, None, 0, 0, None, "", why)
