"""Winners and crossovers of a sweep (computed from its results, for the decision map): which RFC
design wins each criterion at each grid point, and between which values of a parameter the answer
changes.

Only the RFC designs compete: the baseline, Option 1 and Option 2. A design's figure at a point is
its best variant's (e.g. Option 2 sorted or unsorted), named beside it. Every criterion is lower
is better. Simulated figures are deterministic, so two designs tie only when the best two are
within :data:`TIE` of each other (the simulator's own stated tolerance on bytes is 10%; a tie
band of 2% keeps the map from flipping on rounding).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from engines.kinds import KINDS, design_families

TIE = 0.02


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
    """One criterion at one point: the winning design (or a tie, :func:`tie_label`), each design's best figure."""

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


def winners(rows: list[dict[str, Any]], parameters: list[str], criteria: list[str]) -> list[Winner]:
    """Per point and criterion, the design with the lowest figure (ties within :data:`TIE`)."""
    by_point: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_point[tuple(r[p] for p in parameters)].append(r)
    out = []
    for key, members in by_point.items():
        point = dict(zip(parameters, key, strict=True))
        for crit in criteria:
            best: dict[str, tuple[float, str]] = {}
            for r in members:
                fam = _design(r["kind"])
                v = r.get(crit)
                if fam is None or v is None or (isinstance(v, float) and math.isnan(v)):
                    continue
                if fam not in best or v < best[fam][0]:
                    best[fam] = (float(v), r["engine"])
            if not best:
                continue
            ranked = sorted(best.items(), key=lambda kv: kv[1][0])
            low = ranked[0][1][0]
            tied = [f for f, (v, _) in ranked if v - low <= TIE * max(abs(low), abs(v), 1e-12)]
            win = tie_label(tied) if len(tied) > 1 else ranked[0][0]
            out.append(Winner(point, crit, win, {f: v for f, (v, _) in best.items()},
                              {f: e for f, (_, e) in best.items()}))
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
