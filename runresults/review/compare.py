"""Two whole candidates compared criterion by criterion, each difference judged against the margin.

Criteria (correlated figures count once, shown together):
- the ledger: $ per TB, paired by repetition;
- ingest: the per-batch ratio, paired by batch and repetition (every design sees the same
  batches), its median with the interval; p50, p95 and throughput shown beside it; when decided,
  where the difference lies (:mod:`runresults.review.ingest_cost`);
- maintenance time: the total per repetition, paired by repetition;
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
from runresults.review.ledger import Ledger
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


def compare(results: Results, a: str, b: str, ledgers: dict[str, Ledger], margin: float) -> list[Comparison]:
    """Every criterion of candidate ``b`` against candidate ``a``."""
    out = []
    la, lb = ledgers[a], ledgers[b]
    pa, pb = la.per_tb_by_repeat(), lb.per_tb_by_repeat()
    common = sorted(set(pa) & set(pb))
    ratio = paired_ratio([pa[r] for r in common], [pb[r] for r in common])
    out.append(Comparison("cost ($ per TB ingested)", a, b,
                          {e: (iv.text() if (iv := led.usd_per_tb()) else "n/a") for e, led in ((a, la), (b, lb))},
                          ratio, decide(ratio, margin), "paired by repetition"))
    ia, ib = _ingest(results, a), _ingest(results, b)
    both = ia.index.intersection(ib.index)
    ratio = paired_ratio(ia[both].tolist(), ib[both].tolist())
    verdict = decide(ratio, margin)
    out.append(Comparison("ingest latency (per batch)", a, b, {a: _ingest_figures(results, a), b: _ingest_figures(
        results, b)}, ratio, verdict, "median of the per-batch ratios, paired by batch and repetition",
        ingest_cost.explain(results, a, b) if verdict in ("lower", "higher") else ""))
    ma, mb = (la.core_seconds["maintenance"], lb.core_seconds["maintenance"])
    if any(ma) or any(mb):
        sa, sb = dict(zip(la.repeats, ma, strict=True)), dict(zip(lb.repeats, mb, strict=True))
        common = sorted(set(sa) & set(sb))
        ratio = paired_ratio([sa[r] for r in common], [sb[r] for r in common]) if any(ma) else None
        out.append(Comparison("maintenance (core-seconds per run of the table)", a, b,
                              {a: _g(sum(ma) / max(1, len(ma))), b: _g(sum(mb) / max(1, len(mb)))}, ratio,
                              decide(ratio, margin) if ratio else ("higher" if any(mb) else "lower"),
                              "totals paired by repetition"))
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
