"""The query suite's pure half: parameters chosen from ground truth and each query's pruning
predicates. No Spark: the runner executes the queries (:mod:`bench.queries`), the simulator
prices them by pruning simulated slices with the same predicates (:mod:`engines.table.pruning`).

Parameters (which service, which hours, which key) are derived from the ground-truth table so
they are deterministic for a seed and always select existing data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engines.table.pruning import Predicate

TOP_N = 3


@dataclass
class QueryParams:
    """Deterministic parameters of the suite for one checkpoint."""

    service: str
    ts_from: Any
    ts_to: Any
    trace_id: str
    recent_from: Any
    day: str
    partition_column: str = "dt"


def choose_params(truth: pa.Table, partition_column: str = "dt", window_hours: float = 3.0) -> QueryParams:
    """Pick parameters from the ground truth: the 2nd most frequent service, a ``window_hours`` window
    from the middle of the data, the key in the middle of the sorted key set, the last hour, the
    busiest day."""
    services = pc.value_counts(truth.column("service")).to_pylist()
    services.sort(key=lambda d: (-d["counts"], d["values"]))
    service = services[min(1, len(services) - 1)]["values"]
    ts = truth.column("ts")
    lo, hi = pc.min(ts).as_py(), pc.max(ts).as_py()
    mid = lo + (hi - lo) / 2
    keys = pc.sort_indices(truth.column("trace_id"))
    trace_id = truth.column("trace_id")[keys[len(keys) // 2].as_py()].as_py()
    days = pc.value_counts(truth.column(partition_column)).to_pylist()
    days.sort(key=lambda d: (-d["counts"], d["values"]))
    return QueryParams(service, mid, mid + timedelta(hours=window_hours), trace_id, hi - timedelta(hours=1),
                       days[0]["values"], partition_column)


PREDICATES: dict[str, Callable[[QueryParams], list[Predicate]]] = {
    "full_scan_by_level": lambda p: [],
    "service_hours": lambda p: [("service", "=", p.service), ("ts", ">=", p.ts_from), ("ts", "<=", p.ts_to)],
    "point_lookup": lambda p: [("trace_id", "=", p.trace_id)],
    "recent_hour": lambda p: [("ts", ">=", p.recent_from)],
    "topn_latency": lambda p: [(p.partition_column, "=", p.day)],
}
DESCRIPTIONS: dict[str, str] = {
    "full_scan_by_level": "count(*) group by level",
    "service_hours": "one service over a time window (3 hours by default): count, sum(latency)",
    "point_lookup": "one row by trace_id",
    "recent_hour": "rows of the most recent hour",
    "topn_latency": f"top-{TOP_N} latency per service for the busiest day",
}
