"""Pure planning for the pyarrow rewrite paths (:mod:`engines.files.rewrite_tasks`, run by
:mod:`engines.spark.arrow_rewrite`).

- :func:`split_rows`: cut the concatenation of files' rows into ``n`` contiguous runs whose
  lengths differ by at most one row (unsorted rewrites, and the sorted runs of a sorted one).
- :func:`split_files`: whole files to ``n`` outputs as Spark's ``coalesce(n)`` groups one
  partition per file (Apache Hudi's unsorted clustering, :func:`split_files`).
- :func:`sort_key` / :func:`search`: a row's sort key as a Python tuple ordered exactly as
  ``pyarrow`` sorts ascending with nulls first (and as Spark does), and the first row of a sorted
  column set whose key is ``>=`` a given key.
- :func:`sort_indices`: the row order of a sort by columns, ascending, nulls first, stable (the
  order every sorted rewrite writes, and the simulator's).
- :func:`plan_cuts`: from keys sampled at a fixed stride in every sorted run, the key ranges of
  ``n`` outputs of near-equal row counts, each cut into chunks of about ``chunk_rows`` rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

Run = tuple[int, int, int]  # (file index, first row, number of rows)
Key = tuple[tuple[int, Any], ...]


def split_rows(row_counts: Sequence[int], num_outputs: int) -> list[list[Run]]:
    """Per output, the (file, start, rows) pieces of its contiguous run of near-equal length."""
    if num_outputs < 1:
        raise ValueError("num_outputs must be at least 1")
    if any(n < 0 for n in row_counts):
        raise ValueError("row counts must not be negative")
    total = sum(row_counts)
    bounds = [total * i // num_outputs for i in range(num_outputs + 1)]
    out: list[list[Run]] = [[] for _ in range(num_outputs)]
    file_start = 0
    for f, n in enumerate(row_counts):
        lo, hi = file_start, file_start + n
        for o in range(num_outputs):
            a, b = max(lo, bounds[o]), min(hi, bounds[o + 1])
            if a < b:
                out[o].append((f, a - lo, b - a))
        file_start = hi
    return out


def split_files(row_counts: Sequence[int], num_outputs: int) -> list[list[Run]]:
    """Per output, whole files: output ``i`` takes files ``[i*n//m, (i+1)*n//m)`` of the ``n`` given,
    in order (``m`` = ``num_outputs``); with fewer files than outputs, one file each (fewer outputs).

    This is how Apache Hudi 1.2 spreads an unsorted clustering group over its output files:
    ``MultipleSparkJobExecutionStrategy.readRecordsForGroupAsRow`` reads the plan's slices as one
    Spark partition each (``parallelize(slices, slices.size())``), and with no sort columns
    (``hoodie.bulkinsert.sort.mode`` NONE) ``NonSortPartitionerWithRows`` coalesces them to the
    group's ``numOutputFileGroups``; Spark's ``DefaultPartitionCoalescer``, with no preferred
    locations, gives output ``i`` exactly that range of partitions."""
    if num_outputs < 1:
        raise ValueError("num_outputs must be at least 1")
    if any(n < 0 for n in row_counts):
        raise ValueError("row counts must not be negative")
    n = len(row_counts)
    m = min(num_outputs, n)
    return [[(f, 0, row_counts[f]) for f in range(i * n // m, (i + 1) * n // m)] for i in range(m)]


def sort_key(values: Sequence[Any]) -> Key:
    """A comparable key: nulls first, then values in their natural (byte-wise for strings) order."""
    return tuple((0, None) if v is None else (1, v) for v in values)


def search(key_at: Callable[[int], Key], num_rows: int, key: Key, lo: int = 0) -> int:
    """First row in ``[lo, num_rows)`` of a key-sorted run whose key is ``>= key`` (binary search)."""
    hi = num_rows
    while lo < hi:
        mid = (lo + hi) // 2
        if key_at(mid) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def plan_cuts(samples: Sequence[tuple[Key, int]], num_outputs: int, chunk_rows: int) -> list[list[Key | None]]:
    """Per output, its ascending cut keys: output ``o`` holds the keys in ``[cuts[o][0], cuts[o][-1])``,
    read chunk by chunk between consecutive cuts; ``None`` first is -inf, ``None`` last is +inf, and
    an empty list is an output with no rows.

    ``samples`` are ``(key, weight)``: a key sampled every ``weight`` rows of a sorted run (the key
    stands for itself and the rows after it up to the next sample).
    """
    if num_outputs < 1 or chunk_rows < 1:
        raise ValueError("num_outputs and chunk_rows must be at least 1")
    ordered = sorted(samples, key=lambda s: s[0])
    total = sum(w for _, w in ordered)
    if not ordered:
        return [[None, None]] + [[] for _ in range(num_outputs - 1)]
    ranks: list[int] = []  # estimated rows sorting before each sampled key
    acc = 0
    for _, w in ordered:
        ranks.append(acc)
        acc += w
    # output o starts at the first sampled key whose rank reaches o/n of the rows
    starts = [0] + [next((i for i, r in enumerate(ranks) if r >= total * o / num_outputs), len(ordered))
                     for o in range(1, num_outputs)] + [len(ordered)]
    cuts: list[list[Key | None]] = []
    for o in range(num_outputs):
        a, b = starts[o], starts[o + 1]
        if a >= b and o > 0:
            cuts.append([])
            continue
        keys: list[Key | None] = [None if o == 0 else ordered[a][0]]
        last = ranks[a] if a < len(ranks) else total
        for i in range(a + 1, b):
            if ranks[i] - last >= chunk_rows:
                keys.append(ordered[i][0])
                last = ranks[i]
        keys.append(None if b >= len(ordered) else ordered[b][0])
        cuts.append(keys)
    return cuts


def sort_indices(table: pa.Table, keys: Sequence[str]) -> pa.Array:
    """Ascending, nulls first, stable (pyarrow >= 25 takes null placement per key)."""
    if int(pa.__version__.split(".")[0]) >= 25:
        return pc.sort_indices(table, sort_keys=[(c, "ascending", "at_start") for c in keys])
    return pc.sort_indices(table, sort_keys=[(c, "ascending") for c in keys], null_placement="at_start")
