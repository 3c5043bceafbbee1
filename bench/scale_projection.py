"""The batches an engine with a stated prefix did not take, as the simulator's projection.

A design whose rewrites would not fit a scale run's time takes the workload's first
``engines.<name>.num_batches`` batches (:mod:`bench.scenario`), and ``run --batches N`` takes the
first N of the whole scenario's (``Scenario.stop_after``, the same batches). After the run, the
simulator (:mod:`bench.simulate`, the planners the engines use, metadata only) replays each engine
that took fewer batches than the scenario's over all of them; ``run.json``'s ``scale_wa`` block
keeps, per engine, its batches, small-file limit and closed-form WA
(:func:`runresults.closed_form.closed_form_wa`, ``limit / (2 x batch)`` for the copy-on-write
baseline), and for such an engine the measured WA at the end of its prefix, the simulator's WA at
the same batch (how far to trust the rest) and over every batch. The report marks the projected
part as such. Kinds the simulator does not model (delta-rs, Apache Hudi's) get no projection.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from bench.disk_estimate import _small_file_limit, batch_bytes
from engines.config.registry import MB
from engines.kinds import kind_of
from runresults import derive_cumulative
from runresults.closed_form import closed_form_text, closed_form_wa


def _last_wa(rows: Sequence[dict[str, Any]], engine: str, upto: int) -> float | None:
    """The cumulative WA after the last instant of ``engine`` at or before batch ``upto``."""
    mine = [r for r in rows if r["engine"] == engine and r.get("repeat", 0) == 0 and r["batch"] <= upto]
    mine.sort(key=lambda r: r["seq"])
    return next((r["wa"] for r in reversed(mine) if r.get("wa") is not None), None)


def simulated_wa(scenario: Any, engine: str, n: int) -> tuple[list[dict[str, Any]], float]:
    """The simulator's commits rows (WA derived) for ``engine`` over the first ``n`` batches of the
    workload, and its elapsed seconds."""
    from bench.simulate.costmodel import CostModel
    from bench.simulate.simulator import RowSink, run_simulation

    spec = next(e for e in scenario.engines if e.name == engine)
    sc = scenario.model_copy(update={
        "workload": scenario.workload.model_copy(update={"num_batches": n}),
        "engines": [spec.model_copy(update={"num_batches": None})], "stop_after": None,
        "queries": scenario.queries.model_copy(update={"checkpoint_every": n})})
    t0 = time.perf_counter()
    sink = RowSink()
    run_simulation(sc, CostModel(), sink=sink)
    batch_sizes: dict[int, int] = {}
    for row in sink.rows["commits"]:
        if row["kind"] == "ingest" and row["batch"] not in batch_sizes:
            batch_sizes[row["batch"]] = row["batch_bytes"]
    derive_cumulative(sink, batch_sizes)  # type: ignore[arg-type]
    return sink.rows["commits"], time.perf_counter() - t0


def prefix_projections(scenario: Any, commits: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per engine: its batches, small-file limit and closed-form WA; for an engine that ran a prefix
    also the measured WA at its end and the simulator's WA at the prefix and over every batch
    (module docstring)."""
    n = scenario.workload.num_batches  # the scenario's own, also when the run took fewer (stop_after)
    every = scenario.maintenance.every_commits
    b = batch_bytes(scenario.workload)
    out: dict[str, dict[str, Any]] = {}
    for spec in scenario.engines:
        upto = scenario.batches_of(spec.name)
        limit = _small_file_limit(spec, scenario)
        row: dict[str, Any] = {
            "kind": spec.kind, "batches_measured": upto, "batches_total": n, "every_commits": every,
            "measured_wa": _last_wa(commits, spec.name, upto - 1),
            "small_file_limit_mb": limit / MB, "batch_mb": b / MB,
            "closed_form_wa": closed_form_wa(spec.kind, limit, b, every), "closed_form": closed_form_text(spec.kind),
            "simulated_wa_at_prefix": None, "simulated_wa_total": None, "simulation_s": None}
        if upto < n and kind_of(spec.kind).simulated:
            rows, elapsed = simulated_wa(scenario, spec.name, n)
            row.update(simulated_wa_at_prefix=_last_wa(rows, spec.name, upto - 1),
                       simulated_wa_total=_last_wa(rows, spec.name, n - 1), simulation_s=round(elapsed, 2))
        out[spec.name] = row
    return out
