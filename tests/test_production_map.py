"""The production decision map's fast path (bench/simulate/production_map.py) held to two other
implementations of the same figures: the review's materialised extrapolation priced by the ledger
(the same closed form, to 1e-6), and the full simulator replaying every batch (within the stated
tolerance); plus a slice of the shipped map, run end to end."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.scenario import load_scenario
from bench.simulate import production_map as pm
from bench.simulate.project import extrapolate, repriced_latency
from bench.simulate.project import replay as materialised_replay
from bench.simulate.simulator import RowSink, run_simulation
from bench.simulate.sweep import SweepError, fast_model, load_sweep
from runresults.plain_ledger import ledger

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "bench" / "sweeps" / "rfc19_production.yaml"
BASE = REPO / "bench" / "scenarios" / "production_base.yaml"
BPH = 60.0


def _model():  # noqa: ANN202
    return fast_model(load_sweep(SHIPPED))


def _point(batch_mb: float, limit_mb: float, partitions: int, every: int, retention: int, horizon: int,
           store: str = "s3", qph: float = 2.0) -> tuple[dict, float]:
    days = horizon / 24 / BPH
    return ({"batch_mb": batch_mb, "small_file_limit_mb": limit_mb,
             "partitions_per_year": partitions * pm.YEAR_DAYS / days, "maintenance_every": every,
             "cleaner_retention": retention, "horizon_days": days, "queries_per_hour": qph, "store": store}, days)


class _Frames:
    def __init__(self, tables: dict[str, pd.DataFrame], sc, qph: float) -> None:  # noqa: ANN001
        self._t = tables
        self.run = {"scenario": sc.model_dump(mode="json"),
                    "engines": {e.name: {"kind": e.kind} for e in sc.engines},
                    "projection": {"batches_per_hour": BPH, "queries_per_hour": qph}}

    def table(self, name: str) -> pd.DataFrame:
        return self._t[name]


def _close(a: float, b: float, rel: float) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


@pytest.mark.parametrize("store", ["local", "s3"])
def test_closed_form_equals_the_materialised_extrapolation_priced_by_the_ledger(store: str) -> None:
    model = _model()
    st_ = pm.Settings(replay_cap=48)
    point, days = _point(0.3, 2.0, 3, 4, 3, horizon=700, store=store, qph=5.0)
    sc, tgt = pm.replay_scenario(load_scenario(BASE), point, st_, model, days)
    rep = pm.run_replay(sc, tgt, model, st_.replay_cap)
    assert rep.plan.extrapolated > 0
    fast = {r["engine"]: r for r in pm.priced_rows(rep, [point], st_)}
    assert rep.start > 0  # the replay is shorter than the partitions its late rows reach: it starts later
    tables, _, _ = materialised_replay(sc, model, rep.plan, start_at=rep.start)
    if store == "s3":
        at = sc.model_copy(update={"store": sc.store.model_copy(update={"kind": "s3", "first_byte_ms": 20.0})})
        tables = dict(tables, queries=repriced_latency(tables["queries"], at, model, 0.0))
    else:
        tables = dict(tables, requests=tables["requests"].iloc[0:0])  # local: no request is priced
    full = {n: pd.concat([d for d in parts if not d.empty] or [parts[0]], ignore_index=True)
            for n, parts in extrapolate(tables, rep.plan).items()}
    books = ledger(_Frames(full, sc, 5.0))
    for engine, row in fast.items():
        c = full["commits"][full["commits"].engine == engine]
        q = full["queries"][full["queries"].engine == engine]
        final = q[q.checkpoint == q.checkpoint.max()]
        want = {"usd_per_tb": books[engine].usd_per_tb, "wa": c.bytes_written.sum() / c.batch_bytes.sum(),
                "live_files": float(c.live_files.iloc[-1]), "space_amp_peak": float(c.space_amp.max()),
                "write_s": books[engine].parts["compute_s"], "query_files": float(final.files_scanned.sum()),
                "query_s": float(final.latency_s.sum())}
        for name, value in want.items():
            assert _close(float(row[name]), float(value), 1e-6), (engine, name, row[name], value)


def _full_figures(sc, batches: int, window: int, model, start: int) -> dict[str, dict[str, float]]:  # noqa: ANN001
    """The full simulator over ``batches`` batches from the horizon's batch ``start`` (the replay's
    start; the same estimated mode as the replay)."""
    at = sc.model_copy(update={"queries": sc.queries.model_copy(update={"checkpoint_every": window})})
    sink = RowSink()
    done = run_simulation(at, model, sink=sink, stop_after=batches, start_at=start)
    out = {}
    for e in done.engines:
        c = [r for r in sink.rows["commits"] if r["engine"] == e.name]
        written = sum(r["bytes_written"] for r in c)
        batch = sum(r["batch_bytes"] for r in c if r["kind"] == "ingest")
        out[e.name] = {"wa": written / batch, "bytes_written": float(written), "live_files": float(c[-1]["live_files"])}
    return out


def fast_against_full(batch_mb: float, limit_mb: float, partitions: int, every: int, retention: int,
                      horizon: int = 480, cap: int = 96, replay_max: int | None = None
                      ) -> tuple[pm.Replay, dict, dict]:
    """The fast path's figures (a replay of at most ``cap`` batches, or ``replay_max`` when not
    periodic within ``cap``; the rest in closed form) and the full simulator's, over the same
    batches of one small point."""
    model = _model()
    point, days = _point(batch_mb, limit_mb, partitions, every, retention, horizon)
    sc, tgt = pm.replay_scenario(load_scenario(BASE), point, pm.Settings(replay_cap=cap), model, days)
    rep = pm.run_replay(sc, tgt, model, cap, replay_max)
    n = horizon - rep.start
    fast = {e.name: pm.horizon_figures(e, rep.plan, n, 1 / BPH, 2.0, "s3", 20.0, rep.first_byte_share)
            for e in rep.engines}
    return rep, fast, _full_figures(sc, n, rep.plan.window, model, rep.start)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch_mb=st.sampled_from([0.2, 0.5, 1.0]), limit_mb=st.sampled_from([1.0, 2.0, 4.0]),
       partitions=st.integers(1, 6), every=st.sampled_from([2, 4, 6]), retention=st.sampled_from([2, 5]))
# two windows the periodicity test passed on compute seconds alone while the bytes written grew (77, 89,
# 100 MB) or cycled over four windows: Option 1's WA came out 11% and 6% off the full simulator's
@example(batch_mb=0.5, limit_mb=1.0, partitions=2, every=4, retention=5)
@example(batch_mb=1.0, limit_mb=4.0, partitions=1, every=6, retention=2)
def test_fast_path_holds_to_the_full_simulator(batch_mb: float, limit_mb: float, partitions: int, every: int,
                                               retention: int) -> None:
    """File counts, bytes written and WA of the fast path within :data:`FULL_TOLERANCE` of the full
    simulator's over every batch, wherever the replay was periodic (a row says when it was not)."""
    rep, fast, full = fast_against_full(batch_mb, limit_mb, partitions, every, retention)
    if not rep.periodic:
        return
    for engine, want in full.items():
        for name, tol in pm.FULL_TOLERANCE.items():
            got = float(fast[engine][name])
            assert abs(got - want[name]) <= tol * max(want[name], 1.0), (engine, name, got, want[name], rep.plan)


