"""Maximum sustainable throughput: the highest landing rate at which the lag stays bounded.

Stepped search, each step a fresh table, landing folder and checkpoint fed ``batches_per_step``
batches at one rate (batches per second): from ``start``, the rate is multiplied by ``factor``
while the step is sustained (divided by it while the first steps are not), at most ``max_steps``
steps, then bisected (geometric mean) ``refine`` times between the last sustained and the first
unsustained rate.

A step is sustained when its lag does not grow: the slope of each landing file's lag at commit
(arrival -> visible) against its arrival time is below ``max_lag_slope`` seconds per second. A
stream that keeps up has a flat lag; one that does not gains ``1 - rate_in / rate_out`` seconds of
lag per second.

The figure reported beside the stepped bracket is the capacity measured while saturated: batches
committed per second of back-to-back micro-batches (``1 / mean`` interval between commits of the
unsustained steps; none when no step saturated: the capacity is then above the highest rate
tried), with its 95% percentile-bootstrap interval (``runresults.uncertainty``). Records per second are batches per second times the mean batch size.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.scenario import Scenario
from bench.stream.engine_stream import StreamRun


@dataclass
class Step:
    rate: float
    run: StreamRun
    sustained: bool
    lag_slope: float
    final_backlog_s: float
    processed_per_s: float
    intervals: list[float]


@dataclass
class SearchResult:
    steps: list[Step] = field(default_factory=list)

    @property
    def best_sustained(self) -> float | None:
        rates = [s.rate for s in self.steps if s.sustained]
        return max(rates) if rates else None

    @property
    def first_unsustained(self) -> float | None:
        best = self.best_sustained or 0.0
        rates = [s.rate for s in self.steps if not s.sustained and s.rate > best]
        return min(rates) if rates else None


def lag_slope(arrivals: list[float], commits: list[float]) -> float:
    """Least-squares slope of (commit - arrival) against arrival; 0 for fewer than three points."""
    if len(arrivals) < 3:
        return 0.0
    x = np.asarray(arrivals) - arrivals[0]
    y = np.asarray(commits) - np.asarray(arrivals)
    if float(np.ptp(x)) == 0.0:
        return 0.0
    return float(np.polyfit(x, y, 1)[0])


def measure(rate: float, run: StreamRun, max_slope: float) -> Step:
    """The sustained verdict and figures of one step (see the module docstring)."""
    landed = run.sink.landing.landed()
    done = run.sink.state.committed
    names = sorted((n for n in run.good_names if n in done and n in landed), key=lambda n: landed[n])
    arrivals = [landed[n] for n in names]
    commits = [done[n] for n in names]
    slope = lag_slope(arrivals, commits)
    final = commits[-1] - arrivals[-1] if names else math.inf
    ordered = sorted(set(commits))
    intervals = [b - a for a, b in zip(ordered, ordered[1:], strict=False) if b > a]
    processed = len(intervals) / sum(intervals) if intervals else 0.0
    sustained = run.error is None and len(names) == len(run.good_names) and slope < max_slope
    return Step(rate, run, sustained, slope, final, processed, intervals)


def search(run_step: Any, scenario: Scenario, scratch: Path) -> SearchResult:
    """Run the stepped search; ``run_step(rate, root)`` streams one step and returns its ``StreamRun``."""
    cfg = scenario.stream.rate_search
    out = SearchResult()

    def step(rate: float) -> Step:
        root = scratch / f"rate-{len(out.steps)}"
        try:
            s = measure(rate, run_step(rate, root), cfg.max_lag_slope)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        out.steps.append(s)
        return s

    rate = cfg.start
    first = step(rate)
    going_up = first.sustained
    for _ in range(cfg.max_steps - 1):
        rate = rate * cfg.factor if going_up else rate / cfg.factor
        if step(rate).sustained != going_up:
            break
    for _ in range(cfg.refine):
        lo, hi = out.best_sustained, out.first_unsustained
        if hi is None:
            break
        step(math.sqrt(lo * hi) if lo else hi / cfg.factor)
    return out


def capacity_intervals(result: SearchResult) -> list[float]:
    """Commit-to-commit intervals of the saturated steps (none if no step saturated)."""
    return [i for s in result.steps if not s.sustained for i in s.intervals]
