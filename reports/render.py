"""Render ``report.md``, a self-contained ``report.html`` (plots as data URIs) and ``plots/*.png``."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pandas as pd
from markdown_it import MarkdownIt

from engines.config.registry import GB
from reports.answer import answer_sentences, criteria_frame, gates_frame, ledger_frame
from reports.delta_peer import NOTE as PEER_NOTE
from reports.delta_peer import peer_rows
from reports.design_review import conditions, findings
from reports.hudi_fidelity import attachment_note, fidelity_rows, find_fidelity_run
from reports.hudi_fidelity import note as HUDI_NOTE
from reports.markdown import md_table
from reports.plots import ledger_plot, render_plots
from reports.read_amplification import read_amplification_section
from reports.scale import scale_section
from reports.store_requests import requests_section
from reports.stream import stream_section
from reports.summary import EngineSummary, summarize, summary_frame
from runresults import Results, ResultsError
from runresults.review import review_of

PLOT_CAPTIONS = {
    "stream_lag": "Continuous ingestion: backlog over time per engine (seconds since the oldest landed, uncommitted "
                  "file arrived; landing files waiting); red dots while a table service executes.",
    "live_files": "Live files in the snapshot after every instant.",
    "physical_files": "Files on storage, including replaced files the cleaner has not deleted yet.",
    "bytes_written": "Cumulative data bytes written (the numerator of WA).",
    "write_amplification": "Write amplification after every instant.",
    "space_amplification": "Space amplification: bytes on storage / bytes of the live snapshot.",
    "ingest_latency": "Ingest latency of every batch: the median over the repetitions, the band their range.",
    "maintenance": "Duration of every compaction / clustering run of every repetition.",
    "query_latency": "Warm-run median latency of each query at each checkpoint, every repetition pooled, with the "
                     "report's own interval: 95% bootstrap from 10 warm runs on, below that the range (the title "
                     "gives the n; the report's cells say \"range, n=…\").",
    "query_final": "Warm-run median latency per query at the final checkpoint, every repetition pooled, with the "
                   "report's own interval (95% bootstrap from 10 warm runs on, the range below; n in the title).",
    "cost_ledger": "Cost over the table's life, $ per TB ingested, stacked by part; the bar is the total's interval.",
    "query_files_scanned": "Files scanned per query at the final checkpoint (cold run, after min/max pruning).",
}


def _num(v: Any, pattern: str) -> str:
    return "n/a" if v is None else format(v, pattern)


def setup_section(results: Results) -> str:
    """Scenario, machine, versions, git SHA, wall time and verification of the run."""
    run = results.run
    sc = run.get("scenario", {}) or {}
    m, v, g = run.get("machine", {}) or {}, run.get("versions", {}) or {}, run.get("git", {}) or {}
    wl = sc.get("workload", {}) or {}
    ver = run.get("verification", {}) or {}
    size = wl.get("batch_records") or f"{wl.get('batch_mb')} MB"
    mem = m.get("memory_bytes")
    overhead = run.get("harness_overhead_ratio")
    lines = [
        f"- run `{run.get('run_id')}`{' (SIMULATED)' if results.simulated else ''}, created {run.get('created', 'n/a')}",
        f"- scenario `{sc.get('name', '?')}` ({run.get('scenario_path') or 'not run from a file'}): "
        f"{sc.get('description', '')}",
        f"- workload: seed {run.get('seed', wl.get('seed'))}, {wl.get('num_batches')} batches of {size}, "
        f"{wl.get('num_partitions')} {wl.get('partition_granularity')} partitions, late fraction "
        f"{wl.get('late_fraction')}",
        "- engines: " + ", ".join(f"`{n}` ({e.get('kind')}{', ' + str(e.get('config')) if e.get('config') else ''})"
                                   for n, e in run.get("engines", {}).items()),
        f"- sizing: {sc.get('sizing')}; maintenance: {sc.get('maintenance')}",
        f"- machine: {m.get('cores')} cores{', ' + m['cpu'] if m.get('cpu') else ''}, "
        f"{_num(mem / GB if mem else None, '.1f')} GiB, {m.get('platform')}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- git: {g.get('sha')}{' (dirty)' if g.get('dirty') else ''}; Spark master {run.get('spark_master', 'n/a')}",
        f"- wall time {_num(run.get('wall_time_s'), '.1f')} s, harness overhead "
        f"{_num(overhead * 100 if overhead is not None else None, '.2f')}% of it",
    ]
    if run.get("generation_median_s") is not None:
        share = run.get("generation_share_of_ingest")
        lines.append(f"- generation: {_num(run.get('generation_s'), '.1f')} s in all, median "
                     f"{_num(run['generation_median_s'], '.3f')} s per batch = "
                     f"{_num(share * 100 if share is not None else None, '.0f')}% of the median ingest of one batch by "
                     "one engine; each batch is generated once, cached, and fed to every engine outside its clock")
    profile = run.get("profile")
    if profile:
        phases = profile.get("phases_s", {})
        wall = run.get("wall_time_s") or 0.0
        by_phase: dict[str, float] = {}
        for key, sec in phases.items():  # per phase first, then each engine's share
            by_phase[key.split("/", 1)[0]] = by_phase.get(key.split("/", 1)[0], 0.0) + sec
        lines.append("- where the wall time went: " + ", ".join(
            f"{k.replace('_', ' ')} {_num(v, '.1f')} s ({_num(v / wall * 100 if wall else None, '.0f')}%)"
            for k, v in by_phase.items()) + f", unaccounted {_num(profile.get('unaccounted_s'), '.1f')} s"
            + ("; async maintenance beside the loop: " + ", ".join(
                f"{k.split('/', 1)[1]} {_num(v, '.1f')} s" for k, v in profile["overlapping_s"].items())
               if profile.get("overlapping_s") else ""))
        engines = sorted({k.split("/", 1)[1] for k in phases if k.split("/", 1)[0] in ("ingest", "maintenance", "queries")})
        if engines:
            lines.append("- per engine (ingest / maintenance / queries, s): " + "; ".join(
                f"`{e}` {_num(phases.get(f'ingest/{e}'), '.1f')} / {_num(phases.get(f'maintenance/{e}'), '.1f')} / "
                f"{_num(phases.get(f'queries/{e}'), '.1f')}" for e in engines))
    if run.get("calibration"):
        lines.append("- same-run calibration: " + ", ".join(f"{k} {val:.4f} s" for k, val in run["calibration"].items()))
    if ver.get("ok"):
        lines.append("- verification: all figures and query results verified")
    else:
        fails = ver.get("failures") or ["(no verification recorded)"]
        lines.append(f"- verification: FAILED ({len(fails)}): " + "; ".join(map(str, fails[:5])))
    return "\n".join(lines) + "\n"


def crash_cell(row: pd.Series) -> str:
    """One matrix cell: ``ok``, or what went wrong at that point."""
    details = json.loads(row["details"]) if isinstance(row.get("details"), str) else {}
    if not row["recovered"]:
        return "NOT RECOVERED"
    bad = [f"lost {int(row['rows_lost'])}" if row["rows_lost"] else "",
           f"dup {int(row['rows_duplicated'])}" if row["rows_duplicated"] else "",
           "query failed" if row["query_failures"] else "",
           "hudi-rs differs" if not row["hudi_rs_agrees"] else ""]
    text = ", ".join(b for b in bad if b) or "ok"
    return text if details.get("crashed", True) else f"{text} (point not reached)"


def crash_section(results: Results, attached: bool = False) -> str:
    """Engine x injection point: rows lost / duplicated, query failures, hudi-rs disagreement.

    ``attached``: ``results`` is a crash test's folder given with ``report --crash``, not the run's own."""
    crash = results.table("crash")
    if crash.empty:
        return ("_No crash test in this results folder: run `layoutbench crashtest` and attach it with "
                "`layoutbench report RUN --design-review --crash CRASH_RUN`._\n")
    crash = crash.assign(cell=crash.apply(crash_cell, axis=1))
    matrix = crash.pivot_table(index="point", columns="engine", values="cell", aggfunc="first").fillna("-")
    ct = results.run.get("crashtest") or {}
    head = (f"{len(crash)} (engine, point) runs, each a real SIGKILL of the writing process, then recovery and the "
            f"rest of the scenario, checked against the ground truth; wall time "
            f"{_num(results.run.get('wall_time_s'), '.0f')} s with {ct.get('parallel', '?')} children at once. "
            "`rollback.*` rows kill the recovery of an earlier crash. `-` = point not injected for that engine.\n\n")
    if attached:
        head = (f"From the crash test `{results.folder.name}` (scenario "
                f"{results.run.get('scenario', {}).get('name', '?')}), attached with `--crash`; its engines are "
                "matched to this run's by name.\n\n" + head)
    lost = crash.groupby("engine")["rows_lost"].sum()
    tail = "\n" + "; ".join(f"{e}: {int(v)} rows lost in total" for e, v in lost.items()) + ".\n"
    return head + md_table(matrix.reset_index()) + tail


def review_section(results: Results, review: dict[str, Any], summaries: list[EngineSummary]) -> list[str]:
    """The design review: gates, ledgers, each design against the choice (from ``review``)."""
    s = review["settings"]
    return [
        "## Design review: RFC-19 Option 1 vs Option 2\n",
        "The question: for small-batch ingestion, should small files be fixed by Option 1 (APPEND into the latest "
        "small file group, then compact base files) or by Option 2 (write new files, then cluster them under snapshot "
        "isolation)? The COW baseline shows what either must beat. Each engine entry is a candidate, taken whole; a "
        "design is represented by its cheapest candidate by the ledger among those passing the required gates "
        f"({', '.join(s['requires']) or 'none'}). A candidate failing one appears in the gates table and nowhere else. "
        "The control, delta-rs and Apache Hudi are references, outside the choice.\n",
        "### Gates\n", md_table(gates_frame(review)),
        "\n### Cost ledger: $ per TB ingested over the table's life\n",
        f"{review['rules']['ledger']} Queries: {s['queries_per_hour']:g} runs of each query per hour. Intervals: "
        f"{review['rules']['intervals']}. Prices: {_prices_text(s['prices'])}.\n", md_table(ledger_frame(review)),
        "\n### Each design against the choice\n",
        f"Ratios are the other design's figure over the choice's; {review['rules']['decision']} (margin "
        f"±{review['margin'] * 100:g}%). Ingest p50, p95 and throughput are one criterion (paired per batch). Query "
        f"timings come from the interleaved rounds when the run has them; otherwise from the warm runs "
        f"({_repetitions_text(results.repeats, summaries)}), with their n.\n",
        md_table(criteria_frame(review)),
        *[f"\n- {r['criterion']}: {r['note']}" for block in review["criteria"] for r in block["rows"]
          if r.get("note")],
    ]


def _flip_lines(review: dict[str, Any]) -> list[str]:
    """The review's flips: each one-gate change of the required set that changes the choice; then each
    price or rate that would, at the run's scale and at the target's (break-even factors of the ledgers)."""
    out = [f"The choice changes {f['text']} (computed from this run's gates and ledgers)." for f in review["flips"]]
    out += [f"At the run's scale, {b['text']} (break-even of the ledgers)." for b in review.get("breakeven", [])]
    target = review["choice"].get("target") or {}
    out += [f"At the target scale, {b['text']} (break-even of the projected ledgers)."
            for b in target.get("breakeven", [])]
    return out


def _prices_text(prices: dict[str, Any]) -> str:
    return "; ".join(f"{k.replace('_', ' ')} ${p['usd']:g} ({p['source']}, {p['date']})" for k, p in prices.items())


def render_markdown(results: Results, plots: dict[str, Path], design_review: bool,
                    simulation: Results | None = None, decision_map: str | None = None,
                    crash_results: Results | None = None, fidelity: tuple[Results, Path] | None = None,
                    review: dict[str, Any] | None = None) -> str:
    """The whole report as Markdown (plots referenced as ``plots/<name>.png``); ``decision_map``: the
    section generated from a sweep, which replaces the mechanisms listed under "When the answer
    would change"; ``crash_results``: a crash test's folder that fills the crash rows and section;
    ``fidelity``: a ``make bench-hudi`` run (results and folder) whose Apache Hudi engines fill "Ours next
    to Apache Hudi" when this run has none of its own; ``review``: the review to render (default: the
    run's, or computed from the folder)."""
    summaries = summarize(results, crash_results)
    name = results.run.get("scenario", {}).get("name", "?")
    parts = [f"# layoutbench report — {name}\n"]
    if design_review:
        review = review if review is not None else review_of(results, crash_results)
        parts += ["## The answer\n", " ".join(answer_sentences(review, name)) + "\n"]
        if "cost_ledger" in plots:
            parts.append(f"![cost_ledger](plots/{plots['cost_ledger'].name})\n")
    parts += ["## Setup\n", setup_section(results),
             "## Summary per engine\n",
             "WA = data bytes written / batch bytes; space amplification = bytes on storage / live bytes; query "
             "cells are the warm-run median at the final checkpoint and, in parentheses, files scanned.\n",
             md_table(summary_frame(summaries))]
    amplification = read_amplification_section(results)
    if amplification is not None:  # engines whose queries merged log files (MERGE_ON_READ)
        parts += ["\n## Read amplification (MERGE_ON_READ)\n", amplification]
    scale = scale_section(results)
    if scale is not None:
        parts += ["\n## At scale: Apache Hudi's default sizes\n", scale]
    if design_review and review is not None:
        parts += review_section(results, review, summaries)
        parts += ["\n### Findings\n", "\n".join(f"- {f}" for f in findings(results, summaries)) + "\n",
                  "\n### When the answer would change\n",
                  "\n".join(f"- {c}" for c in [*_flip_lines(review), *conditions(results, simulation)]) + "\n"
                  if decision_map is None else "See *Where the answer changes* below (from a sweep).\n"]
    if decision_map is not None:
        parts += ["\n" + decision_map]
    peer = peer_rows(results, summaries)
    if peer:
        parts += ["\n## Next to Delta Lake (delta-rs), same run\n", PEER_NOTE + "\n", md_table(pd.DataFrame(peer))]
    own = fidelity_rows(results, summaries)
    if own:
        parts += ["\n## Ours next to Apache Hudi, same batches\n", HUDI_NOTE(results) + "\n", md_table(pd.DataFrame(own))]
    elif fidelity is not None:
        fid, fid_dir = fidelity
        parts += ["\n## Ours next to Apache Hudi, same batches\n", attachment_note(fid_dir, None) + "\n",
                  HUDI_NOTE(fid) + "\n", md_table(pd.DataFrame(fidelity_rows(fid, summarize(fid))))]
    else:
        parts += ["\n## Ours next to Apache Hudi, same batches\n",
                  attachment_note(None, results.run.get("git", {}).get("sha")) + "\n"]
    streamed = stream_section(results)
    if streamed:
        parts += ["\n## Continuous ingestion (Structured Streaming)\n", streamed]
    store = requests_section(results)
    if store is not None:
        parts += ["\n## Object-store requests and their cost\n", store]
    parts += ["\n## Crash safety (engine × injection point)\n",
              crash_section(crash_results or results, attached=crash_results is not None), "\n## Plots\n"]
    for key, p in plots.items():
        if key != "cost_ledger":  # the answer's figure, shown under it
            parts.append(f"\n{PLOT_CAPTIONS.get(key, key)}\n\n![{key}](plots/{p.name})\n")
    return "\n".join(parts)


