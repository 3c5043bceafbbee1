"""The RFC's ``HoodieBaseFileCompactionPlan`` (schema verbatim in engines/table/avro) as Python objects.

``baseFilePaths`` are relative to the table's base path (``<partition>/<file>``), so a plan stays
valid when the table is moved or read through another URI scheme.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.table.avro import BASE_FILE_COMPACTION_PLAN, decode_plan, encode_plan


@dataclass(frozen=True)
class BaseFileCompactionOperation:
    base_file_paths: tuple[str, ...]
    partition_path: str
    metrics: dict[str, float] = field(default_factory=dict, compare=False, hash=False)

    def to_avro(self) -> dict[str, Any]:
        return {"baseFilePaths": list(self.base_file_paths), "partitionPath": self.partition_path,
                "metrics": {k: float(v) for k, v in self.metrics.items()}}

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> BaseFileCompactionOperation:
        return cls(tuple(d.get("baseFilePaths") or ()), d.get("partitionPath") or "", dict(d.get("metrics") or {}))


@dataclass(frozen=True)
class BaseFileCompactionPlan:
    operations: tuple[BaseFileCompactionOperation, ...]
    extra_metadata: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    version: int = 1

    @property
    def file_paths(self) -> list[str]:
        return [p for op in self.operations for p in op.base_file_paths]

    def to_avro(self) -> dict[str, Any]:
        return {"operations": [op.to_avro() for op in self.operations],
                "extraMetadata": dict(self.extra_metadata) or None, "version": self.version}

    @classmethod
    def from_avro(cls, d: dict[str, Any]) -> BaseFileCompactionPlan:
        return cls(tuple(BaseFileCompactionOperation.from_avro(o) for o in d.get("operations") or []),
                   dict(d.get("extraMetadata") or {}), int(d.get("version") or 1))

    def encode(self) -> bytes:
        return encode_plan(BASE_FILE_COMPACTION_PLAN, self.to_avro())

    @classmethod
    def decode(cls, data: bytes, source: str) -> BaseFileCompactionPlan:
        return cls.from_avro(decode_plan(BASE_FILE_COMPACTION_PLAN, data, source))
