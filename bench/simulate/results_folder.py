"""``layoutbench simulate``'s results folder: a scenario replayed and written in the shape of a real run."""

from __future__ import annotations

import time
from pathlib import Path

from bench.scenario import Scenario, fingerprint
from bench.simulate import requests as reqmodel
from bench.simulate.costmodel import CostModel
from bench.simulate.simulator import run_simulation, without_cycle_collector
from runresults import ResultsWriter, new_run_id, run_record

FILES_ROWS_LIMIT = 200_000  # an engine's live files listed in the ``files`` table up to this many


def simulate(scenario: Scenario, out_dir: str | Path, calibration_path: str | Path | None = None,
             horizon_batches: int | None = None, run_id: str | None = None, progress: bool = False,
             as_run: bool = False) -> Path:
    """Simulate ``scenario`` and write a results folder of the same shape as a real run (with
    ``progress``, a bar on an interactive terminal when the replay runs long). With ``as_run``, each
    engine over the batches a real run of ``scenario`` takes (its prefix, ``run --batches``;
    ``run.json`` → ``simulation.batches_per_engine``)."""
    with without_cycle_collector():  # the result rows are turned into columns here too
        return _simulate(scenario, out_dir, calibration_path, horizon_batches, run_id, progress, as_run)


def _simulate(scenario: Scenario, out_dir: str | Path, calibration_path: str | Path | None,
              horizon_batches: int | None, run_id: str | None, progress: bool, as_run: bool) -> Path:
    t0 = time.perf_counter()
    model = CostModel.load(calibration_path) if calibration_path else CostModel()
    run_dir = Path(out_dir) / (run_id or new_run_id(f"sim-{scenario.name}"))
    writer = ResultsWriter(run_dir)
    done = run_simulation(scenario, model, horizon_batches, writer, progress=progress, as_run=as_run,
                          commit_rows=False, parallel=True, events=bool(model.requests))
    sim, engines = done.sim, done.engines
    for e in engines:
        if len(e.live) <= FILES_ROWS_LIMIT:
            for s in e.live.values():
                writer.add("files", engine=e.name, checkpoint=done.takes[e.name] - 1, partition=s.partition,
                           file_id=s.file_id, path=s.path, size_bytes=s.size_bytes, rows=s.num_rows, live=True)
    writer.tables["commits"] = sim.commits.table()  # its cumulative columns derived as derive_cumulative does
    wall = time.perf_counter() - t0
    requests = {e.name: {"put": e.puts, "get": e.gets, "list": e.lists,
                         "usd": round(model.request_cost_usd(e.puts, e.gets, e.lists), 4)} for e in engines}
    run = run_record(
        run_id=run_dir.name, scenario=scenario, simulated=True, wall_time_s=wall, spark_master=None, overhead_s=0.0,
        failures=[], scenario_fingerprint=fingerprint(scenario),
        engines={e.name: {"kind": e.kind, "table_path": None, "config": e.spec.config} for e in engines},
        simulation={"horizon_batches": sim.n, "as_run": as_run, "exact_partition_counts": sim.exact,
                    "planning": "all partitions" if sim.exact else "partitions written since the last run",
                    "file_ranges": ("exact: each file keeps its rows' query columns" if sim.with_rows else
                                    "estimated from the generator's distributions"),
                    "not_simulated": done.not_simulated, "bytes_per_record": sim.bpr, "cost_model": model.__dict__,
                    "requests": requests, "elapsed_s": wall, "replay_processes": done.processes,
                    "batches_per_engine": {e.name: done.takes[e.name] for e in engines}})
    if model.requests:
        for e in engines:
            for row in reqmodel.predict(model.requests, e.kind, e.events):
                writer.add("requests", engine=e.name, repeat=0, request_bytes=0, response_bytes=0, throttled=0, **row)
    writer.write_run(run)
    return run_dir
