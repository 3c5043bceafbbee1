"""``layoutbench compare RUN_A RUN_B``: every metric per engine, its change, and a verdict.

Three kinds of figure, three rules (A is the reference, B the run judged):
- deterministic (file counts, bytes written, WA, space amplification, files scanned, verified
  results, crash losses): compared exactly; any worse value is a regression.
- timings (ingest, maintenance, query latencies): the ratio B/A against ``tolerance`` (default
  1.5x — shared machines are noisy); a timing regresses only when it is both ``tolerance``x slower
  and ``min_delta_s`` slower (DuckDB's rule: tiny timings do not flip on jitter).
- race-dependent counts (reader queries failed or wrong during maintenance): a design that had
  none and now has some regressed; otherwise the change is shown and called the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reports.summary import EngineSummary, summarize
from runresults import Results

VERDICTS = ("improved", "same", "regressed")
Getter = Callable[[EngineSummary], Any]


def _r6(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


EXACT: dict[str, tuple[Getter, bool]] = {  # name -> (getter, higher_is_worse)
    "live files": (lambda s: s.live_files, True),
    "physical files": (lambda s: s.physical_files, True),
    "physical files peak": (lambda s: s.physical_files_peak, True),
    "bytes written": (lambda s: s.bytes_written, True),
    "files written": (lambda s: s.files_written, True),
    "WA": (lambda s: _r6(s.wa), True),
    "space amp peak": (lambda s: _r6(s.space_amp_peak), True),
    "space amp final": (lambda s: _r6(s.space_amp_final), True),
    "maintenance runs": (lambda s: s.maintenance_runs, True),
    "maintenance bytes written": (lambda s: s.maintenance_bytes_written, True),
    "queries verified": (lambda s: s.queries_verified, False),
    "verification failures": (lambda s: len(s.verification_failures), True),
    "crash rows lost": (lambda s: s.crash_rows_lost, True),
    "crash rows duplicated": (lambda s: s.crash_rows_duplicated, True),
}
TIMED: dict[str, tuple[Getter, bool]] = {  # name -> (getter, higher_is_worse)
    "ingest p50 s": (lambda s: s.ingest_p50_s, True),
    "ingest p95 s": (lambda s: s.ingest_p95_s, True),
    "ingest max s": (lambda s: s.ingest_max_s, True),
    "ingest MB/s": (lambda s: s.ingest_mb_s, False),
    "maintenance s": (lambda s: s.maintenance_s if s.maintenance_runs else None, True),
}


@dataclass
class CompareResult:
    """Rows of engine, metric, A, B, change, verdict; ``regressed`` when any verdict is."""

    rows: list[dict[str, str]] = field(default_factory=list)
    title: str = "comparison"
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(r["verdict"] == "regressed" for r in self.rows)

    def counts(self) -> dict[str, int]:
        return {v: sum(1 for r in self.rows if r["verdict"] == v) for v in VERDICTS}

    def add(self, engine: str, metric: str, a: Any, b: Any, change: str, verdict: str) -> None:
        self.rows.append({"engine": engine, "metric": metric, "A": _show(a), "B": _show(b), "change": change,
                          "verdict": verdict})

    def to_markdown(self) -> str:
        c = self.counts()
        cols = ["engine", "metric", "A", "B", "change", "verdict"]
        lines = [f"# {self.title}", "", *[f"- {n}" for n in self.notes],
                 f"- {c['regressed']} regressed, {c['improved']} improved, {c['same']} same", "",
                 "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r[k]).replace("|", "/") for k in cols) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"


def _show(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.10g}"
    return str(v)


def exact_verdict(a: Any, b: Any, higher_is_worse: bool = True) -> tuple[str, str]:
    """(change, verdict) of a deterministic figure: equal is the same, a missing figure regressed."""
    if a == b:
        return "0", "same"
    if b is None:
        return "missing in B", "regressed"
    if a is None:
        return "new in B", "same"
    delta = float(b) - float(a)
    worse = delta > 0 if higher_is_worse else delta < 0
    return f"{delta:+.6g}", "regressed" if worse else "improved"


def timing_verdict(a: float | None, b: float | None, tolerance: float, min_delta_s: float = 0.0,
                   higher_is_worse: bool = True) -> tuple[str, str]:
    """(change, verdict) of a timing: the ratio B/A beyond ``tolerance`` (and ``min_delta_s``) either way."""
    if a is None or b is None:
        return ("n/a", "same") if a is None else ("missing in B", "regressed")
    if a <= 0 or b <= 0:
        return "n/a", "same"
    ratio = b / a
    worse, better = (ratio, 1 / ratio) if higher_is_worse else (1 / ratio, ratio)
    big = abs(b - a) >= min_delta_s if higher_is_worse else True
    verdict = "regressed" if worse > tolerance and big else "improved" if better > tolerance and big else "same"
    return f"{ratio:.2f}x", verdict


def compare_summaries(a: list[EngineSummary], b: list[EngineSummary], tolerance: float = 1.5,
                      timings: bool = True, min_delta_s: float = 0.01) -> CompareResult:
    """Compare per-engine summaries of two runs (A = reference)."""
    res = CompareResult()
    amap, bmap = {s.engine: s for s in a}, {s.engine: s for s in b}
    for name in [s.engine for s in b if s.engine not in amap]:
        res.add(name, "(engine)", "absent", "present", "new in B", "same")
    for sa in a:
        sb = bmap.get(sa.engine)
        if sb is None:
            res.add(sa.engine, "(engine)", "present", "absent", "missing in B", "regressed")
            continue
        if sa.kind != sb.kind:
            res.add(sa.engine, "(kind)", sa.kind, sb.kind, "not comparable", "regressed")
            continue
        for metric, (get, worse) in EXACT.items():
            va, vb = get(sa), get(sb)
            res.add(sa.engine, metric, va, vb, *exact_verdict(va, vb, worse))
        for q in sorted(set(sa.queries_files_scanned) | set(sb.queries_files_scanned)):
            va, vb = sa.queries_files_scanned.get(q), sb.queries_files_scanned.get(q)
            res.add(sa.engine, f"{q} files scanned", va, vb, *exact_verdict(va, vb))
        ia, ib = sa.isolation_bad, sb.isolation_bad
        if sa.isolation_total or sb.isolation_total:
            verdict = "regressed" if ia == 0 and ib > 0 else "improved" if ia > 0 and ib == 0 else "same"
            res.add(sa.engine, "isolation failed+wrong (race-dependent)", f"{ia}/{sa.isolation_total}",
                    f"{ib}/{sb.isolation_total}", f"{ib - ia:+d}", verdict)
        if not timings:
            continue
        timed = dict(TIMED)
        for q in sorted(set(sa.queries_warm_median_s) | set(sb.queries_warm_median_s)):
            timed[f"{q} warm median s"] = (lambda s, q=q: s.queries_warm_median_s.get(q), True)
        for metric, (get, worse) in timed.items():
            va, vb = get(sa), get(sb)
            res.add(sa.engine, metric, va, vb, *timing_verdict(va, vb, tolerance, min_delta_s, worse))
    return res


def compare_runs(run_a: str | Path, run_b: str | Path, tolerance: float = 1.5, out: str | Path | None = None,
                 min_delta_s: float = 0.01) -> CompareResult:
    """Compare two results folders (A = reference); writes ``compare.md`` into ``out`` (default: run B)."""
    ra, rb = Results(run_a), Results(run_b)
    res = compare_summaries(summarize(ra), summarize(rb), tolerance, min_delta_s=min_delta_s)
    res.title = f"{ra.run.get('run_id', Path(run_a).name)} (A) vs {rb.run.get('run_id', Path(run_b).name)} (B)"
    res.notes = [f"deterministic figures exact; timings as B/A beyond {tolerance}x and {min_delta_s} s",
                 f"git A {ra.run.get('git', {}).get('sha')}, B {rb.run.get('git', {}).get('sha')}"]
    sa, sb = ra.run.get("scenario", {}), rb.run.get("scenario", {})
    if sa != sb:
        res.notes.append("the two runs used different scenarios: deterministic differences may be expected")
    target = Path(out) if out else Path(run_b)
    target.mkdir(parents=True, exist_ok=True)
    (target / "compare.md").write_text(res.to_markdown())
    return res
