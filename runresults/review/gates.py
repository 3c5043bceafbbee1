"""Each candidate's correctness gates, read from the ``gates`` table.

A gate of an engine may have several rows (one per reader: Apache Hudi, hudi-rs, ours). It fails
when any row failed, passes when at least one row passed and none failed, and is "n/a" when every
row says it does not apply. Two gates have an older source used when the ``gates`` table has no
row for them: ``isolation`` from the ``isolation`` table (reader queries during maintenance), and
``no_loss`` from the ``crash`` table (a crash test of the run, or one attached).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from runresults import Results
from runresults.review.settings import GATE_LABELS, GATES


@dataclass
class GateResult:
    """One gate of one candidate: ``passed`` True / False / None (does not apply); ``measured``
    False when no row checked it."""

    gate: str
    passed: bool | None = None
    measured: bool = False
    checked: int = 0
    failures: int = 0
    figure: float | None = None
    figure_unit: str = ""
    readers: list[str] = field(default_factory=list)
    detail: str = ""
    source: str = "gates"

    @property
    def status(self) -> str:
        if not self.measured:
            return "not measured"
        return "n/a" if self.passed is None else ("pass" if self.passed else "FAIL")

    def text(self) -> str:
        """The cell: status, the failing figure, how many points were checked."""
        if not self.measured:
            return "not measured"
        if self.passed is None:
            return f"n/a ({self.detail})" if self.detail else "n/a"
        fig = f", {self.figure:g} {self.figure_unit}" if self.figure is not None else ""
        head = "pass" if self.passed else f"FAIL: {self.failures} of {self.checked}"
        return f"{head} ({self.checked} checked{fig})" if self.passed else f"{head}{fig}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "status": self.status}


DETAIL_CHARS = 300  # a gate's detail in the answer and the gates table: whole clauses up to about this


def _num(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _from_rows(gate: str, rows: pd.DataFrame) -> GateResult:
    out = GateResult(gate, measured=True, readers=sorted({str(r) for r in rows.reader.dropna()}))
    verdicts = [None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v) for v in rows.passed]
    applies = [v for v in verdicts if v is not None]
    out.passed = None if not applies else all(applies)
    out.checked = int(rows.checked.fillna(0).sum())
    out.failures = int(rows.failures.fillna(0).sum())
    # the deciding figure: the failing rows' worst one, else the largest
    pick = rows[[v is False for v in verdicts]] if out.passed is False else rows
    figs = [(f, u) for f, u in zip(pick.figure, pick.figure_unit, strict=True) if _num(f) is not None]
    if figs:
        out.figure, out.figure_unit = max(figs, key=lambda fu: float(fu[0]))
        out.figure = float(out.figure)
        out.figure_unit = str(out.figure_unit or "")
    details = [d for d in pick.detail if isinstance(d, str) and d]
    out.detail = whole_clauses(details, DETAIL_CHARS)
    return out


def whole_clauses(details: list[str], limit: int) -> str:
    """The rows' details joined by "; " and kept to about ``limit`` characters by dropping whole
    clauses (a detail's own "; "-separated parts) from the end, never by cutting one: the answer
    quotes this text, and a clause cut mid-instant reads as a wrong figure. What was dropped is
    counted: "(N more clauses not shown)". Repeated details are given once; the first clause is
    always kept whole."""
    clauses = [c for d in dict.fromkeys(details) for c in d.split("; ") if c]
    kept: list[str] = []
    for c in clauses:
        if kept and len("; ".join([*kept, c])) > limit:
            break
        kept.append(c)
    dropped = len(clauses) - len(kept)
    more = f" ({dropped} more clause{'s' if dropped > 1 else ''} not shown)" if dropped else ""
    return "; ".join(kept) + more


def _isolation(rows: pd.DataFrame) -> GateResult:
    bad = rows[rows.outcome != "ok"]
    return GateResult("isolation", passed=bad.empty, measured=True, checked=len(rows), failures=len(bad),
                      figure=float(len(bad)), figure_unit="reader queries failed or wrong", readers=["ours"],
                      detail="" if bad.empty else f"{len(bad)} of {len(rows)} reader queries during maintenance "
                      "failed or returned wrong rows", source="isolation")


def _no_loss(rows: pd.DataFrame) -> GateResult:
    lost = int(rows.rows_lost.clip(lower=0).sum())
    dup = int(rows.rows_duplicated.clip(lower=0).sum())
    bad = rows[(rows.rows_lost > 0) | (rows.rows_duplicated > 0) | ~rows.recovered.astype(bool)]
    return GateResult("no_loss", passed=bad.empty, measured=True, checked=len(rows), failures=len(bad),
                      figure=float(lost + dup), figure_unit="rows lost or duplicated", readers=["ours"],
                      detail="" if bad.empty else f"{lost} rows lost, {dup} duplicated at "
                      + ", ".join(sorted(set(bad.point))), source="crash")


def gate_results(results: Results, engines: list[str], crash: Results | None = None) -> dict[str, dict[str, GateResult]]:
    """engine -> gate -> its result, for every gate of :data:`GATES`."""
    gates, iso = results.table("gates"), results.table("isolation")
    crash_rows = (crash or results).table("crash")
    out: dict[str, dict[str, GateResult]] = {}
    for engine in engines:
        mine = gates[gates.engine == engine]
        row: dict[str, GateResult] = {}
        for gate in GATES:
            g = mine[mine.gate == gate]
            if len(g):
                row[gate] = _from_rows(gate, g)
            elif gate == "isolation" and (iso.engine == engine).any():
                row[gate] = _isolation(iso[iso.engine == engine])
            elif gate == "no_loss" and (crash_rows.engine == engine).any():
                row[gate] = _no_loss(crash_rows[crash_rows.engine == engine])
            else:
                row[gate] = GateResult(gate)
        out[engine] = row
    return out


def failed_required(gates: dict[str, GateResult], requires: list[str]) -> list[str]:
    """The required gates this candidate failed."""
    return [g for g in requires if gates[g].passed is False]


def label(gate: str) -> str:
    return GATE_LABELS.get(gate, gate)
