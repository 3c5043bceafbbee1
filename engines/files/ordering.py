"""Record orderings of written files: none, linear, z-order and Hilbert (numpy and pyarrow, no Spark).

Decisions:
- A space-filling-curve ordering is a sort on one unsigned key per row. Each sort column is
  first mapped to ``bits = 63 // d`` unsigned bits that preserve its order (numbers and
  timestamps: min/max scaling; strings: rank among the column's distinct values, or their first
  7 bytes when there are too many), then the ``d`` coordinates are combined:
  z-order interleaves their bits (bit ``k`` of dimension ``i`` lands at ``k*d + (d-1-i)``, so
  the first column is the most significant); Hilbert applies Skilling's transform ("Programming
  the Hilbert curve", AIP Conf. Proc. 707, 2004: AxesToTranspose) and then interleaves the
  transposed coordinates. Keys fit in 63 bits, so they are valid non-negative int64 values.
- With one sort column a curve is a plain linear sort (Hudi's ``SpaceCurveSortingHelper`` does
  the same), see :func:`effective_ordering`.
- The Spark side (``engines/spark/ordering.py::with_curve_key``) adds the key per Arrow batch in
  ``mapInArrow`` using :func:`curve_key`; the executor then range-partitions and sorts on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engines.files.splits import sort_indices

Ordering = Literal["none", "linear", "zorder", "hilbert"]
ORDERINGS: tuple[str, ...] = ("none", "linear", "zorder", "hilbert")
KEY_BITS = 63


def effective_ordering(ordering: str | None, sort_columns: Sequence[str]) -> Ordering:
    """The ordering actually applied: none without sort columns, linear for one column."""
    if ordering is not None and ordering not in ORDERINGS:
        raise ValueError(f"unknown ordering {ordering!r}; expected one of {ORDERINGS}")
    if not sort_columns:
        return "none"
    if ordering is None:
        return "linear"
    if ordering in ("zorder", "hilbert") and len(sort_columns) == 1:
        return "linear"
    return ordering  # type: ignore[return-value]


def bits_per_dimension(d: int) -> int:
    if d < 1:
        raise ValueError("a curve needs at least one dimension")
    return max(1, KEY_BITS // d)


def interleave(coords: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Z-order key: bit ``k`` of dimension ``i`` goes to position ``k*d + (d-1-i)``."""
    d = len(coords)
    if d * bits > 64:
        raise ValueError(f"{d} dimensions of {bits} bits do not fit 64 bits")
    out = np.zeros(len(coords[0]), dtype=np.uint64)
    one = np.uint64(1)
    for k in range(bits - 1, -1, -1):
        kk = np.uint64(k)
        for i in range(d):
            out = (out << one) | ((coords[i].astype(np.uint64) >> kk) & one)
    return out


def zorder_key(coords: Sequence[np.ndarray], bits: int) -> np.ndarray:
    return interleave(coords, bits)


def hilbert_key(coords: Sequence[np.ndarray], bits: int) -> np.ndarray:
    """Hilbert index of ``d``-dimensional points with ``bits`` bits per axis (Skilling 2004)."""
    x = [np.asarray(c).astype(np.uint64).copy() for c in coords]
    n = len(x)
    m = np.uint64(1 << (bits - 1))
    q = m
    one = np.uint64(1)
    while q > one:  # inverse undo excess work
        p = q - one
        for i in range(n):
            has = (x[i] & q) != 0
            if i == 0:
                x[0] = np.where(has, x[0] ^ p, x[0])
                continue
            t = (x[0] ^ x[i]) & p
            x[0] = np.where(has, x[0] ^ p, x[0] ^ t)
            x[i] = np.where(has, x[i], x[i] ^ t)
        q = q >> one
    for i in range(1, n):  # Gray encode
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0])
    q = m
    while q > one:
        t = np.where((x[n - 1] & q) != 0, t ^ (q - one), t)
        q = q >> one
    x = [xi ^ t for xi in x]
    return interleave(x, bits)


def scale_to_bits(values: np.ndarray, lo: float | None, hi: float | None, bits: int) -> np.ndarray:
    """Order-preserving map of numbers in [lo, hi] to [0, 2**bits - 1]; NaN/None -> 0."""
    top = float((1 << bits) - 1)
    vals = np.asarray(values, dtype=np.float64)
    if lo is None or hi is None or not hi > lo:
        return np.zeros(len(vals), dtype=np.uint64)
    scaled = np.floor((vals - lo) / (hi - lo) * top)
    return np.clip(np.nan_to_num(scaled, nan=0.0), 0, top).astype(np.uint64)


