"""Per-column min/max and row counts from a Parquet footer (no data pages read)."""

from __future__ import annotations

from typing import Any

from engines.table.model import ColumnStats


def column_stats_from_footer(metadata: Any, columns: list[str] | None = None) -> ColumnStats:
    """Combine row-group statistics into file-level (min, max) per top-level column.

    Columns without statistics in every row group are left out (their ranges are unknown).
    """
    out: dict[str, tuple[Any, Any]] = {}
    missing: set[str] = set()
    for rg in range(metadata.num_row_groups):
        group = metadata.row_group(rg)
        for ci in range(group.num_columns):
            col = group.column(ci)
            name = col.path_in_schema
            if columns is not None and name not in columns:
                continue
            stats = col.statistics
            if stats is None or not stats.has_min_max:
                missing.add(name)
                continue
            lo, hi = stats.min, stats.max
            if name in out:
                cur_lo, cur_hi = out[name]
                out[name] = (min(cur_lo, lo), max(cur_hi, hi))
            else:
                out[name] = (lo, hi)
    for name in missing:
        out.pop(name, None)
    return out


def row_group_ranges(metadata: Any, column: str) -> list[tuple[Any, Any] | None]:
    """(min, max) of ``column`` in each row group; None where unknown."""
    out: list[tuple[Any, Any] | None] = []
    for rg in range(metadata.num_row_groups):
        group = metadata.row_group(rg)
        found = None
        for ci in range(group.num_columns):
            col = group.column(ci)
            if col.path_in_schema == column and col.statistics is not None and col.statistics.has_min_max:
                found = (col.statistics.min, col.statistics.max)
        out.append(found)
    return out
