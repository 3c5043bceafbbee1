"""``layoutbench compare RUN_A RUN_B``: every metric, its change, and a verdict.

Deterministic figures (file counts, bytes written, WA, verified results) are compared exactly;
timings as a ratio B/A against a tolerance (default 1.5x, shared CI machines are noisy).
For costs, higher is a regression; for verified query counts, lower is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.results import Results
from reports.summary import EngineSummary, summarize

EXACT = {  # name -> (getter, higher_is_worse)
    "live files": (lambda s: s.live_files, True),
    "physical files": (lambda s: s.physical_files, True),
    "bytes written": (lambda s: s.bytes_written, True),
    "WA": (lambda s: None if s.wa is None else round(s.wa, 6), True),
    "maintenance runs": (lambda s: s.maintenance_runs, True),
    "maintenance bytes written": (lambda s: s.maintenance_bytes_written, True),
    "queries verified": (lambda s: s.queries_verified, False),
    "isolation failed+wrong": (lambda s: s.isolation["failed"] + s.isolation["wrong"], True),
}
TIMED = {
    "ingest p50 s": lambda s: s.ingest_p50_s,
    "maintenance s": lambda s: s.maintenance_s if s.maintenance_runs else None,
}


@dataclass
class CompareResult:
    rows: list[dict[str, str]] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(r["verdict"] == "regressed" for r in self.rows)

    def to_markdown(self) -> str:
        cols = ["engine", "metric", "A", "B", "change", "verdict"]
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"


def _exact_row(engine: str, metric: str, a: object, b: object, higher_is_worse: bool) -> dict[str, str]:
    if a == b:
        verdict, change = "same", "0"
    elif a is None or b is None:
        verdict, change = "regressed", "missing"
    else:
        delta = float(b) - float(a)  # type: ignore[arg-type]
        worse = delta > 0 if higher_is_worse else delta < 0
        verdict, change = ("regressed" if worse else "improved"), f"{delta:+g}"
    return {"engine": engine, "metric": metric, "A": str(a), "B": str(b), "change": change, "verdict": verdict}


def compare_summaries(a: list[EngineSummary], b: list[EngineSummary], tolerance: float = 1.5,
                      timings: bool = True) -> CompareResult:
    res = CompareResult()
    bmap = {s.engine: s for s in b}
    for sa in a:
        sb = bmap.get(sa.engine)
        if sb is None:
            res.rows.append({"engine": sa.engine, "metric": "(engine)", "A": "present", "B": "missing",
                             "change": "missing", "verdict": "regressed"})
            continue
        for metric, (get, worse) in EXACT.items():
            res.rows.append(_exact_row(sa.engine, metric, get(sa), get(sb), worse))
        queries = sorted(set(sa.queries_warm_median_s) | set(sb.queries_warm_median_s))
        timed = dict(TIMED)
        for q in queries:
            timed[f"{q} warm median s"] = lambda s, q=q: s.queries_warm_median_s.get(q)
        if not timings:
            continue
        for metric, get in timed.items():
            va, vb = get(sa), get(sb)
            if va is None or vb is None or va <= 0:
                verdict, change = ("same" if va == vb else "regressed" if vb is None else "improved"), "n/a"
            else:
                ratio = vb / va
                change = f"{ratio:.2f}x"
                verdict = "regressed" if ratio > tolerance else "improved" if ratio < 1 / tolerance else "same"
            res.rows.append({"engine": sa.engine, "metric": metric, "A": f"{va:.4f}" if va is not None else "n/a",
                             "B": f"{vb:.4f}" if vb is not None else "n/a", "change": change, "verdict": verdict})
    return res


def compare_runs(run_a: str | Path, run_b: str | Path, tolerance: float = 1.5,
                 out: str | Path | None = None) -> CompareResult:
    """Compare two results folders; writes ``compare.md`` into ``out`` (default: run B)."""
    res = compare_summaries(summarize(Results(run_a)), summarize(Results(run_b)), tolerance)
    target = Path(out) if out else Path(run_b)
    (target / "compare.md").write_text(f"# {Path(run_a).name} vs {Path(run_b).name}\n\n" + res.to_markdown())
    return res
