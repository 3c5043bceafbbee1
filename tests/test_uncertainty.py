"""Intervals say their n and are 95% only from 10 samples; a difference decides only outside the
margin: seeded fake timing tables, one per case."""

from __future__ import annotations

import numpy as np
import pytest

from runresults.uncertainty import (
    MIN_N,
    decide,
    exact_ratio,
    interval,
    mean_interval,
    p95,
    paired_ratio,
    ratio_interval,
    ratio_of_medians,
    total_per_repeat,
)


def _samples(center: float, spread: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(center, spread, n))


def test_a_difference_decides_only_outside_the_margin() -> None:
    """(Replaces "timing winners need separated intervals": separation alone decided by however little.)"""
    a = _samples(1.0, 0.05, 60, 1)
    slow = [x * 1.5 for x in a]
    r = paired_ratio(a, slow)
    assert r.value == pytest.approx(1.5) and r.kind == "bootstrap" and r.n == 60
    assert decide(r, 0.05) == "higher" and decide(paired_ratio(slow, a), 0.05) == "lower"
    # 3% slower on every pair: the interval separates from 1, but lies inside ±5%: equivalent
    r3 = paired_ratio(a, [x * 1.03 for x in a])
    assert r3.lo > 1.0 and decide(r3, 0.05) == "equivalent"
    assert decide(exact_ratio(71, 69), 0.05) == "equivalent" and decide(exact_ratio(71, 50), 0.05) == "lower"
    assert decide(None, 0.05) == "n/a"
    # one measurement each (a run of one repetition): no interval, so no difference is shown, however large
    one = paired_ratio([1.0], [1.5])
    assert one is not None and one.n == 1 and decide(one, 0.05) == "equivalent"


def test_fewer_than_ten_samples_are_a_range_never_95() -> None:
    three = interval([4.23, 4.5, 5.38])
    assert three.kind == "range" and (three.lo, three.hi) == (4.23, 5.38)
    assert "range" in three.text() and "n=3" in three.text() and "95%" not in three.text()
    many = interval(_samples(2.0, 0.4, MIN_N, 9))
    assert many.kind == "bootstrap" and "95%, n=10" in many.text()
    assert mean_interval([1.0, 2.0, 3.0]).kind == "range"
    assert ratio_of_medians([1.0, 1.1, 0.9], [2.0, 2.2, 1.8]).text().startswith("2 (range")


def test_overlapping_samples_are_equivalent() -> None:
    a = _samples(1.00, 0.3, 12, 3)
    b = _samples(1.05, 0.3, 12, 4)
    r = ratio_of_medians(a, b)
    assert r.n == 12 and r.lo < 1 < r.hi and decide(r, 0.05) == "equivalent"


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
