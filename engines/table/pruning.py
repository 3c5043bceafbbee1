"""File pruning by per-file min/max: which file slices a conjunction of simple predicates may match.

Pure (no Spark): the reader prunes a snapshot with it before Spark opens a file, and the simulator
prices queries with it on simulated slices, so both count the same files scanned.

A predicate is ``(column, op, value)`` with op in ``= == < <= > >= in``. A column without a
recorded range never prunes; nor do values that cannot be compared with the range (never prune on
a guess).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engines.table.model import FileSlice
from engines.table.parquet_stats import row_group_ranges
from engines.table.storage import Storage

Predicate = tuple[str, str, Any]
OPERATORS = frozenset({"=", "==", "<", "<=", ">", ">=", "in"})


class PredicateError(ValueError):
    """A predicate the pruner does not understand."""


def may_match(lo: Any, hi: Any, op: str, value: Any) -> bool:
    """Whether a column whose values lie in ``[lo, hi]`` may hold a value satisfying ``op value``."""
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
    raise PredicateError(f"unsupported operator {op!r}; expected one of {sorted(OPERATORS)}")


def slice_may_match(fs: FileSlice, predicates: Iterable[Predicate]) -> bool:
    """Whether ``fs``'s recorded column ranges may hold rows matching every predicate."""
    for column, op, value in predicates:
        if op not in OPERATORS:
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
    verdicts: dict[int, bool] = {}  # by ranges dict: slices sharing one (a batch's, a group's outputs) share it
    kept = []
    for s in slices:
        ok = verdicts.get(id(s.column_stats))
        if ok is None:
            ok = verdicts[id(s.column_stats)] = slice_may_match(s, preds)
        if ok:
            kept.append(s)
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
