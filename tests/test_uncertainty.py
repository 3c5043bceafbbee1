"""Timing winners need separated 95% intervals: seeded fake timing tables, one per case."""

from __future__ import annotations

import numpy as np
import pytest

from runresults.uncertainty import Interval, interval, p95, ratio_interval, timing_winner, total_per_repeat


def _samples(center: float, spread: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(center, spread, n))


def test_separated_intervals_win() -> None:
    fast = interval(_samples(1.0, 0.05, 60, 1))
    slow = interval(_samples(1.5, 0.05, 60, 2))
    assert fast.hi < slow.lo
    winner, why = timing_winner({"Option 1": slow, "Option 2": fast})
    assert winner == "Option 2" and "separate" in why
    winner, _ = timing_winner({"Option 1": slow, "Option 2": fast}, lower_is_better=False)
    assert winner == "Option 1"


def test_overlapping_intervals_tie_and_print_both() -> None:
    a = interval(_samples(1.00, 0.3, 12, 3))
    b = interval(_samples(1.05, 0.3, 12, 4))
    assert a.overlaps(b)
    winner, why = timing_winner({"Option 1": a, "Option 2": b})
    assert winner is None
    assert a.text() in why and b.text() in why


def test_interval_contains_the_statistic_and_is_reproducible() -> None:
    x = _samples(2.0, 0.4, 40, 5)
    i = interval(x)
    assert i.lo <= float(np.median(x)) == i.value <= i.hi and i.n == 40
    assert interval(x) == i  # seeded: a report renders the same twice
    assert interval(x, p95).value == pytest.approx(float(np.percentile(x, 95)))


def test_single_sample_has_no_interval() -> None:
    one = interval([0.7])
    assert (one.lo, one.hi, one.n) == (0.7, 0.7, 1) and "no interval" in one.text()
    assert interval([]) is None


def test_totals_and_ratios() -> None:
    runs = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]  # two repetitions of three maintenance runs
    assert interval(runs, total_per_repeat(2)).value == pytest.approx(6.0)
    r = ratio_interval([1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5])
    assert r.value == pytest.approx(2.0) and r.lo == pytest.approx(2.0)


def test_fewer_than_two_designs() -> None:
    winner, why = timing_winner({"Option 1": Interval(1, 1, 1, 1)})
    assert winner is None and "fewer than two" in why
