"""``layoutbench stream SCENARIO``: every engine fed by Spark Structured Streaming, into a results folder.

Per engine, one at a time (they would share two cores otherwise):
1. the fixed-rate run: the scenario's batches land every ``1 / stream.rate`` s (with the bad inputs
   when ``stream.bad_input``), each design's table services run beside the stream; afterwards the
   table is audited and the query suite verified against the ground truth of every landed batch,
   and every key checked present exactly once;
2. the rate search (``stream.rate_search``) on fresh tables.

Written: ``stream`` (micro-batches), ``stream_lag`` (samples), ``stream_rates`` (search steps),
``commits`` / ``maintenance`` / ``queries`` as the batch mode writes them (commit rows carry what
each instant wrote; table-state columns are filled for maintenance instants only, because
listing the table inside a micro-batch would add to its duration), and ``run.json`` with a
``stream`` summary per engine: freshness p50/p95/max, micro-batch p95 with and without
maintenance running and their ratio, sustainable throughput with its 95% interval, quarantined
files and late rows.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.engine_factory import build_engine, spark_conf_for
from bench.interrupt import reclaim
from bench.progress import ProgressBar
from bench.queries import choose_params
from bench.runner import (
    EngineState,
    RunContext,
    audit,
    record_maintenance,
    run_checkpoint,
    steps_named,
    table_state,
)
from bench.scenario import EngineSpec, Scenario
from bench.stream.engine_stream import StreamRun, stream_engine, stream_manual
from bench.stream.killtest import kill_and_restart, kill_points
from bench.stream.ratesearch import capacity_intervals, search
from bench.stream.verify import key_check, truth_of
from engines.config.registry import MB
from engines.kinds import kinds_with
from engines.spark.session import check_master_syntax, get_spark, resolve_master, warm_up
from runresults import (
    ResultsWriter,
    derive_cumulative,
    git_info,
    machine_info,
    new_run_id,
    package_versions,
)
from runresults.uncertainty import interval
from workloads.generator import batch_num_records


def _spec(es: EngineSpec) -> EngineSpec:
    return es.model_copy(update={"config": stream_manual(es.config, es.kind)})


def verify(ctx: RunContext, st: EngineState, run: StreamRun) -> dict[str, int]:
    """Audit, key check and the query suite against the ground truth of the run's landed files."""
    names = [n for n in run.good_names if n in run.sink.state.committed]
    truth = truth_of(ctx.scenario, names)
    audit(ctx, st, truth.num_rows)
    keys = key_check(st.engine, truth)
    if keys["rows_lost"] or keys["rows_duplicated"] or keys["rows_unexpected"]:
        ctx.failures.append(f"{st.engine.name}: {keys['rows_lost']} rows lost, {keys['rows_duplicated']} duplicated, "
                            f"{keys['rows_unexpected']} unexpected after the stream")
    params = choose_params(truth, ctx.scenario.workload.partition_column, ctx.scenario.queries.service_window_hours)
    run_checkpoint(ctx, st, ctx.scenario.workload.num_batches - 1, truth, params)
    return keys


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def summarize(rows: list[dict[str, Any]], steps: list[dict[str, Any]] | None, capacity: Any,
              mean_records: float) -> dict[str, Any]:
    """The per-engine stream figures of run.json (see the module docstring)."""
    fixed = [r for r in rows if r["run"] == "fixed" and r.get("files") and not r.get("replayed")]
    fresh = [r["freshness_s"] for r in fixed if r.get("freshness_s") is not None]
    during = [r["duration_s"] for r in fixed if r["maintenance_running"]]
    quiet = [r["duration_s"] for r in fixed if not r["maintenance_running"]]
    p95_during, p95_quiet = _pct(during, 95), _pct(quiet, 95)
    out: dict[str, Any] = {
        "micro_batches": len(fixed), "freshness_p50_s": _pct(fresh, 50), "freshness_p95_s": _pct(fresh, 95),
        "freshness_max_s": max(fresh) if fresh else None,
        "micro_batch_p95_s_with_maintenance": p95_during, "micro_batch_p95_s_without_maintenance": p95_quiet,
        "micro_batches_with_maintenance": len(during),
        "slowdown_p95": p95_during / p95_quiet if p95_during and p95_quiet else None,
        "quarantined": sorted({q for r in rows if r.get("quarantined") for q in r["quarantined"].split(",")}),
        "late_rows": sum(int(r.get("late_rows") or 0) for r in fixed),
    }
    if steps is not None:
        sustained = [s["rate"] for s in steps if s["sustained"]]
        best = max(sustained) if sustained else None
        above = [s["rate"] for s in steps if not s["sustained"] and (best is None or s["rate"] > best)]
        out.update({
            "sustainable_rate": best, "sustainable_records_per_s": best * mean_records if best else None,
            "first_unsustained_rate": min(above) if above else None,
            "capacity_rate": capacity.value if capacity else None,
            "capacity_rate_95": [capacity.lo, capacity.hi] if capacity else None,
            "capacity_records_per_s": capacity.value * mean_records if capacity else None,
        })
    return out


