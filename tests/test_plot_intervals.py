"""The plots' error bars are the report's own intervals: a range below MIN_N samples, 95% from it on."""

from __future__ import annotations

import pandas as pd

from reports.plots import spread_cells, spread_label
from runresults.uncertainty import MIN_N, interval


def _frame(counts: dict[str, int]) -> pd.DataFrame:
    rows = [{"engine": e, "query": "q", "latency_s": 0.1 * (i + 1)} for e, n in counts.items() for i in range(n)]
    return pd.DataFrame(rows)


def test_cells_hold_the_reports_interval_and_n() -> None:
    df = _frame({"a": 3, "b": MIN_N})
    cells = spread_cells(df, ["query", "engine"], "latency_s").set_index("engine")
    for engine, n in (("a", 3), ("b", MIN_N)):
        iv = interval(df[df.engine == engine].latency_s.tolist())
        assert (cells.loc[engine, "value"], cells.loc[engine, "lo"], cells.loc[engine, "hi"]) == (iv.value, iv.lo, iv.hi)
        assert cells.loc[engine, "n"] == n
    assert (cells.loc["a", "lo"], cells.loc["a", "hi"]) == (0.1, 0.30000000000000004)  # the range of 3 runs


def test_label_calls_nothing_95_percent_below_min_n() -> None:
    few = spread_cells(_frame({"a": 3, "b": MIN_N}), ["query", "engine"], "latency_s")
    assert spread_label(few).startswith("range where n<10") and "n=3-10" in spread_label(few)
    many = spread_cells(_frame({"a": MIN_N, "b": MIN_N + 2}), ["query", "engine"], "latency_s")
    assert spread_label(many) == f"95% bootstrap interval, n={MIN_N}-{MIN_N + 2}"
    assert spread_label(spread_cells(_frame({}), ["query", "engine"], "latency_s")) == "no samples"
