"""The verdict at the user's scale: each candidate of a run projected to ``review.target``, and the
decision map around the target (which parameters, moved how far, flip the choice).

:func:`project_to_target` calibrates the simulator on the run itself (:func:`bench.simulate.calibrate`),
moves the run's scenario to the target (:func:`bench.simulate.target.target_scenario`: same engine
entries, the target's sizes, rate, partitions, horizon and store) and simulates it. The result is a
results folder of a real run's shape over the whole horizon, so any ledger prices it.

A year at a target's rate is 10^5 batches; the simulator replays a stated shorter horizon and the
rest is extrapolated, only where the simulated state is periodic:

- the replay covers a warm-up (the late rows' partitions, the cleaner's window) and two more
  *windows* of ``W`` batches (a whole number of maintenance intervals, about one partition's span);
- the two last windows must agree (:data:`PERIODIC_TOLERANCE`) on compute seconds, and on how much
  physical bytes, live files and the query suite's seconds grew across each. Then the table's
  state is periodic up to a linear growth (closed partitions accumulate, each like the last);
- the horizon's remaining batches repeat the last window's rows: durations and bytes as they were,
  the state columns (live/physical files and bytes, small files, cumulative bytes) advanced by the
  window's growth, each checkpoint's queries by their growth per window (the mean over the last two
  windows, at least 0: a fall between two checkpoints is the maintenance phase they fell at);
- object-store requests: the request model reads the timeline on each commit; over a table's life
  Hudi's archival bounds it (:func:`archived`), so requests are periodic like the rest. Whatever
  growth remains is extrapolated linearly: the extrapolated writes are summed per engine, phase, operation and object in one row, each window's
  grown by the last two windows' difference; each later checkpoint's query requests grow like its
  queries.

``run.json``'s ``projection`` block states the target, the replayed and the extrapolated batches, the
window and each periodicity figure; when a figure is off, ``periodic`` is false and says which.
Object-store requests at an S3 target come from the run when it ran on the store, else from the
shipped S3 calibration (``bench/sweeps/s3_calibration.json``: requests per phase and the share of a
query's first-byte latency that adds to its time), stated in ``projection.model``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from bench.scenario import fingerprint
from bench.simulate import requests as reqmodel
from bench.simulate.costmodel import CostModel
from bench.simulate.simulator import RowSink, run_simulation
from bench.simulate.target import Target, TargetError, target_scenario, validate_target
from engines.kinds import KINDS
from engines.table.archiver import DEFAULT_KEEP_MAX, DEFAULT_KEEP_MIN
from runresults import FORMAT_VERSION, TABLES, Results, derive_cumulative, run_record
from runresults.plain_ledger import queries_per_hour as run_queries_per_hour

S3_CALIBRATION = Path(__file__).resolve().parents[1] / "sweeps" / "s3_calibration.json"
MAX_REPLAY_BATCHES = 1800  # the replay's cap: one map point must stay within a few seconds
WINDOWS = 3  # replayed after the warm-up: two growths to compare
# The active timeline a table keeps over a long life: Hudi archives down to hoodie.keep.min.commits
# (20) once it holds hoodie.keep.max.commits (30) (engines/table/archiver.py): 25 on average.
ACTIVE_COMMITS = (DEFAULT_KEEP_MIN + DEFAULT_KEEP_MAX) / 2
PERIODIC_TOLERANCE = 0.05
STATE = ("live_files", "physical_files", "live_bytes", "physical_bytes", "small_files", "metadata_bytes",
         "cum_bytes_written", "cum_batch_bytes")
QUERY_GROWTH = ("latency_s", "files_total", "files_scanned", "files_pruned", "row_groups_total",
                "row_groups_scanned", "rows_scanned")
MAP_FACTORS = (0.25, 0.5, 2.0, 4.0)
# The map's parameters: where each sits (the target, or the review's query rate) and whether it needs a replay.
MAP_PARAMS: dict[str, str] = {
    "batch_mb": "MB per batch",
    "small_file_limit_mb": "small-file limit (MB)",
    "partitions": "partitions over the horizon",
    "queries_per_hour": "queries per hour",
    "latency_ms": "store first-byte latency (ms)",
    "horizon_days": "horizon (days)",
}
NO_REPLAY = ("queries_per_hour", "horizon_days", "latency_ms")  # priced from the centre's replay


Chooser = Callable[[Results], str]


@dataclass(frozen=True)
class Plan:
    """How a target's horizon is covered: ``replay`` batches simulated, windows of ``window``."""

    horizon: int
    replay: int
    window: int
    warmup: int

    @property
    def extrapolated(self) -> int:
        return max(0, self.horizon - self.replay)


