"""What is known of a cached batch DataFrame, found once per DataFrame: its rows per partition value,
and its rows as Arrow when the driver built it from them.

Every engine of a run ingests the same cached batch. Insert and APPEND need the number of partition
values (one write task per value), the COW baseline the rows per value (its insert assignment): one
Spark job per batch answers all of them, where each engine used to run its own. The runner counts
while it prepares the batch (with its generation), so no engine's ingest time holds the job and every
engine sees the same figures. Only cached DataFrames are remembered: their rows do not change between
calls; any other DataFrame is counted on every call.

The rows themselves: the runner builds a small batch from the Arrow table it generated
(:mod:`engines.spark.arrow_frame`) and caches it in Spark. An engine that writes in Spark (Apache
Hudi) reads the batch from Spark's memory; an engine that writes in this process (ours in the
driver, delta-rs) reads it from the driver's memory (:func:`batch_rows`), where fetching it back from
the JVM would charge each of them a Spark job per batch for rows the process already holds.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from engines.spark.arrow_compat import arrow_schema_of, to_arrow

_COUNTS: weakref.WeakKeyDictionary[DataFrame, dict[str, dict[Any, int]]] = weakref.WeakKeyDictionary()
_ROWS: weakref.WeakKeyDictionary[DataFrame, pa.Table] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def partition_counts(df: DataFrame, column: str) -> dict[Any, int]:
    """Rows of ``df`` per value of ``column`` (None for nulls); one Spark job the first time per cached
    DataFrame and column."""
    cached = bool(getattr(df, "is_cached", False))
    if cached:
        with _LOCK:
            known = _COUNTS.get(df, {}).get(column)
        if known is not None:
            return dict(known)
    counts = {r[0]: int(r[1]) for r in df.groupBy(column).count().collect()}
    if cached:
        with _LOCK:
            _COUNTS.setdefault(df, {})[column] = counts
    return dict(counts)


def remember_partition_counts(df: DataFrame, column: str, counts: dict[Any, int]) -> None:
    """Record ``counts`` (rows of the cached ``df`` per value of ``column``, counted by the caller from
    the rows it built ``df`` from) so that :func:`partition_counts` answers without a job."""
    if not getattr(df, "is_cached", False):
        raise ValueError("only a cached DataFrame's partition counts can be remembered: its rows do not change")
    with _LOCK:
        _COUNTS.setdefault(df, {})[column] = dict(counts)


def known_partition_counts(df: DataFrame, column: str) -> dict[Any, int] | None:
    """The counts :func:`partition_counts` already holds for the cached ``df``, or None (no job)."""
    with _LOCK:
        known = _COUNTS.get(df, {}).get(column) if getattr(df, "is_cached", False) else None
    return dict(known) if known is not None else None


def cached_row_count(df: DataFrame) -> int | None:
    """The rows of the cached ``df`` as Spark's cache recorded them when it was filled (the plan's
    statistics: a few Py4J calls, no job); None when ``df`` is not cached or the count is not known
    (Spark keeps a plan's first statistics: asked before the cache was filled, it stays unknown)."""
    from py4j.protocol import Py4JError

    if not getattr(df, "is_cached", False):
        return None
    try:
        count = df._jdf.queryExecution().optimizedPlan().stats().rowCount()
        if not count.isDefined():
            return None
        value = count.get()  # Py4J hands a BigInt over as a Python int
        return value if isinstance(value, int) else int(value.toString())
    except Py4JError:
        return None


def remember_rows(df: DataFrame, rows: pa.Table) -> None:
    """Record that the cached ``df`` was built from ``rows`` (same rows, same order, same schema)."""
    if not getattr(df, "is_cached", False):
        raise ValueError("only a cached DataFrame's rows can be remembered: its rows do not change")
    if not rows.schema.equals(arrow_schema_of(df)):
        raise ValueError(f"the rows' schema {rows.schema} is not the DataFrame's {arrow_schema_of(df)}")
    with _LOCK:
        _ROWS[df] = rows


def known_rows(df: DataFrame) -> pa.Table | None:
    """The rows :func:`remember_rows` holds for ``df``, or None (no job)."""
    with _LOCK:
        return _ROWS.get(df) if getattr(df, "is_cached", False) else None


def batch_rows(df: DataFrame) -> pa.Table:
    """``df``'s rows as Arrow, in its order: the driver's own when it built ``df`` from them, else
    collected (one Spark job)."""
    known = known_rows(df)
    return known if known is not None else to_arrow(df)
