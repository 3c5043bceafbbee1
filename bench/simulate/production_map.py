"""The decision map at production ranges (``bench/sweeps/rfc19_production.yaml``): a fast path that
prices a table's whole life from a short replay, so that a thousand points fit in minutes.

A point is a production target (:class:`bench.simulate.target.Target`: batch size, small-file limit,
partitions, horizon, store) plus the maintenance cadence, the cleaner's retention and the query rate.
The full simulator replays every batch; a year at a batch a minute is 525,600 batches a point.

The fast path, and what it assumes:

- **Replays are shared.** Only the batch size, the small-file limit, the partitions per year, the
  cadence and the retention change what the planners do. Points that differ only in horizon, query
  rate or store share one replay: the horizon moves the extrapolation only (partitions are counted
  per year, so a partition spans the same batches at every horizon), the rate is a ledger input, and
  the store adds the request model's requests and their first-byte latency to the same events.
- **One replay is the full simulator** (:func:`bench.simulate.simulator.run_simulation`, the same
  pure planners), over the first batches of the longest horizon (:func:`bench.simulate.project.
  plan_replay`: a warm-up and three windows of whole maintenance intervals, capped at ``replay_cap``
  batches).
- **The rest of the horizon is the last window repeated** with the state's growth per window, as the
  review's projection extrapolates (:func:`bench.simulate.project.extrapolate`), but summed in closed
  form instead of materialised row by row: flows (bytes, seconds, requests) repeat; levels (files,
  bytes) grow linearly per window, so the storage integral is an arithmetic series; the query suite's
  seconds grow linearly between checkpoints, so their trapezoids are exact. ``tests/
  test_production_map.py`` holds this closed form to the materialised extrapolation priced by
  :func:`runresults.plain_ledger.ledger` (the same figures to 1e-6) and both to the full simulator on
  small points (:data:`FULL_TOLERANCE`).
- **Periodicity is checked, not assumed**: each replay's last windows are compared as the projection
  does (:func:`bench.simulate.project.periodicity`); each row says whether its replay was periodic.
  Where a file takes longer than the replay to fill (a tiny batch against a large limit), the replay
  sees part of the cycle only, and the row says so.
- **The steady state is detected, not planned** (:func:`fit_window`): a replay whose planned windows
  are not periodic gets the window its bytes written repeat over (a file's fill cycle, a partition's
  span), replayed again up to ``replay_max`` batches where a partition's span fits
  (:func:`run_replay`); a row says ``window_fitted``.
- **Sizes from the calibration**: a batch of ``batch_mb`` holds ``batch_mb / bytes_per_record``
  records of the calibration (the same per-record bytes the simulator sizes files by).
- **The store**: local prices no requests and has no first-byte latency; S3 adds the shipped request
  model (``store_calibration``: requests per phase fitted to a real run on the store) priced by the
  dated price table, and ``first_byte_share x requests x latency`` to each query.
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.simulate import requests as reqmodel
from bench.simulate.costmodel import CostModel
from bench.simulate.project import WINDOWS, Plan, archived, plan_replay
from bench.simulate.simulator import RowSink, run_simulation
from bench.simulate.target import Target, target_scenario, validate_target
from engines.config.registry import DECIMAL_TB as TB
from engines.config.registry import GB, MB
from runresults.plain_ledger import PRICES, design_choice
from runresults.review.prices import HOURS_PER_MONTH
from runresults.review.settings import HUDI_MAX_FILE_MB, HUDI_SMALL_FILE_LIMIT_MB

# what changes the replay; the rest (horizon, query rate, store) is priced from a shared replay
REPLAY_PARAMETERS = ("batch_mb", "small_file_limit_mb", "partitions_per_year", "maintenance_every",
                     "cleaner_retention", "update_fraction")
PARAMETERS: dict[str, str] = {
    "batch_mb": "MB per batch",
    "small_file_limit_mb": "small-file limit (MB); max file and target are 1.2x it, as Hudi's 100/120",
    "partitions_per_year": "partitions a year of batches spans (1: unpartitioned; 365: daily; 8760: hourly)",
    "maintenance_every": "commits between maintenance runs",
    "cleaner_retention": "commits the cleaner retains",
    "update_fraction": "share of each batch's rows that correct earlier keys, one copy-on-write upsert commit a "
                       "batch (bench/simulate/corrections.py)",
    "horizon_days": "days the table lives",
    "queries_per_hour": "query suites per hour (the ledger's query rate)",
    "store": "local disk, or S3 at the sweep's first-byte latency with the request model",
}
DEFAULTS: dict[str, Any] = {"batch_mb": 1.0, "small_file_limit_mb": HUDI_SMALL_FILE_LIMIT_MB, "partitions_per_year": 365,
                            "maintenance_every": 4, "cleaner_retention": 10, "update_fraction": 0.0,
                            "horizon_days": 365.0,
                            "queries_per_hour": 1.0, "store": "s3"}
STORES = ("local", "s3")
MAX_FILE_RATIO = HUDI_MAX_FILE_MB / HUDI_SMALL_FILE_LIMIT_MB  # Hudi's max file over its small-file limit
YEAR_DAYS = 365.0
# The fast path against the full simulator on small points (tests/test_production_map.py)
FULL_TOLERANCE = {"wa": 0.05, "bytes_written": 0.05, "live_files": 0.10}
# a fitted window's bytes written, batch by batch, repeat the window before within this share
PROFILE_TOLERANCE = 0.01


@dataclass(frozen=True)
class Settings:
    """What every point of a production map shares."""

    batches_per_hour: float = 60.0
    latency_ms: float = 20.0
    replay_cap: int = 400
    margin: float = 0.05
    replay_max: int | None = None  # a replay not periodic within replay_cap is replayed up to this (run_replay)
    corrections_replay_cap: int | None = None  # a replay with corrections: at most this many batches, never longer

    def caps(self, point: dict[str, Any]) -> tuple[int, int | None]:
        """(replay_cap, replay_max) of ``point``'s replay: a point with corrections takes at most
        ``corrections_replay_cap`` batches when set (its upserts rewrite a share of the whole table)."""
        if self.corrections_replay_cap and float({**DEFAULTS, **point}["update_fraction"]) > 0:
            cap = min(self.replay_cap, self.corrections_replay_cap)
            return cap, cap
        return self.replay_cap, self.replay_max


def point_target(point: dict[str, Any], settings: Settings, horizon_days: float | None = None) -> Target:
    """The :class:`Target` of a point (its horizon, or ``horizon_days``)."""
    p = {**DEFAULTS, **point}
    days = float(horizon_days if horizon_days is not None else p["horizon_days"])
    partitions = max(1, int(round(float(p["partitions_per_year"]) * days / YEAR_DAYS)))
    limit = float(p["small_file_limit_mb"])
    return Target(batch_mb=float(p["batch_mb"]), batches_per_hour=settings.batches_per_hour, partitions=partitions,
                  horizon_days=days, small_file_limit_mb=limit, target_file_mb=limit * MAX_FILE_RATIO,
                  max_file_mb=limit * MAX_FILE_RATIO, store=str(p["store"]),
                  latency_ms=settings.latency_ms if p["store"] == "s3" else 0.0)


def point_problems(point: dict[str, Any], settings: Settings) -> list[str]:
    """Why a point cannot be modelled (empty when it can), each naming the parameter."""
    p = {**DEFAULTS, **point}
    problems = [f"{k}: unknown parameter; known: {list(PARAMETERS)}" for k in point if k not in PARAMETERS]
    if p["store"] not in STORES:
        problems.append(f"store: one of {list(STORES)} (got {p['store']!r})")
        return problems
    for name in ("maintenance_every", "cleaner_retention"):
        if not isinstance(p[name], int) or p[name] < 1:
            problems.append(f"{name}: a whole number of commits, at least 1 (got {p[name]!r})")
    uf = p["update_fraction"]
    if isinstance(uf, bool) or not isinstance(uf, int | float) or not 0 <= uf < 1:
        problems.append(f"update_fraction: a share of each batch, from 0 up to (not including) 1 (got {uf!r})")
    if not isinstance(p["queries_per_hour"], int | float) or p["queries_per_hour"] < 0:
        problems.append(f"queries_per_hour: not negative (got {p['queries_per_hour']!r})")
    problems += [m.replace("review.target.", "") for m in validate_target(point_target(p, settings).as_dict())]
    return problems


def replay_scenario(base: Any, point: dict[str, Any], settings: Settings, model: CostModel,
                    horizon_days: float) -> tuple[Any, Target]:
    """The base scenario at the point's target over ``horizon_days`` (the grid's longest), with its
    cadence, retention and corrections, and batches of the calibration's records (module docstring)."""
    p = {**DEFAULTS, **point}
    tgt = point_target({**p, "store": "local"}, settings, horizon_days)
    sc = target_scenario(base, tgt)
    records = max(1, int(round(float(p["batch_mb"]) * MB / float(model.bytes_per_record))))
    return sc.model_copy(update={
        "workload": sc.workload.model_copy(update={"batch_mb": None, "batch_records": records,
                                                   "corrections_fraction": float(p["update_fraction"])}),
        "sizing": sc.sizing.model_copy(update={"cleaner_commits_retained": int(p["cleaner_retention"])}),
        "maintenance": sc.maintenance.model_copy(update={"every_commits": int(p["maintenance_every"])}),
    }), tgt


