"""The user's scale (``review.target``): what it is, whether the simulator can model it, and the
scenario that stands for it.

A target names the table's life as users run it: batch size and rate, how many partitions the
horizon's rows span, the horizon, the file-size limits and the store. The projection
(:mod:`bench.simulate.project`) replays the run's candidates at it. :func:`validate_target` lists
every field the simulator cannot model, named, so a scenario is refused before Spark starts.

Time at the target: a batch lands every ``1 / batches_per_hour`` hours and the horizon's rows span
``partitions`` partitions evenly, so a partition covers ``horizon_days * 24 / partitions`` hours of
batches. The simulated workload keeps that: day partitions when a partition covers a day, hour
partitions when it covers an hour; otherwise day labels whose event time is stretched or squeezed
to the partition span (only the time-windowed queries read event time).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, make_dataclass
from typing import Any

from runresults.review.settings import TargetSpec

# Beyond this many batches the projection's results (a row per batch and candidate) outgrow memory.
MAX_HORIZON_BATCHES = 3_000_000
MAX_PARTITIONS = 1_000_000
STORES = ("local", "s3")
FIELD_PREFIX = "review.target"


# the fields, types and defaults of the scenario's review.target, declared once (TargetSpec)
_TargetFields = make_dataclass("_TargetFields", [(name, f.annotation, field(default=f.default))
                                                 for name, f in TargetSpec.model_fields.items()], frozen=True)


@dataclass(frozen=True)
class Target(_TargetFields):
    """The scale a user asks the question at, with the fields and defaults of the review's
    ``TargetSpec``: RFC-19's own example (1 MB batches against Hudi's small-file limit and max file
    size, one year, on S3 at 20 ms first-byte latency), one batch a minute into one partition."""

    @classmethod
    def of(cls, target: Any) -> Target:
        """A :class:`Target` from a mapping, a pydantic model or an object with the same field names
        (the scenario's ``review.target``); fields it does not name keep their defaults."""
        if isinstance(target, Target):
            return target
        if target is None:
            return cls()
        if hasattr(target, "model_dump"):
            target = target.model_dump()
        doc = dict(target) if isinstance(target, dict) else {f.name: getattr(target, f.name) for f in fields(cls)
                                                              if hasattr(target, f.name)}
        problems = validate_target(doc)
        if problems:
            raise TargetError("; ".join(problems))
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in doc.items() if k in known})

    @property
    def horizon_batches(self) -> int:
        return int(round(self.horizon_days * 24 * self.batches_per_hour))

    @property
    def partition_hours(self) -> float:
        """Hours of batches one partition takes."""
        return self.horizon_days * 24 / self.partitions

    @property
    def batches_per_partition(self) -> float:
        return self.horizon_batches / self.partitions

    def moved(self, **changes: Any) -> Target:
        """This target with some fields changed (the decision map's points)."""
        return Target(**{**asdict(self), **changes})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class TargetError(ValueError):
    """A target the simulator cannot model; the message names the field(s)."""


def _number(doc: dict[str, Any], name: str, problems: list[str]) -> float | None:
    v = doc.get(name, getattr(Target, name))
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        problems.append(f"{FIELD_PREFIX}.{name}: a finite number is required (got {v!r})")
        return None
    return float(v)


