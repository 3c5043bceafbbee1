"""``layoutbench inspect``: what a Hudi table holds, as data (rendered by the CLI)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engines.config.registry import COW, MB, default
from engines.table.table import HudiTable
from engines.table.view import FileSystemView

# the live-file size histogram's upper bounds in MB, with their labels (the last bucket is open)
SIZE_BUCKETS = [(1, "<1 MB"), (10, "1-10 MB"), (50, "10-50 MB"), (100, "50-100 MB"), (128, "100-128 MB"),
                (512, "128-512 MB"), (float("inf"), ">=512 MB")]


def size_bucket(size: int) -> str:
    return next(label for limit_mb, label in SIZE_BUCKETS if size / MB < limit_mb)


def inspect_table(base: str, as_of: str | None = None, small_file_limit: int = default("small_file_limit", COW)) -> dict[str, Any]:
    """Timeline, partitions, file groups, live vs physical files, size histogram and row count."""
    table = HudiTable.open(base)
    view = table.view()
    snap = view.snapshot(as_of=as_of)
    mor = _merge_on_read(table, view, as_of) if table.merge_on_read else {}
    hist = Counter(size_bucket(s.size_bytes) for s in snap)
    per_partition: dict[str, dict[str, int]] = {}
    for s in snap:
        p = per_partition.setdefault(s.partition, {"live_files": 0, "bytes": 0, "rows": 0})
        p["live_files"] += 1
        p["bytes"] += s.size_bytes
        p["rows"] += s.num_rows
    physical = view.base_files
    live_bytes = sum(s.size_bytes for s in snap)
    physical_bytes = sum(b.size for b in physical)
    return {
        "base_path": table.base_uri,
        "table_name": table.name,
        "table_type": table.properties.get("hoodie.table.type"),
        "table_version": table.properties.get("hoodie.table.version"),
        "timeline_layout": view.timeline.layout,
        "as_of": as_of,
        "timeline": [{"instant": i.timestamp, "action": i.action, "state": i.state.name} for i in view.timeline],
        "partitions": dict(sorted(per_partition.items())),
        "file_groups": len(view.file_groups()),
        "live_files": len(snap),
        "physical_files": len(physical),
        "live_bytes": live_bytes,
        "physical_bytes": physical_bytes,
        "space_amplification": round(physical_bytes / live_bytes, 4) if live_bytes else None,
        "size_histogram": {label: hist.get(label, 0) for _, label in SIZE_BUCKETS},
        "small_files": sum(1 for s in snap if s.size_bytes < small_file_limit),
        "small_file_limit": small_file_limit,
        "mean_file_bytes": int(live_bytes / len(snap)) if snap else 0,
        # a MERGE_ON_READ table's rows are its logs merged over its base files (read, not counted)
        "snapshot_rows": mor.pop("snapshot_rows") if mor else sum(s.num_rows for s in snap),
        "replaced_file_groups": len(view.timeline.replaced_file_groups(as_of)),
        "pending_clustering_file_groups": len(view.pending_clustering_file_groups()),
        "pending_compaction_files": len(view.pending_compaction_paths()),
        **mor,
    }


def _merge_on_read(table: HudiTable, view: FileSystemView, as_of: str | None) -> dict[str, Any]:
    """What a MERGE_ON_READ table adds: merged and read-optimized rows, log files, corrupt blocks."""
    from engines.table.mor import read_optimized_read, snapshot_read

    merged = snapshot_read(table, as_of)
    slices = view.merge_slices(as_of)
    return {
        "snapshot_rows": merged.rows.num_rows,
        "read_optimized_rows": read_optimized_read(table, as_of).rows.num_rows,
        "live_log_files": sum(len(s.logs) for s in slices),
        "live_log_bytes": sum(s.log_bytes for s in slices),
        "log_blocks_merged": merged.log_blocks_applied,
        "corrupt_log_blocks": [str(c) for c in merged.corrupt],
    }
