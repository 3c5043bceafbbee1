"""Per-engine figures computed from a results folder alone (the numbers every report shows)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from engines.config.registry import MB
from runresults import Results
from runresults.review.families import family_of
from runresults.uncertainty import Interval, interval, p95, ratio_interval, total_per_repeat


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


@dataclass
class EngineSummary:
    engine: str
    kind: str
    family: str
    wa: float | None = None
    space_amp_peak: float | None = None
    space_amp_final: float | None = None
    ingest_p50_s: float | None = None
    ingest_p95_s: float | None = None
    ingest_max_s: float | None = None
    ingest_mb_s: float | None = None
    maintenance_runs: int = 0
    maintenance_s: float = 0.0
    maintenance_bytes_written: int = 0
    maintenance_bytes_read: int = 0
    live_files: int | None = None
    physical_files: int | None = None
    physical_files_peak: int | None = None
    live_bytes: int | None = None
    physical_bytes: int | None = None
    mean_file_mb: float | None = None
    bytes_written: int = 0
    files_written: int = 0
    ingest_batches: int = 0
    queries_warm_median_s: dict[str, float] = field(default_factory=dict)
    queries_files_scanned: dict[str, int] = field(default_factory=dict)
    queries_row_groups: dict[str, int] = field(default_factory=dict)  # row groups read (cold run, final checkpoint)
    queries_rows_read: dict[str, int] = field(default_factory=dict)  # rows in them: what a Parquet reader reads
    queries_verified: int = 0
    queries_total: int = 0
    isolation: dict[str, int] = field(default_factory=lambda: {"ok": 0, "failed": 0, "wrong": 0})
    isolation_rows_missing_max: int | None = None
    crash_points: int = 0
    crash_rows_lost: int | None = None
    crash_rows_duplicated: int | None = None
    verification_failures: list[str] = field(default_factory=list)
    # timing figures with their 95% interval over every repetition (runresults.uncertainty):
    # "ingest p50", "ingest p95", "ingest throughput", "maintenance total", "query <name>"
    timings: dict[str, Interval] = field(default_factory=dict)
    repeats: int = 1

    @property
    def verified(self) -> bool:
        return self.queries_total > 0 and self.queries_verified == self.queries_total

    @property
    def isolation_total(self) -> int:
        return sum(self.isolation.values())

    @property
    def isolation_bad(self) -> int:
        return self.isolation["failed"] + self.isolation["wrong"]

    @property
    def verification(self) -> str:
        """Data verification: the run's checks naming this engine plus its query results."""
        if self.verification_failures:
            return f"FAILED ({len(self.verification_failures)})"
        if self.queries_total and not self.verified:
            return f"FAILED ({self.queries_total - self.queries_verified} queries)"
        return "ok"


def _missing_rows(expected: Any, got: Any) -> int | None:
    """Rows missing from a wrong count result (both integers), else None."""
    try:
        return max(0, int(str(expected)) - int(str(got)))
    except (TypeError, ValueError):
        return None


def summarize(results: Results, crash_results: Results | None = None) -> list[EngineSummary]:
    """One summary per engine of run.json, in run.json order; figures not in the folder stay None.

    ``crash_results``: a ``crashtest`` results folder whose crash rows fill the crash figures, matched
    to this run's engines by name (default: the run's own ``crash`` table)."""
    commits, queries = results.table("commits"), results.table("queries")
    maint, iso = results.table("maintenance"), results.table("isolation")
    crash = (crash_results or results).table("crash")
    out = []
    for engine, info in results.run.get("engines", {}).items():
        kind = info.get("kind", "?")
        s = EngineSummary(engine, kind, family_of(kind))
        failures = results.run.get("verification", {}).get("failures", []) or []
        s.verification_failures = [f for f in failures if str(f).startswith(f"{engine}:")]
        c = commits[commits.engine == engine].sort_values("seq")
        if len(c):
            last = c.iloc[-1]
            s.wa = _num(last.wa)
            s.space_amp_peak = _num(c.space_amp.max())
            s.space_amp_final = _num(last.space_amp)
            s.live_files, s.physical_files = int(last.live_files), int(last.physical_files)
            s.physical_files_peak = int(c.physical_files.max())
            s.live_bytes, s.physical_bytes = int(last.live_bytes), int(last.physical_bytes)
            mean = _num(last.mean_file_bytes)
            s.mean_file_mb = None if mean is None else mean / MB
            s.bytes_written = int(c.bytes_written.sum())
            s.files_written = int(c.files_written.sum())
            ing = c[c.kind == "ingest"]
            s.ingest_batches = int(ing.batch.nunique())
            if len(ing):
                s.ingest_p50_s = _num(ing.duration_s.median())
                s.ingest_p95_s = _num(ing.duration_s.quantile(0.95))
                s.ingest_max_s = _num(ing.duration_s.max())
                total = ing.duration_s.sum()
                s.ingest_mb_s = _num(ing.batch_bytes.sum() / MB / total) if total else None
        m = maint[(maint.engine == engine) & (maint.kind != "clean")]
        s.maintenance_runs = len(m)
        s.maintenance_s = float(m.duration_s.sum()) if len(m) else 0.0
        s.maintenance_bytes_written = int(m.bytes_written.sum()) if len(m) else 0
        s.maintenance_bytes_read = int(m.bytes_read.sum()) if len(m) else 0
        q = queries[queries.engine == engine]
        if len(q):
            final = q[q.checkpoint == q.checkpoint.max()]
            for name, g in final.groupby("query"):
                warm = g[g.run > 0].latency_s
                s.queries_warm_median_s[name] = float(warm.median() if len(warm) else g.latency_s.median())
                cold = g[g.run == 0]
                if len(cold):
                    s.queries_files_scanned[name] = int(cold.files_scanned.iloc[0])
                    if _num(cold.row_groups_scanned.iloc[0]) is not None:
                        s.queries_row_groups[name] = int(cold.row_groups_scanned.iloc[0])
                    if _num(cold.rows_scanned.iloc[0]) is not None:
                        s.queries_rows_read[name] = int(cold.rows_scanned.iloc[0])
            s.queries_verified, s.queries_total = int(q.verified.sum()), len(q)
        i = iso[iso.engine == engine]
        for outcome in ("ok", "failed", "wrong"):
            s.isolation[outcome] = int((i.outcome == outcome).sum())
        wrong = i[i.outcome == "wrong"]
        missing = [m for m in (_missing_rows(e, g) for e, g in zip(wrong.expected, wrong.got, strict=True))
                   if m is not None]
        s.isolation_rows_missing_max = max(missing) if missing else None
        s.repeats = _engine_repeats(results, engine)
        s.timings = _timings(results, engine)
        k = crash[crash.engine == engine]
        s.crash_points = len(k)
        if len(k):
            s.crash_rows_lost = int(k.rows_lost.clip(lower=0).sum())
            s.crash_rows_duplicated = int(k.rows_duplicated.clip(lower=0).sum())
        out.append(s)
    return out


