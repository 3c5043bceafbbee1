"""Snapshot read: a view's file slices as a Spark DataFrame, pruned by per-file min/max.

Simple predicates ``(column, op, value)`` with op in ``= == < <= > >= in`` prune whole files
whose recorded range cannot match; the result reports how many files were pruned. Row-group
pruning inside the kept files is Spark's own (Parquet filter push-down); its effect is counted
by :func:`count_row_groups` from the footers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from engines.table.model import FileSlice
from engines.table.parquet_stats import row_group_ranges
from engines.table.storage import Storage

Predicate = tuple[str, str, Any]
_OPS = {"=", "==", "<", "<=", ">", ">=", "in"}


class PredicateError(ValueError):
    """A predicate the pruner does not understand."""


def may_match(lo: Any, hi: Any, op: str, value: Any) -> bool:
    try:
        if op in ("=", "=="):
            return lo <= value <= hi
        if op == "<":
            return lo < value
        if op == "<=":
            return lo <= value
        if op == ">":
            return hi > value
        if op == ">=":
            return hi >= value
        if op == "in":
            return any(lo <= v <= hi for v in value)
    except TypeError:
        return True  # incomparable types: never prune on a guess
    raise PredicateError(f"unsupported operator {op!r}; expected one of {sorted(_OPS)}")


def slice_may_match(fs: FileSlice, predicates: Iterable[Predicate]) -> bool:
    for column, op, value in predicates:
        if op not in _OPS:
            raise PredicateError(f"unsupported operator {op!r} in predicate on {column!r}")
        rng = fs.column_stats.get(column)
        if rng is None:
            continue
        if not may_match(rng[0], rng[1], op, value):
            return False
    return True


def prune(slices: Sequence[FileSlice], predicates: Iterable[Predicate] = ()) -> tuple[list[FileSlice], int]:
    """(kept slices, number pruned) for the predicates (AND)."""
    preds = list(predicates)
    kept = [s for s in slices if slice_may_match(s, preds)]
    return kept, len(slices) - len(kept)


def count_row_groups(storage: Storage, slices: Sequence[FileSlice],
                     predicates: Iterable[Predicate] = ()) -> tuple[int, int, int]:
    """(row groups total, row groups whose min/max may match, rows in those) over ``slices``' footers.

    The last figure is what a Parquet reader with row-group filtering reads.
    """
    preds = list(predicates)
    total = matching = rows = 0
    for s in slices:
        md = storage.parquet_metadata(s.path)
        per_col = {c: row_group_ranges(md, c) for c, _, _ in preds}
        for rg in range(md.num_row_groups):
            total += 1
            ok = True
            for column, op, value in preds:
                rng = per_col[column][rg]
                if rng is not None and not may_match(rng[0], rng[1], op, value):
                    ok = False
                    break
            if ok:
                matching += 1
                rows += md.row_group(rg).num_rows
    return total, matching, rows


@dataclass
class SnapshotScan:
    df: DataFrame
    files_total: int
    files_scanned: int
    files_pruned: int
    scanned: list[FileSlice]


def file_uri(storage: Storage, rel: str) -> str:
    path = storage.abs(rel)
    if "://" in storage.uri:
        scheme = storage.uri.split("://", 1)[0]
        return f"{scheme}://{path}"
    return f"file://{path}"


def read_snapshot(
    spark: SparkSession,
    storage: Storage,
    slices: Sequence[FileSlice],
    predicates: Iterable[Predicate] = (),
    schema: StructType | None = None,
) -> SnapshotScan:
    """Read the snapshot ``slices`` (after pruning) as one DataFrame with explicit file paths."""
    kept, pruned = prune(slices, predicates)
    paths = [file_uri(storage, s.path) for s in kept]
    if paths:
        reader = spark.read.schema(schema) if schema is not None else spark.read
        if all("=" in s.partition.rsplit("/", 1)[-1] for s in kept):
            # Hive-style directories (Delta): the partition column lives only in the path.
            reader = reader.option("basePath", file_uri(storage, ""))
        df = reader.parquet(*paths)
    else:
        if schema is None and slices:
            schema = spark.read.parquet(file_uri(storage, slices[0].path)).schema
        df = spark.createDataFrame([], schema or StructType([]))
    return SnapshotScan(df, len(slices), len(kept), pruned, kept)
