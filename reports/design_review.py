"""The RFC-19 design review's findings and conditions, from a run's numbers.

The answer itself (the choice among whole candidates, its gates, ledgers and criteria) is the
review's (:mod:`runresults.review`, rendered by :mod:`reports.answer`); this module adds the
findings that explain it, each with its figure and the scenario, and the conditions under which
it would change. A missing figure says so.
"""

from __future__ import annotations

import json

from engines.kinds import BASELINE, OPTION_1, OPTION_2, design_families
from reports.summary import EngineSummary, fmt, summarize
from runresults import Results


def _order(results: Results, engine: str) -> str:
    return str(results.run.get("engines", {}).get(engine, {}).get("config", {}).get("order", "rfc"))


def _retained(results: Results) -> str:
    return str(results.run.get("scenario", {}).get("sizing", {}).get("cleaner_commits_retained", "?"))


def findings(results: Results, summaries: list[EngineSummary]) -> list[str]:
    """The findings that matter, each with its figure and the scenario; a missing figure says so."""
    scen = f"scenario `{results.run.get('scenario', {}).get('name', '?')}`"
    out = []
    for s in summaries:
        if s.family == OPTION_1:
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
        elif s.family == OPTION_2:
            readers = (f"{s.isolation['ok']} of {s.isolation_total} concurrent reader queries ok"
                       if s.isolation_total else "reader isolation figure missing (no reader ran during clustering)")
            out.append(f"**{s.engine}**: space amplification peaks at {fmt(s.space_amp_peak)}x and physical files at "
                       f"{fmt(s.physical_files_peak)} (replaced file groups kept until the cleaner, "
                       f"{_retained(results)} commits retained), final {fmt(s.space_amp_final)}x; {readers} — {scen}.")
        elif s.family == BASELINE:
            others = ", ".join(f"{o.engine} {fmt(o.wa)}x" for o in summaries if o.family != BASELINE)
            out.append(f"**{s.engine}**: write amplification {fmt(s.wa)}x (every small-file top-up rewrites the whole "
                       f"file) vs {others or 'no other engine'}; ingest p50 {fmt(s.ingest_p50_s)} s vs "
                       + (", ".join(f"{o.engine} {fmt(o.ingest_p50_s)} s" for o in summaries if o.family != BASELINE)
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
    for fam in design_families():
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
