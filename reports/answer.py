"""``## The answer`` and the design review's tables, rendered from the review data
(:mod:`runresults.review`, stored in ``run.json`` as ``review``): at most eight plain sentences,
then the cost figure; below them the gates, the ledgers and the criteria."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from runresults.review.families import design_families
from runresults.review.gates import label
from runresults.uncertainty import MIN_N, below_confidence, single_sample

MAX_SENTENCES = 8


def _iv(d: dict[str, Any] | None, digits: int = 3) -> str:
    """An interval dict as text (as :meth:`runresults.uncertainty.Interval.text`)."""
    if not d:
        return "n/a"
    from runresults.uncertainty import Interval

    return Interval(**d).text(digits)


def _usd(review: dict[str, Any], engine: str | None) -> float | None:
    iv = review["candidates"][engine]["ledger"]["usd_per_tb"] if engine else None
    return iv["value"] if iv else None


def _money(v: float | None) -> str:
    return "n/a" if v is None else f"${v:.4g}"


def _who(review: dict[str, Any], design: str) -> str:
    engine = review["choice"]["run"]["representatives"].get(design)
    return f"{design} (`{engine}`)" if engine else design


def _gate_failure(review: dict[str, Any], engine: str, gates: list[str]) -> str:
    parts = []
    for g in gates:
        r = review["candidates"][engine]["gates"][g]
        fig = f"{r['figure']:g} {r['figure_unit']}" if r.get("figure") is not None else f"{r['failures']} failures"
        parts.append(f"{label(g)}: {r.get('detail') or fig}")
    return ", ".join(parts)


def _choice_sentence(review: dict[str, Any]) -> str:
    ch = review["choice"]["run"]
    margin = f"±{review['margin'] * 100:g}%"
    if ch["design"] is None:
        return "No design has a candidate that passes the required gates, so this run cannot choose."
    own = f"{_money(_usd(review, ch['candidate']))} per TB ingested"
    others = [(d, r) for d, r in ch["ratios"].items()]
    if ch["decided"]:
        vs = "; ".join(f"{_who(review, d)} {_money(_usd(review, ch['representatives'][d]))}, {r['text']} times as much"
                       for d, r in others)
        return (f"Choose {_who(review, ch['design'])}: over the table's life it costs {own}, the least, beyond the "
                f"{margin} margin" + (f" ({vs})." if vs else "."))
    names = [_who(review, d) for d in [ch["design"], *ch["equivalent"]]]
    ratios = "; ".join(f"{d} {ch['ratios'][d]['text']} times the cost" for d in ch["equivalent"])
    # a ratio without a 95% interval (one measurement each, or a range of a few) shows no difference
    kinds = [_confidence(ch["ratios"][d].get("ratio")) for d in ch["equivalent"]]
    ways = {"margin": f"within the {margin} margin", "single": "measured once with no interval, not separable from it",
            "range": f"with fewer than {MIN_N} samples (a range, not a 95% interval), not separable from it"}
    how = " or, ".join(ways[k] for k in dict.fromkeys(kinds))
    dearer = "; ".join(f"{_who(review, d)} costs {r['text']} times as much, beyond the margin"
                       for d, r in others if d not in ch["equivalent"])
    return (f"{', '.join(names[:-1])} and {names[-1]} are equivalent in cost: {own} for the cheapest, "
            f"and the others {how} ({ratios}); the choice between them rests on other grounds."
            + (f" {dearer[0].upper()}{dearer[1:]}." if dearer else ""))


def _confidence(ratio: dict[str, Any] | None) -> str:
    """"single" (one sample each), "range" (fewer than MIN_N) or "margin" (a 95% interval or exact)."""
    if not ratio:
        return "margin"
    kind, n = str(ratio.get("kind")), int(ratio.get("n") or 0)
    if single_sample(kind, n):
        return "single"
    return "range" if below_confidence(kind, n) else "margin"


def answer_sentences(review: dict[str, Any], scenario: str) -> list[str]:
    """The answer in at most :data:`MAX_SENTENCES` plain sentences, computed from the review."""
    ch, by = review["choice"]["run"], review["decided_by"]
    out = [f"**Scenario `{scenario}`.** " + _choice_sentence(review)]
    if by["kind"] == "gate":
        ungated = by.get("without_gates")
        fails = {e: [g for g in by["gates"] if c["gates"][g]["passed"] is False]
                 for e, c in review["candidates"].items() if c["family"] == ungated}
        culprit = min((e for e, g in fails.items() if g), key=lambda e: _usd(review, e) or float("inf"), default=None)
        if culprit:
            out.append(f"The {' and '.join(label(g) for g in by['gates'])} gate decided: without it {ungated} "
                       f"(`{culprit}`) would cost less, but it fails "
                       f"{_gate_failure(review, culprit, fails[culprit])}.")
    if ch["candidate"]:
        parts = review["candidates"][ch["candidate"]]["ledger"]["parts_usd_per_tb"]
        total = sum(p["value"] for p in parts.values() if p) or 1.0
        # parts priced at $0 (a scenario may price no seconds: docs/example) are not named
        top = sorted(((k, p["value"]) for k, p in parts.items() if p and p["value"]), key=lambda kv: -kv[1])[:2]
        qph = review["settings"]["queries_per_hour"]
        rate = f"at {qph:g} runs of each query an hour" if qph else "with no query runs priced (queries_per_hour: 0)"
        if top:
            out.append(f"Most of its cost is {top[0][0]} ({top[0][1] / total:.0%})"
                       + (f", then {top[1][0]} ({top[1][1] / total:.0%})" if len(top) > 1 else "") + f", {rate}.")
    ruled = {e: c["failed_required"] for e, c in review["candidates"].items() if c["competes"] and c["failed_required"]}
    if ruled:
        out.append("Ruled out by the required gates: " + "; ".join(
            f"`{e}` ({_gate_failure(review, e, g)})" for e, g in ruled.items()) + ".")
    if review["gates_not_measured"]:
        out.append("Not measured in this run, so not part of the choice: "
                   + ", ".join(label(g) for g in review["gates_not_measured"]) + ".")
    if review["flips"]:
        out.append("The choice changes " + "; ".join(f["text"] for f in review["flips"]) + ".")
    nearest = nearest_breakeven(review.get("breakeven", []))
    if nearest and len(out) + 2 <= MAX_SENTENCES:  # the target's sentence comes last, always
        out.append(f"The nearest price or rate that changes it: {nearest['text']}.")
    target = review["choice"].get("target")
    t = review["settings"]["target"]
    scale = (f"{t['batch_mb']:g} MB batches, {t['small_file_limit_mb']:g} MB small-file limit, "
             f"{t['horizon_days']:g} days on {t['store']}")
    if target:
        out.append(f"At the target scale ({scale}): {target.get('text') or target.get('design')}.")
    else:
        out.append(f"At the target scale ({scale}) the choice is not projected in this report.")
    return out[:MAX_SENTENCES]


def nearest_breakeven(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The break-even (``runresults.review.breakeven``) with the smallest move, in either direction."""
    moving = [b for b in rows if b.get("cheaper_at")]
    return min(moving, key=lambda b: abs(math.log(b["cheaper_at"])), default=None)


