"""The scale section of a report (T18, ``make bench-scale``): the RFC's figures at Apache Hudi's own
sizes, rendered from the results folder alone.

- the run: wall time, the machine's load while it ran (``run.json``'s ``load`` samples), the
  tables' disk peak, the repetitions (one at this size: timings' intervals come from the
  interleaved query rounds only);
- write amplification per design beside its closed form (``limit / (2 x batch)`` for the
  copy-on-write baseline, ``1 + limit / (2 x every x batch)`` for a table service every ``every``
  commits, Option 2 at Hudi's cadence); a design that ran a stated prefix shows its measured WA at
  the end of the prefix, the simulator's at the same batch and the simulator's projection over every
  batch, marked as projected (``run.json``'s ``scale_wa``);
- the selective query's gain over ``append_only`` (the small files nobody fixes), with the paired
  95% interval over the interleaved rounds and its n, and the files it scanned;
- the full scan's rows per second per layout, with its interval;
- planning apart from execution per layout and query (as LHBench reports them).

Shown for a run with a ``scale_wa`` block whose scenario asks for the interleaved rounds
(``queries.interleaved``) or gives an engine a prefix; None otherwise.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from engines.config.registry import GB, MB
from engines.kinds import engines_with
from reports.markdown import md_table
from runresults import Results
from runresults.closed_form import closed_form_wa
from runresults.uncertainty import interval, paired_ratio

SELECTIVE, FULL_SCAN = "service_hours", "full_scan_by_level"


def control_engine(results: Results) -> str | None:
    """The run's control engine (the kind whose registry role is ``control``), if it has one; each
    engine's kind from run.json's ``engines``, or from its ``scale_wa`` row."""
    kinds = {e: {"kind": row.get("kind")} for e, row in (results.run.get("scale_wa") or {}).items()}
    return next(iter(engines_with({**kinds, **(results.run.get("engines") or {})}, role="control")), None)


def is_scale_run(results: Results) -> bool:
    """True when the run carries the scale figures and its scenario is a scale scenario."""
    sc = results.run.get("scenario") or {}
    prefixed = bool(sc.get("stop_after")) or any(e.get("num_batches") for e in sc.get("engines", []))
    return bool(results.run.get("scale_wa")) and (prefixed or bool((sc.get("queries") or {}).get("interleaved")))


def _f(v: Any, pattern: str = ".3g") -> str:
    return "n/a" if v is None or (isinstance(v, float) and pd.isna(v)) else format(v, pattern)


def run_lines(results: Results) -> list[str]:
    """Wall time, load, disk peak and repetitions, as sentences."""
    run = results.run
    load = run.get("load") or {}
    wall = run.get("wall_time_s") or 0.0
    samples = load.get("samples") or []
    lines = [f"- wall time {wall / 60:.1f} min ({wall:.0f} s) at git `{(run.get('git') or {}).get('sha', '?')[:10]}`, "
             f"created {run.get('created', '?')}",
             f"- machine load (1-minute average, {len(samples)} samples every {load.get('interval_s', '?')} s, "
             f"{load.get('cpus', '?')} CPUs): min {_f(load.get('load1_min'))}, mean {_f(load.get('load1_mean'))}, "
             f"max {_f(load.get('load1_max'))}",
             f"- machine: {(run.get('machine') or {}).get('cores', '?')} cores, "
             f"{(run.get('machine') or {}).get('cpu') or 'processor not recorded'}",
             f"- tables on disk at their peak (sampled): {(load.get('tables_peak_bytes') or 0) / GB:.2f} GB; "
             f"tables {'kept' if run.get('tables_kept') else 'removed once each engine figures were taken'}",
             f"- repetitions: {results.repeats}"
             + (" (one at this size: ingest and maintenance timings have no interval; the query intervals "
                "come from the interleaved warm rounds, n stated per cell)" if results.repeats == 1 else "")]
    return lines


def wa_frame(results: Results) -> pd.DataFrame:
    """Per engine: batches taken, measured WA, the closed form and, for a prefix, the simulator's projection."""
    scale = results.run.get("scale_wa") or {}
    commits = results.table("commits")
    rows = []
    for engine, s in scale.items():
        mine = commits[commits.engine == engine].sort_values("seq")
        wa = mine["wa"].dropna()
        batch = mine[mine.kind == "ingest"]["batch_bytes"]
        mean_batch = float(batch[batch > 0].mean()) if (batch > 0).any() else None
        prefix = s.get("batches_measured", 0) < s.get("batches_total", 0)
        rows.append({
            "engine": engine, "batches": f"{s.get('batches_measured')} of {s.get('batches_total')}",
            "small-file limit (MB)": _f(s.get("small_file_limit_mb"), "g"),
            "WA measured": _f(float(wa.iloc[-1]) if len(wa) else None),
            "closed form": f"{_f(s.get('closed_form_wa'))} ({s.get('closed_form')}, batch {_f(s.get('batch_mb'), 'g')} MB)",
            "closed form at the written batch": _f(closed_form_wa(s.get("kind", ""), s.get("small_file_limit_mb", 0) * MB,
                                                                   mean_batch, s.get("every_commits", 1)))
            if mean_batch else "n/a",
            "mean batch written (MB)": _f(mean_batch / MB if mean_batch else None),
            "simulator at the prefix": _f(s.get("simulated_wa_at_prefix")) if prefix else "",
            "all batches": ((f"{_f(s.get('simulated_wa_total'))} (projected: simulator)"
                             if s.get("simulated_wa_total") is not None else "not simulated") if prefix
                            else _f(float(wa.iloc[-1]) if len(wa) else None) + " (measured)"),
        })
    return pd.DataFrame(rows)


