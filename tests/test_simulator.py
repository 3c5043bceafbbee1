"""Simulator: validated against a real run of the same scenario (same planners -> same file counts;
durations from the calibrated cost model within the stated error), and the RFC's metadata table."""

from __future__ import annotations

from pathlib import Path

from bench.simulate.calibrate import calibrate
from bench.simulate.replace_metadata import replace_metadata_scaling
from bench.simulate.results_folder import simulate
from bench.simulate.simulator import LOGICAL_CLOCK, analytic_partition_counts, next_logical_instant
from bench.simulate.validate import render, validate
from runresults import Results
from workloads.generator import batch_num_records, batch_partition_counts
from workloads.spec import WorkloadSpec

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


def test_simulation_matches_real_run(small_run, tmp_path) -> None:
    from bench.scenario import load_scenario

    cal = calibrate(small_run.folder, tmp_path / "cal.json")
    sim = Results(simulate(load_scenario(SMALL), tmp_path, calibration_path=cal, run_id="sim"))
    assert sim.simulated and set(sim.engines) == set(small_run.engines)
    real_c, sim_c = small_run.table("commits"), sim.table("commits")
    for engine in small_run.engines:
        r = real_c[real_c.engine == engine].sort_values("seq")
        s = sim_c[sim_c.engine == engine].sort_values("seq")
        assert r.kind.tolist() == s.kind.tolist(), engine
    checks = validate(small_run, sim)
    print("\n" + render(checks))
    scanned = [c for c in checks if c.figure.startswith("files scanned")]
    assert len(scanned) == 5 * 2 * len(small_run.engines)  # five queries at two checkpoints
    assert [c for c in checks if not c.ok] == []
    report = []
    for kind in ("ingest",):
        real_t = real_c[real_c.kind == kind].duration_s.sum()
        sim_t = sim_c[sim_c.kind == kind].duration_s.sum()
        report.append(f"{kind}: real {real_t:.2f} s, simulated {sim_t:.2f} s, error {sim_t / real_t - 1:+.1%}")
        assert abs(sim_t / real_t - 1) < 0.30
    rm, sm = small_run.table("maintenance"), sim.table("maintenance")
    rt, st = rm[rm.kind != "clean"].duration_s.sum(), sm[sm.kind != "clean"].duration_s.sum()
    report.append(f"maintenance: real {rt:.2f} s, simulated {st:.2f} s, error {st / rt - 1:+.1%}")
    rq, sq = small_run.table("queries"), sim.table("queries")
    rq = rq[rq.run == 0].latency_s.sum()
    report.append(f"queries (cold): real {rq:.2f} s, simulated {sq.latency_s.sum():.2f} s, error "
                  f"{sq.latency_s.sum() / rq - 1:+.1%}")
    print("\n" + "\n".join(report))
    assert abs(st / rt - 1) < 0.30


def test_analytic_partition_counts_close_to_exact() -> None:
    spec = WorkloadSpec(seed=4, num_batches=48, batch_records=5000, partition_granularity="hour",
                        num_partitions=12, late_fraction=0.1, max_lateness_partitions=2)
    for b in (0, 5, 30, 47):
        exact, approx = batch_partition_counts(spec, b), analytic_partition_counts(spec, b)
        assert sum(approx.values()) == sum(exact.values())
        assert set(approx) == set(exact)
        for k in exact:
            assert abs(approx[k] - exact[k]) <= max(30, 0.01 * sum(exact.values())), (b, k, exact, approx)


def test_analytic_partition_counts_never_negative() -> None:
    """A year of hourly partitions in 2100 batches (~4.2 h each): a batch that starts just before an
    hour's end gave that hour -1 rows (its share rounded to 0, the others' rounding up taken from
    it), and the footer of a -1-row file refused the replay. Every count is positive now, the
    batch's rows all placed, and each partition within a row of its exact time share."""
    spec = WorkloadSpec(seed=1, num_batches=2100, batch_records=20000, partition_granularity="hour",
                        num_partitions=8760, late_fraction=0.05, max_lateness_partitions=2)
    straddling = 0
    for b in range(2100):
        counts = analytic_partition_counts(spec, b)
        assert min(counts.values()) > 0, (b, counts)
        assert sum(counts.values()) == batch_num_records(spec, b), b
        straddling += len(counts) > 3
    assert straddling > 2000  # nearly every batch spans several hours
    # batch 35 starts 0.4 min before 01:00: 0 rows there (it held -1), and the hours after keep theirs
    b35 = analytic_partition_counts(spec, 35)
    assert "2026-01-07-01" not in b35 and sum(b35.values()) == 20000
    assert sorted(b35.values())[-1] - sorted(b35.values())[-4] <= 1


def test_replace_metadata_scaling_measured() -> None:
    rows = replace_metadata_scaling(sizes=[(1, 300), (10, 3000)], repeats=1)
    assert [r["replaced_file_groups"] for r in rows] == [300, 3000]
    for r in rows:
        assert r["serialise_ms"] > 0 and r["deserialise_ms"] > 0 and r["peak_memory_bytes"] > 0
        assert r["rfc_serialise_ms"] is not None


