"""The disk a run's tables need at their peak, estimated before Spark starts, and the refusal of a
scenario that would not fit the free space of its output folder.

Per engine and repetition, from the batches it takes (its prefix), the write-amplification bound of
its design and the cleaner's retention:

- live data: ``n x batch`` (``n`` the engine's batches, ``batch`` the batch's Parquet bytes);
- the WA bound, the RFC's closed form: a file that takes every insert until it reaches the small-file
  limit ``L`` is rewritten ``L / (2 x batch)`` times per batch on average (the copy-on-write
  baseline); a table service every ``k`` commits rewrites a growing file every ``k`` batches,
  ``1 + L / (2 x k x batch)`` (Option 1, Option 2, delta-rs OPTIMIZE); ``append_only`` writes each
  batch once;
- retained versions: the cleaner keeps the files replaced in the last ``R`` commits
  (``cleaner_commits_retained``); one commit (or one service run, ``k`` batches' worth) replaces at
  most twice its average rewrite (the average file under the limit is half of it), so the retained
  bytes are at most ``min(everything rewritten, R x k x batch x WA x 2)``;
- Spark's scratch: twice the largest small-file limit (a clustering group's sort spills at most its
  input, once per core's task in flight, bounded here by the group the limit admits).

The tables of every engine are summed, as if they all peaked at once (they share the batch loop).
Tables on an object store (``store.kind: s3``) do not count against the local disk.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.scenario import ScenarioError
from engines.config.registry import GB, MB
from engines.kinds import kind_of
from runresults.closed_form import closed_form_wa


class DiskEstimateError(ScenarioError):
    """A scenario whose tables would not fit the free space of the output folder."""


@dataclass(frozen=True)
class EngineDisk:
    """One engine's estimated peak: its batches, the WA bound used and the bytes."""

    engine: str
    batches: int
    wa_bound: float
    live_bytes: int
    retained_bytes: int

    @property
    def peak_bytes(self) -> int:
        return self.live_bytes + self.retained_bytes


@dataclass(frozen=True)
class DiskEstimate:
    """The run's estimated peak: every engine's tables times the repetitions, plus Spark's scratch."""

    engines: tuple[EngineDisk, ...]
    repeats: int
    scratch_bytes: int

    @property
    def peak_bytes(self) -> int:
        return self.repeats * sum(e.peak_bytes for e in self.engines) + self.scratch_bytes


def batch_bytes(workload: Any) -> float:
    """A batch's Parquet bytes: ``batch_mb``, else ``batch_records`` times the generator's measured
    bytes per record."""
    if workload.batch_records is None:
        return float(workload.batch_mb) * MB
    from workloads.generator import bytes_per_record

    return workload.batch_records * bytes_per_record(workload)


def _small_file_limit(spec: Any, scenario: Any) -> int:
    """The engine's small-file limit as it runs (the planner's, else its own config, else the sizing)."""
    from bench.engine_config import engine_config, resolve_planner

    planner, _ = resolve_planner(spec, scenario)
    if planner is not None and hasattr(planner, "small_file_limit"):
        return int(planner.small_file_limit)
    own = engine_config(spec, scenario).get("small_file_limit")
    return int(own if own is not None else scenario.sizing.small_file_limit_mb * MB)


def wa_bound(kind: str, limit: float, batch: float, every: int) -> float:
    """The design's closed-form WA (:func:`runresults.closed_form.closed_form_wa`)."""
    return closed_form_wa(kind, limit, batch, every)


def estimate(scenario: Any, repeats: int | None = None) -> DiskEstimate:
    """The run's estimated peak disk for ``scenario`` (a :class:`bench.scenario.Scenario`)."""
    b = batch_bytes(scenario.workload)
    every = scenario.maintenance.every_commits
    retained = scenario.sizing.cleaner_commits_retained
    rows, limits = [], [0]
    for spec in scenario.engines:
        n = scenario.batches_of(spec.name)
        limit = _small_file_limit(spec, scenario)
        limits.append(limit)
        wa = wa_bound(spec.kind, limit, b, every)
        entry = kind_of(spec.kind)
        k = 1 if entry.merges_at_ingest or not entry.maintains else every
        live = n * b
        rewritten = live * (wa - 1)
        rows.append(EngineDisk(spec.name, n, wa, int(live), int(min(rewritten, retained * k * b * wa * 2))))
    return DiskEstimate(tuple(rows), repeats or scenario.repeat, 2 * max(limits))


def free_bytes(folder: str | Path) -> tuple[Path, int]:
    """The free bytes of the file system ``folder`` would be on (its nearest existing ancestor)."""
    p = Path(folder).resolve()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p, shutil.disk_usage(p).free


def check_disk(scenario: Any, out: str | Path | None = None, repeats: int | None = None) -> DiskEstimate | None:
    """Refuse (:class:`DiskEstimateError`, one message naming the estimate and the free space) a
    scenario whose tables would not fit the free space of its output folder; None for tables on an
    object store."""
    if scenario.store.kind != "local":
        return None
    est = estimate(scenario, repeats)
    where, free = free_bytes(out or scenario.output)
    if est.peak_bytes > free:
        worst = max(est.engines, key=lambda e: e.peak_bytes)
        raise DiskEstimateError(
            f"{scenario.name}: the tables would need about {est.peak_bytes / GB:.1f} GB at their peak, "
            f"more than the {free / GB:.1f} GB free on {where} (estimated from {scenario.workload.num_batches} "
            f"batches of {batch_bytes(scenario.workload) / MB:g} MB, each design's WA bound and the cleaner's "
            f"{scenario.sizing.cleaner_commits_retained} retained commits, x{est.repeats} repetitions; largest: "
            f"{worst.engine}, {worst.batches} batches at WA <= {worst.wa_bound:.1f}, {worst.peak_bytes / GB:.1f} GB); "
            "give an engine a prefix (engines.<name>.num_batches), fewer batches, or another --out")
    return est


__all__ = ["DiskEstimate", "DiskEstimateError", "EngineDisk", "batch_bytes", "check_disk", "estimate",
           "free_bytes", "wa_bound"]
