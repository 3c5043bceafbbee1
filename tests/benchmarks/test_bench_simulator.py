"""Micro-benchmarks of the simulator (``make bench-micro``; reported, never asserted): the footer
size of a file from its key count, in closed form beside the per-key walk it replaced (the walk
built an array of one element per key, for every file on every commit), a shortened
``sim_year_hourly`` replay (3,000 batches, the estimated mode of the full year), and the whole of
it as ``layoutbench simulate`` runs it (105,120 batches and the results folder; the goal is 30 s
on the 2-core machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.scenario import load_scenario
from bench.simulate.costmodel import CostModel
from bench.simulate.simulator import KEY_LENGTH, run_simulation, simulate
from engines.table.bloom import BloomConfig, _rows_of, dynamic_rows, footer_bytes
from runresults import Results

# rows of the files a year of hourly partitions holds: batch pieces, merged and compacted files
KEY_COUNTS = [1, 917, 6_667, 20_000, 59_999, 60_000, 60_001, 120_000, 150_000, 400_000, 1_000_000]
YEAR = Path(__file__).resolve().parents[2] / "bench" / "scenarios" / "sim_year_hourly.yaml"


@pytest.mark.benchmark(group="bloom footer size")
def test_footer_bytes_closed_form(benchmark) -> None:
    cfg = BloomConfig()
    closed = footer_bytes.__wrapped__  # the computation, not its cache

    def sizes() -> list[int]:
        return [closed(n, cfg, KEY_LENGTH) for n in KEY_COUNTS]

    got = benchmark(sizes)
    assert [dynamic_rows(n, cfg.num_entries, cfg.dynamic_max_entries)[0] for n in KEY_COUNTS] == [
        _rows_of(n, cfg.num_entries, cfg.dynamic_max_entries)[1] for n in KEY_COUNTS]
    assert got[0] < got[-1]


@pytest.mark.benchmark(group="bloom footer size")
def test_footer_rows_per_key_walk(benchmark) -> None:
    """The walk the closed form replaced, on the same key counts (what every file cost before)."""
    cfg = BloomConfig()
    benchmark(lambda: [_rows_of(n, cfg.num_entries, cfg.dynamic_max_entries)[1] for n in KEY_COUNTS])


@pytest.mark.benchmark(group="simulator")
def test_simulate_year_hourly_3000_batches(benchmark) -> None:
    scenario = load_scenario(YEAR)
    done = benchmark.pedantic(run_simulation, args=(scenario, CostModel(), 3000), rounds=3, iterations=1)
    commits = done.sink.rows["commits"]
    benchmark.extra_info["commits"] = len(commits)
    assert {r["engine"] for r in commits} == {e.name for e in scenario.engines}


@pytest.mark.benchmark(group="simulator")
def test_simulate_year_hourly(benchmark, tmp_path: Path) -> None:
    """``layoutbench simulate bench/scenarios/sim_year_hourly.yaml``: the replay and its folder."""
    scenario = load_scenario(YEAR)
    folder = benchmark.pedantic(simulate, args=(scenario, tmp_path), kwargs={"run_id": "year"}, rounds=1,
                                iterations=1)
    commits = Results(folder).table("commits")
    ingests = commits[commits.kind == "ingest"].groupby("engine").size()
    benchmark.extra_info["commits"] = len(commits)
    assert ingests.to_dict() == {e.name: scenario.workload.num_batches for e in scenario.engines}