def gates_frame(review: dict[str, Any]) -> pd.DataFrame:
    """One row per candidate (designs first, then references): each gate's cell."""
    rows = []
    required = review["settings"]["requires"]
    for e, c in _ordered(review):
        row = {"candidate": e, "design": c["family"] + ("" if c["competes"] else " (reference)")}
        for g, r in c["gates"].items():
            row[label(g) + (" (required)" if g in required else "")] = _gate_text(r)
        row["required gates failed"] = ", ".join(label(g) for g in c["failed_required"]) or "none"
        rows.append(row)
    return pd.DataFrame(rows)


def _gate_text(r: dict[str, Any]) -> str:
    if r["status"] == "not measured":
        return "not measured"
    if r["status"] == "n/a":
        return "n/a" + (f" ({r['detail']})" if r.get("detail") else "")
    fig = f", {r['figure']:g} {r['figure_unit']}" if r.get("figure") is not None else ""
    readers = f" [{', '.join(r['readers'])}]" if r.get("readers") else ""
    if r["passed"]:
        return f"pass ({r['checked']} checked{fig}){readers}"
    return f"FAIL {r['failures']} of {r['checked']}{fig}{readers}"


def _ordered(review: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    order = {d: i for i, d in enumerate(design_families())}
    return sorted(review["candidates"].items(), key=lambda kv: (not kv[1]["competes"], order.get(kv[1]["family"], 9)))


def shown_in_ledger(review: dict[str, Any]) -> list[str]:
    """Candidates whose ledger is shown: every one but those failing a required gate (references
    are shown beside the choice whatever their gates)."""
    return [e for e, c in _ordered(review) if not (c["competes"] and c["failed_required"])
            and c["ledger"]["usd_per_tb"] is not None]


def ledger_frame(review: dict[str, Any]) -> pd.DataFrame:
    """$ per TB ingested and its parts, per candidate shown (see :func:`shown_in_ledger`)."""
    reps = review["choice"]["run"]["representatives"]
    rows = []
    for e in shown_in_ledger(review):
        c = review["candidates"][e]
        led = c["ledger"]
        role = (f"represents {c['family']}" if reps.get(c["family"]) == e else
                "candidate" if c["competes"] else "reference")
        row = {"candidate": e, "design": c["family"], "role": role, "$ / TB": _iv(led["usd_per_tb"])}
        for part, iv in led["parts_usd_per_tb"].items():
            row[part] = _iv(iv)
        row["TB ingested"] = f"{led['tb_ingested']:.3g}"
        rows.append(row)
    return pd.DataFrame(rows)


def criteria_frame(review: dict[str, Any]) -> pd.DataFrame:
    """Each design's representative against the choice, criterion by criterion."""
    rows = []
    for block in review["criteria"]:
        for r in block["rows"]:
            rows.append({"design": block["design"], "criterion": r["criterion"],
                         "choice": f"`{r['a']}` " + r["figures"].get(r["a"], "n/a"), "other": f"`{r['b']}` " + r["figures"].get(r["b"], "n/a"),
                         "ratio other / choice": r["ratio_text"],
                         "verdict": f"{r['b']} {r['verdict']}" if r["verdict"] in ("lower", "higher") else r["verdict"],
                         "basis": r["basis"]})
    return pd.DataFrame(rows)