def plan_replay(scenario: Any, target: Target, cap: int = MAX_REPLAY_BATCHES) -> Plan:
    """The replayed horizon: a warm-up (the late rows' partitions, the cleaner's window) and three
    windows, each a whole number of maintenance intervals near a partition's span (module docstring)."""
    h = target.horizon_batches
    every = max(1, int(scenario.maintenance.every_commits))
    span = max(1.0, target.batches_per_partition)
    window = every * max(1, round(span / every)) if span >= every else math.lcm(max(1, round(span)), every)
    warmup = int(math.ceil((scenario.workload.max_lateness_partitions + 1) * span
                           + scenario.sizing.cleaner_commits_retained * every))
    warmup = int(math.ceil(warmup / window)) * window
    replay = warmup + WINDOWS * window
    if replay > cap:  # a partition outlasts the replay: windows within it, of whole maintenance intervals
        # and whole small-file fills (batches a file takes to reach the limit: the baseline's cycle)
        fill = max(1, round(target.small_file_limit_mb / target.batch_mb))
        cycle = math.lcm(every, fill)
        room = cap // (WINDOWS + 1)
        window = room // cycle * cycle if cycle <= room else max(every, room // every * every)
        warmup = window
        replay = warmup + WINDOWS * window
    if replay >= h:
        return Plan(h, h, min(window, h), 0)
    return Plan(h, replay, window, warmup)


def projection_model(run: Results, target: Target) -> tuple[CostModel, str]:
    """The run's own calibration (``RUN/calibration.json``, fitted when absent), with the shipped
    S3 request model when the target is on S3 and the run was not; and a sentence saying which."""
    from bench.simulate.calibrate import calibrate

    path = run.folder / "calibration.json"
    if not path.is_file():
        calibrate(run.folder, out_path=path)
    model = CostModel.load(path)
    note = f"calibrated on the run ({path.name})"
    if target.store == "s3" and not model.requests:
        shipped = CostModel.load(S3_CALIBRATION)
        model.requests, model.first_byte_share = shipped.requests, shipped.first_byte_share
        note += f"; object-store requests and first-byte share from {S3_CALIBRATION.name} (the run was not on S3)"
    if model.requests:
        note += (f"; timeline reads as Hudi's archival keeps it ({ACTIVE_COMMITS:g} active commits on average; "
                 "our engines do not archive within a run, so a run's own counts grow with its timeline)")
    model.source = note  # a map point's projection states the same (it is handed the model)
    return model, note


def archived(events: dict[tuple[str, str], dict[str, float]]) -> dict[tuple[str, str], dict[str, float]]:
    """The request model's events with the timeline Hudi keeps: each run reads at most
    :data:`ACTIVE_COMMITS` commits (archival between ``hoodie.keep.min.commits`` and ``.max``), where
    the simulator counts every commit so far (our engines never archive within a run)."""
    out = {}
    for key, figures in events.items():
        f = dict(figures)
        if "commits" in f:
            f["commits"] = min(f["commits"], f.get("runs", 1.0) * ACTIVE_COMMITS)
        out[key] = f
    return out


def _frames(sink: RowSink) -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame(rows, columns=TABLES[name].names) for name, rows in sink.rows.items()}