def run_stream_scenario(scenario: Scenario, out: str | Path | None = None, master: str | None = None,
                        run_id: str | None = None, scenario_path: str | Path | None = None,
                        rate_search: bool | None = None, keep_tables: bool = True, kill_test: bool = False) -> Path:
    """Stream the scenario through every engine (see the module docstring); returns the results folder."""
    wall0 = time.perf_counter()
    if (chosen := resolve_master(master, scenario.spark.master)) is not None:
        check_master_syntax(chosen)  # a bad master leaves no results folder behind
    spec, cfg = scenario.workload, scenario.stream
    run_dir = Path(out or scenario.output) / (run_id or new_run_id(f"{scenario.name}-stream"))
    writer = ResultsWriter(run_dir)
    spark = get_spark(resolve_master(master, scenario.spark.master),
                      conf={**spark_conf_for(scenario), **scenario.spark.conf}, log_path=run_dir / "spark.log")
    reclaim()  # Ctrl-C is ours to name, not PySpark's to forward to the JVM it also stops
    warm_up(spark)
    ctx = RunContext(scenario, run_dir, writer, spark)
    cache = run_dir / "work" / "batches"
    batches = list(range(spec.num_batches))
    mean_records = float(np.mean([batch_num_records(spec, b) for b in batches]))
    search_on = cfg.rate_search.enabled if rate_search is None else rate_search
    summary: dict[str, Any] = {}
    # micro-batches, lag and the rate step on a terminal's stderr; silent on a pipe and under tests
    with steps_named(ctx), ProgressBar(scenario.name, total=len(scenario.engines), unit="engines") as bar:
        ctx.step = "the warm-up stream"  # a failure or Ctrl-C is one message naming the step, traceback in error.log
        _warm_stream(spark, scenario, run_dir / "work" / "warmup", cache)
        for es in scenario.engines:
            _stream_one(ctx, es, scenario, batches, cache, search_on, mean_records, summary, bar)
            bar.advance()
        if kill_test:
            _kill_tests(ctx, scenario, scenario_path, spark)
    derive_cumulative(writer, {}, frozenset(es.name for es in scenario.engines))
    wall = time.perf_counter() - wall0
    writer.write_run({
        "run_id": run_dir.name, "created": datetime.now(UTC).isoformat(), "mode": "stream",
        "scenario": scenario.model_dump(mode="json"),
        "scenario_path": str(scenario_path) if scenario_path is not None else None, "seed": spec.seed,
        "git": git_info(str(Path(__file__).resolve().parents[2])), "versions": package_versions(),
        "machine": machine_info(), "spark_master": spark.sparkContext.master,
        "engines": {es.name: {"kind": es.kind, "table_path": str((run_dir / "tables" / es.name).resolve()),
                              "config": es.config} for es in scenario.engines},
        "repeat": 1, "simulated": False, "wall_time_s": wall, "stream": summary,
        **({"crashtest": {"parallel": 1, "kind": "stream kill and restart"}} if kill_test else {}),
        "ground_truth": {"batches": spec.num_batches, "mean_batch_records": mean_records},
        "verification": {"ok": not ctx.failures, "failures": ctx.failures}, "tables_kept": keep_tables,
    })
    shutil.rmtree(run_dir / "work", ignore_errors=True)
    if not keep_tables:
        shutil.rmtree(run_dir / "tables", ignore_errors=True)
    return run_dir


