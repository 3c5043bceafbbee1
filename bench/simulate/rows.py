"""What a simulated file holds, for pruning: its rows' query columns (exact), or ranges (estimated).

The simulator prices every query by pruning its live slices with the suite's real predicates
(:mod:`engines.table.pruning`), so each slice needs the per-column min/max a real file's footer
would give. Two ways, chosen per run:

- **exact** (short horizons): each live file keeps the rows of the columns queries filter on
  (:data:`COLUMNS`), in the order the real writer puts them: an ingest file is its partition's
  batch rows sorted by the write's sort columns (the record key by default); a COW merge appends
  the new rows; an unsorted rewrite concatenates its inputs in commit order
  (:func:`engines.table.model.commit_order`, as :mod:`engines.spark.arrow_rewrite` does) and cuts
  near-equal row runs (:func:`engines.files.splits.split_rows`' rule); a sorted rewrite sorts by
  (sort columns, record key) and cuts near-equal runs. Min/max then come from the rows.
- **estimated** (long horizons, no rows generated): ranges from the generator's distributions:
  ``ts`` from the batch's time range clipped to the partition, every service, every key; a sorted
  rewrite splits the service range by the services' cumulative row shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# the rule lives with the horizon's schedule, which computes it for every batch at once
from bench.simulate.batch_schedule import ts_range_in_partition as ts_range_in_partition
from engines.files.splits import sort_indices

COLUMNS = ("service", "ts", "trace_id")


def partition_rows(batch: pa.Table, partition_column: str) -> dict[str, pa.Table]:
    """The batch's query columns per partition value, in batch order."""
    cols = batch.select([partition_column, *COLUMNS])
    values = cols.column(0)
    out = {}
    for value in sorted(v for v in pc.unique(values).to_pylist() if v is not None):
        out[value] = cols.filter(pc.equal(values, value)).select(list(COLUMNS))
    return out


def sort_rows(rows: pa.Table, keys: Sequence[str]) -> pa.Table:
    """Rows ordered by ``keys`` ascending, nulls first (as the writer sorts)."""
    return rows.take(sort_indices(rows.combine_chunks(), keys))


def cut(rows: pa.Table, counts: Sequence[int]) -> list[pa.Table]:
    """Consecutive pieces of ``counts`` rows each."""
    out, start = [], 0
    for n in counts:
        out.append(rows.slice(start, n))
        start += n
    return out


def near_equal_runs(rows: pa.Table, num_outputs: int) -> list[pa.Table]:
    """``num_outputs`` contiguous runs whose lengths differ by at most one row (``split_rows``' bounds)."""
    total = rows.num_rows
    bounds = [total * i // num_outputs for i in range(num_outputs + 1)]
    return [rows.slice(bounds[i], bounds[i + 1] - bounds[i]) for i in range(num_outputs)]


def stats_of(rows: pa.Table, partition_column: str, partition_value: str) -> dict[str, tuple[Any, Any]]:
    """Per-column (min, max) of ``rows``, plus the partition column's constant value."""
    out: dict[str, tuple[Any, Any]] = {partition_column: (partition_value, partition_value)}
    if rows.num_rows == 0:
        return out
    for name in COLUMNS:
        mm = pc.min_max(rows.column(name))
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if lo is not None:
            out[name] = (lo, hi)
    return out


def service_quantile_ranges(weights: Sequence[float], labels: Sequence[str],
                            num_outputs: int) -> list[tuple[str, str]]:
    """The service range of each of ``num_outputs`` near-equal runs of rows sorted by service, when
    services carry row shares ``weights`` (estimated mode's sorted rewrite)."""
    order = np.argsort(np.asarray(labels))
    share = np.asarray(weights, dtype=float)[order]
    cum = np.cumsum(share / share.sum())
    ordered = [labels[i] for i in order]
    out = []
    for o in range(num_outputs):
        lo_q, hi_q = o / num_outputs, (o + 1) / num_outputs
        first = int(np.searchsorted(cum, lo_q, side="right"))
        last = int(np.searchsorted(cum, hi_q - 1e-12, side="left"))
        first, last = min(first, len(ordered) - 1), min(max(last, first), len(ordered) - 1)
        out.append((ordered[first], ordered[last]))
    return out


def merge_stats(stats: list[Any]) -> dict:
    """The union of column ranges: per column present in every input, (min of mins, max of maxes)."""
    if not stats:
        return {}
    out = dict(stats[0])
    for m in stats[1:]:
        if m is not stats[0]:  # slices of one batch share their ranges
            out = merge_two(out, m)
    return out


def merge_two(a: Any, b: Any) -> dict:
    """:func:`merge_stats` of two inputs (a merge tops up one file with one batch's rows)."""
    out = {}
    for c, mine in a.items():
        other = b.get(c)
        if other is None:
            continue
        if other is mine:  # a range both share (the batches' service range, a partition's value)
            out[c] = mine
            continue
        lo, hi = mine
        olo, ohi = other
        if olo < lo:
            out[c] = (olo, ohi if ohi > hi else hi)
        elif ohi > hi:
            out[c] = (lo, ohi)
        else:  # ``other`` lies inside: the range unchanged, its tuple kept
            out[c] = mine
    return out
