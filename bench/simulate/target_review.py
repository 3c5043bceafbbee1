"""The verdict at the user's target as the review stores it (``review.choice.target``): the run's
candidates projected to the target (:mod:`bench.simulate.project`), the decision map around it, and
the production map's answer at its point nearest the target (:mod:`bench.simulate.production_map`,
on the fast path of the shipped production sweep, :mod:`bench.simulate.sweep`).

It sits above those three modules, which import none of it: the projection, the production map's
fast path and the sweep files stay one-way (project <- production_map <- sweep <- this module).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.simulate.production_map import choice, nearest_point, run_points
from bench.simulate.project import MAP_PARAMS, Chooser, checked_target, flip_map, project_to_target
from bench.simulate.sweep import fast_model, fast_settings, load_sweep
from bench.simulate.target import Target
from runresults import Results
from runresults.plain_ledger import queries_per_hour as run_queries_per_hour

PRODUCTION_SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "rfc19_production.yaml"


def project_review(run_results: Results | str | Path, scenario: Any, target: Any, choose: Chooser,
                   engines: list[str] | None = None, out_dir: str | Path | None = None,
                   flip: bool = True, workers: int | None = None, production: bool = True) -> dict[str, Any]:
    """The verdict at the target as data for the review (``run.json`` → ``review.choice.target``):
    the target, its choice, how the projection was made, the decision map around it and the wall
    seconds of each step (``phases_s``: ``review/projection``, ``review/flip_map``). ``engines``:
    the candidates that passed the run's required gates. With ``production``, also the production
    decision map's answer at its point nearest the target (``production_map``,
    :func:`verdict_at`; ``review/production_map`` in ``phases_s``)."""
    run = run_results if isinstance(run_results, Results) else Results(run_results)
    tgt = checked_target(target)
    folder = Path(out_dir) if out_dir is not None else run.folder / "projection"
    timings: dict[str, float] = {}
    points = []
    if flip:
        points = flip_map(run, scenario, tgt, choose, folder, engines=engines, workers=workers, timings=timings)
        center = Results(folder / "target")
    else:
        t0 = time.perf_counter()
        center = project_to_target(run, scenario, tgt, folder, engines, run_id="target")
        timings["review/projection"] = time.perf_counter() - t0
    proj = center.run["projection"]
    out: dict[str, Any] = {
        "target": tgt.as_dict(), "choice": choose(center), "folder": str(center.folder),
        "candidates": list(center.engines), "method": proj["method"], "periodic": proj["periodic"],
        "model": proj["model"], "horizon_batches": proj["horizon_batches"],
        "replayed_batches": proj["replayed_batches"], "phases_s": timings}
    if production:
        t0 = time.perf_counter()
        qph = float(proj.get("queries_per_hour") or run_queries_per_hour(center.run))
        out["production_map"] = verdict_at(tgt, qph, engines,
                                             update_fraction=scenario.workload.corrections_fraction)
        timings["review/production_map"] = time.perf_counter() - t0
    if flip:
        out["flip_map"] = [{k: p[k] for k in ("param", "factor", "value", "choice", "flips", "note")} for p in points]
        out["flips"] = [f"{MAP_PARAMS[p['param']]} x{p['factor']:g} ({p['value']:g}): {p['choice']}"
                        for p in points if p["flips"]]
    return out


def verdict_at(target: Target, queries_per_hour: float, engines: list[str] | None = None,
               sweep: str | Path = PRODUCTION_SWEEP, update_fraction: float = 0.0) -> dict[str, Any]:
    """The production map's answer at a user's target (the review's ``production_map``): the map's
    point nearest the target (:func:`bench.simulate.production_map.nearest_point`), run on the fast path with the map's base and
    calibration, and its choice by $ per TB. ``engines``: the review's passing candidates; the map's
    base keeps those of its engines (all of them when it names none). ``update_fraction``: the run's
    corrections, matched to the map's nearest level."""
    t0 = time.perf_counter()
    grid = load_sweep(sweep)
    settings = fast_settings(grid)
    point = nearest_point(grid.values, target, queries_per_hour, settings, update_fraction)
    base = grid.base
    kept = [e for e in base.engines if engines is None or e.name in engines]
    if kept and len(kept) < len(base.engines):
        base = base.model_copy(update={"engines": kept})
    rows, statement = run_points(base, [point], settings, fast_model(grid), workers=1)
    return {"sweep": grid.spec.name, "point": point, "choice": choice(rows, grid.margin),
            "candidates": [e.name for e in base.engines],
            "usd_per_tb": {r["engine"]: round(float(r["usd_per_tb"]), 4) for r in rows},
            "periodic": bool(rows and rows[0]["periodic"]), "replayed_batches": rows[0]["replayed_batches"] if rows else 0,
            "elapsed_s": round(time.perf_counter() - t0, 3)}
