"""Timing figures with their uncertainty, and the rule that turns two of them into a winner or a tie.

Method (named in the report): a timing figure is a statistic (median, p95, a total, a ratio) of
its samples, pooled over every repetition of the run (``--repeat``): per-batch ingest latencies,
per-run maintenance durations, warm query latencies. Its 95% interval is the percentile bootstrap
of that statistic (:data:`RESAMPLES` resamples with replacement, seeded, so a report renders the
same twice). A design wins a timing criterion only when its interval and the runner-up's do not
overlap; otherwise the criterion is a tie and both intervals are printed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
SEED = 20260101
METHOD = (f"percentile bootstrap, {RESAMPLES} resamples (seeded), {int(LEVEL * 100)}% interval of the statistic "
          "over the samples of every repetition")


@dataclass(frozen=True)
class Interval:
    """A statistic of ``n`` samples and its bootstrap interval ``[lo, hi]``."""

    value: float
    lo: float
    hi: float
    n: int

    def overlaps(self, other: Interval) -> bool:
        return not (self.hi < other.lo or other.hi < self.lo)

    def text(self, digits: int = 3) -> str:
        if self.n <= 1 or self.lo == self.hi:
            return f"{self.value:.{digits}g} (n={self.n}, no interval)"
        return f"{self.value:.{digits}g} [{self.lo:.{digits}g}, {self.hi:.{digits}g}]"


def median(x: np.ndarray) -> np.ndarray:
    return np.median(x, axis=-1)


def p95(x: np.ndarray) -> np.ndarray:
    return np.percentile(x, 95, axis=-1)


def interval(samples: Sequence[float], statistic: Callable[[np.ndarray], np.ndarray] = median,
             seed: int = SEED) -> Interval | None:
    """``statistic`` of ``samples`` with its percentile-bootstrap interval (None without samples).

    ``statistic`` takes an array whose last axis is the sample and reduces it (vectorised over
    the resamples)."""
    x = np.asarray([s for s in samples if s is not None and not math.isnan(s)], dtype=float)
    if x.size == 0:
        return None
    value = float(statistic(x))
    if x.size == 1:
        return Interval(value, value, value, 1)
    rng = np.random.default_rng(seed)
    boot = statistic(x[rng.integers(0, x.size, size=(RESAMPLES, x.size))])
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    return Interval(value, float(lo), float(hi), int(x.size))


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
        return Interval(value, value, value, 1)
    idx = np.random.default_rng(seed).integers(0, len(pairs), size=(RESAMPLES, len(pairs)))
    boot = num[idx].sum(axis=1) / np.maximum(den[idx].sum(axis=1), 1e-12)
    alpha = (1 - LEVEL) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    return Interval(value, float(lo), float(hi), len(pairs))


def total_per_repeat(repeats: int) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic of a total (e.g. maintenance time): the sum of the samples over the repetitions."""
    def stat(x: np.ndarray) -> np.ndarray:
        return np.sum(x, axis=-1) / max(1, repeats)
    return stat


def timing_winner(figures: dict[str, Interval], lower_is_better: bool = True) -> tuple[str | None, str]:
    """(winner or None for a tie, the reason) among designs' intervals: the best value wins only
    when its interval separates from every other design's."""
    present = {k: v for k, v in figures.items() if v is not None}
    if len(present) < 2:
        return None, "fewer than two designs measured"
    ranked = sorted(present.items(), key=lambda kv: kv[1].value, reverse=not lower_is_better)
    (best, b), (second, s) = ranked[0], ranked[1]
    if b.overlaps(s):
        return None, f"intervals overlap: {best} {b.text()} vs {second} {s.text()}"
    ratio = (s.value / b.value if lower_is_better else b.value / s.value) if b.value and s.value else float("inf")
    return best, f"{ratio:.2f}x vs {second} (intervals separate: {b.text()} vs {s.text()})"
