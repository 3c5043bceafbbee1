"""The RFC-19 design review, answered from a run's numbers: decision table, findings, conditions.

Every figure is computed from the results folder; a criterion whose figure is missing says so.
Engines are grouped into design families by run.json ``engines[name].kind`` (cow_baseline →
Baseline, append_compaction → Option 1, clustering → Option 2, delta_peer → Delta peer). Per
family the decision table shows the *best* variant for each criterion (named in parentheses) and,
when the family's variants differ, the worst one too — so Option 1's RFC-order reader failures are
never hidden behind commit-before-delete's clean record. Timings within 25 % of each other are
called a tie (one run with a few warm repetitions on a shared machine cannot separate them);
counts and bytes are exact.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from bench.results import Results
from reports.summary import EngineSummary, fmt, summarize

FAMILY_ORDER = ("Baseline", "Option 1", "Option 2", "Delta peer")
TIMING_TIE = 1.25


@dataclass
class Criterion:
    name: str
    value: Callable[[EngineSummary], float | None]
    unit: str
    lower_is_better: bool = True
    timing: bool = False


def criteria(summaries: list[EngineSummary]) -> list[Criterion]:
    """The decision criteria: fixed ones, then per query of the run (warm median, files scanned)."""
    out = [
        Criterion("write amplification (final)", lambda s: s.wa, "x"),
        Criterion("ingest latency p50", lambda s: s.ingest_p50_s, "s", timing=True),
        Criterion("ingest latency p95", lambda s: s.ingest_p95_s, "s", timing=True),
        Criterion("ingest throughput", lambda s: s.ingest_mb_s, "MB/s", lower_is_better=False, timing=True),
        Criterion("maintenance time (total)", lambda s: s.maintenance_s if s.maintenance_runs else None, "s",
                  timing=True),
        Criterion("live files (final)", lambda s: s.live_files, "files"),
        Criterion("physical files (peak)", lambda s: s.physical_files_peak, "files"),
        Criterion("space amplification (peak)", lambda s: s.space_amp_peak, "x"),
        Criterion("space amplification (final)", lambda s: s.space_amp_final, "x"),
    ]
    queries = sorted({q for s in summaries for q in s.queries_warm_median_s})
    for q in queries:
        out.append(Criterion(f"query {q} (warm median)", lambda s, q=q: s.queries_warm_median_s.get(q), "s",
                             timing=True))
        out.append(Criterion(f"query {q} files scanned", lambda s, q=q: s.queries_files_scanned.get(q), "files"))
    out += [
        Criterion("reader queries failed or wrong during maintenance",
                  lambda s: s.isolation_bad if s.isolation_total else None, "queries"),
        Criterion("rows lost in crash tests", lambda s: s.crash_rows_lost, "rows"),
        Criterion("rows duplicated in crash tests", lambda s: s.crash_rows_duplicated, "rows"),
    ]
    return out


def _ranked(members: list[EngineSummary], crit: Criterion) -> list[tuple[float, str]]:
    vals = [(v, s.engine) for s in members if (v := crit.value(s)) is not None]
    return sorted(vals, reverse=not crit.lower_is_better)


def _margin(best: float, second: float, crit: Criterion) -> str | None:
    """By how much the best beats the second best, or None for a tie."""
    if best == second:
        return None
    lo, hi = sorted((best, second))
    if lo > 0:
        ratio = hi / lo
        if crit.timing and ratio < TIMING_TIE:
            return None
        return f"{ratio:.2f}x"
    return f"{abs(second - best):.3g} {crit.unit}"


def decision_rows(summaries: list[EngineSummary]) -> list[dict[str, str]]:
    """One row per criterion: the best (and worst) variant per family, the winner and by how much."""
    families = [f for f in FAMILY_ORDER if any(s.family == f for s in summaries)]
    families += sorted({s.family for s in summaries} - set(families))
    rows = []
    for crit in criteria(summaries):
        row = {"criterion": f"{crit.name} [{crit.unit}]"}
        best: list[tuple[float, str]] = []
        for fam in families:
            ranked = _ranked([s for s in summaries if s.family == fam], crit)
            if not ranked:
                row[fam] = "n/a (not measured)"
                continue
            (v, engine), (wv, wengine) = ranked[0], ranked[-1]
            row[fam] = f"{fmt(v)} ({engine})" + (f"; worst {fmt(wv)} ({wengine})" if fmt(wv) != fmt(v) else "")
            best.append((v, fam))
        best.sort(reverse=not crit.lower_is_better)
        if len(best) < 2:
            row["winner"], row["by how much"] = "n/a", "n/a (fewer than two designs measured)"
        else:
            margin = _margin(best[0][0], best[1][0], crit)
            if margin is None:
                row["winner"] = "tie"
                row["by how much"] = f"within {int((TIMING_TIE - 1) * 100)}%" if crit.timing else "equal"
            else:
                row["winner"], row["by how much"] = best[0][1], f"{margin} vs {best[1][1]}"
        rows.append(row)
    return rows


def answer(rows: list[dict[str, str]]) -> str:
    """A one-paragraph tally of the decision table."""
    wins = Counter(r["winner"] for r in rows if r["winner"] not in ("tie", "n/a"))
    decided = sum(wins.values())
    if not decided:
        return "No criterion separated the designs in this run."
    tally = ", ".join(f"{fam} {n}" for fam, n in wins.most_common())
    ties = sum(1 for r in rows if r["winner"] == "tie")
    return (f"Of {len(rows)} criteria, {decided} have a winner ({tally}), {ties} are ties and "
            f"{len(rows) - decided - ties} could not be decided from this run. Counting wins weighs every criterion "
            "equally; correctness rows (reader failures, crash losses) are not a matter of degree — read the "
            "findings below.")


def _order(results: Results, engine: str) -> str:
    return str(results.run.get("engines", {}).get(engine, {}).get("config", {}).get("order", "rfc"))


def _retained(results: Results) -> str:
    return str(results.run.get("scenario", {}).get("sizing", {}).get("cleaner_commits_retained", "?"))


def findings(results: Results, summaries: list[EngineSummary]) -> list[str]:
    """The findings that matter, each with its figure and the scenario; a missing figure says so."""
    scen = f"scenario `{results.run.get('scenario', {}).get('name', '?')}`"
    out = []
    for s in summaries:
        if s.family == "Option 1":
            if s.isolation_total:
                missing = ("" if s.isolation_rows_missing_max is None
                           else f"; a wrong result missed up to {s.isolation_rows_missing_max} rows")
                out.append(f"**{s.engine}** ({_order(results, s.engine)} order): {s.isolation_bad} of "
                           f"{s.isolation_total} reader queries during compaction failed or returned wrong rows "
                           f"({s.isolation['failed']} failed, {s.isolation['wrong']} wrong{missing}) — {scen}.")
            else:
                out.append(f"**{s.engine}** ({_order(results, s.engine)} order): reader isolation figure missing "
                           f"(no reader ran during its compaction in {scen}).")
            if s.physical_files_peak is not None and s.live_files is not None:
                out.append(f"**{s.engine}**: physical files peak {s.physical_files_peak}, space amplification peak "
                           f"{fmt(s.space_amp_peak)}x — {scen}.")
        elif s.family == "Option 2":
            readers = (f"{s.isolation['ok']} of {s.isolation_total} concurrent reader queries ok"
                       if s.isolation_total else "reader isolation figure missing (no reader ran during clustering)")
            out.append(f"**{s.engine}**: space amplification peaks at {fmt(s.space_amp_peak)}x and physical files at "
                       f"{fmt(s.physical_files_peak)} (replaced file groups kept until the cleaner, "
                       f"{_retained(results)} commits retained), final {fmt(s.space_amp_final)}x; {readers} — {scen}.")
        elif s.family == "Baseline":
            others = ", ".join(f"{o.engine} {fmt(o.wa)}x" for o in summaries if o.family != "Baseline")
            out.append(f"**{s.engine}**: write amplification {fmt(s.wa)}x (every small-file top-up rewrites the whole "
                       f"file) vs {others or 'no other engine'}; ingest p50 {fmt(s.ingest_p50_s)} s vs "
                       + (", ".join(f"{o.engine} {fmt(o.ingest_p50_s)} s" for o in summaries if o.family != "Baseline")
                          or "no other engine") + f" — {scen}.")
        if s.crash_points:
            out.append(f"**{s.engine}**: crash tests ({s.crash_points} injection points) lost "
                       f"{fmt(s.crash_rows_lost)} rows and duplicated {fmt(s.crash_rows_duplicated)}.")
        if s.verification_failures or (s.queries_total and not s.verified):
            out.append(f"**{s.engine}**: data verification {s.verification}: "
                       + "; ".join(s.verification_failures[:3]))
    if not any(s.crash_points for s in summaries):
        out.append("Crash safety figure missing: this results folder has no crash test (`layoutbench crashtest`).")
    present = {s.family for s in summaries}
    for fam in ("Baseline", "Option 1", "Option 2"):
        if fam not in present:
            out.append(f"{fam}: no engine of this design in the run — its findings are missing.")
    return out


def conditions(results: Results, simulation: Results | None) -> list[str]:
    """When the answer would change: the mechanisms, then the simulator's projections when attached."""
    out = [
        "Option 1's RFC order (delete, then commit) is only safe when no reader lists files during a compaction and the "
        "writer never dies between the deletes and the commit; both are measured above (isolation) and by "
        "`layoutbench crashtest`. Commit-before-delete removes the hazard and takes Option 2's space overhead instead.",
        f"Option 2's space overhead is bounded by the bytes rewritten within `cleaner_commits_retained` "
        f"(here {_retained(results)}) commits; a smaller retention lowers it but shortens the time-travel and "
        "long-query window.",
        "The baseline's WA grows with the ratio small-file limit / batch size: large batches (>= the limit) make it "
        "write each byte once, tiny batches make it approach limit / (2 x batch).",
    ]
    sim = simulation if simulation is not None else (results if results.simulated else None)
    if sim is None:
        out.append("No simulation was attached: projections to longer horizons and more partitions are missing "
                   "(run `layoutbench simulate` and pass `--simulation DIR`).")
        return out
    info = sim.run.get("simulation", {})
    name = sim.run.get("scenario", {}).get("name", "?")
    horizon = info.get("horizon_batches", "?")
    requests = info.get("requests", {})
    for s in summarize(sim):
        req = requests.get(s.engine, {})
        cost = f", object-store requests {json.dumps({k: req[k] for k in req if k != 'usd'})} ≈ ${req['usd']}" \
            if req.get("usd") is not None else ""
        out.append(f"At scale (simulated `{name}`, {horizon} batches): {s.engine} WA {fmt(s.wa)}x, live files "
                   f"{fmt(s.live_files)}, physical files peak {fmt(s.physical_files_peak)}, space amplification peak "
                   f"{fmt(s.space_amp_peak)}x{cost}.")
    return out