def test_shipped_map_spans_the_production_ranges_with_1000_points() -> None:
    grid = load_sweep(SHIPPED)
    v = grid.values
    assert len(grid.points()) >= 1000
    assert (min(v["batch_mb"]), max(v["batch_mb"])) == (0.1, 64)
    assert (min(v["small_file_limit_mb"]), max(v["small_file_limit_mb"])) == (32, 512)
    assert (min(v["partitions_per_year"]), max(v["partitions_per_year"])) == (1, 10000)
    assert max(v["horizon_days"]) == 365 and set(v["store"]) == {"local", "s3"}
    for name in ("maintenance_every", "update_fraction", "queries_per_hour"):
        assert len(v[name]) >= 2
    assert v["cleaner_retention"] == [10]  # thinned to one level to fit the update fraction's axis in 5 minutes


def test_a_slice_of_the_shipped_map_runs_end_to_end() -> None:
    """Two replay keys of the shipped map, each priced at both horizons, rates and stores."""
    grid = load_sweep(SHIPPED)
    base = grid.base_values()
    points = [p for p in grid.points() if all(p[k] == base[k] for k in ("batch_mb", "partitions_per_year",
                                                                         "maintenance_every", "cleaner_retention",
                                                                         "update_fraction"))
              and p["small_file_limit_mb"] in (32, 100)]
    rows, statement = pm.run_points(grid.base, points, pm.Settings(replay_cap=200), fast_model(grid), workers=1)
    assert statement["replays"] == 2 and statement["points"] == len(points) == 16
    assert len(rows) == 16 * len(grid.base.engines)
    for p in points:
        mine = [r for r in rows if all(r[k] == v for k, v in p.items())]
        assert pm.choice(mine, grid.margin) != "none"
        local, s3 = (next(r for r in rows if r["engine"] == "baseline" and all(
            r[k] == (v if k != "store" else s) for k, v in p.items())) for s in ("local", "s3"))
        assert local["requests_usd"] == 0 and s3["requests_usd"] > 0 and s3["query_s"] > local["query_s"]
    base_wa = [r["wa"] for r in rows if r["engine"] == "baseline"]
    opt_wa = [r["wa"] for r in rows if r["engine"] == "option1_cbd"]
    assert min(base_wa) > max(opt_wa)  # the RFC's complaint at 1 MB batches against a 32-100 MB limit


