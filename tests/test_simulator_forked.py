"""The forked replay (bench/simulate/forked_replay.py) writes the serial replay's folder, table for table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.scenario import load_scenario
from bench.simulate import forked_replay
from bench.simulate.results_folder import simulate

ROOT = Path(__file__).resolve().parent.parent


def _tables(folder: Path) -> dict[str, object]:
    return {p.name: pq.read_table(p).to_pandas() for p in sorted(folder.glob("*.parquet"))}


@pytest.mark.parametrize(("scenario", "horizon", "calibration"), [
    ("sim_year_hourly.yaml", 2_400, None),  # three engines, one clean row per baseline commit
    ("sim_year_hourly.yaml", 2_100, "bench/sweeps/s3_calibration.json"),  # the request model's rows, from the events
])
def test_forked_replay_writes_the_serial_folder(tmp_path, monkeypatch, scenario, horizon, calibration) -> None:
    sc = load_scenario(ROOT / "bench" / "scenarios" / scenario)
    cal = ROOT / calibration if calibration else None
    monkeypatch.setattr(forked_replay, "MIN_BATCHES", 0)
    monkeypatch.setattr(forked_replay, "machine_busy", lambda _cores: False)  # the suite's other workers load it
    forked = simulate(sc, tmp_path, calibration_path=cal, horizon_batches=horizon, run_id="forked")
    monkeypatch.setattr(forked_replay, "MIN_BATCHES", 10**9)
    serial = simulate(sc, tmp_path, calibration_path=cal, horizon_batches=horizon, run_id="serial")
    assert json.loads((forked / "run.json").read_text())["simulation"]["replay_processes"] > 1
    assert json.loads((serial / "run.json").read_text())["simulation"]["replay_processes"] == 1
    a, b = _tables(forked), _tables(serial)
    assert a.keys() == b.keys()
    assert len(a["commits.parquet"]) > horizon
    assert len(a["requests.parquet"]) > 0 or not calibration
    for name in a:
        assert a[name].equals(b[name]), name


def test_a_busy_machine_replays_serially(monkeypatch) -> None:
    """Forked processes only contend when the load already fills the cores: the replay stays serial."""
    monkeypatch.setattr(forked_replay, "machine_busy", lambda _cores: True)
    assert forked_replay.processes_for(3, 10**6, exact=False) == 1
    monkeypatch.setattr(forked_replay, "machine_busy", lambda _cores: False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert forked_replay.processes_for(3, 10**6, exact=False) == 3


def test_a_failing_replay_process_fails_the_simulation(tmp_path, monkeypatch) -> None:
    from bench.simulate.simulator import Simulator

    maintain = Simulator.maintain

    def failing(self, e, b):  # the third engine replays in a child process
        if e.name == "option2":
            raise ValueError("option2 cannot maintain")
        maintain(self, e, b)

    monkeypatch.setattr(Simulator, "maintain", failing)
    monkeypatch.setattr(forked_replay, "MIN_BATCHES", 0)
    monkeypatch.setattr(forked_replay, "machine_busy", lambda _cores: False)
    sc = load_scenario(ROOT / "bench" / "scenarios" / "sim_year_hourly.yaml")
    with pytest.raises(RuntimeError, match="option2 cannot maintain"):
        simulate(sc, tmp_path, horizon_batches=2_100, run_id="failing")
