"""The seed's ``HoodieClusteringPlan`` inside a requested-replace wrapper, as Python objects.

Group ``metrics`` hold fileCount, totalBytes, totalRecords, numOutputFiles and, for numeric and
timestamp columns, ``min.<col>`` / ``max.<col>`` (timestamps as epoch microseconds) — the seed
suggests min/max per column in ``metrics``. String ranges, which a map of doubles cannot hold,
and the input slices (path and base instant per fileId, so the executor can find the files after
the plan is reloaded) go to the plan's ``extraMetadata`` as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engines.config.registry import O2, default
from engines.table.avro import REQUESTED_REPLACE, PlanFileError, decode_plan, encode_plan
from engines.table.model import FileSlice
from engines.table.plans import SLICES_KEY

__all__ = ["SLICES_KEY", "ClusteringGroup", "ClusteringPlan", "RequestedReplace", "group_metrics"]
RANGES_KEY = "layoutbench.stringRanges"


def _numeric(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, datetime):
        return v.timestamp() * 1e6
    return None


@dataclass
class ClusteringGroup:
    partition_path: str
    slices: list[FileSlice]
    num_output_files: int
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def file_ids(self) -> list[str]:
        return [s.file_id for s in self.slices]

    @property
    def total_bytes(self) -> int:
        return sum(s.size_bytes for s in self.slices)

    def column_range(self, column: str) -> tuple[Any, Any] | None:
        ranges = [s.column_stats[column] for s in self.slices if column in s.column_stats]
        if len(ranges) != len(self.slices) or not ranges:
            return None
        return min(r[0] for r in ranges), max(r[1] for r in ranges)


def group_metrics(slices: list[FileSlice], num_output_files: int) -> dict[str, float]:
    m = {"fileCount": float(len(slices)), "totalBytes": float(sum(s.size_bytes for s in slices)),
         "totalRecords": float(sum(s.num_rows for s in slices)), "numOutputFiles": float(num_output_files)}
    stats = [s.column_stats for s in slices]
    columns = set(stats[0]).intersection(*stats[1:]) if stats else set()
    for col in sorted(columns):
        ranges = [st[col] for st in stats]
        lo = min([r[0] for r in ranges])
        hi = max([r[1] for r in ranges])
        nlo, nhi = _numeric(lo), _numeric(hi)
        if nlo is not None and nhi is not None:
            m[f"min.{col}"], m[f"max.{col}"] = nlo, nhi
    return m


@dataclass
class ClusteringPlan:
    groups: list[ClusteringGroup]
    target_file_size: int
    sort_columns: list[str]
    extra_metadata: dict[str, str] = field(default_factory=dict)
    version: int = 1

    @property
    def file_groups(self) -> set[tuple[str, str]]:
        return {(g.partition_path, fid) for g in self.groups for fid in g.file_ids}

    def to_avro(self) -> dict[str, Any]:
        extra = dict(self.extra_metadata)
        extra[SLICES_KEY] = json.dumps([[[s.path, s.instant, s.size_bytes, s.num_rows] for s in g.slices]
                                        for g in self.groups])
        strings = {}
        for i, g in enumerate(self.groups):
            cols = set.intersection(*(set(s.column_stats) for s in g.slices)) if g.slices else set()
            for col in sorted(cols):
                rng = g.column_range(col)
                if rng is not None and isinstance(rng[0], str):
                    strings.setdefault(str(i), {})[col] = list(rng)
        extra[RANGES_KEY] = json.dumps(strings)
        return {"clusteringGroups": [{"fileIds": g.file_ids, "partitionPath": g.partition_path,
                                      "metrics": dict(g.metrics)} for g in self.groups],
                "targetFileSize": int(self.target_file_size), "sortColumns": list(self.sort_columns) or None,
                "extraMetadata": extra, "version": self.version}

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> ClusteringPlan:
        extra = dict(d.get("extraMetadata") or {})
        slice_info = json.loads(extra.pop(SLICES_KEY, "[]"))
        extra.pop(RANGES_KEY, None)
        groups = []
        for i, g in enumerate(d.get("clusteringGroups") or []):
            partition = g.get("partitionPath") or ""
            fids = list(g.get("fileIds") or [])
            info = slice_info[i] if i < len(slice_info) else [[f"{partition}/?", "", 0, 0] for _ in fids]
            slices = [FileSlice(partition, fid, inst, path, int(size), int(rows))
                      for fid, (path, inst, size, rows) in zip(fids, info, strict=True)]
            metrics = dict(g.get("metrics") or {})
            groups.append(ClusteringGroup(partition, slices, int(metrics.get("numOutputFiles", 1)), metrics))
        return cls(groups, int(d.get("targetFileSize") or default("target_file_size", O2)), list(d.get("sortColumns") or []), extra,
                   int(d.get("version") or 1))


@dataclass
class RequestedReplace:
    """``HoodieRequestedReplaceMetadata``: what ``<t>.replacecommit.requested`` holds."""

    plan: ClusteringPlan
    operation_type: str = "CLUSTER"
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        return encode_plan(REQUESTED_REPLACE, {"operationType": self.operation_type,
                                               "clusteringPlan": self.plan.to_avro(),
                                               "extraMetadata": dict(self.extra_metadata) or None, "version": 1})

    @classmethod
    def decode(cls, data: bytes, source: str) -> RequestedReplace:
        d = decode_plan(REQUESTED_REPLACE, data, source)
        if not d.get("clusteringPlan"):
            raise PlanFileError(f"{source} holds no clustering plan")
        return cls.from_avro(d)

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> RequestedReplace:
        """From a decoded record (:func:`engines.table.plans.load_plan`)."""
        return cls(ClusteringPlan.from_avro(d["clusteringPlan"]), d.get("operationType") or "CLUSTER",
                   dict(d.get("extraMetadata") or {}))