def replay(scenario: Any, model: CostModel, plan: Plan, start_at: int = 0
           ) -> tuple[dict[str, pd.DataFrame], dict[str, Any], float]:
    """Simulate the target scenario's first ``plan.replay`` batches (checkpoints every window; from
    the horizon's batch ``start_at`` on, with it): its tables, the simulator's statement and its
    elapsed seconds."""
    sc = scenario.model_copy(update={"queries": scenario.queries.model_copy(
        update={"checkpoint_every": plan.window})})
    sink = RowSink()
    done = run_simulation(sc, model, sink=sink, stop_after=plan.replay, start_at=start_at)
    batch_bytes: dict[int, int] = {}
    for row in sink.rows["commits"]:
        if row["kind"] == "ingest" and row["batch"] not in batch_bytes:
            batch_bytes[row["batch"]] = row["batch_bytes"]
    derive_cumulative(sink, batch_bytes)  # type: ignore[arg-type]
    if model.requests:
        for e in done.engines:
            for row in reqmodel.predict(model.requests, e.kind, archived(e.events)):
                sink.add("requests", engine=e.name, repeat=0, request_bytes=0, response_bytes=0, throttled=0, **row)
    counted = {e.name: {"put": e.puts, "get": e.gets, "list": e.lists} for e in done.engines}
    info = {"exact_partition_counts": done.sim.exact, "not_simulated": done.not_simulated,
            "bytes_per_record": done.sim.bpr, "requests": counted, "first_byte_ms": done.sim.first_byte_ms}
    return _frames(sink), info, done.elapsed_s


def repriced_latency(queries: pd.DataFrame, scenario: Any, model: CostModel, was_ms: float) -> pd.DataFrame:
    """The replay's query rows at the scenario's first-byte latency instead of ``was_ms``: the cost
    model's latency term (share x requests per run x latency) is the only one that moves."""
    kinds = {e.name: e.kind for e in scenario.engines}
    now_ms = scenario.store.first_byte_ms if scenario.store.kind == "s3" else 0.0
    per_run = np.array([reqmodel.per_run(model.requests, kinds[r.engine], "query_scan",
                                         {"files_scanned": r.files_scanned, "row_groups_scanned": r.row_groups_scanned})
                        for r in queries.itertuples()], dtype=float)
    out = queries.copy()
    out["latency_s"] = queries["latency_s"].to_numpy() + model.first_byte_share * per_run * (now_ms - was_ms) / 1000
    return out


# -- periodic extrapolation ----------------------------------------------------------------------


