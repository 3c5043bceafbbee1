"""What the simulator can model: a target scale (``review.target``) checked against the specs the
simulator replays (the workload, the shared file sizing, the store), before anything runs."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


def target_problems(target: Any) -> list[str]:
    """Each reason the simulator cannot model ``target`` (a :class:`runresults.review.settings.TargetSpec`),
    named by the target's field; empty when it can."""
    from bench.scenario import SizingSpec, StoreSpec
    from workloads.spec import WorkloadSpec

    checks = (
        (WorkloadSpec, {"batch_mb": target.batch_mb, "num_partitions": target.partitions,
                        "num_batches": target.batches}, {"batch_mb": "batch_mb", "num_partitions": "partitions",
                                                          "num_batches": "horizon_days"}),
        (SizingSpec, {"small_file_limit_mb": target.small_file_limit_mb, "target_file_mb": target.target_file_mb,
                      "max_file_mb": target.max_file_mb}, {}),
        (StoreSpec, {"kind": target.store, "first_byte_ms": target.latency_ms}, {"kind": "store",
                                                                                 "first_byte_ms": "latency_ms"}),
    )
    out = []
    for spec, doc, names in checks:
        try:
            spec.model_validate(doc)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(names.get(str(p), str(p)) for p in err["loc"]) or spec.__name__
                out.append(f"{field}: {err['msg'].removeprefix('Value error, ')}")
    if target.batch_mb > target.max_file_mb:
        out.append(f"batch_mb: a batch of {target.batch_mb:g} MB is larger than max_file_mb "
                   f"({target.max_file_mb:g} MB); the simulator's planners size files from batches below the maximum")
    return out


def corrections_problems(scenario: Any, designs_only: bool = False) -> list[str]:
    """Each engine of ``scenario`` the simulator cannot model, named with its kind and the reason:
    a kind without a simulated behaviour under corrections (``workload.update_fraction``), and an engine
    whose config its kind's behaviour does not model (``unmodelled``: MERGE_ON_READ inserts padded into
    small groups' logs, with or without corrections). The simulator models the copy-on-write upsert
    (:mod:`bench.simulate.corrections`) and MERGE_ON_READ Option 2's log files and compaction
    (:mod:`engines.clustering_mor.sim`). ``designs_only``: the engines a projection would project (the
    verdict's candidates)."""
    from bench.engine_factory import resolve_planner
    from engines.kinds import kind_of

    out = []
    fraction = scenario.workload.corrections_fraction
    for e in scenario.engines:
        entry = kind_of(e.kind)
        if designs_only and not entry.in_verdict:
            continue
        if entry.simulated:
            reason = entry.load("sim").unmodelled(resolve_planner(e, scenario)[1])
            if reason:
                out.append(f"engine {e.name} (kind {e.kind}): the simulator has no model of {reason}")
        elif fraction > 0:
            out.append(f"engine {e.name} (kind {e.kind}): the simulator has no model of this kind under "
                       f"corrections (workload.update_fraction is {fraction})")
    return out