def test_nearest_point_of_a_target() -> None:
    grid = load_sweep(SHIPPED)
    from bench.simulate.target import Target

    near = pm.nearest_point(grid.values, Target(batch_mb=2, partitions=300, horizon_days=300, store="local",
                                                small_file_limit_mb=120), 30.0, pm.Settings())
    assert near["batch_mb"] == 1 and near["small_file_limit_mb"] == 100 and near["partitions_per_year"] == 365
    assert near["horizon_days"] == 365 and near["store"] == "local" and near["queries_per_hour"] == 60
    assert near["maintenance_every"] == 4 and near["cleaner_retention"] == 10


@pytest.mark.parametrize(("body", "names"), [
    ("method: fast\ncalibration: c.json\nparameters:\n  late_fraction: [0.1]\n", ["late_fraction", "'fast'"]),
    ("method: fast\ncalibration: c.json\nparameters:\n  store: [local, ftp]\n", ["store=ftp", "store"]),
    ("method: fast\ncalibration: c.json\nparameters:\n  store: [s3]\n", ["store_calibration"]),
    ("method: fast\nparameters:\n  batch_mb: [1]\n", ["calibration", "bytes_per_record"]),
    ("method: fast\ncalibration: c.json\nparameters:\n  maintenance_every: [1.5]\n", ["maintenance_every", "whole"]),
    ("method: fast\ncalibration: c.json\nparameters:\n  small_file_limit_mb: [200]\n  batch_mb: [1]\n"
     "  store: [local]\n", []),
    ("method: fast\ncalibration: c.json\nparameters:\n  batch_mb: [0]\n  store: [local]\n", ["batch_mb=0"]),
])
def test_bad_fast_sweep_files_name_the_field(tmp_path: Path, body: str, names: list[str]) -> None:
    (tmp_path / "base.yaml").write_text(BASE.read_text())
    (tmp_path / "c.json").write_text((REPO / "bench" / "sweeps" / "sweep_base_calibration.json").read_text())
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nbase: base.yaml\n" + body)
    if not names:
        assert load_sweep(path).fast
        return
    with pytest.raises(SweepError) as err:
        load_sweep(path)
    for n in names:
        assert n in str(err.value), str(err.value)



def test_the_verdict_at_a_target_is_the_maps_nearest_point_on_the_fast_path() -> None:
    from bench.simulate.target import Target
    from bench.simulate.target_review import verdict_at

    out = verdict_at(Target(batch_mb=1, partitions=365, horizon_days=365, store="local",
                            small_file_limit_mb=100), 1.0, engines=["baseline", "option2"])
    assert out["candidates"] == ["baseline", "option2"] and set(out["usd_per_tb"]) == {"baseline", "option2"}
    assert out["point"]["batch_mb"] == 1 and out["point"]["store"] == "local"
    cheaper = min(out["usd_per_tb"], key=out["usd_per_tb"].get)
    assert out["choice"].startswith({"baseline": "Baseline", "option2": "Option 2"}[cheaper])


