"""What the simulator can model of a scenario's engines, before anything runs (a target scale,
``review.target``, is checked by the scenario itself: against its workload, sizing and store specs).

A leaf below :mod:`bench.scenario`, whose validation calls it: it reads the scenario it is given,
never imports the scenario's model."""

from __future__ import annotations

from typing import Any

from bench.engine_config import resolve_planner
from engines.kinds import kind_of


def corrections_problems(scenario: Any, designs_only: bool = False) -> list[str]:
    """Each engine of ``scenario`` the simulator cannot model, named with its kind and the reason:
    a kind without a simulated behaviour under corrections (``workload.update_fraction``), and an engine
    whose config its kind's behaviour does not model (``unmodelled``: MERGE_ON_READ inserts padded into
    small groups' logs, with or without corrections). The simulator models the copy-on-write upsert
    (:mod:`bench.simulate.corrections`) and MERGE_ON_READ Option 2's log files and compaction
    (:mod:`engines.clustering_mor.sim`). ``designs_only``: the engines a projection would project (the
    verdict's candidates)."""
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
