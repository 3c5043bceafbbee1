"""Read amplification of MERGE_ON_READ engines, from the ``queries`` table alone: per engine and
query at its final checkpoint, the log files and bytes merged into the query's slices, the query's
seconds on the merged snapshot and on the read-optimized view (base files only, stale by design),
and their ratio, each a median of the runs with its n. Engines without log files have no rows."""

from __future__ import annotations

from typing import Any

import pandas as pd

from engines.config.registry import MB
from reports.markdown import md_table
from reports.summary import fmt
from runresults import Results

NOTE = ("A MERGE_ON_READ snapshot merges each slice's log files over its base file on every query; the "
        "read-optimized view reads the base files alone (the last compaction's rows, not the logs' updates), "
        "so its answer is stale and not verified. Slices with log files are never pruned by their base "
        "file's min/max (a log update can move a value outside it). Cells: median of the runs at the "
        "engine's final checkpoint, cold run included, with n; ratio = snapshot seconds / read-optimized "
        "seconds, per run, then the median.")


def read_amplification_rows(results: Results) -> list[dict[str, Any]]:
    """One row per engine and query with read-amplification figures (none when no query merged logs)."""
    q = results.table("queries", all_repeats=True)
    if "log_bytes_merged" not in q.columns:
        return []
    q = q[q.log_bytes_merged.notna() & q.error.isna()]
    if q.empty:
        return []
    rows = []
    for engine, mine in q.groupby("engine", sort=False):
        final = mine[mine.checkpoint == mine.checkpoint.max()]
        for query, runs in final.groupby("query", sort=False):
            ro = runs[runs.ro_latency_s.notna() & (runs.ro_latency_s > 0)]
            ratio = (ro.latency_s / ro.ro_latency_s).median() if len(ro) else None
            rows.append({
                "engine": engine, "query": query, "checkpoint": int(runs.checkpoint.iloc[0]),
                "log files merged": fmt(float(runs.log_files_merged.median()), 0),
                "log MB merged": fmt(float(runs.log_bytes_merged.median()) / MB, 2),
                "snapshot s": fmt(float(runs.latency_s.median()), 3),
                "read-optimized s": fmt(float(ro.ro_latency_s.median()), 3) if len(ro) else "—",
                "snapshot / read-optimized": fmt(float(ratio), 2) if ratio is not None else "—",
                "n": len(runs),
            })
    return rows


def read_amplification_section(results: Results) -> str | None:
    """The report's section (markdown), or None when no engine merged log files."""
    rows = read_amplification_rows(results)
    if not rows:
        return None
    return NOTE + "\n\n" + md_table(pd.DataFrame(rows))
