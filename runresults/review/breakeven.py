"""How far a price or the query rate must move to change the choice: break-even factors from the
ledger itself, with no re-run or re-simulation (T17: where the answer changes).

Each lever scales some parts of every candidate's ledger by the same factor ``f``:
- ``queries_per_hour``: the queries part (the queries' object-store requests stay in requests);
- ``core_hour``: the compute parts and the queries part (query seconds are core-seconds);
- ``storage_gb_month``: the storage part;
- ``requests``: the requests part (every request price at once).

A candidate's cost is then ``fixed + f × scaled``, a line in ``f``. Against the choice's
representative, another design's becomes equivalent where its cost is within the margin, and is
cheaper beyond it where ``other < (1 - margin) × choice``; each crossing is solved in closed form
from the two lines (means over the repetitions; the intervals are the ledger's own).
"""

from __future__ import annotations

from typing import Any

LEVERS: dict[str, tuple[str, ...]] = {
    "queries_per_hour": ("queries",),
    "core_hour": ("compute: ingest", "compute: maintenance", "compute: cleaning", "queries"),
    "storage_gb_month": ("storage",),
    "requests": ("requests",),
}
LABELS = {"queries_per_hour": "the query rate", "core_hour": "the core-hour price",
          "storage_gb_month": "the storage price", "requests": "the request prices"}


def _line(ledger: dict[str, Any], parts: tuple[str, ...]) -> tuple[float, float]:
    """(fixed, scaled) $ per TB of a stored ledger for a lever's ``parts``."""
    values = {p: (iv or {}).get("value") or 0.0 for p, iv in ledger["parts_usd_per_tb"].items()}
    scaled = sum(values.get(p, 0.0) for p in parts)
    return sum(values.values()) - scaled, scaled


def _crossing(choice: tuple[float, float], other: tuple[float, float], ratio: float) -> float | None:
    """The factor f > 0 where other(f) = ratio × choice(f), None when the lines never meet there."""
    (ac, bc), (ao, bo) = choice, other
    denominator = bo - ratio * bc
    if abs(denominator) < 1e-15:
        return None
    f = (ratio * ac - ao) / denominator
    return f if f > 0 else None


def breakeven(review: dict[str, Any]) -> list[dict[str, Any]]:
    """Per lever and per other design's representative: the factor where it becomes equivalent to the
    choice and where it is cheaper beyond the margin (None when no positive factor does it)."""
    choice = review["choice"]["run"]
    chosen = choice.get("candidate")
    if not chosen:
        return []
    margin = review["margin"]
    candidates = review["candidates"]
    out = []
    for design, other in (choice.get("representatives") or {}).items():
        if not other or other == chosen:
            continue
        for lever, parts in LEVERS.items():
            c, o = _line(candidates[chosen]["ledger"], parts), _line(candidates[other]["ledger"], parts)
            cheaper = _crossing(c, o, 1 - margin)
            # already within the margin: no crossing into equivalence to state
            equal = _crossing(c, o, 1 + margin) if sum(o) > (1 + margin) * sum(c) else None
            out.append({"lever": lever, "design": design, "candidate": other, "equivalent_at": equal,
                        "cheaper_at": cheaper, "text": _text(lever, design, other, equal, cheaper)})
    return out


def _factor(f: float) -> str:
    return f"×{f:.3g}"


def _text(lever: str, design: str, other: str, equal: float | None, cheaper: float | None) -> str:
    if cheaper is None:
        return f"no change of {LABELS[lever]} alone makes {design} (`{other}`) cheaper beyond the margin"
    head = f"{LABELS[lever]} {_factor(cheaper)} makes {design} (`{other}`) cheaper beyond the margin"
    return head + (f" (equivalent from {_factor(equal)})" if equal is not None else "")
