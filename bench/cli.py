"""The ``layoutbench`` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bench.cli_errors import command, exit_code_of, log_traceback
from runresults.review.settings import HUDI_SMALL_FILE_LIMIT_MB

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark and simulate Hudi RFC-19 small-file designs on Spark.")
console = Console()


# Exit codes. 2 is typer's (click's) own for a usage error: a wrong option or a missing argument.
EXIT_OK = 0
EXIT_FAILED = 1  # a run whose verification failed, a regression, a step of a run that raised
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3  # a bad scenario, table or results folder

# every command's results root: a local folder, or an object store through pyarrow.fs (bench.store.results_upload)
STORE_OUT = "; s3://bucket/prefix[?endpoint_override=host:port&scheme=http] writes it to a store"


def version_text() -> str:
    """The package version and the git commit of the code that runs."""
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path

    from runresults import git_info

    try:
        ver = version("layoutbench")
    except PackageNotFoundError:
        ver = "unknown"
    git = git_info(str(Path(__file__).resolve().parents[1]))
    sha = (git["sha"] or "unknown") + (" (dirty)" if git["dirty"] else "")
    return f"layoutbench {ver} (git {sha})"


def _print_version(value: bool) -> None:
    if value:
        print(version_text())
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="print the package version and git SHA, then exit"),
) -> None:
    """Benchmark and simulate Hudi RFC-19 small-file designs on Spark."""


def fail(message: str, code: int = EXIT_BAD_INPUT) -> None:
    """Print one clear error and exit non-zero (by default: bad input, ``EXIT_BAD_INPUT``). Called while
    an exception is handled, its traceback goes to the error log the message names (unless the message
    already names one: a run's own ``error.log``)."""
    exc = sys.exc_info()[1]
    if exc is not None and "(traceback in " not in message:
        import click

        ctx = click.get_current_context(silent=True)
        message += log_traceback(exc, ctx.info_name if ctx is not None and ctx.info_name else "command")
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


@command(app)
def inspect(
    table: str = typer.Argument(..., help="table base path or URI"),
    as_of: str | None = typer.Option(None, "--as-of", help="17-digit instant to time-travel to"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    small_file_limit_mb: float = typer.Option(HUDI_SMALL_FILE_LIMIT_MB, help="small-file threshold for the count"),
) -> None:
    """Print a Hudi table's timeline, partitions, file groups, file sizes and row count (merged: MERGE_ON_READ logs over their base files)."""
    from bench.inspect_table import inspect_table
    from engines.config.registry import MB

    try:
        info = inspect_table(table, as_of=as_of, small_file_limit=int(small_file_limit_mb * MB))
    except (OSError, ValueError, RuntimeError) as exc:
        fail(str(exc))
        return
    if as_json:
        json.dump(info, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return
    console.print(f"[bold]{info['table_name']}[/] at {info['base_path']} — {info['table_type']}, "
                  f"table version {info['table_version']}, timeline layout {info['timeline_layout']}"
                  + (f", as of {as_of}" if as_of else ""))
    tl = Table("instant", "action", "state", title="timeline")
    for i in info["timeline"]:
        tl.add_row(i["instant"], i["action"], i["state"].lower())
    console.print(tl)
    parts = Table("partition", "live files", "bytes", "rows", title="partitions (snapshot)")
    for p, d in info["partitions"].items():
        parts.add_row(p or "(none)", str(d["live_files"]), f"{d['bytes']:,}", f"{d['rows']:,}")
    console.print(parts)
    hist = Table("size", "files", title="live file sizes")
    for label, n in info["size_histogram"].items():
        hist.add_row(label, str(n))
    console.print(hist)
    console.print(
        f"file groups {info['file_groups']} · live files {info['live_files']} · physical files "
        f"{info['physical_files']} · small files (<{info['small_file_limit'] / MB:g} MB) "
        f"{info['small_files']} · mean {info['mean_file_bytes']:,} B · space amplification "
        f"{info['space_amplification']} · snapshot rows {info['snapshot_rows']:,}"
    )
    if "live_log_files" in info:
        console.print(f"merge-on-read: live log files {info['live_log_files']} ({info['live_log_bytes']:,} B) · "
                      f"log blocks merged {info['log_blocks_merged']} · read-optimized rows "
                      f"{info['read_optimized_rows']:,}")
        for problem in info["corrupt_log_blocks"]:
            console.print(f"[yellow]warning:[/] {problem}; the read stopped there and resumed at the next block")


@command(app)
def validate(scenario: str = typer.Argument(..., help="scenario YAML file"),
             out: str | None = typer.Option(None, "--out", help="results root the run would write to (default: "
                                            "the scenario's output): its free space is checked; an s3:// root's "
                                            "bucket must exist"),
             batches: int | None = typer.Option(None, "--batches", help="check a run of the first N batches "
                                                "(run --batches)"),
             engines: str | None = typer.Option(None, "--engines", help="check a run of these engines (run "
                                                "--engines; engines_on_request included)"),
             simulate: bool = typer.Option(False, "--simulate", help="check it for layoutbench simulate, which "
                                           "writes no tables (no disk estimate)")) -> None:
    """Check a scenario file, and that its tables would fit the free disk; every problem is explained
    in one message."""
    import tempfile

    from bench.disk_estimate import GB, check_disk
    from bench.scenario import ScenarioError, load_scenario
    from bench.store.results_upload import check_results_bucket, is_remote
    from bench.store.server import StoreError

    try:
        sc = load_scenario(scenario)
        if batches is not None:
            sc = sc.first_batches(batches)
        if engines:
            sc = sc.select_engines([e.strip() for e in engines.split(",") if e.strip()])
        if is_remote(out):  # the bucket must exist; the folder is staged in the temp folder first
            check_results_bucket(str(out), sc.store)
        est = None if simulate else check_disk(sc, tempfile.gettempdir() if is_remote(out) else out)
    except (ScenarioError, StoreError) as exc:
        fail(str(exc))
        return
    prefixes = [f"{e.name} the first {sc.batches_of(e.name)}" for e in sc.engines
                if sc.batches_of(e.name) < sc.batches_run]
    console.print(f"{scenario}: ok — {len(sc.engines)} engines "
                  f"({', '.join(e.name for e in sc.engines)}), {sc.workload.num_batches} batches"
                  + (f", the run stops after the first {sc.batches_run}" if sc.batches_run < sc.workload.num_batches
                     else "")
                  + (f" ({'; '.join(prefixes)})" if prefixes else "")
                  + (f", tables about {est.peak_bytes / GB:.1f} GB at their peak" if est is not None else ""))


@command(app)
def run(
    scenario: str = typer.Argument(..., help="scenario YAML file"),
    out: str | None = typer.Option(None, "--out", help="results root (default: the scenario's output)" + STORE_OUT),
    master: str | None = typer.Option(None, "--master", help="Spark master URL (local[*], spark://host:7077, ...)"),
    engines: str | None = typer.Option(None, "--engines", help="comma-separated subset of the scenario's engines"),
    seed: int | None = typer.Option(None, "--seed", help="override the workload seed"),
    keep_tables: bool | None = typer.Option(None, "--keep-tables/--no-keep-tables",
                                            help="keep the tables after the run (default: the scenario's "
                                            "keep_tables; without, each engine's tables are removed once its "
                                            "figures are taken)"),
    report: bool = typer.Option(False, "--report", help="render the reports after the run"),
    repeat: int | None = typer.Option(None, "--repeat", help="run the timed parts N times on fresh tables "
                                      "(default: the scenario's repeat); timings get intervals over them, "
                                      "95% from 10 values"),
    batches: int | None = typer.Option(None, "--batches", help="run only the scenario's first N batches (a "
                                       "stated prefix; the simulator projects the rest, reported as such)"),
) -> None:
    """Run a scenario; the results folder is printed as the last line."""
    from bench.runner import RunStepError, run_scenario
    from bench.scenario import ScenarioError, load_scenario

    try:
        sc = load_scenario(scenario)
        if batches is not None:  # before --engines: a choice of engines that all run prefixes needs it
            sc = sc.first_batches(batches)
        if engines:
            sc = sc.select_engines([e.strip() for e in engines.split(",") if e.strip()])
        if seed is not None:
            sc = sc.model_copy(update={"workload": sc.workload.model_copy(update={"seed": seed})})
        if repeat is not None and repeat < 1:
            raise ScenarioError(f"--repeat must be at least 1, got {repeat}")
    except ScenarioError as exc:
        fail(str(exc))
        return
    from bench.store.results_upload import results_root
    from engines.spark.session import SparkMasterUnreachable

    try:  # an s3:// root: its bucket checked before Spark starts, the folder copied there even on a failure
        with results_root(out, sc.store) as root:
            run_dir = run_scenario(sc, out=root.local, master=master, keep_tables=keep_tables, scenario_path=scenario,
                                   repeat=repeat)
            ok = _after_run(run_dir, report, root.where)
    except RunStepError as exc:
        fail(str(exc), exit_code_of(exc))
        return
    except (SparkMasterUnreachable, ScenarioError) as exc:  # ScenarioError: the disk cannot hold the tables
        fail(str(exc))
        return
    print(root.where(run_dir))
    if not ok:
        raise typer.Exit(EXIT_FAILED)


def _after_run(run_dir: Path, report: bool, where: Any = str) -> bool:
    """The summary or the report of a finished run, and its verification failures; True when it verified."""
    from runresults import Results

    results = Results(run_dir)
    ok = results.run["verification"]["ok"]
    if report:
        import time

        from bench.process_cpu import TreeCpu
        from bench.runner import add_to_profile

        cpu = TreeCpu()
        c0, t0 = cpu.seconds(), time.perf_counter()
        _render(run_dir, design_review=True, where=where)
        c1 = cpu.seconds()
        add_to_profile(run_dir, "report", time.perf_counter() - t0, c1 - c0 if c0 is not None and c1 is not None else None)
    else:
        _print_summary(results)
    if not ok:
        for f in results.run["verification"]["failures"][:20]:
            Console(stderr=True, soft_wrap=True).print(f"[red]verification:[/] {escape(str(f))}")
    return bool(ok)


@command(app)
def stream(
    scenario: str = typer.Argument(..., help="scenario YAML file (its stream section sets the rates)"),
    out: str | None = typer.Option(None, "--out", help="results root (default: the scenario's output)" + STORE_OUT),
    master: str | None = typer.Option(None, "--master", help="Spark master URL"),
    engines: str | None = typer.Option(None, "--engines", help="comma-separated subset of the scenario's engines"),
    rate_search: bool | None = typer.Option(None, "--rate-search/--no-rate-search",
                                            help="search the sustainable throughput (default: the scenario's)"),
    kill_test: bool = typer.Option(False, "--kill-test", help="also SIGKILL the streaming process at the "
                                   "stream's kill points and restart it from its checkpoint (crash table)"),
    report: bool = typer.Option(False, "--report", help="render the report after the run"),
) -> None:
    """Continuous ingestion: Spark Structured Streaming from a landing folder into every engine, with
    each design's table services beside the stream; the results folder is printed as the last line."""
    from bench.scenario import ScenarioError, load_scenario

    try:
        sc = load_scenario(scenario)
        if engines:
            sc = sc.select_engines([e.strip() for e in engines.split(",") if e.strip()])
    except ScenarioError as exc:
        fail(str(exc))
        return
    from bench.runner import RunStepError
    from bench.store.results_upload import results_root
    from bench.stream.run import run_stream_scenario
    from engines.spark.session import SparkMasterUnreachable

    try:  # an s3:// root: its bucket checked before Spark starts, the folder copied there even on a failure
        with results_root(out, sc.store) as root:
            run_dir = run_stream_scenario(sc, out=root.local, master=master, scenario_path=scenario,
                                          rate_search=rate_search, kill_test=kill_test)
            ok = _after_stream(run_dir, report, root.where)
    except RunStepError as exc:
        fail(str(exc), exit_code_of(exc))
        return
    except SparkMasterUnreachable as exc:
        fail(str(exc))
        return
    print(root.where(run_dir))
    if not ok:
        raise typer.Exit(EXIT_FAILED)


def _after_stream(run_dir: Path, report: bool, where: Any = str) -> bool:
    """A finished stream's table (and report), and its verification failures; True when it verified."""
    from bench.results import Results

    results = Results(run_dir)
    t = Table("engine", "freshness p50 s", "p95 s", "max s", "micro-batch p95 s (maint / none)", "slowdown",
              "sustainable batches/s", "capacity batches/s [95%]", "quarantined", "late rows",
              title=f"stream {results.run['run_id']}")

    def f(v: object) -> str:
        return f"{v:.3g}" if isinstance(v, int | float) else "-"

    for name, s in results.run.get("stream", {}).items():
        cap = s.get("capacity_rate_95")
        t.add_row(name, f(s["freshness_p50_s"]), f(s["freshness_p95_s"]), f(s["freshness_max_s"]),
                  f"{f(s['micro_batch_p95_s_with_maintenance'])} / {f(s['micro_batch_p95_s_without_maintenance'])}",
                  f(s["slowdown_p95"]), f(s.get("sustainable_rate")),
                  f"{f(s.get('capacity_rate'))} [{f(cap[0])}, {f(cap[1])}]" if cap else "-",
                  ",".join(s["quarantined"]) or "-", str(s["late_rows"]))
    Console(width=max(console.width, 170)).print(t)
    if report:
        _render(run_dir, design_review=False, where=where)
    for failure in results.run["verification"]["failures"][:20]:
        Console(stderr=True, soft_wrap=True).print(f"[red]verification:[/] {escape(str(failure))}")
    return bool(results.run["verification"]["ok"])


def _print_summary(results: object) -> None:
    from runresults import Results

    assert isinstance(results, Results)
    commits = results.table("commits")
    queries = results.table("queries")
    t = Table("engine", "WA", "live files", "physical files", "space amp", "ingest p50 s", "queries verified",
              title=f"run {results.run['run_id']}")
    for engine in results.engines:
        c = commits[commits.engine == engine]
        last = c.sort_values("seq").iloc[-1] if len(c) else None
        ing = c[c.kind == "ingest"].duration_s
        q = queries[queries.engine == engine]
        t.add_row(engine, f"{last.wa:.3f}" if last is not None and last.wa == last.wa else "-",
                  str(last.live_files) if last is not None else "-", str(last.physical_files) if last is not None else "-",
                  f"{last.space_amp:.3f}" if last is not None and last.space_amp == last.space_amp else "-",
                  f"{ing.median():.3f}" if len(ing) else "-", f"{int(q.verified.sum())}/{len(q)}")
    console.print(t)


def _render(run_dir: object, design_review: bool, where: Any = str) -> None:
    """Render the reports and print where each is (``where``: a path's place once the folder is
    uploaded, :meth:`bench.store.results_upload.ResultsRoot.where`)."""
    try:
        from reports import render_report
    except ImportError:
        from runresults import Results

        _print_summary(Results(run_dir))
        return
    paths = render_report(run_dir, design_review=design_review)
    for name, path in paths.items():
        console.print(f"{name}: {where(path)}")


@command(app)
def report(
    run_dir: str = typer.Argument(..., help="results folder"),
    design_review: bool = typer.Option(False, "--design-review", help="add the RFC-19 design review"),
    simulation: str | None = typer.Option(None, "--simulation", help="a simulated results folder for 'at scale'"),
    sweep: str | None = typer.Option(None, "--sweep", help="a sweep's results folder: 'Where the answer changes'"),
    crash: str | None = typer.Option(None, "--crash", help="a crashtest results folder: the crash rows and verdict"),
    fidelity: str | None = typer.Option(None, "--fidelity", help="a `make bench-hudi` results folder: "
                                        "'Ours next to Apache Hudi' (default: one of the same git SHA beside RUN_DIR)"),
) -> None:
    """Render report.md, a self-contained report.html and the plots from a results folder."""
    from reports import render_report
    from runresults import ResultsError

    try:
        paths = render_report(run_dir, design_review=design_review, simulation_dir=simulation, sweep_dir=sweep,
                              crash_dir=crash, fidelity_dir=fidelity)
    except (ResultsError, FileNotFoundError) as exc:
        fail(str(exc))
        return
    console.print(f"report: {paths['report.html']}")
    print(paths["report.md"])


@command(app)
def compare(
    run_a: str = typer.Argument(..., help="baseline results folder"),
    run_b: str = typer.Argument(..., help="results folder to judge"),
    tolerance: float = typer.Option(1.5, help="timing ratio beyond which a timing regressed"),
) -> None:
    """Compare two runs metric by metric; exit 1 when anything regressed."""
    from reports import compare_runs
    from runresults import ResultsError

    try:
        res = compare_runs(run_a, run_b, tolerance)
    except ResultsError as exc:
        fail(str(exc))
        return
    t = Table("engine", "metric", "A", "B", "change", "verdict")
    for r in res.rows:
        style = {"regressed": "red", "improved": "green"}.get(r["verdict"], "")
        t.add_row(r["engine"], r["metric"], r["A"], r["B"], r["change"], f"[{style}]{r['verdict']}[/]" if style else r["verdict"])
    console.print(t)
    if res.regressed:
        raise typer.Exit(EXIT_FAILED)


def run_perf_check(update_baseline: bool = False, reason: str | None = None,
                   out: str | Path | None = None) -> tuple[Any, Path]:
    """Run the CI scenario, then check it against (or, with ``update_baseline``, rewrite) the baseline:
    the runner (bench) measures, :mod:`reports.perfcheck` judges; a run whose only regressions are
    timing ratios is run once more and each ratio keeps its better value (DuckDB's re-run)."""
    import tempfile

    from bench.perfcheck import BASELINE, CI_SCENARIO, calibrate_same_run
    from bench.runner import run_scenario
    from bench.scenario import load_scenario
    from reports.perfcheck import best_of, check, extract_figures, only_timing_regressed, write_baseline
    from runresults import Results

    out_dir = Path(out) if out else Path(tempfile.mkdtemp(prefix="layoutbench-perf-"))

    def measure(run_id: str) -> tuple[Path, Results, dict[str, Any]]:
        run_dir = run_scenario(load_scenario(CI_SCENARIO), out=out_dir, progress=False, run_id=run_id,
                               scenario_path=CI_SCENARIO)
        results = Results(run_dir)
        if not results.run["verification"]["ok"]:
            raise RuntimeError("perf-check run failed verification: "
                               + "; ".join(results.run["verification"]["failures"]))
        figures = extract_figures(results, results.run.get("calibration") or calibrate_same_run(results))
        (run_dir / "perf_figures.json").write_text(json.dumps(figures, indent=2))
        return run_dir, results, figures

    run_dir, results, current = measure("perf-check")
    if update_baseline:
        figures = dict(current)
        figures["git_sha"] = results.run.get("git", {}).get("sha")
        write_baseline(figures, BASELINE, reason or "")
        return None, run_dir
    res = check(BASELINE, current)
    if res.regressed and only_timing_regressed(res):
        _, _, again = measure("perf-check-rerun")
        current = best_of(current, again)
        res = check(BASELINE, current)
        res.notes.append("timing ratios regressed in the first run: re-ran the scenario, kept each ratio's best")
    (run_dir / "perf_check.md").write_text(res.to_markdown())
    return res, run_dir


@command(app, "perf-check")
def perf_check(
    update_baseline: bool = typer.Option(False, "--update-baseline", help="rewrite bench/baselines/ci.json"),
    reason: str | None = typer.Option(None, "--reason", help="why the baseline changes (required to update)"),
) -> None:
    """Run the CI scenario and compare with the committed baseline (exit 1 on regression)."""
    from bench.perfcheck import BASELINE

    try:
        res, run_dir = run_perf_check(update_baseline, reason)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        fail(str(exc))
        return
    if res is None:
        console.print(f"baseline written to {BASELINE} ({run_dir})")
        return
    bad = [r for r in res.rows if r["verdict"] == "regressed"]
    for r in bad:
        console.print(f"[red]regressed[/] {r['engine']} {r['metric']}: {r['A']} -> {r['B']} ({r['change']})")
    console.print(f"perf-check: {len(res.rows)} figures compared, {len(bad)} regressed ({run_dir})")
    if bad:
        raise typer.Exit(EXIT_FAILED)


@command(app)
def crashtest(
    scenario: str = typer.Argument("bench/scenarios/crash.yaml", help="scenario YAML file"),
    out: str = typer.Option("results", "--out", help="results root" + STORE_OUT),
    engines: str | None = typer.Option(None, "--engines", help="comma-separated subset of engines"),
    points: str | None = typer.Option(None, "--points", help="comma-separated subset of injection points"),
    reduced: bool = typer.Option(False, "--reduced", help="only the points where the designs differ"),
    parallel: int = typer.Option(2, "--parallel", help="crash children running at once"),
) -> None:
    """Kill the writer at every injection point of every engine, recover, finish, count losses."""
    from bench.crashtest import run_crashtest
    from bench.scenario import ScenarioError

    def split(value: str | None) -> list[str] | None:
        return [x.strip() for x in value.split(",") if x.strip()] if value else None

    from bench.store.results_upload import results_root
    from reports import render_report

    try:
        with results_root(out) as root:
            run_dir = run_crashtest(scenario, str(root.local), split(engines), split(points), reduced=reduced,
                                    parallel=parallel)
            render_report(run_dir)
    except ScenarioError as exc:
        fail(str(exc))
        return
    print(root.where(run_dir))


@command(app)
def simulate(
    scenario: str = typer.Argument(..., help="scenario YAML file"),
    calibration: str | None = typer.Option(None, "--calibration", help="calibration file from `calibrate`"),
    horizon: int | None = typer.Option(None, "--horizon", help="number of batches (default: the scenario's)"),
    out: str = typer.Option("results", "--out", help="results root" + STORE_OUT),
    validate_against: list[str] = typer.Option(
        [], "--validate", help="a real run of the same scenario (repeatable): print every figure beside the real "
        "one (validation.md in the results folder; exit 1 when one is out of tolerance); a run on the S3 store "
        "also compares requests and query seconds, simulated at that run's first-byte latency"),
) -> None:
    """Simulate a scenario on metadata-only tables (same planners); prints the results folder."""
    from bench.scenario import ScenarioError, load_scenario
    from bench.simulate.costmodel import CalibrationError, CostModel
    from bench.simulate.supports import corrections_problems
    from bench.simulate.validate import ValidationError, as_taken
    from runresults import Results, ResultsError

    try:
        sc = load_scenario(scenario)
        unmodelled = corrections_problems(sc)  # its copy-on-write upserts are modelled; MOR's logs are not
        if unmodelled:
            raise ScenarioError(f"{scenario}: " + "; ".join(unmodelled) + ": `layoutbench run` measures it, or "
                                "remove the engine to simulate the others")
        reals = [Results(v) for v in validate_against]
        taken = [as_taken(sc, real) for real in reals]
        if calibration:  # read before any folder is made: a missing or corrupt file is the user's to fix
            CostModel.load(calibration)
    except (ScenarioError, ResultsError, ValidationError, CalibrationError) as exc:
        fail(str(exc), EXIT_BAD_INPUT)
        return
    from bench.store.results_upload import results_root

    with results_root(out, sc.store) as root:  # s3://: its bucket checked first, the folders copied there
        run_dir, ok = _simulate_and_validate(sc, str(root.local), calibration, horizon, reals, taken)
    print(root.where(run_dir))
    if not ok:
        raise typer.Exit(EXIT_FAILED)


def _simulate_and_validate(sc: Any, out: str, calibration: str | None, horizon: int | None, reals: list[Any],
                           taken: list[Any]) -> tuple[Path, bool]:
    """The simulation, then each real run beside it (validation.md); (results folder, all in tolerance)."""
    from bench.simulate.results_folder import simulate as run_simulation
    from bench.simulate.validate import batches_taken, render, validate, validate_store, validate_timings
    from runresults import Results

    run_dir = run_simulation(sc, out, calibration_path=calibration, horizon_batches=horizon, progress=True)
    _print_summary(Results(run_dir))
    texts, ok = [], True
    for real, at in zip(reals, taken, strict=True):
        sim_dir, suffix = run_dir, ""
        fb = (real.run.get("store") or {}).get("first_byte_ms")
        if sc.store.kind == "s3" and fb is not None and fb != sc.store.first_byte_ms:
            # the real run's latency: query seconds depend on it, requests and files do not
            at = at.model_copy(update={"store": at.store.model_copy(update={"first_byte_ms": fb})})
            suffix += f"-fb{fb:g}"
        if at.batches_run < sc.workload.num_batches or any(e.num_batches for e in at.engines):
            suffix += f"-as-{real.run.get('run_id', real.folder.name)}"  # each engine over the run's batches
        if suffix:
            sim_dir = run_simulation(at, out, calibration_path=calibration, horizon_batches=horizon,
                                     run_id=f"{run_dir.name}{suffix}", as_run=True)
        checks = (validate(real, Results(sim_dir)) + validate_timings(real, Results(sim_dir))
                  + validate_store(real, Results(sim_dir)))
        ok = ok and all(c.ok for c in checks)
        unmodelled = (Results(sim_dir).run.get("simulation") or {}).get("not_simulated") or []
        texts.append(f"#### Against {real.folder}\n\nEach engine simulated over the batches the run took: "
                     f"{batches_taken(at)} (of {sc.workload.num_batches})"
                     + (f"; not simulated (no model of the kind): {', '.join(unmodelled)}" if unmodelled else "")
                     + ".\n\n" + render(checks))
    if reals:
        text = "\n".join(texts)
        (run_dir / "validation.md").write_text(text)
        console.print(text, markup=False)
    return run_dir, ok


@command(app)
def sweep(
    sweep_file: str = typer.Argument(..., help="sweep YAML file (see bench/sweeps/)"),
    out: str = typer.Option("results", "--out", help="results root" + STORE_OUT),
    validate_corners: bool = typer.Option(False, "--validate-corners",
                                          help="real runs at the map's 4 corners, printed beside the map"),
    workers: int | None = typer.Option(None, "--workers", min=1, help="processes (default: the sweep's, or cores)"),
    gates: str | None = typer.Option(None, "--gates", help="a run's results folder: candidates that failed a gate "
                                     "its scenario requires stay out of the map"),
) -> None:
    """Run the simulator over a grid of workload and config parameters: which design the verdict's
    rules choose where (whole candidates, the required gates, the ledger, the margin), and where the
    answer changes (map.md and heatmaps in the results folder)."""
    from bench.simulate.sweep import SweepError, load_sweep, run_grid, write_sweep
    from bench.simulate.sweep_corners import validate_corners as run_corners
    from reports.decision_map import render_section

    try:
        grid = load_sweep(sweep_file, gates_run=gates)
    except SweepError as exc:
        fail(str(exc))
        return
    if validate_corners and grid.fast:
        fail(f"{sweep_file}: --validate-corners: a fast map's corners are production sizes no test machine "
             "runs; its fast path is held to the full simulator by tests/test_production_map.py, and the toy "
             "map (bench/sweeps/rfc19_map.yaml) validates its corners in full")
        return
    from bench.store.results_upload import results_root

    with results_root(out) as root:  # s3://: its bucket checked before the grid runs
        rows, wall = run_grid(grid, workers)
        console.print(f"sweep {grid.spec.name}: {len(grid.points())} points in {wall:.1f} s")
        folder = write_sweep(grid, rows, wall, str(root.local))
        if validate_corners:
            validation = run_corners(grid, folder / "corners")
            folder = write_sweep(grid, rows, wall, str(root.local), run_id=folder.name, validation=validation)
        text, _ = render_section(folder)
        (folder / "map.md").write_text(text)
        console.print(text, markup=False)
    print(root.where(folder))


@command(app)
def calibrate(
    run_dirs: list[str] = typer.Argument(..., help="results folder(s) of real runs: the first gives the time "
                                         "model; runs on the S3 store give the request model and, at two "
                                         "first-byte latencies, the query model on the store"),
    out: str | None = typer.Option(None, "--out", help="calibration file (default RUN/calibration.json)"),
    requests_from: str | None = typer.Option(None, "--requests", help="the store run to fit the request model "
                                             "to (default: the first store run given)"),
) -> None:
    """Fit the simulator's cost model to real runs."""
    from bench.simulate.calibrate import calibrate as fit
    from runresults import ResultsError

    try:
        print(fit(run_dirs, out, requests_from))
    except ResultsError as exc:
        fail(str(exc))


def _service_command() -> dict[str, Any]:
    """``service``'s command class (its help ends with the article's commands, unwrapped) and help."""
    from bench.service_help import HELP, ServiceCommand

    return {"cls": ServiceCommand, "help": HELP, "context_settings": {"help_option_names": ["--help", "-h"]}}


@command(app, **_service_command())
def service(
    base_path: str = typer.Option(..., "--base-path", "-sp", help="the table's base path or URI"),
    mode: str | None = typer.Option(None, "--mode", "-m", help="schedule | execute | scheduleAndExecute | clean | "
                                    "rollback (any case); without it: schedule with --schedule, else execute "
                                    "(as HoodieClusteringJob)"),
    schedule: bool = typer.Option(False, "--schedule", "-sc", help="HoodieClusteringJob's deprecated --schedule: "
                                  "--mode schedule when --mode is not given"),
    table_name: str | None = typer.Option(None, "--table-name", "-tn", help="the table's name: must equal its "
                                          "hoodie.table.name"),
    design: str = typer.Option("clustering", "--design", help="clustering (Option 2) or compaction (Option 1)"),
    instant_time: str | None = typer.Option(None, "--instant-time", "-it", help="--mode execute: the pending plan "
                                            "to execute (default: the earliest requested clustering plan, or the "
                                            "earliest pending compaction)"),
    hoodie_conf: list[str] = typer.Option([], "--hoodie-conf", help="a Hudi config key=value (repeatable; wins "
                                          "over --props)"),
    props: str | None = typer.Option(None, "--props", help="a properties file, local or s3://, read as Hudi's "
                                     "DFSPropertiesConfiguration: key=value or key value lines, # comments, "
                                     "include=FILE relative to it"),
    spark_memory: str | None = typer.Option(None, "--spark-memory", "-sm", help="Spark driver and executor memory "
                                            "(e.g. 4g)"),
    parallelism: int | None = typer.Option(None, "--parallelism", "-pl", min=1, help="Spark's default parallelism "
                                           "and shuffle partitions. Hudi's is its write client's insert/upsert "
                                           "shuffle parallelism, which our clustering has no use for: the tasks "
                                           "that rewrite a plan are Spark's"),
    retry: int = typer.Option(0, "--retry", "-rt", min=0, help="as Hudi: re-run the whole mode while it finds "
                              "nothing to do (exit 4), at most this many more times; an error stops it at once"),
    retry_last_failed: bool = typer.Option(False, "--retry-last-failed-clustering-job", "-rc",
                                           help="scheduleAndExecute: roll back and re-run the last inflight "
                                           "(failed) plan instead of scheduling a new one"),
    max_processing_ms: int = typer.Option(0, "--job-max-processing-time-ms", "-jt", min=0,
                                          help="with -rc: an inflight plan that started less than this long ago "
                                          "may still be running and is left alone"),
    spark_master: str | None = typer.Option(None, "--spark-master", "-ms", help="Spark master URL"),
) -> None:
    """Run a table service on an existing table, as Apache Hudi's HoodieClusteringJob does (help: bench/service_help.py)."""
    from bench.service import (
        EXIT_NOTHING_TO_DO,
        NothingToDo,
        ServiceError,
        ServiceRequest,
        parse_conf,
        run_service,
    )

    if design not in ("clustering", "compaction"):
        fail(f"--design {design}: expected clustering or compaction", EXIT_USAGE)
    import tempfile
    from pathlib import Path

    from engines.spark.session import get_spark

    conf: dict[str, str] = {}
    if spark_memory:
        conf |= {"spark.driver.memory": spark_memory, "spark.executor.memory": spark_memory}
    if parallelism:
        conf |= {"spark.default.parallelism": str(parallelism), "spark.sql.shuffle.partitions": str(parallelism)}

    def said(attempt: int, why: NothingToDo) -> None:
        if retry:
            Console(stderr=True, soft_wrap=True).print(f"attempt {attempt} of {retry + 1}: nothing to do: "
                                                       f"{escape(str(why))}", highlight=False)

    try:
        request = ServiceRequest(base_path, mode or ("schedule" if schedule else "execute"),  # type: ignore[arg-type]
                                 design, instant_time,  # type: ignore[arg-type]
                                 parse_conf(hoodie_conf, props), table_name=table_name, retry=retry,
                                 retry_last_failed=retry_last_failed, max_processing_time_ms=max_processing_ms)
        # no results folder here: Spark's own output goes to a log in the temp folder, not the terminal
        get_spark(master=spark_master, conf=conf,
                  log_path=Path(tempfile.gettempdir()) / f"layoutbench-service-{os.getpid()}.log")
        done = run_service(request, on_attempt=said)
    except NothingToDo as exc:
        tries = f" ({exc.attempts} attempts)" if exc.attempts > 1 else ""
        Console(stderr=True, soft_wrap=True).print(f"nothing to do{tries}: {escape(str(exc))}", highlight=False)
        raise typer.Exit(EXIT_NOTHING_TO_DO) from None
    except ServiceError as exc:
        fail(str(exc))
        return
    for item in done:
        if isinstance(item, str):
            console.print(item, highlight=False)
        else:
            console.print(f"{item.kind} {item.instant}: {item.files_in} files in, {item.files_out} out, "
                          f"{item.files_deleted} deleted, {item.duration_s:.2f} s", highlight=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
