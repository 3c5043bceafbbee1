"""Two whole candidates compared criterion by criterion, each difference judged against the margin.

Criteria (correlated figures count once, shown together):
- the ledger: $ per TB, paired by sample (repetition, or group of interleaved rounds: :mod:`ledger`);
- ingest: the per-batch ratio, paired by batch and repetition (every design sees the same
  batches), its median with the interval; p50, p95 and throughput shown beside it; when decided,
  where the difference lies (:mod:`runresults.review.ingest_cost`);
- maintenance time: the total per repetition, paired by repetition; with one repetition, each
  maintenance run paired by the batch it ran after;
- write amplification, live files (final), space amplification (peak, with the peak's physical
  files): exact figures, their ratio against the same margin (69 against 71 files is equivalent);
- each query at the final checkpoint: the interleaved rounds paired by round (``query_rounds``),
  else the old warm runs, unpaired, labelled with their n.

Ratios are B / A; lower is better for every criterion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from engines.config.registry import MB
from runresults import Results
from runresults.review import ingest_cost
from runresults.review.choice import ledger_ratio
from runresults.review.ledger import REPETITION, Ledger
from runresults.uncertainty import (
    Interval,
    decide,
    exact_ratio,
    interval,
    p95,
    paired_ratio,
    ratio_interval,
    ratio_of_medians,
)


@dataclass
class Comparison:
    criterion: str
    a: str  # the candidate compared against
    b: str
    figures: dict[str, str]  # engine -> its figures (one text)
    ratio: Interval | None
    verdict: str  # lower / higher / equivalent / n/a (B against A)
    basis: str  # how the ratio was formed
    note: str = ""  # why, where measured (the ingest's phases: runresults.review.ingest_cost)

    def as_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "a": self.a, "b": self.b, "figures": self.figures,
                "ratio": self.ratio.as_dict() if self.ratio else None,
                "ratio_text": self.ratio.text() if self.ratio else "n/a", "verdict": self.verdict, "basis": self.basis, "note": self.note}


def _ingest(results: Results, engine: str) -> pd.Series:
    return ingest_cost.per_batch(results, engine).duration_s


def _ingest_figures(results: Results, engine: str) -> str:
    c = results.table("commits", all_repeats=True)
    c = c[(c.engine == engine) & (c.kind == "ingest")]
    p50, p95_ = interval(c.duration_s.tolist()), interval(c.duration_s.tolist(), p95)
    mbs = ratio_interval((c.batch_bytes.fillna(0) / MB).tolist(), c.duration_s.tolist())
    return "; ".join(f"{name} {iv.text()}" for name, iv in (("p50 s", p50), ("p95 s", p95_), ("MB/s", mbs)) if iv)


def _last_state(results: Results, engine: str) -> pd.DataFrame:
    c = results.table("commits")
    return c[c.engine == engine].sort_values("seq")


def _exact(name: str, a: str, b: str, va: float | None, vb: float | None, margin: float,
           fa: str | None = None, fb: str | None = None) -> Comparison:
    ratio = exact_ratio(va, vb) if va is not None and vb is not None else None
    return Comparison(name, a, b, {a: fa or _g(va), b: fb or _g(vb)}, ratio, decide(ratio, margin), "exact figures")


def _g(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4g}"


def _queries(results: Results, a: str, b: str, margin: float) -> list[Comparison]:
    out = []
    rounds = results.table("query_rounds")
    q = results.table("queries", all_repeats=True)
    q = q[q.error.isna()] if "error" in q else q
    names = sorted(set(q[q.engine.isin([a, b])]["query"]) | set(rounds[rounds.engine.isin([a, b])]["query"]))
    for name in names:
        ra, rb = (rounds[(rounds.engine == e) & (rounds["query"] == name)] for e in (a, b))
        if len(ra) and len(rb):
            cp = int(max(ra.checkpoint.max(), rb.checkpoint.max()))
            sa, sb = (r[r.checkpoint == cp].set_index("round").latency_s for r in (ra, rb))
            both = sa.index.intersection(sb.index)
            ratio = paired_ratio(sa[both].tolist(), sb[both].tolist())
            figs = {e: (iv.text() if (iv := interval(s.tolist())) else "n/a") for e, s in ((a, sa), (b, sb))}
            basis = f"interleaved rounds at checkpoint {cp}, paired by round"
        else:
            qa, qb = (q[(q.engine == e) & (q["query"] == name)] for e in (a, b))
            if qa.empty or qb.empty:
                continue
            cp = int(max(qa.checkpoint.max(), qb.checkpoint.max()))
            wa, wb = (_warm(x[x.checkpoint == cp]) for x in (qa, qb))
            ratio = ratio_of_medians(wa, wb)
            figs = {e: (iv.text() if (iv := interval(s)) else "n/a") for e, s in ((a, wa), (b, wb))}
            basis = f"warm runs at checkpoint {cp} (not interleaved), unpaired"
        out.append(Comparison(f"query {name} (s)", a, b, figs, ratio, decide(ratio, margin), basis))
    return out


def _warm(g: pd.DataFrame) -> list[float]:
    warm = g[g.run > 0].latency_s
    return (warm if len(warm) else g.latency_s).tolist()


def _maintenance_seconds(results: Results, engine: str) -> pd.DataFrame:
    """Seconds of maintenance (its clean rows aside) per repetition and batch it ran after."""
    m = results.of_engine("maintenance", engine, all_repeats=True)
    if m.empty:
        return pd.DataFrame({"repeat": [], "batch": [], "duration_s": []})
    m = m[m.kind != "clean"]
    return m.groupby(["repeat", "batch"]).duration_s.sum().reset_index()


def _maintenance_ratio(results: Results, a: str, b: str) -> tuple[Interval | None, str]:
    """b's maintenance seconds over a's: the totals paired by repetition when both ran more than one,
    else the runs paired by the batch they ran after (every design maintains after the same batches
    under ``inline``), so that one repetition still has a sample per maintenance run."""
    sa, sb = _maintenance_seconds(results, a), _maintenance_seconds(results, b)
    if sa.empty:
        return None, ""
    if sa.repeat.nunique() > 1 and sb.repeat.nunique() > 1:
        ta, tb = sa.groupby("repeat").duration_s.sum(), sb.groupby("repeat").duration_s.sum()
        common = ta.index.intersection(tb.index)
        return paired_ratio(ta[common].tolist(), tb[common].tolist()), "totals paired by repetition"
    ia, ib = sa.set_index(["repeat", "batch"]).duration_s, sb.set_index(["repeat", "batch"]).duration_s
    common = ia.index.intersection(ib.index)
    return paired_ratio(ia[common].tolist(), ib[common].tolist()), "runs paired by the batch they ran after"


def compare(results: Results, a: str, b: str, ledgers: dict[str, Ledger], margin: float) -> list[Comparison]:
    """Every criterion of candidate ``b`` against candidate ``a``."""
    out = []
    la, lb = ledgers[a], ledgers[b]
    ratio = ledger_ratio(la, lb)
    basis = "paired by repetition" if la.basis == REPETITION else "paired by group of interleaved query rounds"
    out.append(Comparison("cost ($ per TB ingested)", a, b,
                          {e: (iv.text() if (iv := led.usd_per_tb()) else "n/a") for e, led in ((a, la), (b, lb))},
                          ratio, decide(ratio, margin), basis))
    ia, ib = _ingest(results, a), _ingest(results, b)
    both = ia.index.intersection(ib.index)
    ratio = paired_ratio(ia[both].tolist(), ib[both].tolist())
    verdict = decide(ratio, margin)
    out.append(Comparison("ingest latency (per batch)", a, b, {a: _ingest_figures(results, a), b: _ingest_figures(
        results, b)}, ratio, verdict, "median of the per-batch ratios, paired by batch and repetition",
        ingest_cost.explain(results, a, b) if verdict in ("lower", "higher") else ""))
    ma, mb = (la.core_seconds["maintenance"], lb.core_seconds["maintenance"])
    if any(ma) or any(mb):
        ratio, basis = _maintenance_ratio(results, a, b)
        out.append(Comparison("maintenance (core-seconds per run of the table)", a, b,
                              {a: _g(sum(ma) / max(1, len(ma))), b: _g(sum(mb) / max(1, len(mb)))}, ratio,
                              decide(ratio, margin) if ratio else ("higher" if any(mb) else "lower"), basis))
    ca, cb = _last_state(results, a), _last_state(results, b)
    if len(ca) and len(cb):
        out.append(_exact("write amplification (final)", a, b, float(ca.wa.iloc[-1]), float(cb.wa.iloc[-1]), margin))
        out.append(_exact("live files (final)", a, b, float(ca.live_files.iloc[-1]), float(cb.live_files.iloc[-1]),
                          margin))
        out.append(_exact("space amplification (peak)", a, b, float(ca.space_amp.max()), float(cb.space_amp.max()),
                          margin, *(f"{c.space_amp.max():.4g} (physical files peak {int(c.physical_files.max())})"
                                    for c in (ca, cb))))
    out += _queries(results, a, b, margin)
    return out
