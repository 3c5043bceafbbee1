"""How many times each query of the suite runs at a checkpoint, from a run's scenario (run.json):
the runner's cold run and its ``queries.warm_runs`` warm runs, except at a checkpoint of an engine
in the interleaved rounds (``queries.interleaved``: every engine; ``review.measure``: the design
candidates), where the checkpoint runs each query once, cold, and the rounds are its warm runs: the
``queries.rounds`` rounds at the final checkpoint, the ``queries.checkpoint_rounds`` rounds at an
earlier one when the scenario asks for them (:mod:`bench.gates.in_run`).

The simulator counts its request events by it, and a simulated ``queries`` table, one row per
query and checkpoint, stands for that many runs (the reports and the ledger divide by it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from engines.kinds import KINDS, kind_of


def rounds_run(scenario: Mapping[str, Any]) -> bool:
    """Whether the run ends with the final checkpoint's interleaved rounds."""
    return bool((scenario.get("review") or {}).get("measure") or (scenario.get("queries") or {}).get("interleaved"))


def in_rounds(scenario: Mapping[str, Any], kind: str) -> bool:
    """Whether an engine of ``kind`` takes part in the rounds, when they run: the final checkpoint's if it
    takes every batch, an earlier checkpoint's (``queries.checkpoint_rounds``) also when it runs a stated
    prefix (the last checkpoint of its prefix included)."""
    return bool((scenario.get("queries") or {}).get("interleaved")) or (kind in KINDS and kind_of(kind).in_verdict)


def query_runs(scenario: Mapping[str, Any], kind: str, final: bool) -> int:
    """Runs of each query at a checkpoint of an engine of ``kind``; ``final``: the run's final
    checkpoint, which the engine reached (it takes every batch)."""
    queries = scenario.get("queries") or {}
    if rounds_run(scenario) and in_rounds(scenario, kind):
        if final:
            return 1 + int(queries.get("rounds", 10))
        if int(queries.get("checkpoint_rounds") or 0) > 0:
            return 1 + int(queries["checkpoint_rounds"])
    return 1 + int(queries.get("warm_runs", 3))


def runs_per_row(run: Mapping[str, Any], queries: pd.DataFrame) -> pd.Series:
    """Per row of a ``queries`` table (a pandas frame with engine and checkpoint): how many query runs
    it stands for. A real run writes a row per run (1); the simulator writes one row per query and
    checkpoint and counts requests for every run the runner would make (:func:`query_runs`), the
    run's final checkpoint being its replay's last batch (``simulation.batches_per_engine``; the
    table's last checkpoint in a folder without it)."""
    if not run.get("simulated") or len(queries) == 0:
        return pd.Series(1, index=queries.index, dtype="int64")
    scenario = run.get("scenario") or {}
    kinds = {name: (e or {}).get("kind", "") for name, e in (run.get("engines") or {}).items()}
    taken = ((run.get("simulation") or {}).get("batches_per_engine") or {}).values()
    last = max(taken) - 1 if taken else int(queries.checkpoint.max())
    return pd.Series([query_runs(scenario, kinds.get(e, ""), int(cp) == last)
                      for e, cp in zip(queries.engine, queries.checkpoint, strict=True)], index=queries.index,
                     dtype="int64")
