"""Figures with their uncertainty, and the rule that turns two of them into a difference or an equivalence.

Method (named in the report): a timing figure is a statistic (median, p95, a total, a ratio) of
its samples, pooled over every repetition of the run (``--repeat``): per-batch ingest latencies,
per-run maintenance durations, warm query latencies. From :data:`MIN_N` samples on, its interval
is a 95% bootstrap interval (:data:`RESAMPLES` resamples, seeded, so a report renders the same
twice: BCa through :func:`scipy.stats.bootstrap` for medians of ratios and means, the percentile
method for the other statistics). From fewer samples an interval would not cover 95% of the time,
so it is printed as what it is: the range the statistic takes, with its n ("range, n=3").

Two figures are compared by their ratio B / A with its interval (:func:`paired_ratio` when the
samples pair up: same batch, same round; :func:`ratio_of_medians` otherwise). A difference decides
only when that interval is a 95% one and lies wholly outside 1 ± margin (:func:`decide`); otherwise,
and for a range of fewer than 10 samples, the two are "equivalent". Exact figures (counts, bytes)
use the same margin on their exact ratio.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
SEED = 20260101
MIN_N = 10  # fewer samples: a range, never called 95%
METHOD = (f"from {MIN_N} samples on, {int(LEVEL * 100)}% bootstrap intervals ({RESAMPLES} resamples, seeded; BCa for "
          "medians of ratios and means, percentile otherwise) over the samples of every repetition; from fewer, the "
          "range the statistic takes, with its n")


@dataclass(frozen=True)
class Interval:
    """A statistic of ``n`` samples and its interval ``[lo, hi]``: ``kind`` "bootstrap" (95%),
    "range" (fewer than :data:`MIN_N` samples) or "exact" (a deterministic figure)."""

    value: float
    lo: float
    hi: float
    n: int
    kind: str = "bootstrap"

    def text(self, digits: int = 3) -> str:
        v = f"{self.value:.{digits}g}"
        if self.kind == "exact":  # its digits are all significant: 1.00, not 1
            return f"{f'{self.value:#.{digits}g}'.rstrip('.')} (exact)"
        if self.n <= 1:
            return f"{v} (n={self.n}, no interval)"
        if self.kind == "range":
            return f"{v} (range {self.lo:.{digits}g}–{self.hi:.{digits}g}, n={self.n})"
        return f"{v} [{self.lo:.{digits}g}, {self.hi:.{digits}g}] (95%, n={self.n})"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def median(x: np.ndarray) -> np.ndarray:
    return np.median(x, axis=-1)


def p95(x: np.ndarray) -> np.ndarray:
    return np.percentile(x, 95, axis=-1)


def _clean(samples: Sequence[float | None]) -> np.ndarray:
    return np.asarray([s for s in samples if s is not None and not math.isnan(s)], dtype=float)


def _bounds(boot: np.ndarray, n: int) -> tuple[float, float, str]:
    if n < MIN_N:
        return float(np.min(boot)), float(np.max(boot)), "range"
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    return float(lo), float(hi), "bootstrap"


def interval(samples: Sequence[float], statistic: Callable[[np.ndarray], np.ndarray] = median,
             seed: int = SEED) -> Interval | None:
    """``statistic`` of ``samples`` with its percentile-bootstrap interval (a range below
    :data:`MIN_N` samples; None without samples).

    ``statistic`` takes an array whose last axis is the sample and reduces it (vectorised over
    the resamples)."""
    x = _clean(samples)
    if x.size == 0:
        return None
    value = float(statistic(x))
    if x.size == 1:
        return Interval(value, value, value, 1, "range")
    rng = np.random.default_rng(seed)
    boot = statistic(x[rng.integers(0, x.size, size=(RESAMPLES, x.size))])
    lo, hi, kind = _bounds(boot, x.size)
    return Interval(value, lo, hi, int(x.size), kind)


def ratio_interval(numerators: Sequence[float], denominators: Sequence[float], seed: int = SEED) -> Interval | None:
    """sum(numerators) / sum(denominators) (e.g. MB per second over batches) with the bootstrap
    interval of pairs resampled together."""
    pairs = [(a, b) for a, b in zip(numerators, denominators, strict=True)
             if a is not None and b is not None and not math.isnan(a) and not math.isnan(b)]
    if not pairs or sum(b for _, b in pairs) <= 0:
        return None
    num = np.asarray([a for a, _ in pairs], dtype=float)
    den = np.asarray([b for _, b in pairs], dtype=float)
    value = float(num.sum() / den.sum())
    if len(pairs) == 1:
        return Interval(value, value, value, 1, "range")
    idx = np.random.default_rng(seed).integers(0, len(pairs), size=(RESAMPLES, len(pairs)))
    boot = num[idx].sum(axis=1) / np.maximum(den[idx].sum(axis=1), 1e-12)
    lo, hi, kind = _bounds(boot, len(pairs))
    return Interval(value, lo, hi, len(pairs), kind)


def total_per_repeat(repeats: int) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic of a total (e.g. maintenance time): the sum of the samples over the repetitions."""
    def stat(x: np.ndarray) -> np.ndarray:
        return np.sum(x, axis=-1) / max(1, repeats)
    return stat


