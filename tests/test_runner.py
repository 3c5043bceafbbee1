"""The harness end to end on the small scenario: all result tables, verified queries, isolation
figures for every engine, WA ordering, determinism of a second run, and a standalone cluster run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.netns import namespaces_unavailable
from bench.runner import run_scenario
from bench.scenario import ScenarioError, load_scenario
from runresults import Results

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


def deterministic_figures(results: Results) -> dict:
    c = results.table("commits")
    out = {}
    for engine, g in c.groupby("engine"):
        g = g.sort_values("seq")
        out[engine] = {"bytes": g.bytes_written.tolist(), "files": g.files_written.tolist(),
                       "live": g.live_files.tolist(), "physical": g.physical_files.tolist(),
                       "instants": g.instant.tolist()}
    q = results.table("queries")
    # the checkpoints' own runs (run 0): the warm runs of the final checkpoint are the interleaved rounds'
    # when the review measures (the shared small_run), one per query otherwise (the run below)
    out["verified"] = int(q[q.run == 0].verified.sum())
    return out


def test_small_run_produces_consistent_results(small_run: Results) -> None:
    run = small_run.run
    assert run["verification"]["ok"], run["verification"]["failures"]
    engines = set(run["engines"])
    assert engines == {"baseline", "option1_rfc", "option1_cbd", "option2", "option2_sorted"}
    for name in ("commits", "files", "maintenance", "queries", "isolation"):
        assert set(small_run.table(name).engine) >= (engines if name != "maintenance" else engines - {"baseline"})
    q = small_run.table("queries")
    assert q.verified.all() and (q.run == 0).any() and (q.run > 0).any()
    final = small_run.table("commits").sort_values("seq").groupby("engine").last()
    assert final.wa.notna().all()
    iso = small_run.table("isolation")
    assert set(iso.engine) == engines
    assert set(iso[iso.engine.str.startswith("option2")].outcome) == {"ok"}
    assert run["harness_overhead_ratio"] < 0.05
    assert run["generation_s"] >= run["generation_median_s"] > 0 and run["generation_share_of_ingest"] > 0
    assert run["scenario_path"].endswith("small.yaml")
    assert run["git"]["sha"] and run["versions"]["pyspark"] and run["machine"]["cores"]
    for path in (e["table_path"] for e in run["engines"].values()):
        assert Path(path, ".hoodie", "hoodie.properties").exists()


def test_same_seed_same_figures(spark, small_run: Results, tmp_path) -> None:
    again = Results(run_scenario(load_scenario(SMALL), out=tmp_path, progress=False, run_id="second"))
    assert deterministic_figures(again) == deterministic_figures(small_run)


@pytest.mark.slow
@pytest.mark.skipif(namespaces_unavailable() is None,
                    reason="covered by tests/test_cluster_netns.py (master and worker on one host, driver on another)")
def test_standalone_cluster_matches_local(small_run: Results, tmp_path) -> None:
    """The same scenario on a Spark standalone master + worker (127.0.0.1), in a child process.
    Where network namespaces work, the two-host test covers this and more (same cluster code)."""
    code = (
        "import sys; from bench.cluster import standalone_cluster; from bench.runner import run_scenario;"
        "from bench.scenario import load_scenario\n"
        "with standalone_cluster(cores=2, memory='2g') as url:\n"
        f"    print(run_scenario(load_scenario({str(SMALL)!r}), out={str(tmp_path)!r}, master=url,"
        " progress=False, run_id='cluster'))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cluster = Results(Path(proc.stdout.strip().splitlines()[-1]))
    assert cluster.run["spark_master"].startswith("spark://127.0.0.1:")
    assert cluster.run["verification"]["ok"], cluster.run["verification"]["failures"]
    assert deterministic_figures(cluster) == deterministic_figures(small_run)


def test_run_profile_accounts_for_the_wall_time(small_run: Results) -> None:
    run = small_run.run
    profile = run["profile"]
    phases = profile["phases_s"]
    engines = set(run["engines"])
    for phase in ("ingest", "maintenance", "queries"):
        assert {k.split("/", 1)[1] for k in phases if k.startswith(phase + "/")} == engines
    assert all(v >= 0 for v in phases.values())
    assert abs(sum(phases.values()) + profile["unaccounted_s"] - run["wall_time_s"]) < 1e-6
    assert 0 <= profile["unaccounted_s"] < 0.2 * run["wall_time_s"]  # the phases cover the run
    routes = profile["routes"]  # per engine, write jobs per route and the gate's reason (engines.files.gate)
    assert routes and set(routes) <= engines | {"harness"}, routes
    assert all(n > 0 for per_engine in routes.values() for n in per_engine.values())
    assert any(k.startswith("insert: driver (") for per_engine in routes.values() for k in per_engine), routes
    ingest = small_run.table("commits")
    ingest = ingest[ingest.kind == "ingest"]
    for engine in engines:  # the ingest phase is the ingest latencies the commits table records
        assert abs(phases[f"ingest/{engine}"] - ingest[ingest.engine == engine].duration_s.sum()) < 1e-6


@pytest.mark.slow  # the small scenario again, on one core, behind spark-submit's own JVM start
def test_spark_submit_launch_keeps_its_master_and_matches_local(small_run: Results, tmp_path) -> None:
    """``spark-submit --master local[1] bench/cli.py run`` (the scenario says local[2]): spark-submit's
    master stands, and the figures equal the local run's."""
    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "LAYOUTBENCH_SPARK_MASTER"}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    proc = subprocess.run([str(Path(sys.executable).parent / "spark-submit"), "--master", "local[1]",
                           str(repo / "bench" / "cli.py"), "run", str(SMALL), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=900, env=env, cwd=repo)
    assert proc.returncode == 0, proc.stderr[-3000:]
    submitted = Results(Path(proc.stdout.strip().splitlines()[-1]))
    assert submitted.run["spark_master"] == "local[1]"
    assert submitted.run["verification"]["ok"], submitted.run["verification"]["failures"]
    assert deterministic_figures(submitted) == deterministic_figures(small_run)


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
def test_repeat_runs_fresh_tables_and_gives_intervals(spark, tmp_path) -> None:
    """--repeat 2: each engine twice on fresh tables from the same batches; exact figures are the
    first repetition's and equal the second's (the run checks it); timings pool both, with
    intervals; an engine capped at one repetition (as a reference peer) runs once and says so, with
    as many warm query runs in all as the others; the control engine never maintains; the report opens with the verdict."""
    from reports import render_report
    from reports.summary import summarize

    sc = load_scenario(SMALL).model_copy(update={"name": "repeat"})
    sc = sc.model_copy(update={
        "engines": [e for e in sc.engines if e.name in ("baseline", "option1_cbd", "option2_sorted")]
        + [sc.engines[0].model_copy(update={"name": "append_only", "kind": "append_only", "repeat": 1})],
        "workload": sc.workload.model_copy(update={"num_batches": 4}),
        "isolation": sc.isolation.model_copy(update={"enabled": False})})
    res = Results(run_scenario(sc, out=tmp_path, progress=False, run_id="rep", repeat=2))
    assert res.run["verification"]["ok"], res.run["verification"]["failures"]
    assert res.repeats == 2 and res.run["format_version"] >= 2
    assert (res.folder / "tables" / "repeat1" / "option2_sorted").is_dir()
    every = res.table("commits", all_repeats=True)
    assert sorted(every.repeat.unique()) == [0, 1]
    assert every[every.engine == "append_only"].repeat.unique().tolist() == [0]
    assert not (res.folder / "tables" / "repeat1" / "append_only").exists()
    repeated = every[every.engine != "append_only"]
    first_view = res.table("commits")
    assert len(first_view[first_view.engine != "append_only"]) * 2 == len(repeated)  # the default view: repetition 0
    first, second = (repeated[repeated.repeat == r].sort_values(["engine", "seq"]) for r in (0, 1))
    for col in ("bytes_written", "files_written", "live_files", "wa"):
        assert first[col].tolist() == second[col].tolist(), col
    by = {s.engine: s for s in summarize(res)}
    assert by["append_only"].maintenance_runs == 0 and by["option2_sorted"].maintenance_runs > 0
    p50 = by["option2_sorted"].timings["ingest p50"]
    assert p50.n == 8 and p50.lo <= p50.value <= p50.hi  # 4 batches x 2 repetitions
    assert by["append_only"].family == "No maintenance (control)"
    assert (by["append_only"].repeats, by["option2_sorted"].repeats) == (1, 2)
    assert by["append_only"].timings["ingest p50"].n == 4
    # run once, the capped engine runs twice the warm runs: its warm medians have the designs' samples
    q = res.table("queries", all_repeats=True)
    warm = q[q.run > 0].groupby("engine").size()
    assert warm["append_only"] == warm["option2_sorted"] > 0
    assert by["append_only"].timings[f"query {sc.queries.suite[0]}"].n == by["option2_sorted"].timings[
        f"query {sc.queries.suite[0]}"].n
    md = render_report(res.folder, design_review=True)["report.md"].read_text()
    assert md.index("## The answer") < md.index("## Setup")
    assert "**Scenario `repeat`.**" in md and "n=8" in md  # ingest: 4 batches x 2 repetitions, paired
    assert res.run["review"]["choice"]["run"]["representatives"]  # the runner stored the review
    assert "2 repetition(s); fewer for append_only 1" in md


def test_warm_runs_of_an_engine_capped_below_the_runs_repetitions() -> None:
    from bench.runner import warm_runs_of

    assert warm_runs_of(1, None, 3) == 1 and warm_runs_of(2, 5, 3) == 2  # runs every repetition
    assert warm_runs_of(1, 1, 3) == 3 and warm_runs_of(2, 1, 3) == 6
    assert warm_runs_of(1, 2, 3) == 2  # two of three repetitions: at least as many samples, never fewer


def test_repeat_zero_is_refused(tmp_path) -> None:
    from typer.testing import CliRunner

    from bench.cli import EXIT_BAD_INPUT, app

    res = CliRunner().invoke(app, ["run", str(SMALL), "--repeat", "0", "--out", str(tmp_path)])
    assert res.exit_code == EXIT_BAD_INPUT and "--repeat" in res.output
    with pytest.raises(ScenarioError, match="repeat"):
        run_scenario(load_scenario(SMALL), out=tmp_path, progress=False, repeat=-1)


def test_engines_that_read_the_drivers_rows_start_no_spark_job_on_a_small_batch(spark, tmp_path) -> None:
    """The runner fills Spark's cache of a small batch only when an engine declares it reads the batch
    through Spark (``reads_batch_in_spark``); every engine that declares it does not must ingest an
    unfilled cached batch without a Spark job, or the cache fill would land in its ingest time."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec
    from engines.spark.arrow_frame import frame_from_arrow
    from engines.spark.batch_stats import remember_partition_counts, remember_rows
    from workloads.generator import batch_table, batch_tasks, table_partition_counts

    sc = load_scenario(SMALL)
    spec = sc.workload
    assert batch_tasks(spark.sparkContext.defaultParallelism, spec, 0) == 1
    specs = list(sc.engines) + [EngineSpec(name="append_only", kind="append_only"),
                                EngineSpec(name="delta", kind="delta_peer")]
    for b in range(2):  # the second batch meets existing files: small-file top-ups, the baseline's merge
        table = batch_table(spec, b)
        df = frame_from_arrow(spark, table).cache()  # cached, never filled
        remember_partition_counts(df, spec.partition_column, table_partition_counts(table, spec.partition_column))
        remember_rows(df, table)
        for es in specs:
            engine = build_engine(es, sc, str(tmp_path / es.name))
            assert engine.reads_batch_in_spark is False, es.name
            group = f"ingest-{es.name}-{b}"
            spark.sparkContext.setJobGroup(group, group)
            try:
                engine.ingest(df)
            finally:
                spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
            assert list(spark.sparkContext.statusTracker().getJobIdsForGroup(group)) == [], es.name
            engine.close()
        df.unpersist()
