"""The scenario's ``review:`` block: which gates are required, the equivalence margin, the query
rate, the price table and the target scale the answer is projected to.

The models live here (below ``bench`` and ``reports``) so that the runner validates the scenario
with them and the review reads a finished run's ``run.json`` with the same defaults.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engines.config.registry import COW, MB, default
from runresults.review.prices import Prices

# Hudi's defaults, in the scenario's MB: the registry's (engines/config/registry.py), not written again
HUDI_SMALL_FILE_LIMIT_MB = default("small_file_limit", COW) / MB
HUDI_MAX_FILE_MB = default("max_file_size", COW) / MB

GATES = ("isolation", "no_loss", "incremental", "time_travel", "concurrent_update")
GATE_LABELS = {"isolation": "isolation", "no_loss": "no loss", "incremental": "incremental",
               "time_travel": "time travel", "concurrent_update": "concurrent update"}
# who needs each gate: the answer's flips read "with incremental consumers: Option 2"
GATE_USERS = {"isolation": "readers during maintenance", "no_loss": "crash safety", "incremental": "incremental consumers",
              "time_travel": "time-travel readers", "concurrent_update": "updates during maintenance"}


class TargetSpec(BaseModel):
    """The user's scale (default: RFC-19's own example: 1 MB batches against a 100 MB small-file
    limit and 120 MB files, for a year, on S3 at 20 ms first-byte latency)."""

    model_config = ConfigDict(extra="forbid")

    batch_mb: float = Field(1.0, gt=0)
    batches_per_hour: float = Field(60.0, gt=0)
    partitions: int = Field(1, ge=1)
    horizon_days: float = Field(365.0, gt=0)
    small_file_limit_mb: float = Field(HUDI_SMALL_FILE_LIMIT_MB, ge=0)
    target_file_mb: float = Field(HUDI_MAX_FILE_MB, gt=0)
    max_file_mb: float = Field(HUDI_MAX_FILE_MB, gt=0)
    store: Literal["local", "s3"] = "s3"
    latency_ms: float = Field(20.0, ge=0, le=5000)

    @model_validator(mode="after")
    def _sizes(self) -> TargetSpec:
        if self.small_file_limit_mb > self.max_file_mb:
            raise ValueError(f"small_file_limit_mb ({self.small_file_limit_mb:g}) must not exceed max_file_mb "
                             f"({self.max_file_mb:g})")
        if self.target_file_mb > self.max_file_mb:
            raise ValueError(f"target_file_mb ({self.target_file_mb:g}) must not exceed max_file_mb "
                             f"({self.max_file_mb:g})")
        return self

    @property
    def batches(self) -> int:
        """Batches over the horizon."""
        return max(1, round(self.horizon_days * 24 * self.batches_per_hour))


class ReviewSpec(BaseModel):
    """``requires``: the gates a candidate must pass to represent its design (default all five);
    ``margin``: a relative difference inside ±margin is "equivalent"; ``queries_per_hour``: how
    often each query of the suite runs over the table's life (the ledger's query term); ``target`` and
    ``project``: the user's scale, and whether the run projects its choice there."""

    model_config = ConfigDict(extra="forbid")

    requires: list[str] = Field(default_factory=lambda: list(GATES))
    margin: float = Field(0.05, gt=0, lt=1)
    queries_per_hour: float = Field(12.0, ge=0)
    prices: Prices = Field(default_factory=Prices)
    target: TargetSpec = Field(default_factory=TargetSpec)
    # project the passing candidates to ``target`` after the run (bench.target_verdict): the default
    # scenario does; off by default so that test and CI scenarios keep their time and fingerprints
    project: bool = False
    # measure the gates and the interleaved final-checkpoint rounds in the run (bench/gates,
    # bench/query_rounds): the default and small scenarios do; off by default so that the scenarios
    # of other tests (store request counts, clusters, crash children) and CI's keep their time,
    # figures and fingerprints. Gates not measured are "not measured" in the review, never a pass.
    measure: bool = False

    @field_validator("requires")
    @classmethod
    def _known_gates(cls, v: list[str]) -> list[str]:
        unknown = [g for g in v if g not in GATES]
        if unknown:
            raise ValueError(f"unknown gate(s) {unknown}; known: {list(GATES)}")
        return list(dict.fromkeys(v))


def review_settings(run: dict[str, Any]) -> ReviewSpec:
    """The review settings of a run (``run.json``'s scenario), defaults for a run written before them."""
    doc = ((run.get("scenario") or {}).get("review")) or {}
    return ReviewSpec.model_validate(doc)