def _shown(bar: ProgressBar, engine: str, phase: str) -> Callable[[dict[str, Any], int], None]:
    """A lag-sample callback that shows the engine, phase, micro-batches, arrivals and backlog."""
    def show(sample: dict[str, Any], micro_batches: int) -> None:
        backlog = sample.get("backlog_s")
        bar.describe(f"{engine} · {phase} · micro-batch {micro_batches} · committed "
                                      f"{sample['committed']}/{sample['arrived']} batches · lag "
                                      f"{'-' if backlog is None else f'{backlog:.1f} s'}")
    return show


def _stream_one(ctx: RunContext, es: EngineSpec, scenario: Scenario, batches: list[int], cache: Path, search_on: bool,
                mean_records: float, summary: dict[str, Any], bar: ProgressBar) -> None:
    """One engine's fixed-rate stream, then its rate search when on; rows into the writer, figures into summary."""
    spark, writer, run_dir, cfg = ctx.spark, ctx.writer, ctx.run_dir, scenario.stream
    ctx.step = f"engine {es.name}, stream"
    table_path = str((run_dir / "tables" / es.name).resolve())
    engine = build_engine(_spec(es), scenario, table_path)
    st = EngineState(engine)
    record = _recorder(ctx, st)
    run = stream_engine(spark, scenario, engine, es.kind, run_dir / "work" / es.name, "fixed", cfg.rate, batches,
                        cache, bad_input=cfg.bad_input, record=record, on_lag=_shown(bar, es.name, "fixed rate"))
    if run.error:
        ctx.failures.append(run.error)
    _record_rows(ctx, st, run)
    keys = verify(ctx, st, run)
    engine.close()
    steps = None
    capacity = None
    if search_on:
        ctx.step = f"engine {es.name}, rate search"
        result = search(lambda rate, root, es=es: _step_run(spark, scenario, es, rate, root, cache, writer,
                                                            _shown(bar, es.name, f"rate step {rate:.3g}/s")),
                        scenario, run_dir / "work" / f"{es.name}-search")
        steps = []
        for i, s in enumerate(result.steps):
            row = {"engine": es.name, "step": i, "rate": s.rate, "records_per_s": s.rate * mean_records,
                   "batches": len(s.run.good_names), "sustained": s.sustained, "lag_slope": s.lag_slope,
                   "final_backlog_s": s.final_backlog_s if math.isfinite(s.final_backlog_s) else None,
                   "processed_per_s": s.processed_per_s, "wall_s": s.run.wall_s}
            writer.add("stream_rates", **row)
            steps.append(row)
        capacity = interval(capacity_intervals(result), statistic=lambda x: 1.0 / np.mean(x, axis=-1))
    summary[es.name] = {**summarize(run.sink.state.rows, steps, capacity, mean_records), "keys": keys,
                        "update_conflicts": len(run.sink.state.conflicts),
                        "maintenance_runs": run.services.runs, "maintenance_mode": run.services.mode}


