"""Choices and crossovers of a sweep (computed from its results, for the decision map), by the
verdict's rules: which RFC design each criterion picks at each grid point, and between which values
of a parameter the answer changes.

Only the RFC designs compete: the baseline, Option 1 and Option 2, each as a whole candidate. At
each point a design is represented by its cheapest candidate by the ledger (``usd_per_tb``; the
sweep has already left out candidates that failed a required gate at the run), and every figure of
that design at that point is that candidate's: no figure is another variant's. Every criterion is
lower is better. A difference inside the margin (default 5%, the review's) is not a win: the
designs within it of the lowest are "equivalent" ("Option 1 = Option 2").
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from engines.kinds import KINDS, design_families
from runresults.plain_ledger import DEFAULT_MARGIN, equivalent

LEDGER = "usd_per_tb"


def _design(kind: str) -> str | None:
    """The RFC design an engine kind belongs to (None: a reference or a control, outside the map)."""
    entry = KINDS.get(kind)
    return entry.family if entry is not None and entry.in_verdict else None


def tie_label(designs: list[str]) -> str:
    """The label of a tie between ``designs``: ``"Option 1 = Option 2"`` (in design order)."""
    order = list(design_families())
    return " = ".join(sorted(designs, key=order.index))


@dataclass
class Winner:
    """One criterion at one point: the chosen design (or the equivalent ones, :func:`tie_label`),
    each design's figure and the candidate it comes from (``variants``)."""

    point: dict[str, Any]
    criterion: str
    winner: str
    values: dict[str, float]
    variants: dict[str, str]


@dataclass
class Crossover:
    """Along ``parameter``, with the other parameters at ``at``: ``before`` wins at ``lo``, ``after`` at ``hi``."""

    criterion: str
    parameter: str
    lo: Any
    hi: Any
    before: str
    after: str
    at: dict[str, Any] = field(default_factory=dict)


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def representatives(members: list[dict[str, Any]], by: str = LEDGER) -> dict[str, dict[str, Any]]:
    """Per design, its cheapest candidate's row by ``by`` (candidates without a figure never stand)."""
    best: dict[str, dict[str, Any]] = {}
    for r in members:
        fam = _design(r["kind"])
        if fam is None or _missing(r.get(by)):
            continue
        if fam not in best or r[by] < best[fam][by]:
            best[fam] = r
    return best


def winners(rows: list[dict[str, Any]], parameters: list[str], criteria: list[str],
            margin: float = DEFAULT_MARGIN, by: str = LEDGER) -> list[Winner]:
    """Per point and criterion, the design with the lowest figure, each design its whole cheapest
    candidate by ``by``; designs within ``margin`` of the lowest are equivalent."""
    if rows and by not in rows[0]:
        raise ValueError(f"the sweep's rows have no {by!r} column (a sweep folder from before the ledger: "
                         "run the sweep again)")
    by_point: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_point[tuple(r[p] for p in parameters)].append(r)
    out = []
    for key, members in by_point.items():
        point = dict(zip(parameters, key, strict=True))
        reps = representatives(members, by)
        for crit in criteria:
            vals = {f: float(r[crit]) for f, r in reps.items() if not _missing(r.get(crit))}
            if not vals:
                continue
            low = min(vals.values())
            tied = [f for f in design_families() if f in vals and equivalent(vals[f], low, margin)]
            win = tie_label(tied) if len(tied) > 1 else tied[0]
            out.append(Winner(point, crit, win, vals, {f: reps[f]["engine"] for f in vals}))
    return out


def crossovers(found: list[Winner], values: dict[str, list[Any]]) -> list[Crossover]:
    """Every change of winner between neighbouring values of one parameter, the others fixed."""
    index = {(w.criterion, tuple(sorted(w.point.items()))): w.winner for w in found}
    out = []
    for w in found:
        for param, vals in values.items():
            i = vals.index(w.point[param])
            if i + 1 >= len(vals):
                continue
            nxt = dict(w.point, **{param: vals[i + 1]})
            other = index.get((w.criterion, tuple(sorted(nxt.items()))))
            if other is not None and other != w.winner:
                at = {k: v for k, v in w.point.items() if k != param}
                out.append(Crossover(w.criterion, param, vals[i], vals[i + 1], w.winner, other, at))
    return out


def shares(found: list[Winner]) -> dict[str, Counter]:
    """Per criterion, how many points each design wins (and ties)."""
    out: dict[str, Counter] = defaultdict(Counter)
    for w in found:
        out[w.criterion][w.winner] += 1
    return out


def along(cross: list[Crossover], criterion: str, parameter: str, base: dict[str, Any]) -> list[Crossover]:
    """The crossovers of ``criterion`` along ``parameter`` on the base line (others at ``base``)."""
    return [c for c in cross if c.criterion == criterion and c.parameter == parameter
            and all(c.at.get(k) == v for k, v in base.items() if k != parameter)]