STYLE = ("body{font-family:system-ui,sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;font-size:12px;margin:1em 0;display:block;overflow-x:auto}"
         "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}th{background:#eee}"
         "tr:nth-child(even) td{background:#fafafa}img{max-width:100%}code{background:#f3f3f3;padding:0 2px}")


def markdown_to_html(md: str, plots: dict[str, Path]) -> str:
    """The report's Markdown (CommonMark with tables) as one self-contained HTML file: plots are
    embedded as data URIs, raw HTML in the Markdown is escaped."""
    by_name = {p.name: p for p in plots.values()}
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(md)
    for token in tokens:
        for child in token.children or []:
            if child.type == "image":
                path = by_name.get(str(child.attrGet("src") or "").split("/")[-1])
                if path is not None:
                    child.attrSet("src", "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode())
    body = parser.renderer.render(tokens, parser.options, {})
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>layoutbench report</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>\n")


def _repetitions_text(repeats: int, summaries: list[EngineSummary]) -> str:
    """How many repetitions the timings pool, naming engines capped below the run's (a peer run once)."""
    fewer = sorted(f"{s.engine} {s.repeats}" for s in summaries if s.repeats < repeats)
    return f"{repeats} repetition(s)" + (f"; fewer for {', '.join(fewer)}" if fewer else "")


def render_report(run_dir: str | Path, design_review: bool = False,
                  simulation_dir: str | Path | None = None, sweep_dir: str | Path | None = None,
                  crash_dir: str | Path | None = None, fidelity_dir: str | Path | None = None) -> dict[str, Path]:
    """Write report.md, report.html and plots/*.png into the results folder; returns name -> path.

    ``simulation_dir``: a simulated results folder whose projections fill "when the answer would change".
    ``sweep_dir``: a sweep's results folder: its decision map becomes "Where the answer changes".
    ``crash_dir``: a ``crashtest`` results folder: its rows fill the crash criteria, verdict and section.
    ``fidelity_dir``: a ``make bench-hudi`` results folder for "Ours next to Apache Hudi"; without it, a
    folder beside this run written by the same git SHA is used when there is one.
    """
    results = Results(run_dir)
    crash_results = Results(crash_dir) if crash_dir is not None else None
    if crash_results is not None and crash_results.table("crash").empty:
        raise ResultsError(f"{crash_dir} is not a crash test's results folder: it has no crash rows "
                           "(make one with `layoutbench crashtest`)")
    simulation = Results(simulation_dir) if simulation_dir else None
    folder = Path(run_dir)
    plots = render_plots(results, folder / "plots")
    review = review_of(results, crash_results) if design_review else None
    if review is not None and (cost := ledger_plot(review, folder / "plots" / "cost_ledger.png")) is not None:
        plots["cost_ledger"] = cost
    decision_map, maps = None, {}
    if sweep_dir is not None:
        from reports.decision_map import render_section

        decision_map, maps = render_section(sweep_dir, folder / "plots")
    fid_dir = Path(fidelity_dir) if fidelity_dir is not None else find_fidelity_run(run_dir)
    fidelity = None
    if fid_dir is not None:
        fid = Results(fid_dir)
        if fidelity_dir is not None and not fidelity_rows(fid, summarize(fid)):
            raise ResultsError(f"{fidelity_dir} is not a fidelity run: it has no Apache Hudi engine beside an engine "
                               "of ours with the same semantics (make one with `make bench-hudi`)")
        fidelity = (fid, fid_dir)
    md = render_markdown(results, plots, design_review, simulation, decision_map, crash_results, fidelity, review)
    plots = {**plots, **maps}
    (folder / "report.md").write_text(md)
    (folder / "report.html").write_text(markdown_to_html(md, plots))
    return {"report.md": folder / "report.md", "report.html": folder / "report.html", **plots}