def _rounds(results: Results, query: str) -> pd.DataFrame:
    qr = results.table("query_rounds")
    return qr[(qr["query"] == query) & qr["verified"].fillna(False).astype(bool)]


def _cold(results: Results, query: str, checkpoint: int) -> pd.DataFrame:
    """The checkpoint's cold runs (run 0) of ``query``, one row per engine."""
    q = results.table("queries")
    if q.empty:
        return q
    return q[(q["query"] == query) & (q["run"] == 0) & (q["checkpoint"] == checkpoint)]


def _after(checkpoint: int) -> str:
    return f"{int(checkpoint) + 1:,}"


def selective_frame(results: Results) -> pd.DataFrame:
    """The selective query per checkpoint with rounds and per layout: median latency (interval, n),
    files scanned, and its gain over the control (:func:`control_engine`), paired by round. A scale run's engines with a
    stated prefix take the rounds of their prefix's last checkpoint, where every layout has the same
    batches; the final checkpoint's rounds have the engines that took every batch."""
    r = _rounds(results, SELECTIVE)
    ctl = control_engine(results)
    rows = []
    for cp, at in r.groupby("checkpoint"):
        by = {e: g.sort_values("round") for e, g in at.groupby("engine")}
        control = by.get(ctl) if ctl is not None else None
        cold = _cold(results, SELECTIVE, int(cp))
        scanned = dict(zip(cold.engine, cold.files_scanned, strict=True))
        for engine, g in by.items():
            lat = interval(g["latency_s"].tolist())
            gain = None
            if control is not None and engine != ctl:
                both = g.merge(control, on="round", suffixes=("", "_c"))
                gain = paired_ratio(both["latency_s"].tolist(), both["latency_s_c"].tolist())
            rows.append({"after batch": _after(cp), "engine": engine, "files scanned": scanned.get(engine, "n/a"),
                         "latency s (median)": lat.text() if lat else "n/a",
                         f"gain over {ctl or 'the control'} (its latency / this one's)": gain.text() if gain else "—"})
    return pd.DataFrame(rows)


def full_scan_frame(results: Results) -> pd.DataFrame:
    """The full scan's rows per second per checkpoint with rounds and per layout: the table's rows
    there (its cold run's rows scanned; the ground truth's at the final checkpoint) over each round's
    latency."""
    r = _rounds(results, FULL_SCAN)
    final_rows = (results.run.get("ground_truth") or {}).get("rows")
    out = []
    for cp, at in r.groupby("checkpoint"):
        cold = _cold(results, FULL_SCAN, int(cp))
        counted = dict(zip(cold.engine, cold.get("rows_scanned", pd.Series(dtype=float)), strict=True))
        for engine, g in at.groupby("engine"):
            rows_there = counted.get(engine)
            rows_there = final_rows if rows_there is None or pd.isna(rows_there) else int(rows_there)
            if not rows_there:
                continue
            rate = interval([rows_there / x for x in g["latency_s"] if x and x > 0])
            out.append({"after batch": _after(cp), "engine": engine, "rows": f"{rows_there:,}",
                        "rows per second (median)": rate.text() if rate else "n/a"})
    return pd.DataFrame(out)


def planning_frame(results: Results) -> pd.DataFrame:
    """Per checkpoint with rounds, layout and query: median planning and execution seconds over the
    rounds, planning's share."""
    qr = results.table("query_rounds")
    qr = qr[qr["planning_s"].notna()] if "planning_s" in qr else qr.iloc[0:0]
    out = []
    for (cp, engine, query), g in qr.groupby(["checkpoint", "engine", "query"]):
        plan, exe = interval(g["planning_s"].tolist()), interval(g["execution_s"].tolist())
        share = g["planning_s"].median() / g["latency_s"].median() if g["latency_s"].median() else None
        out.append({"after batch": _after(cp), "engine": engine, "query": query,
                    "planning s": plan.text() if plan else "n/a",
                    "execution s": exe.text() if exe else "n/a", "planning share of latency": _f(share, ".0%")})
    return pd.DataFrame(out)


def scale_section(results: Results) -> str | None:
    """The section's Markdown, or None for another run."""
    if not is_scale_run(results):
        return None
    parts = ["\n".join(run_lines(results)) + "\n",
             "\n### Write amplification beside its closed form\n",
             "WA = data bytes written / batch bytes. The closed form assumes every insert goes to the one file "
             "below the limit until it reaches it (average rewrite = half the limit); a design that ran a stated "
             "prefix of the batches shows the simulator's WA at the same batch (how far to trust its projection) "
             "and its projection over every batch, marked as such.\n",
             md_table(wa_frame(results))]
    sel = selective_frame(results)
    if not sel.empty:
        ctl = control_engine(results) or "the control"
        parts += [f"\n### The selective query ({SELECTIVE}) per layout\n",
                  "Warm runs of the interleaved rounds (round robin across the engines at that checkpoint: at a stated "
                  "prefix's last checkpoint every layout has the same batches; the final checkpoint has the engines "
                  f"that took every batch); the gain is the median over rounds of {ctl}'s latency over this "
                  "layout's in the same round.\n",
                  md_table(sel)]
    full = full_scan_frame(results)
    if not full.empty:
        parts += [f"\n### The full scan ({FULL_SCAN}): rows per second\n", md_table(full)]
    plan = planning_frame(results)
    if not plan.empty:
        parts += ["\n### Planning apart from execution (as LHBench)\n",
                  "Planning: our file pruning, Spark's file index over the files kept, analysis, optimisation and the "
                  "physical plan; execution: the jobs and the rows collected. Medians over the interleaved rounds.\n",
                  md_table(plan)]
    return "\n".join(parts)