def _engine_repeats(results: Results, engine: str) -> int:
    """The repetitions ``engine`` ran: the run's, or fewer for an engine capped by its own ``repeat``."""
    c = results.table("commits", all_repeats=True)
    mine = c[c.engine == engine]
    return int(mine["repeat"].nunique()) if len(mine) and "repeat" in mine else results.repeats


def _timings(results: Results, engine: str) -> dict[str, Interval]:
    """The engine's timing figures pooled over every repetition, each with its bootstrap interval."""
    out: dict[str, Interval | None] = {}
    c = results.table("commits", all_repeats=True)
    ing = c[(c.engine == engine) & (c.kind == "ingest")]
    if len(ing):
        out["ingest p50"] = interval(ing.duration_s.tolist())
        out["ingest p95"] = interval(ing.duration_s.tolist(), p95)
        out["ingest throughput"] = ratio_interval((ing.batch_bytes / MB).tolist(), ing.duration_s.tolist())
    m = results.table("maintenance", all_repeats=True)
    m = m[(m.engine == engine) & (m.kind != "clean")]
    if len(m):
        out["maintenance total"] = interval(m.duration_s.tolist(), total_per_repeat(_engine_repeats(results, engine)))
    q = results.table("queries", all_repeats=True)
    q = q[q.engine == engine]
    if len(q):
        final = q[q.checkpoint == q.checkpoint.max()]
        for name, g in final.groupby("query"):
            warm = g[g.run > 0].latency_s
            out[f"query {name}"] = interval((warm if len(warm) else g.latency_s).tolist())
    return {k: v for k, v in out.items() if v is not None}


def fmt(v: Any, digits: int = 3) -> str:
    """A figure for a table cell; None (not measured) becomes ``n/a``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def summary_frame(summaries: list[EngineSummary]) -> pd.DataFrame:
    """The report's per-engine summary table (formatted strings)."""
    rows = []
    for s in summaries:
        row = {"engine": s.engine, "design": s.family, "WA": fmt(s.wa), "space amp peak": fmt(s.space_amp_peak),
               "space amp final": fmt(s.space_amp_final), "ingest p50 s": fmt(s.ingest_p50_s),
               "ingest p95 s": fmt(s.ingest_p95_s), "ingest max s": fmt(s.ingest_max_s),
               "ingest MB/s": fmt(s.ingest_mb_s, 2), "maintenance runs": s.maintenance_runs,
               "maintenance s": fmt(s.maintenance_s, 2), "maintenance MB written": fmt(s.maintenance_bytes_written / MB, 1),
               "live files": fmt(s.live_files), "physical files": fmt(s.physical_files),
               "mean file MB": fmt(s.mean_file_mb, 2),
               "isolation ok/failed/wrong": (f"{s.isolation['ok']}/{s.isolation['failed']}/{s.isolation['wrong']}"
                                             if s.isolation_total else "n/a"),
               "queries verified": f"{s.queries_verified}/{s.queries_total}", "verification": s.verification}
        for q, v in sorted(s.queries_warm_median_s.items()):
            row[f"{q} s (files)"] = f"{v:.3f} ({s.queries_files_scanned.get(q, 'n/a')})"
        rows.append(row)
    return pd.DataFrame(rows)