def _kill_tests(ctx: RunContext, scenario: Scenario, scenario_path: str | Path | None, spark: Any) -> None:
    """The stream's kill points (``killtest.kill_points``) for every engine that has them: ``crash`` rows."""
    if scenario_path is None:
        raise ValueError("the kill test needs the scenario's file: the killed child process loads it")
    master = spark.sparkContext.master
    for es in scenario.engines:
        for i, point in enumerate(kill_points(es.kind)):
            ctx.step = f"engine {es.name}, kill at {point}"
            row = kill_and_restart(spark, scenario, str(scenario_path), es.name, point,
                                   ctx.run_dir / "work" / f"kill-{es.name}-{i}", master)
            ctx.writer.add("crash", **row)
            if not row["recovered"] or row["rows_lost"] or row["rows_duplicated"]:
                ctx.failures.append(f"{es.name}: killed at {point}: recovered={row['recovered']}, "
                                    f"{row['rows_lost']} rows lost, {row['rows_duplicated']} duplicated")


def _warm_stream(spark: Any, scenario: Scenario, root: Path, cache: Path) -> None:
    """One batch streamed into a scratch table first: the file source's and the writers' first-use
    costs (class loading, code generation) would otherwise land on the first engine's figures."""
    # a COPY_ON_WRITE clustering design's writer (Option 2): the Spark paths most engines share
    es = EngineSpec(name="warmup", kind=kinds_with(service="clustering", table_types=("COPY_ON_WRITE",))[0])
    engine = build_engine(_spec(es), scenario, str((root / "table").resolve()))
    try:
        stream_engine(spark, scenario, engine, es.kind, root, "warmup", 10.0, [0], cache, maintenance=False)
    finally:
        engine.close()
        shutil.rmtree(root, ignore_errors=True)


def _recorder(ctx: RunContext, st: EngineState) -> Any:
    def record(res: Any, mode: str) -> None:
        record_maintenance(ctx, st, -1, res, f"stream-{mode}")
    return record


def _record_rows(ctx: RunContext, st: EngineState, run: StreamRun) -> None:
    """The run's micro-batch and lag rows, and its ingest commits (see the module docstring)."""
    for row in run.sink.state.rows:
        ctx.writer.add("stream", **row)
    for row in run.lag:
        ctx.writer.add("stream_lag", **row)
    for c in run.sink.state.commits:
        ctx.writer.add("commits", engine=st.engine.name, repeat=0, seq=0, batch=c["batch"], instant=c["instant"],
                       action=c["action"], operation=c["operation"], kind="ingest", duration_s=c["duration_s"],
                       records_written=sum(s.num_writes for s in c["stats"]),
                       bytes_written=sum(int(s.total_write_bytes or s.file_size) for s in c["stats"]),
                       files_written=len(c["stats"]), files_replaced=c["replaced"])
    mine = sorted((r for r in ctx.writer.rows["commits"] if r["engine"] == st.engine.name),
                  key=lambda r: int(r["instant"]))
    for seq, r in enumerate(mine, start=1):  # instant times order the commits
        r["seq"] = seq
    if mine and mine[-1].get("live_files") is None:  # the table after the stream, on its newest commit
        mine[-1].update(table_state(st.engine.probe(), int(ctx.scenario.sizing.small_file_limit_mb * MB)))


def _step_run(spark: Any, scenario: Scenario, es: EngineSpec, rate: float, root: Path, cache: Path,
              writer: ResultsWriter, on_lag: Callable[[dict[str, Any], int], None] | None = None) -> StreamRun:
    """One rate-search step on a fresh table (its lag rows kept, labelled ``rate:<r>``)."""
    n = scenario.stream.rate_search.batches_per_step
    engine = build_engine(_spec(es), scenario, str((root / "table").resolve()))
    try:
        run = stream_engine(spark, scenario, engine, es.kind, root, f"rate:{rate:.3g}", rate,
                            list(range(min(n, scenario.workload.num_batches))), cache, on_lag=on_lag)
    finally:
        engine.close()
    for row in run.sink.state.rows:
        writer.add("stream", **row)
    for row in run.lag:
        writer.add("stream_lag", **row)
    return run
