"""The RFC-19 design review, answered from a run's numbers: decision table, findings, conditions.

Every figure is computed from the results folder; a criterion whose figure is missing says so.
Per design family the best variant is shown (e.g. Option 1 = the better of RFC order and
commit-before-delete for that criterion) and named, so no variant's weakness is hidden: the
findings below the table name the variants explicitly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bench.results import Results
from reports.summary import EngineSummary, fmt, summarize

FAMILY_ORDER = ("Baseline", "Option 1", "Option 2", "Delta peer")


@dataclass
class Criterion:
    name: str
    value: Callable[[EngineSummary], float | None]
    unit: str
    lower_is_better: bool = True


CRITERIA = [
    Criterion("write amplification (final)", lambda s: s.wa, "x"),
    Criterion("ingest latency p50", lambda s: s.ingest_p50_s, "s"),
    Criterion("ingest latency p95", lambda s: s.ingest_p95_s, "s"),
    Criterion("maintenance time (total)", lambda s: s.maintenance_s if s.maintenance_runs else None, "s"),
    Criterion("live files (final)", lambda s: s.live_files, "files"),
    Criterion("physical files (final)", lambda s: s.physical_files, "files"),
    Criterion("space amplification (peak)", lambda s: s.space_amp_peak, "x"),
    Criterion("selective query (service_hours, warm median)", lambda s: s.queries_warm_median_s.get("service_hours"), "s"),
    Criterion("full scan (full_scan_by_level, warm median)", lambda s: s.queries_warm_median_s.get("full_scan_by_level"), "s"),
    Criterion("point lookup (warm median)", lambda s: s.queries_warm_median_s.get("point_lookup"), "s"),
    Criterion("reader failures + wrong results during maintenance",
              lambda s: float(s.isolation["failed"] + s.isolation["wrong"])
              if sum(s.isolation.values()) else None, "queries"),
    Criterion("rows lost in crash tests", lambda s: s.crash_rows_lost, "rows"),
]


def _best(summaries: list[EngineSummary], crit: Criterion) -> tuple[float | None, str | None]:
    vals = [(crit.value(s), s.engine) for s in summaries if crit.value(s) is not None]
    if not vals:
        return None, None
    return (min if crit.lower_is_better else max)(vals)


def decision_rows(summaries: list[EngineSummary]) -> list[dict[str, str]]:
    families = [f for f in FAMILY_ORDER if any(s.family == f for s in summaries)]
    rows = []
    for crit in CRITERIA:
        row = {"criterion": f"{crit.name} [{crit.unit}]"}
        best: list[tuple[float, str]] = []
        for fam in families:
            v, engine = _best([s for s in summaries if s.family == fam], crit)
            row[fam] = "n/a (not measured)" if v is None else f"{fmt(v)} ({engine})"
            if v is not None:
                best.append((v, fam))
        best.sort(reverse=not crit.lower_is_better)
        if len(best) >= 2:
            (v1, f1), (v2, _f2) = best[0], best[1]
            if v1 == v2:
                row["winner"], row["by how much"] = "tie", "-"
            else:
                row["winner"] = f1
                row["by how much"] = (f"{v2 / v1:.2f}x" if v1 > 0 else f"{v2 - v1:+.3g} {crit.unit}")
        else:
            row["winner"], row["by how much"] = "n/a", "n/a"
        rows.append(row)
    return rows


def findings(results: Results, summaries: list[EngineSummary]) -> list[str]:
    scen = results.run.get("scenario", {}).get("name", "?")
    by = {s.engine: s for s in summaries}
    out = []
    for s in summaries:
        if s.family == "Option 1":
            bad = s.isolation["failed"] + s.isolation["wrong"]
            total = sum(s.isolation.values())
            if total:
                out.append(f"**{s.engine}** ({results.run['engines'][s.engine].get('config', {}).get('order', 'rfc')} "
                           f"order): {bad} of {total} reader queries during compaction failed or returned wrong rows "
                           f"({s.isolation['failed']} failed, {s.isolation['wrong']} wrong) — scenario `{scen}`.")
            else:
                out.append(f"**{s.engine}**: isolation figure missing (no reader ran during its compaction).")
        if s.family == "Option 2":
            out.append(f"**{s.engine}**: space amplification peaks at {fmt(s.space_amp_peak)}x "
                       f"(replaced file groups kept until the cleaner), final {fmt(s.space_amp_final)}x; "
                       f"{s.isolation['ok']} of {sum(s.isolation.values())} concurrent reader queries ok — scenario `{scen}`.")
        if s.family == "Baseline":
            out.append(f"**{s.engine}**: write amplification {fmt(s.wa)}x (every small-file top-up rewrites the whole "
                       f"file); ingest p50 {fmt(s.ingest_p50_s)} s vs "
                       + ", ".join(f"{o.engine} {fmt(o.ingest_p50_s)} s" for o in summaries if o.family != "Baseline")
                       + f" — scenario `{scen}`.")
        if s.crash_rows_lost is not None:
            out.append(f"**{s.engine}**: crash tests lost {s.crash_rows_lost} rows and duplicated "
                       f"{s.crash_rows_duplicated}.")
    missing = [n for n in ("option1_rfc", "option2") if n not in by]
    if missing:
        out.append(f"Engines not in this run: {', '.join(missing)} — their findings are missing.")
    return out


def conditions(results: Results, simulation: Results | None) -> list[str]:
    out = [
        "Option 1's RFC order (delete, then commit) is only safe when no reader lists files during a compaction and the "
        "writer never dies between the deletes and the commit; both are measured above (isolation) and by "
        "`layoutbench crashtest`.",
        "Option 2's space overhead is bounded by the bytes rewritten within `cleaner_commits_retained` commits; a "
        "smaller retention lowers it but shortens the time-travel and long-query window.",
        "The baseline's WA grows with the ratio small-file limit / batch size: large batches (>= the limit) make it "
        "write each byte once, tiny batches make it approach limit / (2 x batch).",
    ]
    if simulation is None:
        out.append("No simulation was attached: projections to longer horizons and more partitions are missing "
                   "(run `layoutbench simulate` and pass `--simulation DIR`).")
    else:
        sim = summarize(simulation)
        for s in sim:
            out.append(f"At scale (simulated `{simulation.run.get('scenario', {}).get('name', '?')}`): {s.engine} "
                       f"WA {fmt(s.wa)}x, live files {fmt(s.live_files)}, physical files {fmt(s.physical_files)}, "
                       f"space amplification peak {fmt(s.space_amp_peak)}x.")
    return out
