"""``layoutbench simulate``'s results folder: a scenario replayed and written in the shape of a real run.

An engine's replay never reads another engine's state (the simulator shares only the batches'
counts and ranges, which each replay recomputes identically), so with ``workers`` above one each
engine replays in a process of its own. Every row carries where in the batch loop it was written
(batch, section, engine position, :class:`KeyedSink`); the tables are then merged in that order,
which is the order of one serial replay, so the folder is the same whichever way it was made.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bench.scenario import Scenario, fingerprint
from bench.simulate import requests as reqmodel
from bench.simulate.costmodel import CostModel
from bench.simulate.simulator import RowSink, run_simulation, without_cycle_collector
from engines.kinds import kind_of
from runresults import TABLES, ResultsWriter, derive_cumulative, new_run_id, rows_table, run_record

FILES_ROWS_LIMIT = 200_000  # an engine's live files listed in the ``files`` table up to this many
# sections after the batch loop's (bench.simulate.simulator's INGEST/FINAL/CHECKPOINT_SECTION)
FILES_SECTION, REQUESTS_SECTION = 3, 4
_KEYS = ("_batch", "_section", "_engine", "_row")


class KeyedSink(RowSink):
    """Result rows with the loop position each was written at, to merge replays made apart."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: dict[str, list[tuple[int, int, int]]] = {name: [] for name in TABLES}
        self.at = (0, 0, 0)

    def add(self, table: str, **row: Any) -> None:
        self.rows[table].append(row)
        self.keys[table].append(self.at)

    def mark(self, batch: int, section: int, engine: int) -> None:
        self.at = (batch, section, engine)

    def tables(self) -> dict[str, pa.Table]:
        """Each results table, with the position columns ``_KEYS`` (the last: the row's order here)."""
        out = {}
        for name in TABLES:
            table = rows_table(name, self.rows[name])
            keys = self.keys[name]
            for i, key in enumerate(_KEYS[:3]):
                table = table.append_column(key, pa.array([k[i] for k in keys], pa.int64()))
            out[name] = table.append_column(_KEYS[3], pa.array(range(len(keys)), pa.int64()))
        return out


@dataclass
class Replayed:
    """One replay of some of a scenario's engines: its keyed tables and what run.json says of them."""

    tables: dict[str, pa.Table]
    engines: dict[int, dict[str, Any]]  # position -> name, kind, config, requests
    simulation: dict[str, Any]  # horizon, modes, bytes per record (the same in every replay)


def replay(scenario: Scenario, model: CostModel, horizon: int | None, only: list[int] | None,
           progress: bool) -> Replayed:
    """Replay the engines at positions ``only`` (None: all) and derive their tables: commits with
    their cumulative WA, maintenance and queries, the live files, the request model's rows."""
    sink = KeyedSink()
    with without_cycle_collector():
        done = run_simulation(scenario, model, horizon, sink, progress=progress, only=only)
        sim = done.sim
        batch_bytes: dict[int, int] = {}
        for row in sink.rows["commits"]:
            if row["kind"] == "ingest" and row["batch"] not in batch_bytes:
                batch_bytes[row["batch"]] = row["batch_bytes"]
        derive_cumulative(sink, batch_bytes)  # type: ignore[arg-type]
        for e in done.engines:
            if len(e.live) <= FILES_ROWS_LIMIT:
                sink.mark(sim.n, FILES_SECTION, e.index)
                for s in e.live.values():
                    sink.add("files", engine=e.name, checkpoint=sim.n - 1, partition=s.partition,
                             file_id=s.file_id, path=s.path, size_bytes=s.size_bytes, rows=s.num_rows, live=True)
            if model.requests:
                sink.mark(sim.n, REQUESTS_SECTION, e.index)
                for row in reqmodel.predict(model.requests, e.kind, e.events):
                    sink.add("requests", engine=e.name, repeat=0, request_bytes=0, response_bytes=0, throttled=0,
                             **row)
        engines = {e.index: {"name": e.name, "kind": e.kind, "config": e.spec.config,
                             "requests": {"put": e.puts, "get": e.gets, "list": e.lists,
                                          "usd": round(model.request_cost_usd(e.puts, e.gets, e.lists), 4)}}
                   for e in done.engines}
        simulation = {"horizon_batches": sim.n, "exact_partition_counts": sim.exact,
                      "planning": "all partitions" if sim.exact else "partitions written since the last run",
                      "file_ranges": ("exact: each file keeps its rows' query columns" if sim.with_rows else
                                      "estimated from the generator's distributions"),
                      "bytes_per_record": sim.bpr}
        return Replayed(sink.tables(), engines, simulation)


def merge(replays: list[Replayed]) -> dict[str, pa.Table]:
    """The replays' tables in one serial replay's row order, without their position columns."""
    out = {}
    for name in TABLES:
        table = pa.concat_tables([r.tables[name] for r in replays])
        order = pc.sort_indices(table, sort_keys=[(k, "ascending") for k in _KEYS])
        out[name] = table.take(order).drop_columns(list(_KEYS))
    return out


def simulate(scenario: Scenario, out_dir: str | Path, calibration_path: str | Path | None = None,
             horizon_batches: int | None = None, run_id: str | None = None, progress: bool = False,
             workers: int = 1) -> Path:
    """Simulate ``scenario`` and write a results folder of the same shape as a real run (with
    ``progress``, a bar on an interactive terminal when the replay runs long). With ``workers``
    above one, the engines replay in that many processes at once; the folder is the same."""
    t0 = time.perf_counter()
    model = CostModel.load(calibration_path) if calibration_path else CostModel()
    run_dir = Path(out_dir) / (run_id or new_run_id(f"sim-{scenario.name}"))
    writer = ResultsWriter(run_dir)
    positions = [i for i, e in enumerate(scenario.engines) if kind_of(e.kind).simulated]
    workers = max(1, min(workers, len(positions)))
    if workers == 1:
        replays = [replay(scenario, model, horizon_batches, None, progress)]
    else:
        # spawned, not forked: the caller may hold a JVM gateway's threads (a bench run's projection)
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(replay, scenario, model, horizon_batches, [p], progress and i == 0)
                       for i, p in enumerate(positions)]
            replays = [f.result() for f in futures]
    engines = {p: e for r in replays for p, e in r.engines.items()}
    ordered = [engines[p] for p in sorted(engines)]
    not_simulated = [e.name for e in scenario.engines if not kind_of(e.kind).simulated]
    wall = time.perf_counter() - t0
    run = run_record(
        run_id=run_dir.name, scenario=scenario, simulated=True, wall_time_s=wall, spark_master=None, overhead_s=0.0,
        failures=[], scenario_fingerprint=fingerprint(scenario),
        engines={e["name"]: {"kind": e["kind"], "table_path": None, "config": e["config"]} for e in ordered},
        simulation={**replays[0].simulation, "not_simulated": not_simulated, "cost_model": model.__dict__,
                    "requests": {e["name"]: e["requests"] for e in ordered}, "elapsed_s": wall,
                    "processes": workers})
    writer.write_run(run, tables=merge(replays))
    return run_dir