def test_calibration_fit_is_the_non_negative_least_squares_optimum() -> None:
    import numpy as np

    from bench.simulate.calibrate import _fit

    rng = np.random.default_rng(3)
    x = np.column_stack([np.ones(40), rng.uniform(0, 10, 40), rng.uniform(0, 5, 40)])
    y = x @ np.array([0.5, 0.2, 0.0]) - 0.3 * x[:, 2] + rng.normal(0, 0.01, 40)  # true file cost negative
    coef = _fit(x, y)
    assert (coef >= 0).all() and coef[2] == 0.0
    # the optimum: no feasible nudge of any coefficient lowers the squared residual
    best = np.sum((x @ coef - y) ** 2)
    for i in range(3):
        for step in (1e-3, -1e-3):
            c = coef.copy()
            c[i] = max(0.0, c[i] + step)
            assert np.sum((x @ c - y) ** 2) >= best - 1e-12


def test_simulated_runs_cut_where_the_rewrite_cuts() -> None:
    """The simulator's near-equal runs are the real unsorted rewrite's (``split_rows``) bounds."""
    import pyarrow as pa

    from bench.simulate.rows import near_equal_runs
    from engines.files.splits import split_rows

    for total, n in [(10, 3), (7, 7), (1000, 6), (5, 1)]:
        t = pa.table({"i": list(range(total))})
        runs = near_equal_runs(t, n)
        real = split_rows([total], n)
        assert [r.num_rows for r in runs] == [sum(p[2] for p in out) for out in real]
        assert [r.column("i")[0].as_py() for r in runs if r.num_rows] == [out[0][1] for out in real if out]


def test_estimated_ts_range_covers_late_rows() -> None:
    """Estimated mode: a partition holds the batch's on-time range clipped to it, and late rows
    moved back from the next partition."""
    from datetime import UTC, datetime

    from bench.simulate.rows import ts_range_in_partition

    spec = WorkloadSpec(seed=1, num_batches=4, batch_records=100, partition_granularity="day", num_partitions=2,
                        late_fraction=0.1, max_lateness_partitions=1)
    day = datetime(2026, 1, 1, tzinfo=UTC)
    # batch 2 of 4 covers day 2's first half: on time in 2026-01-02, late copies in 2026-01-01
    b2 = (day.replace(day=2), day.replace(day=2, hour=12))
    assert ts_range_in_partition(spec, b2, "2026-01-02") == b2
    assert ts_range_in_partition(spec, b2, "2026-01-01") == (day, day.replace(hour=12))
    assert ts_range_in_partition(spec, b2, "2026-01-03") is None


def test_simulator_prices_queries_with_the_layout(tmp_path) -> None:
    """Files scanned follow the layout: a sorted rewrite's files split the service range, so the
    one-service query opens fewer files than on the unsorted layout; every query's pruning comes
    from the suite's predicates."""
    from bench.scenario import Scenario

    doc = {
        "name": "sorted_vs_unsorted",
        "workload": {"seed": 3, "num_batches": 12, "batch_records": 4000, "partition_granularity": "hour",
                     "num_partitions": 1, "late_fraction": 0.0, "num_services": 20},
        # sub-MB sizes: data bytes only, without Hudi's ~431 KB footer bloom filter per file
        "engines": [{"name": "unsorted", "kind": "clustering", "config": {"bloom_filter": False}},
                    {"name": "sorted", "kind": "clustering",
                     "config": {"sort_columns": ["service", "ts"], "bloom_filter": False}}],
        "sizing": {"small_file_limit_mb": 0.9, "target_file_mb": 0.5, "max_file_mb": 0.9, "row_group_rows": 1000,
                   "cleaner_commits_retained": 2},
        "maintenance": {"mode": "inline", "every_commits": 12},
        "queries": {"checkpoint_every": 12},
        "isolation": {"enabled": False},
    }
    sim = Results(simulate(Scenario.model_validate(doc), tmp_path, run_id="sim"))
    q = sim.table("queries").set_index(["engine", "query"]).files_scanned
    assert q["sorted", "service_hours"] < q["unsorted", "service_hours"]
    assert q["sorted", "full_scan_by_level"] == q["unsorted", "full_scan_by_level"]
    assert sim.run["simulation"]["file_ranges"].startswith("exact")


def test_simulated_instants_are_the_logical_clocks() -> None:
    """The simulator steps its instants on the digits: the same strings as the runner's clock, across
    the carries of seconds, minutes, hours, days and years."""
    for start in (None, "20260101000000998", "20261231235959997", "20280228235959999"):
        last = fast = start
        for _ in range(2500):
            last, fast = LOGICAL_CLOCK.next(last), next_logical_instant(fast)
            assert fast == last
