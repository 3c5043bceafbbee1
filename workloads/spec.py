"""The workload specification: a validated model of the seeded log-ingestion stream."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

RECORD_KEY = "trace_id"  # every row's key: the tables' record key (hoodie.datasource.write.recordkey.field)
ORDERING_FIELD = "ts"  # the event time: the tables' ordering field (hoodie.datasource.write.precombine.field)


class WorkloadSpecError(ValueError):
    """An impossible workload; the message names every offending field."""


class WorkloadSpec(BaseModel):
    """Batch ``b`` of this workload is a pure function of ``(seed, b, row index)``.

    The run's ``ts`` range covers ``num_partitions`` day (or hour) partitions evenly across
    ``num_batches`` batches; late rows are moved up to ``max_lateness_partitions`` partitions back.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = Field(42, ge=0)
    num_batches: int = Field(10, gt=0)
    batch_records: int | None = Field(None, gt=0)
    batch_mb: float | None = Field(1.0, gt=0)
    partition_granularity: Literal["day", "hour"] = "day"
    num_partitions: int = Field(3, gt=0)
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    arrival: Literal["steady", "bursty", "diurnal"] = "steady"
    late_fraction: float = Field(0.0, ge=0.0, lt=1.0)
    max_lateness_partitions: int = Field(1, ge=1)
    num_services: int = Field(20, gt=0, le=100_000)
    service_skew: float = Field(1.1, ge=0.0, le=5.0)
    num_hosts: int = Field(50, gt=0)
    # a share of each batch that upserts earlier keys (T21 calls it update_fraction: an accepted alias)
    corrections_fraction: float = Field(0.0, ge=0.0, le=1.0)
    delete_fraction: float = Field(0.0, ge=0.0, le=1.0)
    partition_column: str = Field("dt", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @model_validator(mode="before")
    @classmethod
    def _update_fraction(cls, data: Any) -> Any:
        """``update_fraction`` is the documented alias of ``corrections_fraction`` (one field: set twice, refused)."""
        if isinstance(data, dict) and "update_fraction" in data:
            if "corrections_fraction" in data:
                raise ValueError("update_fraction and corrections_fraction are one field (update_fraction is its "
                                 "alias): set one of them")
            data = {("corrections_fraction" if k == "update_fraction" else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> WorkloadSpec:
        if self.batch_records is None and self.batch_mb is None:
            raise ValueError("set batch_records or batch_mb")
        if self.start.tzinfo is None:
            object.__setattr__(self, "start", self.start.replace(tzinfo=UTC))
        if self.partition_column in ("ts", "service", "host", "level", "trace_id", "latency_ms", "message"):
            raise ValueError(f"partition_column {self.partition_column!r} clashes with a data column")
        return self

    @classmethod
    def parse(cls, doc: dict[str, Any]) -> WorkloadSpec:
        """Validate a mapping; one :class:`WorkloadSpecError` lists every problem by field."""
        try:
            return cls.model_validate(doc)
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc']) or 'workload'}: {e['msg']}" for e in exc.errors()]
            raise WorkloadSpecError("invalid workload: " + "; ".join(problems)) from None