def string_prefix_values(values: Sequence[str | None]) -> np.ndarray:
    """First 7 UTF-8 bytes of each string as a big-endian number (order-preserving on prefixes)."""
    return np.array([int.from_bytes((v or "").encode()[:7].ljust(7, b"\0"), "big") for v in values],
                    dtype=np.float64)


def curve_key(coords: Sequence[np.ndarray], curve: str, bits: int) -> np.ndarray:
    """The curve key (uint64, < 2**63) of already-scaled coordinates."""
    if curve == "zorder":
        return zorder_key(coords, bits)
    if curve == "hilbert":
        return hilbert_key(coords, bits)
    raise ValueError(f"unknown curve {curve!r}; expected zorder or hilbert")


# --- the rows of a table in an ordering: the one rule every clustering writer applies -----------------

MAX_STRING_RANKS = 100_000  # more distinct strings than this: their first 7 bytes stand in for their rank


def sort_keys(sort_columns: Sequence[str], record_key: str) -> list[str]:
    """The columns a sorted write orders by: the sort columns, then the record key (rows never tie)."""
    cols = list(sort_columns)
    return cols + ([record_key] if record_key not in cols else [])


@dataclass(frozen=True)
class CurveColumn:
    """How one sort column maps to curve coordinates: ``numeric`` (min/max scaling over ``lo``..``hi``),
    ``rank`` (rank among ``ranks``, its distinct values) or ``prefix`` (the first 7 bytes)."""

    kind: str
    lo: float | None = None
    hi: float | None = None
    ranks: tuple[str, ...] = ()


def curve_coordinates(values: Sequence[pa.Array | pa.ChunkedArray], columns: Sequence[CurveColumn],
                      bits: int) -> list[np.ndarray]:
    """The scaled coordinates of rows whose sort-column ``values`` (numbers already as float64 for a
    ``numeric`` column) map as ``columns`` say: the same math in a Spark task and in the driver."""
    coords = []
    for vals, col in zip(values, columns, strict=True):
        if col.kind == "numeric":
            coords.append(scale_to_bits(vals.to_numpy(zero_copy_only=False), col.lo, col.hi, bits))
        elif col.kind == "rank":
            idx = pc.index_in(vals, value_set=pa.array(col.ranks, pa.string()))
            ranks = idx.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
            coords.append(scale_to_bits(ranks, 0.0, float(max(1, len(col.ranks) - 1)), bits))
        else:
            coords.append(scale_to_bits(string_prefix_values(vals.to_pylist()), 0.0, float(1 << 56), bits))
    return coords


def _as_float(values: pa.ChunkedArray) -> pa.ChunkedArray:
    """Numbers, dates and timestamps as float64 (dates and timestamps by their integer value)."""
    if pa.types.is_timestamp(values.type) or pa.types.is_date64(values.type):
        values = values.cast(pa.int64())
    elif pa.types.is_date32(values.type):
        values = values.cast(pa.int32())
    return values.cast(pa.float64())


def order_table(table: pa.Table, ordering: str | None, sort_columns: Sequence[str], record_key: str) -> pa.Table:
    """``table``'s rows in ``ordering`` (:func:`effective_ordering`): as they are (none), by
    :func:`sort_keys` (linear), or by the z-order/Hilbert key of the sort columns, then the record key;
    ascending, nulls first. The rule of every sorted clustering write: the pyarrow rewrite tasks sort by
    the same keys (:mod:`engines.files.rewrite_tasks`), Spark's sort puts nulls first too, and Spark's curve
    key (:func:`engines.spark.ordering.with_curve_key`) is :func:`curve_coordinates`."""
    cols = list(sort_columns)
    effective = effective_ordering(ordering, cols)
    if effective == "none":
        return table
    if effective == "linear":
        return table.take(sort_indices(table, sort_keys(cols, record_key)))
    columns, values = [], []
    for c in cols:
        col = table.column(c)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            distinct = pc.unique(col).drop_null().to_pylist()
            columns.append(CurveColumn("rank", ranks=tuple(sorted(distinct))) if len(distinct) <= MAX_STRING_RANKS
                           else CurveColumn("prefix"))
            values.append(col)
        else:
            numbers = _as_float(col)
            bounds = pc.min_max(numbers)
            columns.append(CurveColumn("numeric", bounds["min"].as_py(), bounds["max"].as_py()))
            values.append(numbers)
    bits = bits_per_dimension(len(cols))
    key = curve_key(curve_coordinates(values, columns, bits), effective, bits).astype(np.int64)
    keyed = table.append_column("_curve_key", pa.array(key, pa.int64()))
    return table.take(sort_indices(keyed, ["_curve_key", record_key]))