def test_a_fast_sweep_runs_through_the_cli_and_refuses_real_corners(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bench.cli import EXIT_BAD_INPUT, app

    sweeps = REPO / "bench" / "sweeps"
    path = tmp_path / "fast.yaml"
    path.write_text(f"name: fast_slice\nbase: {BASE}\nmethod: fast\ncalibration: {sweeps / 'sweep_base_calibration.json'}\n"
                    f"store_calibration: {sweeps / 's3_calibration.json'}\nreplay_cap: 48\nparameters:\n"
                    "  small_file_limit_mb: [32, 100]\n  store: [local, s3]\naxes: [small_file_limit_mb, store]\n")
    refused = CliRunner().invoke(app, ["sweep", str(path), "--validate-corners", "--out", str(tmp_path)])
    assert refused.exit_code == EXIT_BAD_INPUT and "toy map" in refused.output
    res = CliRunner().invoke(app, ["sweep", str(path), "--out", str(tmp_path), "--workers", "1"])
    assert res.exit_code == 0, res.output
    folder = Path(res.output.strip().splitlines()[-1])
    import json

    run = json.loads((folder / "sweep.json").read_text())
    assert run["points"] == 4 and run["fast_path"]["replays"] == 2
    assert "store=s3" in (folder / "map.md").read_text()


@pytest.mark.parametrize("args", [(0.2, 1.0, 1, 2, 2), (1.0, 2.0, 1, 2, 5)])
def test_periodic_points_hold_to_the_full_simulator(args: tuple) -> None:
    """Two points whose replays are periodic (measured: within 1.2% on every figure)."""
    rep, fast, full = fast_against_full(*args)
    assert rep.periodic and rep.plan.extrapolated > 0
    for engine, want in full.items():
        for name, tol in pm.FULL_TOLERANCE.items():
            assert abs(float(fast[engine][name]) - want[name]) <= tol * max(want[name], 1.0), (engine, name)


def _sawtooth_replay(period: int, r: int) -> pm.EngineReplay:
    """An engine whose bytes written per batch rise over ``period`` batches and fall back (a file
    topped up until it is no longer small), over ``r`` batches."""
    import numpy as np

    b = np.arange(r)
    written = 1.0 + (b % period).astype(float)
    live = (b // period + 1).astype(float)
    empty = np.zeros((0, 2))
    return pm.EngineReplay("e", "cow_baseline", written=written, ingested=np.ones(r), compute_s=written * 0.01,
                           physical=live * 100.0, live_files=live, commit_batch=b, commit_physical=live * 100.0,
                           commit_live=live * 100.0, checkpoints=np.array([r - 1]), suite_s=empty,
                           suite_requests=empty, suite_files=empty)


def test_the_fitted_window_is_the_steady_states_cycle() -> None:
    """A window of whole maintenance intervals that is not the cycle fails the periodicity test; the
    fitted window is the cycle (30 batches, not a shorter stretch of the ramp), and a replay shorter
    than a warm-up and three cycles gets none."""
    from bench.simulate.project import Plan

    engines = [_sawtooth_replay(30, 240)]
    planned = Plan(10_000, 240, 24, 168)
    assert not pm._periodic(engines, planned)[0]
    fitted = pm.fit_window(engines, planned, every=3)
    assert fitted is not None and fitted.window == 30 and fitted.warmup == 240 - 3 * 30
    assert pm.fit_window([_sawtooth_replay(70, 240)], planned, every=3) is None


@pytest.mark.slow
def test_the_base_point_replayed_to_its_steady_state_holds_to_the_full_simulator() -> None:
    """The map's base point (1 MB batches, 100 MB limit, daily partitions, every 4 commits): within
    ``replay_cap`` (400 batches) no window is periodic (measured: WA 10-11% low over a week); replayed
    to ``replay_max`` (five partitions' spans) its window is the partition's span, and a week of the
    fast path is the full simulator's within 2% on WA, bytes written and live files."""
    model = _model()
    point = {"batch_mb": 1.0, "small_file_limit_mb": 100.0, "partitions_per_year": 365, "maintenance_every": 4}
    horizon = 7 * 24 * 60
    st_ = pm.Settings(replay_cap=400, replay_max=7200)
    sc, tgt = pm.replay_scenario(load_scenario(BASE), point, st_, model, horizon / 24 / BPH)
    rep = pm.run_replay(sc, tgt, model, st_.replay_cap, st_.replay_max)
    assert rep.periodic and rep.plan.window == 1440 and 0 < rep.plan.replay < horizon
    fast = {e.name: pm.horizon_figures(e, rep.plan, horizon - rep.start, 1 / BPH, 1.0, "local", 0.0, 0.0)
            for e in rep.engines}
    full = _full_figures(sc, horizon - rep.start, rep.plan.window, model, rep.start)
    for engine, want in full.items():
        for name in ("wa", "bytes_written", "live_files"):
            assert abs(float(fast[engine][name]) - want[name]) <= 0.02 * want[name], (engine, name)