def _bca(data: tuple[np.ndarray, ...], statistic: Callable[..., Any], paired: bool, seed: int) -> tuple[float, float] | None:
    """scipy's BCa interval, or None when it is degenerate (e.g. every sample equal)."""
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = bootstrap(data, statistic, n_resamples=RESAMPLES, confidence_level=LEVEL, method="BCa",
                            paired=paired, vectorized=True, random_state=np.random.default_rng(seed))
        except (ValueError, FloatingPointError):
            return None
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return None if math.isnan(lo) or math.isnan(hi) else (lo, hi)


def mean_interval(samples: Sequence[float], seed: int = SEED) -> Interval | None:
    """The mean with its BCa interval (from :data:`MIN_N` samples; below, the samples' range)."""
    x = _clean(samples)
    if x.size == 0:
        return None
    value = float(x.mean())
    if x.size < MIN_N:
        return Interval(value, float(x.min()), float(x.max()), int(x.size), "range")
    ci = _bca((x,), lambda a, axis=-1: np.mean(a, axis=axis), False, seed)
    lo, hi = ci if ci is not None else (value, value)
    return Interval(value, lo, hi, int(x.size))


def paired_ratio(a: Sequence[float], b: Sequence[float], seed: int = SEED) -> Interval | None:
    """The median of the per-pair ratios b_i / a_i (same batch, same round) with its BCa interval
    (from :data:`MIN_N` pairs; below, the range of the ratios)."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True)
             if x is not None and y is not None and not math.isnan(x) and not math.isnan(y) and x > 0]
    if not pairs:
        return None
    r = np.asarray([y / x for x, y in pairs], dtype=float)
    value = float(np.median(r))
    if r.size < MIN_N:
        return Interval(value, float(r.min()), float(r.max()), int(r.size), "range")
    ci = _bca((r,), lambda s, axis=-1: np.median(s, axis=axis), False, seed)
    if ci is None:
        ci = interval(r.tolist(), median, seed)
        ci = (ci.lo, ci.hi) if ci is not None else (value, value)
    return Interval(value, ci[0], ci[1], int(r.size))


def ratio_of_medians(a: Sequence[float], b: Sequence[float], seed: int = SEED) -> Interval | None:
    """median(b) / median(a) of two unpaired samples, with the bootstrap interval of both resampled
    independently (n: the smaller sample; below :data:`MIN_N`, the range min(b)/max(a) .. max(b)/min(a))."""
    x, y = _clean(a), _clean(b)
    if x.size == 0 or y.size == 0 or np.median(x) <= 0:
        return None
    value = float(np.median(y) / np.median(x))
    n = int(min(x.size, y.size))
    if n < MIN_N:
        return Interval(value, float(y.min() / x.max()), float(y.max() / max(x.min(), 1e-12)), n, "range")
    rng = np.random.default_rng(seed)
    bx = np.median(x[rng.integers(0, x.size, size=(RESAMPLES, x.size))], axis=1)
    by = np.median(y[rng.integers(0, y.size, size=(RESAMPLES, y.size))], axis=1)
    lo, hi, kind = _bounds(by / np.maximum(bx, 1e-12), n)
    return Interval(value, lo, hi, n, kind)


def exact_ratio(a: float, b: float) -> Interval | None:
    """b / a of two exact figures (counts, bytes), as an interval of no width."""
    if a is None or b is None or a <= 0:
        return None
    r = float(b) / float(a)
    return Interval(r, r, r, 1, "exact")


def single_sample(kind: str, n: int) -> bool:
    """Whether a measured figure rests on one sample each: it has no interval, so it shows no difference."""
    return kind != "exact" and n < 2


def below_confidence(kind: str, n: int) -> bool:
    """Whether a measured figure has no 95% interval (fewer than :data:`MIN_N` samples: one, or a range
    of a few, which covers the median far less often than 95%): it decides nothing."""
    return kind != "exact" and (kind == "range" or n < MIN_N)


def decide(ratio: Interval | None, margin: float) -> str:
    """``"lower"`` (B below A beyond the margin), ``"higher"``, ``"equivalent"`` (the 95% interval
    reaches into 1 ± margin, or a measured ratio has no 95% interval, being of fewer than
    :data:`MIN_N` samples: a range of three values covers the median about 75% of the time, so it
    cannot show a difference beyond the margin) or ``"n/a"`` (no figure). Exact figures decide on
    their value."""
    if ratio is None:
        return "n/a"
    if below_confidence(ratio.kind, ratio.n):
        return "equivalent"
    if ratio.hi < 1 - margin:
        return "lower"
    if ratio.lo > 1 + margin:
        return "higher"
    return "equivalent"
