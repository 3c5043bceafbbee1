"""The RFC-19 design review, answered from a run's numbers: decision table, findings, conditions.

Every figure is computed from the results folder; a criterion whose figure is missing says so.
Engines are grouped into designs by run.json ``engines[name].kind`` (the registry's family, engines.kinds).
Only the RFC designs compete (baseline, Option 1, Option 2); the no-maintenance control, delta-rs
and Apache Hudi are reference columns outside the tally. Per design the decision table shows the
*best* variant for each criterion (named in parentheses) and, when the variants differ, the worst
one too, so Option 1's RFC-order reader failures are never hidden behind commit-before-delete's
clean record. Timings carry 95% bootstrap intervals over every repetition and win only when the
intervals separate (:mod:`runresults.uncertainty`); counts and bytes are exact. :func:`verdict` states
the answer in a few sentences computed from the table and the correctness findings.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from engines.kinds import FAMILY_ORDER
from reports.summary import RFC_DESIGNS, EngineSummary, fmt, summarize
from runresults import Results
from runresults.uncertainty import timing_winner


@dataclass
class Criterion:
    name: str
    value: Callable[[EngineSummary], float | None]
    unit: str
    lower_is_better: bool = True
    timing: str | None = None  # key of EngineSummary.timings: the figure has an interval


def criteria(summaries: list[EngineSummary]) -> list[Criterion]:
    """The decision criteria: fixed ones, then per query of the run (warm median, and the scan cost
    no engine's fixed cost can hide: files opened, row groups read, rows read after pruning)."""
    def timed(key: str) -> Callable[[EngineSummary], float | None]:
        return lambda s: s.timings[key].value if key in s.timings else None

    out = [
        Criterion("write amplification (final)", lambda s: s.wa, "x"),
        Criterion("ingest latency p50", timed("ingest p50"), "s", timing="ingest p50"),
        Criterion("ingest latency p95", timed("ingest p95"), "s", timing="ingest p95"),
        Criterion("ingest throughput", timed("ingest throughput"), "MB/s", lower_is_better=False,
                  timing="ingest throughput"),
        Criterion("maintenance time (total)", lambda s: s.timings["maintenance total"].value
                  if s.maintenance_runs and "maintenance total" in s.timings else None, "s", timing="maintenance total"),
        Criterion("live files (final)", lambda s: s.live_files, "files"),
        Criterion("physical files (peak)", lambda s: s.physical_files_peak, "files"),
        Criterion("space amplification (peak)", lambda s: s.space_amp_peak, "x"),
        Criterion("space amplification (final)", lambda s: s.space_amp_final, "x"),
    ]
    queries = sorted({q for s in summaries for q in s.queries_warm_median_s})
    for q in queries:
        out.append(Criterion(f"query {q} (warm median)", timed(f"query {q}"), "s", timing=f"query {q}"))
        out.append(Criterion(f"query {q} files scanned", lambda s, q=q: s.queries_files_scanned.get(q), "files"))
        out.append(Criterion(f"query {q} row groups read", lambda s, q=q: s.queries_row_groups.get(q), "row groups"))
        out.append(Criterion(f"query {q} rows read after pruning", lambda s, q=q: s.queries_rows_read.get(q), "rows"))
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
    """By how much the best exact figure beats the second best, or None when they are equal."""
    if best == second:
        return None
    lo, hi = sorted((best, second))
    if lo > 0:
        return f"{hi / lo:.2f}x"
    return f"{abs(second - best):.3g} {crit.unit}"


def _cell(s: EngineSummary, crit: Criterion, v: float) -> str:
    if crit.timing and crit.timing in s.timings:
        return s.timings[crit.timing].text()
    return fmt(v)


def decision_rows(summaries: list[EngineSummary]) -> list[dict[str, str]]:
    """One row per criterion: the best (and worst) variant per design, the winner among the RFC
    designs (the others are reference columns, outside the tally) and by how much. Timings win
    only when their 95% intervals separate (runresults.uncertainty)."""
    families = [f for f in FAMILY_ORDER if any(s.family == f for s in summaries)]
    families += sorted({s.family for s in summaries} - set(families))
    rows = []
    for crit in criteria(summaries):
        row = {"criterion": f"{crit.name} [{crit.unit}]"}
        best: dict[str, tuple[float, EngineSummary]] = {}
        for fam in families:
            members = [s for s in summaries if s.family == fam]
            ranked = _ranked(members, crit)
            if not ranked:
                row[fam] = "n/a (not measured)"
                continue
            by_name = {s.engine: s for s in members}
            (v, engine), (wv, wengine) = ranked[0], ranked[-1]
            row[fam] = f"{_cell(by_name[engine], crit, v)} ({engine})" + (
                f"; worst {_cell(by_name[wengine], crit, wv)} ({wengine})" if fmt(wv) != fmt(v) else "")
            if fam in RFC_DESIGNS:
                best[fam] = (v, by_name[engine])
        if len(best) < 2:
            row["winner"], row["by how much"] = "n/a", "n/a (fewer than two RFC designs measured)"
        elif crit.timing:
            figs = {fam: s.timings.get(crit.timing) for fam, (_, s) in best.items()}
            winner, why = timing_winner(figs, crit.lower_is_better)  # type: ignore[arg-type]
            row["winner"], row["by how much"] = (winner or "tie"), why
        else:
            ordered = sorted(best.items(), key=lambda kv: kv[1][0], reverse=not crit.lower_is_better)
            margin = _margin(ordered[0][1][0], ordered[1][1][0], crit)
            if margin is None:
                row["winner"], row["by how much"] = "tie", "equal"
            else:
                row["winner"], row["by how much"] = ordered[0][0], f"{margin} vs {ordered[1][0]}"
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


def ruled_out(summaries: list[EngineSummary]) -> dict[str, str]:
    """Variants of the RFC designs that a correctness result rules out, with the reason."""
    out = {}
    for s in summaries:
        if s.family not in RFC_DESIGNS:
            continue
        why = []
        if s.isolation_bad:
            why.append(f"{s.isolation_bad} of {s.isolation_total} reader queries during maintenance failed or were wrong")
        if s.crash_rows_lost:
            why.append(f"{s.crash_rows_lost} rows lost in crash tests")
        if s.crash_rows_duplicated:
            why.append(f"{s.crash_rows_duplicated} rows duplicated in crash tests")
        if s.verification != "ok":
            why.append(f"data verification {s.verification}")
        if why:
            out[s.engine] = "; ".join(why)
    return out


CATEGORIES = (("write cost", ("write amplification", "ingest", "maintenance")),
              ("small files", ("live files", "physical files", "space amplification")),
              ("queries", ("query ",)))


def _category(name: str) -> str | None:
    for cat, prefixes in CATEGORIES:
        if name.startswith(prefixes):
            return cat
    return None


@dataclass
class Duel:
    """One criterion, design A's best usable variant against design B's."""

    criterion: Criterion
    category: str
    winner: str | None  # a design, or None for a tie
    ratio: float  # loser / winner (>= 1), 1.0 for a tie
    cells: dict[str, str]


def duels(summaries: list[EngineSummary], a: str, b: str, skip: set[str]) -> list[Duel]:
    """Every cost criterion decided between designs ``a`` and ``b`` (variants in ``skip`` left out):
    timings by their intervals, counts and bytes exactly."""
    out = []
    for crit in criteria(summaries):
        cat = _category(crit.name)
        if cat is None:
            continue
        best: dict[str, tuple[float, EngineSummary]] = {}
        for fam in (a, b):
            members = [s for s in summaries if s.family == fam and s.engine not in skip]
            ranked = _ranked(members, crit)
            if ranked:
                best[fam] = (ranked[0][0], next(s for s in members if s.engine == ranked[0][1]))
        if len(best) < 2:
            continue
        cells = {fam: f"{_cell(s, crit, v)} ({s.engine})" for fam, (v, s) in best.items()}
        (va, sa), (vb, sb) = best[a], best[b]
        if crit.timing:
            winner, _ = timing_winner({a: sa.timings.get(crit.timing), b: sb.timings.get(crit.timing)},  # type: ignore[dict-item]
                                      crit.lower_is_better)
        elif va == vb:
            winner = None
        else:
            winner = a if (va < vb) == crit.lower_is_better else b
        lo, hi = sorted((abs(va), abs(vb)))
        ratio = (hi / lo if lo else float("inf")) if winner else 1.0
        out.append(Duel(crit, cat, winner, ratio, cells))
    return out


def _tally(ds: list[Duel], design: str) -> str:
    parts = []
    for cat, _ in CATEGORIES:
        decided = [d for d in ds if d.category == cat and d.winner is not None]
        if decided:
            parts.append(f"{sum(d.winner == design for d in decided)} of {len(decided)} {cat} criteria")
    return ", ".join(parts) or "no criterion"


def _figure(d: Duel, first: str, second: str) -> str:
    return f"{d.criterion.name} {d.cells[first]} vs {d.cells[second]}"


def verdict(summaries: list[EngineSummary], rows: list[dict[str, str]], scenario: str) -> str:
    """The answer in 3-6 sentences: Option 1 or Option 2 (the question), decided per criterion by
    the same rules as the table between each design's best variant that no correctness result
    rules out; the deciding figures; the baseline as the reference; what the choice costs; and
    what correctness rules out."""
    out_of = ruled_out(summaries)
    skip = set(out_of)
    present = {s.family for s in summaries if s.engine not in skip}
    head = f"**Verdict ({scenario}):**"
    tail = ("Ruled out by correctness: " + "; ".join(f"{e} ({why})" for e, why in out_of.items()) + "."
            if out_of else "No RFC variant failed a correctness check in this run"
            + ("" if any(s.crash_points for s in summaries) else " (no crash test attached: `report --crash RUN`)")
            + ".")
    if not {"Option 1", "Option 2"} <= present:
        missing = sorted({"Option 1", "Option 2"} - present)
        return f"{head} no answer: {' and '.join(missing)} has no usable variant in this run. {tail}"
    ds = duels(summaries, "Option 1", "Option 2", skip)
    wins = Counter(d.winner for d in ds if d.winner)
    cats = Counter()
    for cat, _ in CATEGORIES:
        c = Counter(d.winner for d in ds if d.category == cat and d.winner)
        if c and (top := c.most_common()) and (len(top) == 1 or top[0][1] > top[1][1]):
            cats[top[0][0]] += 1
    if not wins:
        return f"{head} a tie: no criterion separates Option 1 from Option 2 (run more `--repeat`). {tail}"
    ranked = sorted(("Option 1", "Option 2"), key=lambda f: (cats[f], wins[f]), reverse=True)
    choice, other = ranked
    if (cats[choice], wins[choice]) == (cats[other], wins[other]):
        return (f"{head} a tie between Option 1 and Option 2: each wins {wins[choice]} criteria "
                f"({_tally(ds, 'Option 1')} for Option 1). {tail}")
    mine = sorted((d for d in ds if d.winner == choice), key=lambda d: -d.ratio)
    theirs = sorted((d for d in ds if d.winner == other), key=lambda d: -d.ratio)
    out = [f"{head} **choose {choice}** over {other}: it wins {_tally(ds, choice)}, "
           f"{other} wins {_tally(ds, other)}; the rest are ties (timings whose 95% intervals overlap, or equal figures)."]
    out.append("Deciding figures: " + "; ".join(_figure(d, choice, other) for d in mine[:3]) + ".")
    if theirs:
        out.append(f"What it costs against {other}: " + "; ".join(_figure(d, other, choice) for d in theirs[:2]) + ".")
    if "Baseline" in present:
        ref = duels(summaries, choice, "Baseline", skip)
        better = [d for d in ref if d.winner == choice]
        worse = [d for d in ref if d.winner == "Baseline"]
        key = sorted(better, key=lambda d: -d.ratio)[:2]
        out.append(f"Against the copy-on-write baseline, {choice} wins {len(better)} and loses {len(worse)} of "
                   f"{len(ref)} criteria" + (": " + "; ".join(_figure(d, choice, "Baseline") for d in key) if key else "")
                   + ".")
    out.append(tail)
    return " ".join(out)


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
