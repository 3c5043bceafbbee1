"""Render ``report.md`` and a self-contained ``report.html`` (plots embedded as data URIs)."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pandas as pd

from bench.results import Results
from reports.design_review import conditions, decision_rows, findings
from reports.plots import render_plots
from reports.summary import summarize, summary_frame


def md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no rows)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(str(row[c]).replace("|", "/") for c in cols) + " |")
    return "\n".join(lines) + "\n"


def setup_section(results: Results) -> str:
    run = results.run
    sc = run.get("scenario", {})
    m, v, g = run.get("machine", {}), run.get("versions", {}), run.get("git", {})
    wl = sc.get("workload", {})
    lines = [
        f"- run `{run.get('run_id')}`{' (SIMULATED)' if results.simulated else ''}, created {run.get('created', 'n/a')}",
        f"- scenario `{sc.get('name', '?')}`: {sc.get('description', '')}",
        f"- workload: seed {wl.get('seed')}, {wl.get('num_batches')} batches of "
        f"{wl.get('batch_records') or str(wl.get('batch_mb')) + ' MB'}, {wl.get('num_partitions')} "
        f"{wl.get('partition_granularity')} partitions, late fraction {wl.get('late_fraction')}",
        f"- sizing: {sc.get('sizing')}; maintenance: {sc.get('maintenance')}",
        f"- machine: {m.get('cores')} cores, {round((m.get('memory_bytes') or 0) / 2**30, 1)} GiB, {m.get('platform')}",
        "- versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        f"- git: {g.get('sha')}{' (dirty)' if g.get('dirty') else ''}; Spark master {run.get('spark_master', 'n/a')}",
        f"- wall time {run.get('wall_time_s', 0):.1f} s, harness overhead "
        f"{(run.get('harness_overhead_ratio') or 0) * 100:.2f}% of it",
        f"- verification: {'all figures and query results verified' if run.get('verification', {}).get('ok') else 'FAILED: ' + '; '.join(run.get('verification', {}).get('failures', [])[:5])}",
    ]
    return "\n".join(lines) + "\n"


def crash_section(results: Results) -> str:
    crash = results.table("crash")
    if crash.empty:
        return "_No crash test in this results folder (run `layoutbench crashtest`)._\n"
    matrix = crash.pivot_table(index="point", columns="engine", values="rows_lost", aggfunc="sum")
    return md_table(matrix.reset_index())


def render_markdown(results: Results, plots: dict[str, Path], design_review: bool,
                    simulation: Results | None = None) -> str:
    summaries = summarize(results)
    parts = [f"# layoutbench report — {results.run.get('scenario', {}).get('name', '?')}\n", "## Setup\n",
             setup_section(results), "## Summary per engine\n", md_table(summary_frame(summaries))]
    if design_review:
        parts += ["## Design review: RFC-19 Option 1 vs Option 2\n",
                  "Best variant per design for each criterion (the variant in parentheses); winner and the ratio "
                  "second-best / best.\n\n", md_table(pd.DataFrame(decision_rows(summaries))),
                  "\n### Findings\n\n", "\n".join(f"- {f}" for f in findings(results, summaries)) + "\n",
                  "\n### When the answer would change\n\n",
                  "\n".join(f"- {c}" for c in conditions(results, simulation)) + "\n"]
    parts += ["\n## Crash safety (rows lost per injection point)\n\n", crash_section(results), "\n## Plots\n"]
    parts += [f"\n![{name}](plots/{p.name})\n" for name, p in plots.items()]
    return "\n".join(parts)


def markdown_to_html(md: str, plots: dict[str, Path]) -> str:
    """A small Markdown subset (headings, tables, lists, images) to HTML with embedded images."""
    by_name = {p.name: p for p in plots.values()}
    out, in_table, in_list = [], False, False
    for line in md.splitlines():
        if line.startswith("| "):
            cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
            if all(set(c) <= {"-"} for c in cells):
                continue
            if not in_table:
                out.append("<table>")
                in_table = True
                out.append("<tr>" + "".join(f"<th>{c}</th>" for c in cells) + "</tr>")
            else:
                out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("- "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            text = html.escape(line[2:])
            text = text.replace("**", "")
            out.append(f"<li>{text}</li>")
            continue
        if in_list:
            out.append("</ul>")
            in_list = False
        if line.startswith("!["):
            name = line[line.index("(") + 1: line.rindex(")")].split("/")[-1]
            data = base64.b64encode(by_name[name].read_bytes()).decode()
            out.append(f'<img alt="{html.escape(name)}" src="data:image/png;base64,{data}"/>')
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            out.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        out.append("</table>")
    if in_list:
        out.append("</ul>")
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto;}table{border-collapse:collapse;"
             "font-size:12px;margin:1em 0;}td,th{border:1px solid #ccc;padding:3px 6px;}th{background:#eee;}"
             "img{max-width:100%;}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>layoutbench report</title>"
            f"<style>{style}</style></head><body>{''.join(out)}</body></html>")


def render_report(run_dir: str | Path, design_review: bool = False,
                  simulation_dir: str | Path | None = None) -> dict[str, Path]:
    """Write report.md, report.html and plots/*.png into the results folder."""
    results = Results(run_dir)
    simulation = Results(simulation_dir) if simulation_dir else None
    folder = Path(run_dir)
    plots = render_plots(results, folder / "plots")
    md = render_markdown(results, plots, design_review, simulation)
    (folder / "report.md").write_text(md)
    (folder / "report.html").write_text(markdown_to_html(md, plots))
    return {"report.md": folder / "report.md", "report.html": folder / "report.html", **plots}
