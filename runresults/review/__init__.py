"""The review: the answer a design committee acts on, computed from a results folder alone.

Candidates compete whole: each engine entry is a candidate; a design (baseline, Option 1,
Option 2) is represented by its cheapest candidate by the ledger among those that pass the gates
the scenario requires (``review.requires``). A candidate failing a required gate appears in the
gates with its failing figure and nowhere else. Peers (the control, delta-rs, Apache Hudi) are
reference columns with their gates and ledgers, outside the choice. :func:`review` returns the
answer as data (stored in ``run.json`` as ``review``); reports render it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from runresults import Results
from runresults.review.breakeven import breakeven
from runresults.review.choice import Choice, choose
from runresults.review.compare import compare
from runresults.review.families import design_families, engine_families
from runresults.review.gates import gate_results, label
from runresults.review.ledger import PARTS, RULES, ledger
from runresults.review.settings import GATE_USERS, GATES, ReviewSpec, review_settings
from runresults.uncertainty import METHOD

REVIEW_VERSION = 2  # 2: breakeven
DECISION_RULE = ("a difference decides only when its 95% interval (from 10 samples on) lies wholly outside "
                 "1 ± margin; otherwise, and for a range of fewer samples, the two are equivalent")

__all__ = ["GATES", "ReviewSpec", "review", "review_of", "store_review"]


def _deciding_gates(base: Choice, ungated: Choice, requires: list[str], gates: dict) -> list[str]:
    """The required gates that changed the choice: those the ungated choice's candidate fails."""
    if ungated.candidate is None or ungated.candidate == base.candidate:
        return []
    return [g for g in requires if gates[ungated.candidate][g].passed is False]


def _flips(families: dict[str, str], gates: dict, ledgers: dict, settings: ReviewSpec, base: Choice) -> list[dict[str, Any]]:
    """Each one-gate change of ``requires`` that changes the choice."""
    out = []
    for g in GATES:
        required = g in settings.requires
        alt = [x for x in settings.requires if x != g] if required else [*settings.requires, g]
        c = choose(families, gates, ledgers, alt, settings.margin)
        if (c.design, c.equivalent) != (base.design, base.equivalent):
            what = c.design if c.decided else (" or ".join([c.design, *c.equivalent]) if c.design else "no design")
            out.append({"gate": g, "required": not required, "choice": c.design, "equivalent": c.equivalent,
                        "text": f"{'without' if required else 'with'} {GATE_USERS[g]} ({label(g)} gate): {what}"})
    return out


def review(results: Results, crash: Results | None = None, projection: dict[str, Any] | None = None,
           criteria: bool = True) -> dict[str, Any]:
    """The review of a results folder as a JSON-ready dict (see the module docstring).

    ``crash``: a crash test's folder whose rows give the no-loss gate; ``projection``: the target
    scale's choice when the projection has been made (else the target slot stays None);
    ``criteria`` False leaves the criterion-by-criterion comparisons out (``criteria`` empty): the
    choice at a projected target needs only the ledgers, and a projected year is 5 x 10^5
    simulated batches, whose per-batch bootstrap would allocate 2000 x 525,600 indices (7.8 GiB)."""
    settings = review_settings(results.run)
    families = engine_families(results.run)
    gates = gate_results(results, list(families), crash)
    ledgers = {e: ledger(results, e, settings.prices, settings.queries_per_hour) for e in families}
    base = choose(families, gates, ledgers, settings.requires, settings.margin)
    ungated = choose(families, gates, ledgers, [], settings.margin)
    deciding = _deciding_gates(base, ungated, settings.requires, gates)
    criteria_rows = []
    if base.candidate and criteria:
        for d, e in base.representatives.items():
            if e and e != base.candidate:
                criteria_rows.append({"design": d, "candidate": e,
                                      "rows": [c.as_dict() for c in compare(results, base.candidate, e, ledgers,
                                                                             settings.margin)]})
    designs = design_families()  # asked now: a kind registered after import competes too
    candidates = {}
    for e, fam in families.items():
        failed = [g for g in settings.requires if gates[e][g].passed is False]
        candidates[e] = {"family": fam, "competes": fam in designs, "gates": {g: r.as_dict() for g, r in gates[e].items()},
                         "failed_required": failed,
                         "represents": next((d for d, r in base.representatives.items() if r == e), None),
                         "ledger": ledgers[e].as_dict()}
    measured = {g: any(gates[e][g].measured for e in families) for g in GATES}
    out = {
        "version": REVIEW_VERSION, "settings": settings.model_dump(mode="json"), "margin": settings.margin,
        "rules": {"ledger": RULES, "intervals": METHOD, "decision": DECISION_RULE}, "parts": list(PARTS),
        "candidates": candidates, "references": [e for e, f in families.items() if f not in designs],
        "choice": {"run": base.as_dict(), "target": projection},
        "decided_by": ({"kind": "gate", "gates": deciding, "without_gates": ungated.design} if deciding else
                       {"kind": "ledger" if base.decided else ("equivalent" if base.design else "none"), "gates": []}),
        "criteria": criteria_rows, "flips": _flips(families, gates, ledgers, settings, base),
        "breakeven": [],
        "gates_not_measured": [g for g in settings.requires if not measured[g]],
    }
    out["breakeven"] = breakeven(out)
    return out


def review_of(results: Results, crash: Results | None = None) -> dict[str, Any]:
    """The stored review, or one computed from the folder when absent (or a crash test is attached)."""
    stored = results.run.get("review")
    if stored and crash is None and stored.get("version") == REVIEW_VERSION:
        return stored
    return review(results, crash)


def store_review(folder: str | Path) -> dict[str, Any]:
    """Compute the review of a written results folder and add it to its ``run.json``."""
    t0 = time.perf_counter()
    results = Results(folder)
    out = review(results)
    out["elapsed_s"] = time.perf_counter() - t0
    path = results.folder / "run.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({**results.run, "review": out}, indent=2, default=str))
    tmp.replace(path)
    return out