# -- one engine's replay, per batch ----------------------------------------------------------------


@dataclass
class EngineReplay:
    """One engine's replay as per-batch arrays (length ``R``) and per-checkpoint query figures."""

    name: str
    kind: str
    written: np.ndarray  # bytes written by the batch's commits
    ingested: np.ndarray  # the batch's bytes written once (ingest commits' batch_bytes)
    compute_s: np.ndarray  # ingest and maintenance (cleans included) seconds
    physical: np.ndarray  # physical bytes after the batch's last commit
    live_files: np.ndarray  # after the batch's last commit
    commit_batch: np.ndarray  # per commit: its batch (the space amplification's rows)
    commit_physical: np.ndarray
    commit_live: np.ndarray
    checkpoints: np.ndarray  # checkpoint batches
    suite_s: np.ndarray  # each query's seconds at each checkpoint, no first-byte latency (checkpoints x queries)
    suite_requests: np.ndarray  # each query's requests per run at each checkpoint (the latency term)
    suite_files: np.ndarray  # files each query of the suite scanned at each checkpoint (checkpoints x queries)
    # requests: (phase, op, object) -> count per batch (writes) / per checkpoint (queries)
    write_requests: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict)
    query_requests: dict[tuple[str, str, str, str], np.ndarray] = field(default_factory=dict)