def _rel(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 1e-12 else 0.0


def _per_batch(c: pd.DataFrame, col: str, upto: int) -> np.ndarray:
    """``col`` after each batch's last commit, batches 0 .. upto-1 (carried over batches without one)."""
    return c.groupby("batch")[col].last().reindex(range(upto)).ffill().fillna(0).to_numpy(dtype=float)


def window_growth(t: dict[str, pd.DataFrame], engine: str, plan: Plan) -> dict[str, Any]:
    """Per window after the warm-up: compute seconds, the mean level of each state column over its
    batches and the query suite's seconds at its end; and the state's growth per window (the
    last two windows' mean levels; cumulative columns: their last values)."""
    r, w = plan.replay, plan.window
    c = t["commits"][t["commits"].engine == engine]
    m = t["maintenance"][t["maintenance"].engine == engine]
    q = t["queries"][t["queries"].engine == engine]
    suite = q.groupby("checkpoint")["latency_s"].sum()
    starts = [r - (WINDOWS - i) * w for i in range(WINDOWS)]
    figures: dict[str, list[float]] = {"compute_s": [], "query_s": []}
    levels = {col: _per_batch(c, col, r) for col in STATE}
    for lo in starts:
        hi = lo + w
        inside = c[(c.batch >= lo) & (c.batch < hi)]
        figures["compute_s"].append(float(inside[inside.kind.isin(("ingest", "upsert"))].duration_s.sum()
                                          + m[(m.batch >= lo) & (m.batch < hi)].duration_s.sum()))
        figures["query_s"].append(float(suite.get(hi - 1, np.nan)))
        for col in ("physical_bytes", "live_files"):
            figures.setdefault(col, []).append(float(levels[col][lo:hi].mean()))
    growth = {}
    for col in STATE:
        v = levels[col]
        if col.startswith("cum_"):
            growth[col] = float(v[r - 1] - v[r - 1 - w])
        else:
            growth[col] = float(v[r - w:r].mean() - v[r - 2 * w:r - w].mean())
    return {"windows": figures, "growth": growth}


def periodicity(t: dict[str, pd.DataFrame], plan: Plan) -> dict[str, Any]:
    """Per engine, whether the last windows repeat: compute seconds equal, and the growth of
    physical bytes, live files (mean levels) and the suite's seconds (at the windows' ends) equal
    from one window to the next, each within :data:`PERIODIC_TOLERANCE`; a growth below 1% of its
    level is compared against the level instead (a flat state is periodic)."""
    out: dict[str, Any] = {"tolerance": PERIODIC_TOLERANCE, "engines": {}, "periodic": True, "off": []}
    for engine in sorted(set(t["commits"].engine)):
        g = window_growth(t, engine, plan)
        f = g["windows"]
        diffs = {"compute_s": _rel(f["compute_s"][-1], f["compute_s"][-2])}
        for col in ("physical_bytes", "live_files", "query_s"):
            v = f[col]
            d1, d2 = v[-2] - v[-3], v[-1] - v[-2]
            level = max(abs(v[-1]), 1e-12)
            diffs[col + "_growth"] = (abs(d2 - d1) / level if max(abs(d1), abs(d2)) < 0.01 * level
                                      else _rel(d1, d2)) if not any(x != x for x in v) else 0.0
        for k, d in diffs.items():
            if d > PERIODIC_TOLERANCE:
                out["periodic"] = False
                out["off"].append(f"{engine}: {k} differs by {d:.1%} between the last two windows")
        out["engines"][engine] = {"windows": f, "relative_difference": {k: round(d, 4) for k, d in diffs.items()},
                                  "growth_per_window": g["growth"]}
    return out


def _repeat_rows(df: pd.DataFrame, lo: int, w: int, k_max: int, horizon: int, col: str = "batch") -> tuple[
        pd.DataFrame, np.ndarray]:
    """The rows with ``col`` in [lo, lo + w) repeated k = 1..k_max times, shifted by k*w, cut at the
    horizon; and each copy's k (built column by column: a year is 10^5-10^6 rows)."""
    win = df[(df[col] >= lo) & (df[col] < lo + w)]
    if win.empty or k_max <= 0:
        return df.iloc[0:0].copy(), np.zeros(0, dtype=np.int64)
    k = np.repeat(np.arange(1, k_max + 1, dtype=np.int64), len(win))
    shifted = np.tile(win[col].to_numpy(), k_max) + k * w
    keep = shifted < horizon
    cols = {c: np.tile(win[c].to_numpy(), k_max)[keep] for c in win.columns if c != col}
    cols[col] = shifted[keep]
    return pd.DataFrame(cols, columns=list(win.columns)), k[keep]


def extrapolate(t: dict[str, pd.DataFrame], plan: Plan) -> dict[str, list[pd.DataFrame]]:
    """The replayed tables continued to ``plan.horizon`` by repeating the last window (module
    docstring): per table, its parts (the replay's rows, then the extrapolated ones)."""
    if plan.extrapolated <= 0:
        return {name: [df] for name, df in t.items()}
    r, w, h = plan.replay, plan.window, plan.horizon
    k_max = int(math.ceil((h - r) / w))
    lo = r - w
    out = {name: [df] for name, df in t.items()}
    commits = out["commits"]
    for engine, c in t["commits"].groupby("engine", sort=False):
        growth = window_growth(t, str(engine), plan)["growth"]
        big, k = _repeat_rows(c, lo, w, k_max, h)
        if big.empty:
            continue
        per_window = int(((c.batch >= lo) & (c.batch < r)).sum())
        big["seq"] = big["seq"].to_numpy() + k * per_window
        big["instant"] = None
        for col in STATE:
            big[col] = np.round(big[col].to_numpy(dtype=float) + k * growth[col]).astype("int64")
        live_b, live_f = big.live_bytes.to_numpy(dtype=float), big.live_files.to_numpy(dtype=float)
        cum_b = big.cum_batch_bytes.to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            big["wa"] = np.where(cum_b > 0, big.cum_bytes_written.to_numpy() / cum_b, np.nan)
            big["space_amp"] = np.where(live_b > 0, big.physical_bytes.to_numpy() / live_b, np.nan)
            big["mean_file_bytes"] = np.where(live_f > 0, live_b / live_f, 0.0)
        commits.append(big)
    maint, _ = _repeat_rows(t["maintenance"], lo, w, k_max, h)
    maint["instant"] = None
    out["maintenance"].append(maint)
    out["queries"].append(_extrapolate_queries(t["queries"], r - 1, w, h))
    out["requests"].append(_extrapolate_requests(t["requests"], lo, r, w, k_max, h))
    out["files"] = [t["files"].iloc[0:0]]  # the live files at the horizon's end are not listed
    return out


def _checkpoints_after(last_cp: int, w: int, h: int) -> list[int]:
    cps = list(range(last_cp + w, h, w))
    if not cps or cps[-1] != h - 1:
        cps.append(h - 1)
    return cps


def _extrapolate_queries(q: pd.DataFrame, last_cp: int, w: int, h: int) -> pd.DataFrame:
    """The checkpoints after the replay: the last checkpoint's rows advanced linearly by their growth
    per window (per engine, query and run): the mean over the last two windows' checkpoints (one
    window's when only two checkpoints exist), and never below 0 (the table only grows: a falling
    figure between two checkpoints is the maintenance phase they fell at, not a trend)."""
    if q.empty:
        return q
    last = q[q.checkpoint == last_cp].reset_index(drop=True)
    span = 2 if (q.checkpoint == last_cp - 2 * w).any() else 1
    prev = q[q.checkpoint == last_cp - span * w].set_index(["engine", "query", "run"])
    key = pd.MultiIndex.from_frame(last[["engine", "query", "run"]])
    cps = np.array(_checkpoints_after(last_cp, w, h))
    steps = np.repeat((cps - last_cp) / w, len(last))
    cols: dict[str, Any] = {c: np.tile(last[c].to_numpy(), len(cps)) for c in last.columns}
    cols["checkpoint"] = np.repeat(cps, len(last))
    for col in QUERY_GROWTH:
        now = last[col].to_numpy(dtype=float)
        growth = np.zeros(len(last)) if prev.empty else np.maximum(
            0.0, np.nan_to_num(now - prev[col].reindex(key).to_numpy(dtype=float)) / span)
        v = np.tile(now, len(cps)) + steps * np.tile(growth, len(cps))
        cols[col] = v if col == "latency_s" else np.round(v).astype("int64")
    cols["result_rows"] = np.full(len(steps), None)
    cols["verified"] = np.full(len(steps), None)
    return pd.DataFrame(cols, columns=list(last.columns))


def _extrapolate_requests(req: pd.DataFrame, lo: int, r: int, w: int, k_max: int, h: int) -> pd.DataFrame:
    """The extrapolated batches' requests. Requests grow with the timeline (the request model counts
    commits so far), so per window they grow linearly. Write phases: one row per engine, phase,
    operation and object (context ``extrapolated batches A-B``), each window grown by the last two
    windows' difference (the last, partial window pro rata). Query phases: each later checkpoint's
    contexts (``query@checkpoint``, ``checkpoint N``) grown by the last two checkpoints' difference."""
    if req.empty:
        return req
    ctx = req["context"].fillna("")
    num = pd.to_numeric(ctx.str.extract(r"(\d+)$")[0], errors="coerce")
    is_batch = ctx.str.startswith("batch ") & num.notna()
    keys = ["engine", "phase", "op", "object"]
    last = req[is_batch & (num >= lo) & (num < r)].groupby(keys)["count"].sum()
    prev = req[is_batch & (num >= lo - w) & (num < lo)].groupby(keys)["count"].sum()
    last, prev = last.align(prev, fill_value=0)
    full, rest = divmod(h - r, w)
    k = np.arange(1, full + 1, dtype=float)
    growth = (last - prev).to_numpy(dtype=float)
    windows = np.maximum(0.0, last.to_numpy(dtype=float)[:, None] + growth[:, None] * k[None, :]).sum(axis=1)
    windows += np.maximum(0.0, last.to_numpy(dtype=float) + growth * (full + 1)) * rest / w
    extra = pd.Series(windows, index=last.index).round().astype("int64").rename("count").reset_index()
    extra["context"] = f"extrapolated batches {r}-{h - 1}"
    parts = [extra]
    label = ctx.str.replace(r"\d+$", "", regex=True)
    ckeys = [*keys, "_label"]
    at = req.assign(_label=label)
    q_last = at[~is_batch & (num == r - 1)].groupby(ckeys)["count"].sum()
    q_prev = at[~is_batch & (num == r - 1 - w)].groupby(ckeys)["count"].sum().reindex(q_last.index).fillna(0)
    if len(q_last):
        cps = np.array(_checkpoints_after(r - 1, w, h))
        steps = (cps - (r - 1)) / w
        counts = np.maximum(0, np.round(q_last.to_numpy(dtype=float)[None, :]
                                        + (q_last - q_prev).to_numpy(dtype=float)[None, :] * steps[:, None]))
        idx = q_last.index.to_frame(index=False)
        grid = idx.iloc[np.tile(np.arange(len(idx)), len(cps))].reset_index(drop=True)
        grid["count"] = counts.reshape(-1).astype("int64")
        grid["context"] = grid["_label"] + np.repeat(cps, len(idx)).astype(str)
        parts.append(grid.drop(columns="_label"))
    out = pd.concat(parts, ignore_index=True)
    for col in ("repeat", "request_bytes", "response_bytes", "throttled"):
        out[col] = 0
    return out[req.columns]


# -- the projected results folder ------------------------------------------------------------------


def _write(folder: Path, tables: dict[str, list[pd.DataFrame]], run: dict[str, Any]) -> Path:
    """A results folder of ``tables`` (each a list of parts) and ``run`` (``run.json``)."""
    _write_tables(folder, tables, run)
    return folder


def _written_results(folder: Path, tables: dict[str, list[pd.DataFrame]], run: dict[str, Any]) -> Results:
    """The projected results folder written, and opened with the tables it was written from (not read back)."""
    written = _write_tables(folder, tables, run)  # run.json last: Results opens it
    return Results(folder).keep_written(written)


def _write_tables(folder: Path, tables: dict[str, list[pd.DataFrame]], run: dict[str, Any]) -> dict[str, pa.Table]:
    """:func:`_write`, returning the Arrow tables written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, schema in TABLES.items():
        parts = [pa.Table.from_pandas(df.reindex(columns=schema.names), schema=schema, preserve_index=False)
                 for df in tables.get(name, []) if not df.empty]
        written[name] = pa.concat_tables(parts) if parts else schema.empty_table()
        pq.write_table(written[name], folder / f"{name}.parquet")
    (folder / "run.json").write_text(json.dumps({"format_version": FORMAT_VERSION, **run}, indent=2, default=str))
    return written


def _projection_run(scenario: Any, target: Target, plan: Plan, info: dict[str, Any], check: dict[str, Any],
                    model: CostModel, note: str, elapsed: float, run_id: str,
                    queries_per_hour: float | None) -> dict[str, Any]:
    method = ("the whole horizon replayed" if not plan.extrapolated else
              f"{plan.replay:,} batches replayed, the last window of {plan.window:,} repeated for the remaining "
              f"{plan.extrapolated:,} with the state's growth per window"
              + ("" if check.get("periodic") else " (NOT periodic: " + "; ".join(check["off"][:3]) + ")"))
    run = run_record(
        run_id=run_id, scenario=scenario, simulated=True, wall_time_s=elapsed, spark_master=None, overhead_s=0.0,
        failures=[], scenario_fingerprint=fingerprint(scenario),
        engines={e.name: {"kind": e.kind, "table_path": None, "config": e.config} for e in scenario.engines},
        simulation={"horizon_batches": plan.horizon, **info, "cost_model": model.__dict__, "elapsed_s": elapsed},
        projection={"target": target.as_dict(), "batches_per_hour": target.batches_per_hour,
                    # wall seconds between batches at the target (the workload's event time per batch
                    # differs when a partition spans neither a day nor an hour)
                    "batch_span_s": 3600.0 / target.batches_per_hour,
                    "queries_per_hour": queries_per_hour, "horizon_batches": plan.horizon,
                    "replayed_batches": plan.replay, "window_batches": plan.window, "warmup_batches": plan.warmup,
                    "extrapolated_batches": plan.extrapolated, "periodic": check.get("periodic", True),
                    "periodicity": check, "method": method, "model": note, "elapsed_s": elapsed})
    return run


def project_to_target(run_results: Results | str | Path, scenario: Any, target: Any, out_dir: str | Path | None = None,
                      engines: list[str] | None = None, model: CostModel | None = None,
                      queries_per_hour: float | None = None, run_id: str | None = None) -> Results:
    """The run's candidates (every simulated engine entry, or ``engines``: pass those that passed
    the required gates) at ``target``, as a results folder over the target's whole horizon (default
    ``RUN/projection/target``). ``queries_per_hour`` is written to ``run.json``'s ``projection``
    for a ledger to read (None: the scenario's own)."""
    return _project(run_results, scenario, target, out_dir, engines, model, queries_per_hour, run_id)[0]


Replayed = tuple[Plan, dict[str, pd.DataFrame], dict[str, Any], float]


def _project(run_results: Results | str | Path, scenario: Any, target: Any, out_dir: str | Path | None,
             engines: list[str] | None, model: CostModel | None, queries_per_hour: float | None,
             run_id: str | None, reuse: Replayed | None = None) -> tuple[Results, Replayed]:
    """:func:`project_to_target`, also returning its replay; ``reuse``: a replay of the same
    per-batch workload and plan (the horizon alone moved), extrapolated again instead of replayed."""
    t0 = time.perf_counter()
    run = run_results if isinstance(run_results, Results) else Results(run_results)
    tgt = checked_target(target)
    if model is None:
        model, note = projection_model(run, tgt)
    else:
        note = model.source
    simulated = tuple(k for k, entry in KINDS.items() if entry.simulated)
    sc = target_scenario(scenario, tgt, engines=engines, kinds=simulated)
    if not sc.engines:
        raise TargetError(f"no candidate to project: none of {engines or 'the engines'} is simulated "
                          f"({', '.join(simulated)})")
    plan = plan_replay(sc, tgt)
    if reuse is not None and (reuse[0].replay, reuse[0].window) == (plan.replay, plan.window) and plan.extrapolated:
        _, tables, info, replay_s = reuse
        if info.get("first_byte_ms") != sc.store.first_byte_ms:
            tables = dict(tables, queries=repriced_latency(tables["queries"], sc, model, info["first_byte_ms"]))
    else:
        tables, info, replay_s = replay(sc, model, plan)
    check = periodicity(tables, plan) if plan.extrapolated else {"periodic": True, "off": []}
    full = extrapolate(tables, plan)
    folder = Path(out_dir) if out_dir is not None else run.folder / "projection"
    rid = run_id or "target"
    elapsed = time.perf_counter() - t0
    doc = _projection_run(sc, tgt, plan, info, check, model, note, elapsed, rid, queries_per_hour)
    doc["projection"]["replay_s"] = replay_s
    return _written_results(folder / rid, full, doc), (plan, tables, info, replay_s)


def checked_target(target: Any) -> Target:
    """``target`` as a :class:`Target`; ``TargetError`` names each reason the simulator cannot model it."""
    problems = validate_target(target)
    if problems:
        raise TargetError("; ".join(problems))
    return Target.of(target)


# -- the decision map around the target -------------------------------------------------------------


def _moved(target: Target, param: str, factor: float) -> Target | str:
    """The target with ``param`` moved by ``factor``, or why that point cannot be modelled."""
    if param in ("queries_per_hour",):
        return target
    value = getattr(target, param) * factor
    if param == "partitions":
        value = max(1, int(round(value)))
    if param == "latency_ms" and target.store != "s3":
        return "the target's store is local: no first-byte latency"
    changes = {param: value}
    if param == "horizon_days":  # the table lives longer, partitioned as before: partitions follow the horizon
        changes["partitions"] = max(1, int(round(target.partitions * factor)))
    moved = target.moved(**changes)
    problems = validate_target(moved.as_dict())
    return "; ".join(problems) if problems else moved


def _map_job(args: tuple[str, Any, Target, CostModel, list[str] | None, str, str]) -> str:
    run_dir, scenario, target, model, engines, out_dir, rid = args
    return str(project_to_target(run_dir, scenario, target, out_dir, engines=engines, model=model,
                                 run_id=rid).folder)


def _requery(center: Results, out: Path, qph: float) -> Results:
    """The centre's projection priced at another query rate: the same tables (linked), a new run.json."""
    out.mkdir(parents=True, exist_ok=True)
    for p in center.folder.glob("*.parquet"):
        dst = out / p.name
        if dst.exists():
            dst.unlink()
        try:
            os.link(p, dst)
        except OSError:
            shutil.copyfile(p, dst)
    run = json.loads((center.folder / "run.json").read_text())
    run["projection"]["queries_per_hour"] = qph
    review = run["scenario"].get("review")
    if isinstance(review, dict):
        review["queries_per_hour"] = qph
    (out / "run.json").write_text(json.dumps(run, indent=2, default=str))
    return Results(out)


def flip_map(run_results: Results | str | Path, scenario: Any, target: Any, choose: Chooser,
             out_dir: str | Path | None = None, params: tuple[str, ...] = tuple(MAP_PARAMS),
             factors: tuple[float, ...] = MAP_FACTORS, engines: list[str] | None = None,
             queries_per_hour: float | None = None, workers: int | None = None,
             keep_folders: bool = False, timings: dict[str, float] | None = None) -> list[dict[str, Any]]:
    """The decision map around ``target``: per parameter and factor, the choice ``choose`` makes on
    that point's projection, beside the target's own (``flips``). A point the simulator cannot model
    has ``choice`` None and the reason in ``note``. The query rate and the horizon are priced from the
    target's own replay (a rate is a ledger input; a horizon moves the periodic extrapolation only);
    the latency re-prices its queries; the other points are replayed, in ``workers`` processes.
    The points' folders (a year of rows each) are removed once chosen unless ``keep_folders``; the
    target's own stays (``OUT/target``). ``timings`` receives the wall seconds of the target's
    projection (``review/projection``) and of the rest of the map (``review/flip_map``)."""
    t0 = time.perf_counter()
    run = run_results if isinstance(run_results, Results) else Results(run_results)
    tgt = checked_target(target)
    folder = Path(out_dir) if out_dir is not None else run.folder / "projection"
    model, _ = projection_model(run, tgt)
    points: list[dict[str, Any]] = []
    replays: list[tuple[int, tuple]] = []
    later: list[tuple[int, str, Target | None]] = []  # priced from the centre's replay
    for param in params:
        if param not in MAP_PARAMS:
            raise TargetError(f"flip_map: unknown parameter {param!r}; known: {list(MAP_PARAMS)}")
        for factor in factors:
            rid = f"{param}_x{factor:g}"
            moved = _moved(tgt, param, factor)
            value = None if param == "queries_per_hour" else getattr(tgt, param) * factor
            point = {"param": param, "factor": factor, "value": value, "choice": None, "target_choice": None,
                     "flips": False, "note": None, "folder": None}
            points.append(point)
            if isinstance(moved, str):
                point["note"] = moved
            elif moved == tgt and param != "queries_per_hour":
                point["value"] = getattr(moved, param)
                point["note"] = "the target itself (partitions are whole numbers)"
            elif param in NO_REPLAY:
                later.append((len(points) - 1, rid, moved))
            else:
                point["value"] = getattr(moved, param)
                replays.append((len(points) - 1, (str(run.folder), scenario, moved, model, engines, str(folder), rid)))
    n = workers or min(2, os.cpu_count() or 1)
    pool = ProcessPoolExecutor(n) if n > 1 and replays else None
    try:
        futures = [(i, pool.submit(_map_job, job)) for i, job in replays] if pool else []
        center, replayed = _project(run, scenario, tgt, folder, engines, model, queries_per_hour, "target")
        t_center = time.perf_counter()
        qph0 = float(center.run["projection"].get("queries_per_hour") or run_queries_per_hour(center.run))
        for i, rid, moved in later:
            p = points[i]
            if p["param"] == "queries_per_hour":
                p["value"] = qph0 * p["factor"]
                p["folder"] = str(_requery(center, folder / rid, p["value"]).folder)
            else:
                p["folder"] = str(_project(run, scenario, moved, folder, engines, model, queries_per_hour, rid,
                                           reuse=replayed)[0].folder)
        if pool is None:
            for i, job in replays:
                points[i]["folder"] = _map_job(job)
        for i, fut in futures:
            points[i]["folder"] = fut.result()
    finally:
        if pool is not None:
            pool.shutdown()
    base_choice = choose(center)
    if timings is not None:
        timings["review/projection"] = t_center - t0
        timings["review/flip_map"] = time.perf_counter() - t_center
    for p in points:
        p["target_choice"] = base_choice
        if p["note"] and p["note"].startswith("the target itself"):
            p["choice"] = base_choice
        if p["folder"] is not None:
            p["choice"] = choose(Results(p["folder"]))
            p["flips"] = p["choice"] != base_choice
            if not keep_folders:
                shutil.rmtree(p["folder"], ignore_errors=True)
                p["folder"] = None
    return points