def validate_target(target: Any) -> list[str]:
    """Every reason the simulator cannot model ``target`` (a mapping or an object with
    :class:`Target`'s field names), one message per field, each naming it; empty when it can."""
    if target is None:
        return []
    if hasattr(target, "model_dump"):
        target = target.model_dump()
    if not isinstance(target, dict):
        target = {f.name: getattr(target, f.name) for f in fields(Target) if hasattr(target, f.name)}
    problems: list[str] = []
    unknown = sorted(k for k in target if k not in {f.name for f in fields(Target)})
    if unknown:
        problems.append(f"{FIELD_PREFIX}: unknown field(s) {unknown}; known: {[f.name for f in fields(Target)]}")
    vals = {f.name: _number(target, f.name, problems) for f in fields(Target) if f.name != "store"}
    for name in ("batch_mb", "batches_per_hour", "horizon_days", "target_file_mb", "max_file_mb"):
        if vals[name] is not None and vals[name] <= 0:
            problems.append(f"{FIELD_PREFIX}.{name}: must be above 0 (got {vals[name]:g})")
    for name in ("small_file_limit_mb", "latency_ms"):
        if vals[name] is not None and vals[name] < 0:
            problems.append(f"{FIELD_PREFIX}.{name}: must not be negative (got {vals[name]:g})")
    if vals["latency_ms"] is not None and vals["latency_ms"] > 5000:
        problems.append(f"{FIELD_PREFIX}.latency_ms: at most 5000 ms, as the store model (got {vals['latency_ms']:g})")
    parts = vals["partitions"]
    if parts is not None and (parts != int(parts) or not 1 <= parts <= MAX_PARTITIONS):
        problems.append(f"{FIELD_PREFIX}.partitions: a whole number from 1 to {MAX_PARTITIONS:,} (got {parts:g})")
    small, tgt, mx = vals["small_file_limit_mb"], vals["target_file_mb"], vals["max_file_mb"]
    if small is not None and mx is not None and mx > 0 and small > mx:
        problems.append(f"{FIELD_PREFIX}.small_file_limit_mb: {small:g} MB is above max_file_mb {mx:g} MB; "
                        "no planner can size files to that")
    if tgt is not None and mx is not None and mx > 0 and tgt > mx:
        problems.append(f"{FIELD_PREFIX}.target_file_mb: {tgt:g} MB is above max_file_mb {mx:g} MB")
    bph, days = vals["batches_per_hour"], vals["horizon_days"]
    if bph and days and bph > 0 and days > 0:
        n = days * 24 * bph
        if n < 1:
            problems.append(f"{FIELD_PREFIX}.horizon_days: {days:g} days at {bph:g} batches an hour is less than "
                            "one batch")
        elif n > MAX_HORIZON_BATCHES:
            problems.append(f"{FIELD_PREFIX}.horizon_days: {days:g} days at {bph:g} batches an hour is {n:,.0f} "
                            f"batches; the projection models up to {MAX_HORIZON_BATCHES:,}")
        elif parts and parts >= 1 and parts > n:
            problems.append(f"{FIELD_PREFIX}.partitions: {parts:g} partitions for {n:,.0f} batches; each partition "
                            "needs at least one batch of its own")
    store = target.get("store", Target.store)
    if store not in STORES:
        problems.append(f"{FIELD_PREFIX}.store: one of {list(STORES)} (got {store!r})")
    return problems


def target_scenario(scenario: Any, target: Target, engines: list[str] | None = None,
                    kinds: tuple[str, ...] = ()) -> Any:
    """The run's scenario moved to ``target``: the same candidates (engine entries, whole; only
    ``engines`` when given, only the simulated ``kinds`` when given), the maintenance schedule and
    query suite of the run, and the target's batch size, rate, partitions, horizon, limits and
    store. No final maintenance (the table lives on), no isolation readers, one repetition."""
    from bench.scenario import Scenario

    doc = scenario.model_dump(mode="json")
    hours = target.partition_hours
    granularity = "hour" if math.isclose(hours, 1.0) else "day"
    wl = doc["workload"]
    wl.update(batch_mb=target.batch_mb, batch_records=None, num_batches=target.horizon_batches,
              num_partitions=int(target.partitions), partition_granularity=granularity, arrival="steady")
    doc["sizing"].update(small_file_limit_mb=target.small_file_limit_mb, target_file_mb=target.target_file_mb,
                         max_file_mb=target.max_file_mb)
    doc["store"].update(kind=target.store, first_byte_ms=target.latency_ms if target.store == "s3" else 0.0)
    doc["maintenance"]["final"] = False
    doc["isolation"]["enabled"] = False
    doc["repeat"] = 1
    doc["name"] = f"{scenario.name}_target"
    doc["engines"] = [e for e in doc["engines"] if (engines is None or e["name"] in engines)
                      and (not kinds or e["kind"] in kinds)]
    for e in doc["engines"]:
        e["repeat"] = None
    return Scenario.model_validate(doc)