@dataclass
class Replay:
    """A replay shared by every point of one replay key."""

    plan: Plan
    engines: list[EngineReplay]
    periodic: bool
    off: list[str]
    elapsed_s: float
    first_byte_share: float
    start: int = 0  # the horizon's batch the replay started at (:func:`replay_start`)
    fitted: bool = False  # the window was fitted to the steady state (:func:`fit_window`)


def _per_batch(batches: Iterable[int], values: Iterable[float], n: int, carry: bool) -> np.ndarray:
    """Per batch 0..n-1: the sum of ``values`` (or, with ``carry``, the last one, carried forward over
    batches without one; 0 before the first)."""
    if not carry:
        out = np.zeros(n)
        np.add.at(out, np.fromiter(batches, dtype=np.int64), np.fromiter(values, dtype=float))
        return out
    last = np.full(n, np.nan)
    for b, v in zip(batches, values, strict=True):
        last[b] = v
    idx = np.where(np.isnan(last), 0, np.arange(n))
    np.maximum.accumulate(idx, out=idx)
    out = last[idx]
    return np.where(np.isnan(out), 0.0, out)


def _context_number(context: str) -> int:
    tail = context.rsplit(" ", 1)[-1].rsplit("@", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def _engine_replay(sink: RowSink, name: str, kind: str, r: int, model: CostModel, events: Any) -> EngineReplay:
    commits = [c for c in sink.rows["commits"] if c["engine"] == name]
    maint = [m for m in sink.rows["maintenance"] if m["engine"] == name]
    queries = [q for q in sink.rows["queries"] if q["engine"] == name]
    batches = [c["batch"] for c in commits]
    ingest = [c for c in commits if c["kind"] == "ingest"]
    writes = [c for c in commits if c["kind"] in ("ingest", "upsert")]  # a batch's corrections: its upsert commit
    compute = _per_batch([c["batch"] for c in writes], [c["duration_s"] for c in writes], r, False)
    compute += _per_batch([m["batch"] for m in maint], [m["duration_s"] for m in maint], r, False)
    cps = sorted({q["checkpoint"] for q in queries})
    suite_s, suite_req, suite_files = [], [], []
    for cp in cps:
        at = sorted([q for q in queries if q["checkpoint"] == cp], key=lambda q: q["query"])
        suite_s.append([q["latency_s"] for q in at])
        suite_files.append([q["files_scanned"] for q in at])
        suite_req.append([reqmodel.per_run(model.requests, kind, "query_scan",
                                           {"files_scanned": q["files_scanned"],
                                            "row_groups_scanned": q["row_groups_scanned"]}) for q in at])
    out = EngineReplay(
        name, kind,
        written=_per_batch(batches, [c["bytes_written"] for c in commits], r, False),
        ingested=_per_batch([c["batch"] for c in ingest], [c["batch_bytes"] for c in ingest], r, False),
        compute_s=compute,
        physical=_per_batch(batches, [c["physical_bytes"] for c in commits], r, True),
        live_files=_per_batch(batches, [c["live_files"] for c in commits], r, True),
        commit_batch=np.array(batches), commit_physical=np.array([c["physical_bytes"] for c in commits], dtype=float),
        commit_live=np.array([c["live_bytes"] for c in commits], dtype=float),
        checkpoints=np.array(cps), suite_s=np.array(suite_s, dtype=float),
        suite_requests=np.array(suite_req, dtype=float),
        suite_files=np.array(suite_files, dtype=float))
    if model.requests:
        for (phase, op, obj, context), count in _predicted(model.requests, kind, archived(events)):
            n = _context_number(context)
            if context.startswith("batch "):
                out.write_requests.setdefault((phase, op, obj), np.zeros(r))[n] += count
            else:
                qkey = (phase, op, obj, context[: len(context) - len(str(n))])
                out.query_requests.setdefault(qkey, np.zeros(len(cps)))[cps.index(n)] += count
    return out


def _predicted(coef: dict[str, list[float]], kind: str, events: Any) -> list[tuple[tuple[str, str, str, str], int]]:
    """:func:`bench.simulate.requests.predict`'s counts (``round(max(0, coef . features))`` per event and
    request kind), a phase's events as one matrix product (a replay has thousands of events)."""
    keys: dict[str, list[tuple[str, str, list[float]]]] = defaultdict(list)
    for key, c in coef.items():
        k, phase, op, obj = key.split("|")
        if k == kind:
            keys[phase].append((op, obj, c))
    by_phase: dict[str, list[tuple[str, dict[str, float]]]] = defaultdict(list)
    for (phase, context), figures in events.items():
        if phase in keys:
            by_phase[phase].append((context, figures))
    out = []
    for phase, evs in by_phase.items():
        x = np.array([reqmodel.vector(phase, f) for _, f in evs])
        c = np.array([k[2] for k in keys[phase]])
        counts = np.round(np.maximum(0.0, x @ c.T)).astype(np.int64)
        for i, j in zip(*np.nonzero(counts), strict=True):
            out.append(((phase, keys[phase][j][0], keys[phase][j][1], evs[i][0]), int(counts[i, j])))
    return out


def run_replay(scenario: Any, target: Target, model: CostModel, cap: int, replay_max: int | None = None) -> Replay:
    """The full simulator over the replayed batches of ``target``'s horizon, per engine as arrays.

    A replay whose planned windows are not periodic gets its window fitted to the steady state it
    reached (:func:`fit_window`); when none fits within ``cap`` batches, it is replayed again over
    the plan ``replay_max`` allows (a partition's span and more, :func:`bench.simulate.project.
    plan_replay`) and fitted there, when a window of a partition's span fits in it after a warm-up
    (partitions rotate within it: the steady state of a partitioned table is the span, two partitions
    taking rows at once). Where a partition outlasts ``replay_max`` (unpartitioned over a year), the
    steady state is a file's fill inside it, which a window fitted within ``cap`` finds, or no
    affordable replay does. A replay that still has no periodic window keeps its plan and says so
    (``periodic`` false, ``off`` the figures that differ)."""
    t0 = time.perf_counter()
    plan = plan_replay(scenario, target, cap=cap)
    rep = _replay(scenario, target, model, plan)
    if not rep.periodic and replay_max and replay_max > plan.replay:
        longer = plan_replay(scenario, target, cap=replay_max)
        if longer.replay > plan.replay and target.batches_per_partition * (WINDOWS + 1) <= longer.replay:
            rep = _replay(scenario, target, model, longer)
    rep.elapsed_s = time.perf_counter() - t0
    return rep


def _replay(scenario: Any, target: Target, model: CostModel, plan: Plan) -> Replay:
    t0 = time.perf_counter()
    sc = scenario.model_copy(update={"queries": scenario.queries.model_copy(
        update={"checkpoint_every": plan.window})})
    sink = RowSink()
    start = replay_start(scenario, target, plan)
    done = run_simulation(sc, model, sink=sink, stop_after=plan.replay, start_at=start)
    engines = [_engine_replay(sink, e.name, e.kind, plan.replay, model, e.events) for e in done.engines]
    periodic, off, fitted = True, [], False
    if plan.extrapolated:
        periodic, off = _periodic(engines, plan)
        if not periodic:
            better = fit_window(engines, plan, int(scenario.maintenance.every_commits))
            if better is not None:
                plan, periodic, off, fitted = better, True, [], True
    return Replay(plan, engines, periodic, off, time.perf_counter() - t0, model.first_byte_share, start, fitted)


def fit_window(engines: list[EngineReplay], plan: Plan, every: int,
               tolerance: float = PROFILE_TOLERANCE) -> Plan | None:
    """The replay's steady state, detected: the shortest window of whole maintenance intervals (at
    most a quarter of the replay, so a warm-up of at least one window precedes three windows) over
    which every engine's bytes written batch by batch repeat, the last window against the one
    before, within ``tolerance`` of what they wrote (a sawtooth's cycle, or a partition's span), and
    the projection's periodicity test holds (:func:`_periodic`). ``None`` when no such window fits."""
    r = plan.replay
    for w in range(every, r // (WINDOWS + 1) + 1, every):
        repeats = True
        for e in engines:
            last, prev = e.written[r - w:r], e.written[r - 2 * w:r - w]
            scale = float(np.abs(last).sum() + np.abs(prev).sum()) / 2
            if scale > 0 and float(np.abs(last - prev).sum()) > tolerance * scale:
                repeats = False
                break
        if not repeats:
            continue
        fitted = Plan(plan.horizon, r, w, r - WINDOWS * w)
        if _periodic(engines, fitted)[0]:
            return fitted
    return None


def replay_start(scenario: Any, target: Target, plan: Plan) -> int:
    """The horizon's batch the replay starts at: 0, unless the replay is shorter than the partitions
    its late rows reach back over (``max_lateness_partitions + 1`` spans), then the first batch of the
    partition after those: the first partition has none before it for its late rows to land in, so
    from batch 0 a short replay would see no late row leave its partition (and no extra file per batch)."""
    lateness = int(scenario.workload.max_lateness_partitions)
    if not plan.extrapolated or not scenario.workload.late_fraction or lateness < 1:
        return 0
    span = target.batches_per_partition
    if plan.replay >= (lateness + 1) * span:
        return 0
    start = int(math.ceil(lateness * span))
    return start if start + plan.replay <= plan.horizon else 0


def _periodic(engines: list[EngineReplay], plan: Plan, tolerance: float = 0.05) -> tuple[bool, list[str]]:
    """The projection's periodicity test (:func:`bench.simulate.project.periodicity`) on the arrays:
    compute seconds and bytes written per window, and the growth of physical bytes and live files,
    equal between the last windows. Bytes written are tested on their own: the compute model's fixed
    costs per commit hide a rewrite that grows from window to window (0.5 MB batches against a 1 MB
    limit, 2 partitions, maintenance every 4 commits: 77, 89 and 100 MB written in three windows whose
    compute seconds differ by under 5%, and the extrapolated WA came out 11% over the full replay's)."""
    w, r = plan.window, plan.replay
    off = []
    for e in engines:
        wins = [slice(r - (3 - i) * w, r - (2 - i) * w) for i in range(3)]
        comp = [float(e.compute_s[s].sum()) for s in wins]
        written = [float(e.written[s].sum()) for s in wins]
        figures = {"compute_s": _rel(comp[-1], comp[-2]), "bytes_written": _rel(written[-1], written[-2])}
        for col, arr in (("physical_bytes", e.physical), ("live_files", e.live_files)):
            v = [float(arr[s].mean()) for s in wins]
            d1, d2 = v[1] - v[0], v[2] - v[1]
            level = max(abs(v[2]), 1e-12)
            figures[col + "_growth"] = abs(d2 - d1) / level if max(abs(d1), abs(d2)) < 0.01 * level else _rel(d1, d2)
        off += [f"{e.name}: {k} differs by {d:.1%}" for k, d in figures.items() if d > tolerance]
    return not off, off


def _rel(a: float, b: float) -> float:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale > 1e-12 else 0.0


# -- the closed form ------------------------------------------------------------------------------


def _repeat_sum(win: np.ndarray, full: int, rest: int) -> float:
    """Sum of ``win`` repeated ``full`` times and then its first ``rest`` values."""
    return float(full * win.sum() + win[:rest].sum())


def _level_sum(win: np.ndarray, growth: float, full: int, rest: int) -> float:
    """Sum over the extrapolated batches of (window level + k x growth), copies k = 1..full, then k = full + 1
    for the first ``rest`` batches."""
    w = len(win)
    return _repeat_sum(win, full, rest) + growth * (w * full * (full + 1) / 2 + rest * (full + 1))


def horizon_figures(e: EngineReplay, plan: Plan, horizon: int, hours_per_batch: float, qph: float,
                    store: str, latency_ms: float, first_byte_share: float) -> dict[str, float]:
    """The sweep's criteria (:data:`runresults.SWEEP_CRITERIA`) of one engine over ``horizon``
    batches, from its replay (module docstring); ``usd_per_tb`` as :func:`runresults.plain_ledger.ledger`
    prices the materialised extrapolation."""
    r, w = plan.replay, plan.window
    s3 = store == "s3"
    fb = first_byte_share * latency_ms / 1000 if s3 else 0.0
    per_query = e.suite_s + fb * e.suite_requests  # checkpoints x queries
    suite = per_query.sum(axis=1) if per_query.size else np.zeros(len(e.checkpoints))
    if horizon <= r:  # a prefix of the replay (the horizon ends before the replay does)
        h = horizon
        written, ingested, compute = e.written[:h].sum(), e.ingested[:h].sum(), e.compute_s[:h].sum()
        phys_sum = e.physical[:h].sum()
        keep = e.checkpoints <= h - 1
        cps, vals, files = e.checkpoints[keep], suite[keep], e.suite_files[keep]
        q_int = _trapezoids(cps, vals, h - 1)
        end_s, end_files = (float(vals[-1]), float(files[-1].sum())) if len(vals) else (math.nan, math.nan)
        rows = e.commit_batch < h
        live_end = float(e.live_files[h - 1])
        amps = e.commit_physical[rows] / np.where(e.commit_live[rows] > 0, e.commit_live[rows], np.nan)
        req_usd = _prefix_requests(e, h, keep) if s3 else 0.0
    else:
        extra = horizon - r
        full, rest = divmod(extra, w)
        lo = r - w
        wins = slice(lo, r)
        written = e.written.sum() + _repeat_sum(e.written[wins], full, rest)
        ingested = e.ingested.sum() + _repeat_sum(e.ingested[wins], full, rest)
        compute = e.compute_s.sum() + _repeat_sum(e.compute_s[wins], full, rest)
        g_phys = float(e.physical[lo:r].mean() - e.physical[lo - w:lo].mean())
        g_live = float(e.live_files[lo:r].mean() - e.live_files[lo - w:lo].mean())
        phys_sum = e.physical.sum() + _level_sum(e.physical[wins], g_phys, full, rest)
        j = extra - 1
        k_end = j // w + 1
        live_end = float(e.live_files[lo + j % w] + k_end * g_live)
        last = float(suite[-1])
        spacing = _spacing(e, w)  # the replay's checkpoints (a fitted window is not their spacing)
        steps_end = (horizon - r) / spacing
        end_s = last + float(_growth(per_query).sum()) * steps_end
        end_files = float(np.round(e.suite_files[-1] + _growth(e.suite_files) * steps_end).sum())  # per query
        q_int = _trapezoids(e.checkpoints, suite, r - 1) + (horizon - r) * (last + end_s) / 2
        g_live_bytes = _window_growth(e, e.commit_live, lo, w)
        in_win = (e.commit_batch >= lo) & (e.commit_batch < r)
        amps_parts = [e.commit_physical / np.where(e.commit_live > 0, e.commit_live, np.nan)]
        for k in {1, k_end}:
            p = e.commit_physical[in_win] + k * g_phys
            lb = e.commit_live[in_win] + k * g_live_bytes
            amps_parts.append(p / np.where(lb > 0, lb, np.nan))
        amps = np.concatenate(amps_parts)
        req_usd = _extrapolated_requests(e, plan, horizon, spacing) if s3 else 0.0
    gb_hours = float(phys_sum) * hours_per_batch / GB
    q_seconds = qph * q_int * hours_per_batch
    usd = (compute / 3600 * PRICES.core_hour.usd + q_seconds / 3600 * PRICES.core_hour.usd
           + gb_hours / HOURS_PER_MONTH * PRICES.storage_gb_month.usd + req_usd)
    finite = amps[np.isfinite(amps)]
    return {
        "usd_per_tb": usd / (ingested / TB) if ingested else math.nan,
        "wa": float(written / ingested) if ingested else math.nan,
        "live_files": round(live_end),
        "space_amp_peak": float(finite.max()) if len(finite) else math.nan,
        "write_s": float(compute),
        "query_files": end_files,
        "query_s": float(end_s),
        "bytes_written": float(written),
        "requests_usd": float(req_usd),
    }


def _spacing(e: EngineReplay, window: int) -> int:
    """Batches between the replay's last two checkpoints (its planned window; ``window`` with one)."""
    return int(e.checkpoints[-1] - e.checkpoints[-2]) if len(e.checkpoints) > 1 else window


def _growth(per_checkpoint: np.ndarray) -> np.ndarray:
    """Each query's growth per window, as :func:`bench.simulate.project._extrapolate_queries` takes it:
    the mean over the last two windows' checkpoints (one window's with two checkpoints), at least 0."""
    n = len(per_checkpoint)
    if n < 2:
        return np.zeros(per_checkpoint.shape[1:])
    span = 2 if n > 2 else 1
    return np.maximum(0.0, (per_checkpoint[-1] - per_checkpoint[-1 - span]) / span)


def _window_growth(e: EngineReplay, per_commit: np.ndarray, lo: int, w: int) -> float:
    """A commit column's growth per window (mean of its per-batch last values, last window minus the one before)."""
    last = _per_batch(e.commit_batch, per_commit, lo + w, True)
    return float(last[lo:lo + w].mean() - last[lo - w:lo].mean())


def _trapezoids(cps: np.ndarray, vals: np.ndarray, last_batch: int) -> float:
    """The ledger's integral of the suite's seconds over batches (:func:`runresults.plain_ledger.
    _query_hours_seconds` with one hour a batch)."""
    if len(cps) == 0:
        return 0.0
    total = vals[0] * (cps[0] + 1) + float(np.sum((vals[1:] + vals[:-1]) / 2 * np.diff(cps)))
    return float(total + vals[-1] * max(0, last_batch - cps[-1]))


def _usd(op: str, count: float) -> float:
    return PRICES.request_usd(op) * count


def _prefix_requests(e: EngineReplay, h: int, keep: np.ndarray) -> float:
    out = sum(_usd(op, float(arr[:h].sum())) for (_p, op, _o), arr in e.write_requests.items())
    return out + sum(_usd(op, float(arr[keep].sum())) for (_p, op, _o, _l), arr in e.query_requests.items())


def _extrapolated_requests(e: EngineReplay, plan: Plan, horizon: int, spacing: int) -> float:
    """Requests in dollars over the horizon, as :func:`bench.simulate.project._extrapolate_requests`
    extrapolates them: write phases per window grown by the last two windows' difference (the last,
    partial window pro rata), each query context grown by the last two checkpoints' difference."""
    r, w = plan.replay, plan.window
    lo = r - w
    full, rest = divmod(horizon - r, w)
    k = np.arange(1, full + 1, dtype=float)
    usd = 0.0
    for (_p, op, _o), arr in e.write_requests.items():
        last, prev = float(arr[lo:r].sum()), float(arr[lo - w:lo].sum())
        g = last - prev
        windows = float(np.maximum(0.0, last + g * k).sum()) + max(0.0, last + g * (full + 1)) * rest / w
        usd += _usd(op, float(arr.sum()) + round(windows))
    cps = _checkpoints_after(r - 1, spacing, horizon)
    steps = (cps - (r - 1)) / spacing
    for (_p, op, _o, _l), arr in e.query_requests.items():
        last = float(arr[-1])
        prev = float(arr[-2]) if len(arr) > 1 else 0.0
        usd += _usd(op, float(arr.sum()) + float(np.maximum(0, np.round(last + (last - prev) * steps)).sum()))
    return usd


def _checkpoints_after(last_cp: int, w: int, h: int) -> np.ndarray:
    cps = list(range(last_cp + w, h, w))
    if not cps or cps[-1] != h - 1:
        cps.append(h - 1)
    return np.array(cps, dtype=float)


# -- the grid -------------------------------------------------------------------------------------


def replay_key(point: dict[str, Any]) -> tuple:
    p = {**DEFAULTS, **point}
    return tuple(p[k] for k in REPLAY_PARAMETERS)


def _replay_job(args: tuple[Any, dict[str, Any], Settings, CostModel, float, list[dict[str, Any]]]
                ) -> list[dict[str, Any]]:
    base, key_point, settings, model, max_days, points = args
    sc, tgt = replay_scenario(base, key_point, settings, model, max_days)
    rep = run_replay(sc, tgt, model, *settings.caps(key_point))
    return priced_rows(rep, points, settings)


def priced_rows(rep: Replay, points: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """Per point (sharing ``rep``) and engine, the sweep's criteria, the choice's inputs and the
    replay's statement (replayed batches, periodic or not)."""
    rows = []
    hpb = 1.0 / settings.batches_per_hour
    for point in points:
        p = {**DEFAULTS, **point}
        horizon = int(round(float(p["horizon_days"]) * 24 * settings.batches_per_hour))
        for e in rep.engines:
            figs = horizon_figures(e, rep.plan, horizon, hpb, float(p["queries_per_hour"]), p["store"],
                                   settings.latency_ms, rep.first_byte_share)
            rows.append({**point, "engine": e.name, "kind": e.kind, **figs, "replayed_batches": rep.plan.replay,
                         "window_batches": rep.plan.window, "replay_start": rep.start, "horizon_batches": horizon,
                         "periodic": rep.periodic, "window_fitted": rep.fitted, "replay_s": rep.elapsed_s})
    return rows


def run_points(base: Any, points: list[dict[str, Any]], settings: Settings, model: CostModel,
               workers: int | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every point's rows (grouped by replay key, one replay each) and a statement of the run: the
    replays, how many were periodic, the replay seconds."""
    t0 = time.perf_counter()
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for p in points:
        groups[replay_key(p)].append(p)
    max_days = max(float({**DEFAULTS, **p}["horizon_days"]) for p in points)
    jobs = [(base, dict(zip(REPLAY_PARAMETERS, key, strict=True)), settings, model, max_days, pts)
            for key, pts in groups.items()]
    n = workers or max(1, os.cpu_count() or 1)
    rows: list[dict[str, Any]] = []
    if n == 1 or len(jobs) == 1:
        for job in jobs:
            rows += _replay_job(job)
    else:
        with ProcessPoolExecutor(n) as pool:
            for out in pool.map(_replay_job, jobs, chunksize=max(1, len(jobs) // (n * 8))):
                rows += out
    per_replay: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        per_replay.setdefault(replay_key(r), r)
    statement = {
        "method": "fast path (bench/simulate/production_map.py): one full-simulator replay per replay key, "
                  "the rest of the horizon in closed form",
        "replays": len(jobs), "points": len(points),
        "periodic_replays": sum(1 for r in per_replay.values() if r["periodic"]),
        "fitted_windows": sum(1 for r in per_replay.values() if r["window_fitted"]),
        "replayed_batches_total": sum(int(r["replayed_batches"]) for r in per_replay.values()),
        "replay_s_total": round(sum(r["replay_s"] for r in per_replay.values()), 2),
        "wall_s": round(time.perf_counter() - t0, 2), "settings": settings.__dict__,
    }
    return rows, statement


def choice(rows: list[dict[str, Any]], margin: float) -> str:
    """The design choice of one point's rows by $ per TB (:func:`runresults.plain_ledger.design_choice`)."""
    return design_choice({r["engine"]: (r["kind"], r["usd_per_tb"]) for r in rows}, margin)


def nearest_point(values: dict[str, list[Any]], target: Target, queries_per_hour: float,
                  settings: Settings, update_fraction: float = 0.0) -> dict[str, Any]:
    """The grid point nearest a target: per parameter the value nearest on a log scale (numbers; the
    update fraction, which may be 0, on a linear one), the target's own store; partitions counted per year."""
    want = {"batch_mb": target.batch_mb, "small_file_limit_mb": target.small_file_limit_mb,
            "partitions_per_year": target.partitions * YEAR_DAYS / target.horizon_days,
            "horizon_days": target.horizon_days, "queries_per_hour": queries_per_hour, "store": target.store,
            "maintenance_every": None, "cleaner_retention": None}
    out: dict[str, Any] = {}
    for name, vals in values.items():
        if name == "update_fraction":
            out[name] = min(vals, key=lambda v: abs(float(v) - update_fraction))
            continue
        w = want.get(name)
        if w is None or isinstance(w, str):
            out[name] = w if isinstance(w, str) and w in vals else (
                DEFAULTS[name] if DEFAULTS[name] in vals else vals[len(vals) // 2])
        else:
            out[name] = min(vals, key=lambda v: abs(math.log(max(float(v), 1e-9) / max(float(w), 1e-9))))
    return out
