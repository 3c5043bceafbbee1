"""The choice among designs: each represented by its cheapest candidate (by the ledger) among those
passing the required gates; the cheapest representative is chosen when every other design's
ledger is above it beyond the margin, else the designs within it are equivalent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from runresults.review.families import DESIGNS
from runresults.review.gates import GateResult, failed_required
from runresults.review.ledger import Ledger
from runresults.uncertainty import Interval, decide, paired_ratio


@dataclass
class Choice:
    """``design`` (None: no design has a candidate passing the gates), its ``candidate``, the designs
    ``equivalent`` to it within the margin, and each design's representative (None: none passed)."""

    design: str | None
    candidate: str | None
    equivalent: list[str] = field(default_factory=list)
    representatives: dict[str, str | None] = field(default_factory=dict)
    ratios: dict[str, dict[str, Any]] = field(default_factory=dict)  # design -> its ledger / the choice's
    excluded: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # design -> candidate -> failed gates

    @property
    def decided(self) -> bool:
        return self.design is not None and not self.equivalent

    def as_dict(self) -> dict[str, Any]:
        return {"design": self.design, "candidate": self.candidate, "equivalent": self.equivalent,
                "decided": self.decided, "representatives": self.representatives, "ratios": self.ratios,
                "excluded": self.excluded}


def mean_per_tb(led: Ledger) -> float:
    iv = led.usd_per_tb()
    return iv.value if iv is not None else float("inf")


def ledger_ratio(a: Ledger, b: Ledger):  # noqa: ANN201 - Interval | None
    """b's $/TB over a's, paired by sample (the same repetition, or the same group of interleaved rounds).
    When both ledgers price storage alone (:meth:`Ledger.deterministic`), the ratio is exact: it decides on
    its value against the margin, as no re-measurement would move it."""
    pa, pb = a.per_tb_by_sample(), b.per_tb_by_sample()
    common = sorted(set(pa) & set(pb))
    ratio = paired_ratio([pa[r] for r in common], [pb[r] for r in common])
    if ratio is not None and a.deterministic() and b.deterministic():
        return Interval(ratio.value, ratio.value, ratio.value, ratio.n, "exact")
    return ratio


def choose(families: dict[str, str], gates: dict[str, dict[str, GateResult]], ledgers: dict[str, Ledger],
           requires: list[str], margin: float) -> Choice:
    """The choice under ``requires`` (see the module docstring)."""
    reps: dict[str, str | None] = {}
    excluded: dict[str, dict[str, list[str]]] = {}
    for design in DESIGNS:
        members = [e for e, f in families.items() if f == design and e in ledgers and ledgers[e].per_tb_by_sample()]
        if not members:
            continue
        failing = {e: failed_required(gates[e], requires) for e in members}
        excluded[design] = {e: g for e, g in failing.items() if g}
        passing = [e for e in members if not failing[e]]
        reps[design] = min(passing, key=lambda e: mean_per_tb(ledgers[e])) if passing else None
    present = {d: e for d, e in reps.items() if e is not None}
    if not present:
        return Choice(None, None, representatives=reps, excluded=excluded)
    best = min(present, key=lambda d: mean_per_tb(ledgers[present[d]]))
    ratios, equivalent = {}, []
    for d, e in present.items():
        if d == best:
            continue
        r = ledger_ratio(ledgers[present[best]], ledgers[e])
        verdict = decide(r, margin)
        ratios[d] = {"ratio": r.as_dict() if r else None, "text": r.text() if r else "n/a", "verdict": verdict}
        if verdict != "higher":
            equivalent.append(d)
    return Choice(best, present[best], equivalent, reps, ratios, excluded)
