"""The runner: identical batches into every engine, maintenance on the scenario's schedule,
metrics from each table's own commit metadata (audited against a storage listing), the query
suite at checkpoints verified against ground truth, readers racing maintenance, results stored.

Like LST-Bench, the run records events (one row per instant, maintenance run, query and
isolation probe) and derives cumulative metrics (WA, space amplification) afterwards.
"""

from __future__ import annotations

import json
import shutil
import statistics
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from bench.engine_factory import build_engine, spark_conf_for
from bench.isolation import IsolationProbe
from bench.probe import HudiProbe, TableProbe, probe_of
from bench.queries import SUITE, QueryParams, choose_params, run_query
from bench.results import (
    ResultsWriter,
    derive_cumulative,
    git_info,
    machine_info,
    new_run_id,
    package_versions,
)
from bench.scenario import Scenario, ScenarioError
from engines.base import Engine, MaintenanceResult
from engines.spark.session import get_spark, resolve_master, warm_up
from workloads.generator import batch_df, batch_table


class VerificationError(RuntimeError):
    """A run whose figures or query results did not verify."""


class RunStepError(RuntimeError):
    """A step of a run raised: the message names the engine, batch and step; the traceback is in the log."""


@contextmanager
def _steps_named(ctx: RunContext) -> Iterator[None]:
    """Turn an exception inside the batch loop into one ``RunStepError`` naming ``ctx.step``, with
    the full traceback written to ``error.log`` in the results folder."""
    try:
        yield
    except Exception as exc:
        log = ctx.run_dir / "error.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"run failed at {ctx.step}\n\n{traceback.format_exc()}")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise RunStepError(f"run failed at {ctx.step}: {type(exc).__name__}: {first} "
                           f"(traceback in {log})") from exc


@dataclass
class EngineState:
    engine: Engine
    seq: int = 0
    ingest_latencies: list[float] = field(default_factory=list)
    maintenance_runs: int = 0
    isolation_runs: int = 0
    async_thread: threading.Thread | None = None
    repeat: int = 0  # which repetition (--repeat) this engine's table belongs to


@dataclass
class RunContext:
    scenario: Scenario
    run_dir: Path
    writer: ResultsWriter
    spark: Any
    failures: list[str] = field(default_factory=list)
    overhead_s: float = 0.0
    generation_s: list[float] = field(default_factory=list)  # per batch: generated and cached in Spark
    batch_bytes: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    step: str = "start-up"  # what the batch loop is doing, for the one error message a failure gives
    profile: dict[str, float] = field(default_factory=dict)  # wall seconds per phase (phase or phase/engine)

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the wall time of the block to ``profile[phase]``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            with self.lock:
                self.profile[phase] = self.profile.get(phase, 0.0) + time.perf_counter() - t0


def table_state(probe: TableProbe, small_limit: int) -> dict[str, Any]:
    """Live and physical files and bytes, space amplification, small files and metadata bytes now."""
    if isinstance(probe, HudiProbe):
        slices, physical = probe.state()
    else:
        slices, physical = probe.snapshot(), probe.physical_files()
    live_bytes = sum(s.size_bytes for s in slices)
    phys_bytes = sum(b.size for b in physical)
    return {
        "live_files": len(slices), "physical_files": len(physical), "live_bytes": live_bytes,
        "physical_bytes": phys_bytes, "space_amp": (phys_bytes / live_bytes) if live_bytes else None,
        "small_files": sum(1 for s in slices if s.size_bytes < small_limit),
        "mean_file_bytes": (live_bytes / len(slices)) if slices else 0.0, "metadata_bytes": probe.metadata_bytes(),
    }


def record_instant(ctx: RunContext, st: EngineState, batch: int, kind: str, instant: str, action: str,
                   operation: str, duration: float, stats: list, replaced: int) -> None:
    """One commits row: what the instant wrote (from its metadata) and the table state after it."""
    t0 = time.perf_counter()
    state = table_state(probe_of(st.engine), int(ctx.scenario.sizing.small_file_limit_mb * (1 << 20)))
    with ctx.lock:
        st.seq += 1
        ctx.writer.add(
            "commits", engine=st.engine.name, repeat=st.repeat, seq=st.seq, batch=batch, instant=instant, action=action,
            operation=operation, kind=kind, duration_s=duration,
            records_written=sum(s.num_writes for s in stats),
            bytes_written=sum(int(s.total_write_bytes or s.file_size) for s in stats),
            files_written=len(stats), files_replaced=replaced, **state,
        )
        ctx.overhead_s += time.perf_counter() - t0


def record_maintenance(ctx: RunContext, st: EngineState, batch: int, res: MaintenanceResult, mode: str) -> None:
    with ctx.lock:
        ctx.writer.add("maintenance", engine=st.engine.name, repeat=st.repeat, batch=batch, kind=res.kind,
                       instant=res.instant,
                       mode=mode, duration_s=res.duration_s, files_in=res.files_in, files_out=res.files_out,
                       bytes_read=res.bytes_read, bytes_written=res.bytes_written, records=res.records,
                       files_deleted=res.files_deleted, details=json.dumps(res.details, default=str))
        st.maintenance_runs += 1
    if res.kind in ("clean", "rollback") or not res.instant:
        return
    writes = probe_of(st.engine).instant_writes(res.instant)
    if writes is None:
        return
    record_instant(ctx, st, batch, res.kind, res.instant, writes.action, writes.operation, res.duration_s,
                   writes.stats, writes.replaced or res.files_in)


def maintain(ctx: RunContext, st: EngineState, batch: int, truth: pa.Table | None, mode: str) -> None:
    """Schedule + execute + clean, with reader threads racing the first runs (every engine: for the
    baseline, whose merge happens at ingest, the readers race its cleaner)."""
    engine = st.engine
    instant = engine.schedule()
    probe = None
    iso = ctx.scenario.isolation
    if iso.enabled and truth is not None and st.repeat == 0 and st.isolation_runs < iso.max_maintenance_runs:
        st.isolation_runs += 1
        probe = IsolationProbe(ctx.spark, engine, truth, iso.queries, iso.readers,
                               ctx.scenario.workload.partition_column,
                               window_hours=ctx.scenario.queries.service_window_hours)
        probe.start()
    try:
        res = engine.execute(instant) if instant is not None else None
        if res is not None:  # the table state right after the instant, before the cleaner runs
            record_maintenance(ctx, st, batch, res, mode)
        cleaned = engine.clean()
    finally:
        if probe is not None:
            for row in probe.stop(instant or "clean"):
                ctx.writer.add("isolation", **row)
    if cleaned is not None and (cleaned.files_deleted or cleaned.instant):
        record_maintenance(ctx, st, batch, cleaned, mode)


def audit(ctx: RunContext, st: EngineState, truth_rows: int) -> None:
    """Metadata vs storage listing and rows vs ground truth; mismatches are reported as errors."""
    t0 = time.perf_counter()
    ctx.failures += [f"{st.engine.name}: {f}" for f in probe_of(st.engine).audit(truth_rows)]
    ctx.overhead_s += time.perf_counter() - t0


def run_checkpoint(ctx: RunContext, st: EngineState, checkpoint: int, truth: pa.Table, params: QueryParams) -> None:
    engine = st.engine
    audit(ctx, st, truth.num_rows)
    t0 = time.perf_counter()
    probe = probe_of(engine)
    snap = probe.snapshot()
    live = {s.path: s for s in snap}
    for b in probe.physical_files() if st.repeat == 0 else ():
        s = live.get(b.path)
        ctx.writer.add("files", engine=engine.name, checkpoint=checkpoint, partition=b.partition, file_id=b.file_id,
                       path=b.path, size_bytes=b.size, rows=s.num_rows if s else None, live=s is not None)
    ctx.overhead_s += time.perf_counter() - t0
    qs = ctx.scenario.queries
    for name in qs.suite:
        query = SUITE[name]
        expected = query.reference(truth, params)
        for run in range(qs.warm_runs + 1):
            res = run_query(ctx.spark, probe.storage, snap, query, params, count_row_groups_too=run == 0)
            verified = res.error is None and (not qs.verify or res.result == expected)
            if res.error is None and qs.verify and res.result != expected:
                ctx.failures.append(f"{engine.name}: query {name} at checkpoint {checkpoint} returned "
                                    f"{str(res.result)[:200]}, expected {str(expected)[:200]}")
            if res.error is not None:
                ctx.failures.append(f"{engine.name}: query {name} failed: {res.error}")
            ctx.writer.add("queries", engine=engine.name, repeat=st.repeat, checkpoint=checkpoint, query=name, run=run,
                           latency_s=res.latency_s, files_total=res.files_total, files_scanned=res.files_scanned,
                           files_pruned=res.files_pruned, row_groups_total=res.row_groups_total if run == 0 else None,
                           row_groups_scanned=res.row_groups_scanned if run == 0 else None,
                           rows_scanned=res.rows_scanned if run == 0 else None, result_rows=res.result_rows,
                           verified=verified, error=res.error)


def _table_dir(run_dir: Path, engine: str, repeat: int) -> Path:
    """Where an engine's table lives: ``tables/<engine>``, or ``tables/repeat<r>/<engine>`` for a repetition."""
    return run_dir / "tables" / engine if repeat == 0 else run_dir / "tables" / f"repeat{repeat}" / engine


DETERMINISTIC = ("kind", "records_written", "bytes_written", "files_written", "live_files", "physical_files")


def repeat_mismatches(writer: ResultsWriter) -> list[str]:
    """Deterministic commit figures of every repetition against the first's, one message per engine
    and repetition that differs (same seed and batches must give the same layout)."""
    runs: dict[tuple[str, int], list[tuple]] = {}
    for row in writer.rows["commits"]:
        runs.setdefault((row["engine"], row.get("repeat", 0)), []).append(
            (row["seq"], *(row[k] for k in DETERMINISTIC)))
    out = []
    for (engine, r), rows in sorted(runs.items()):
        first = sorted(runs.get((engine, 0), []))
        mine = sorted(rows)
        if r and mine != first:
            diff = next((a for a, b in zip(mine, first, strict=False) if a != b), None)
            out.append(f"{engine}: repetition {r} differs from repetition 0 "
                       f"({len(mine)} vs {len(first)} commits; first difference at {diff})")
    return out


def _async_loop(ctx: RunContext, st: EngineState, stop: threading.Event, truth_ref: list) -> None:
    interval = ctx.scenario.maintenance.async_interval_s
    while not stop.wait(interval):
        try:
            with ctx.timed(f"async_maintenance/{st.engine.name}"):
                maintain(ctx, st, -1, None, "async")
        except Exception as exc:  # recorded, the run goes on
            ctx.failures.append(f"{st.engine.name}: async maintenance failed: {type(exc).__name__}: {exc}")


def run_scenario(scenario: Scenario, out: str | Path | None = None, master: str | None = None,
                 keep_tables: bool = True, progress: bool = True, run_id: str | None = None,
                 scenario_path: str | Path | None = None, repeat: int | None = None) -> Path:
    """Run a scenario end to end and return its results folder (``scenario_path``: the YAML it was
    loaded from, recorded in ``run.json``; ``repeat``: repetitions of the timed parts, default the
    scenario's ``repeat``)."""
    repeats = scenario.repeat if repeat is None else repeat
    if not isinstance(repeats, int) or repeats < 1:
        raise ScenarioError(f"repeat must be a whole number of at least 1, got {repeats!r}")
    wall0 = time.perf_counter()
    spec = scenario.workload
    run_dir = Path(out or scenario.output) / (run_id or new_run_id(scenario.name))
    writer = ResultsWriter(run_dir)
    t_session = time.perf_counter()
    spark = get_spark(resolve_master(master, scenario.spark.master), conf={**spark_conf_for(scenario), **scenario.spark.conf},
                      log_path=run_dir / "spark.log")
    warm_up(spark)  # Python worker start-up belongs to no engine's timings
    ctx = RunContext(scenario, run_dir, writer, spark)
    ctx.profile["spark_start"] = time.perf_counter() - t_session
    engines: list[EngineState] = []  # repetition 0's engines, then repetition 1's, ...: designs alternate
    for r in range(repeats):
        for es in scenario.engines:
            table_path = str(_table_dir(run_dir, es.name, r).resolve())
            engines.append(EngineState(build_engine(es, scenario, table_path), repeat=r))
    reference_engine = next((e for e in engines if e.repeat == 0 and getattr(e.engine, "writes_batches_once", False)),
                            None)
    mode = scenario.maintenance.mode
    stop = threading.Event()
    if mode == "async":
        for st in engines:
            st.async_thread = threading.Thread(target=_async_loop, args=(ctx, st, stop, []), daemon=True,
                                               name=f"async-{st.engine.name}")
            st.async_thread.start()
    truth_parts: list[pa.Table] = []
    n = spec.num_batches
    checkpoints = {b for b in range(n) if (b + 1) % scenario.queries.checkpoint_every == 0} | {n - 1}
    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} batches"),
                   TimeElapsedColumn(), TimeRemainingColumn(), disable=not progress, transient=False)
    with bar, _steps_named(ctx):
        task = bar.add_task(f"{scenario.name}", total=n)
        for b in range(n):
            ctx.step = f"batch {b}, generation"
            t0 = time.perf_counter()
            df = batch_df(spark, spec, b).cache()
            df.count()  # generated before any clock starts: no engine's ingest time includes generation
            ctx.generation_s.append(time.perf_counter() - t0)
            with ctx.timed("ground_truth"):
                truth_parts.append(batch_table(spec, b))
            for st in engines:
                rep = f" (repetition {st.repeat + 1}/{repeats})" if repeats > 1 else ""
                bar.update(task, description=f"{scenario.name} · batch {b + 1}/{n} · {st.engine.name}{rep}")
                ctx.step = f"engine {st.engine.name}, batch {b}, ingest"
                t0 = time.perf_counter()
                res = st.engine.ingest(df)
                dur = time.perf_counter() - t0
                st.ingest_latencies.append(dur)
                record_instant(ctx, st, b, "ingest", res.instant, res.action, res.operation, dur, res.stats,
                               sum(len(v) for v in res.replaced.values()))
                if st is reference_engine:
                    ctx.batch_bytes[b] = res.bytes_written
                ctx.step = f"engine {st.engine.name}, batch {b}, after-commit maintenance"
                with ctx.timed(f"maintenance/{st.engine.name}"):
                    for m in st.engine.after_commit():
                        record_maintenance(ctx, st, b, m, "engine")
                    if mode == "inline" and (b + 1) % scenario.maintenance.every_commits == 0:
                        ctx.step = f"engine {st.engine.name}, batch {b}, inline maintenance"
                        maintain(ctx, st, b, pa.concat_tables(truth_parts), "inline")
            df.unpersist()
            if b in checkpoints:
                if b == n - 1 and scenario.maintenance.final and mode != "none":
                    stop.set()
                    for st in engines:
                        if st.async_thread is not None:
                            st.async_thread.join()
                        if mode != "inline" or (b + 1) % scenario.maintenance.every_commits != 0:
                            ctx.step = f"engine {st.engine.name}, batch {b}, final maintenance"
                            with ctx.timed(f"maintenance/{st.engine.name}"):
                                maintain(ctx, st, b, pa.concat_tables(truth_parts), mode)
                truth = pa.concat_tables(truth_parts)
                params = choose_params(truth, spec.partition_column, scenario.queries.service_window_hours)
                for st in engines:
                    bar.update(task, description=f"{scenario.name} · checkpoint {b + 1} · {st.engine.name} queries")
                    ctx.step = f"engine {st.engine.name}, batch {b}, queries"
                    with ctx.timed(f"queries/{st.engine.name}"):
                        run_checkpoint(ctx, st, b, truth, params)
            bar.update(task, advance=1)
    stop.set()
    with ctx.timed("finish"):  # engines closed, batch bytes measured when no engine wrote them once, WA derived
        for st in engines:
            if st.async_thread is not None:
                st.async_thread.join()
            st.engine.close()
        if reference_engine is None:
            ctx.batch_bytes.update(_measure_batch_bytes(ctx, spec))
        derive_cumulative(writer, ctx.batch_bytes,
                           frozenset(st.engine.name for st in engines if getattr(st.engine, "own_batch_bytes", False)))
        if mode != "async":  # async maintenance races the batch loop: its layout is not reproducible
            ctx.failures += repeat_mismatches(writer)
    wall = time.perf_counter() - wall0
    total_rows = sum(t.num_rows for t in truth_parts)
    run = {
        "run_id": run_dir.name, "created": datetime.now(UTC).isoformat(), "scenario": scenario.model_dump(mode="json"),
        "scenario_path": str(scenario_path) if scenario_path is not None else None,
        "seed": spec.seed, "git": git_info(str(Path(__file__).resolve().parents[1])), "versions": {**package_versions(), **_jvm_packages(spark)},
        "machine": machine_info(), "spark_master": spark.sparkContext.master,
        "engines": {es.name: {"kind": es.kind, "table_path": str(_table_dir(run_dir, es.name, 0).resolve()),
                              "config": es.config} for es in scenario.engines},
        "repeat": repeats,
        "simulated": False, "wall_time_s": wall, "profile": run_profile(ctx, engines, wall), "harness_overhead_s": ctx.overhead_s,
        "harness_overhead_ratio": ctx.overhead_s / wall if wall else None,
        **_generation_figures(ctx.generation_s, [d for st in engines for d in st.ingest_latencies]),
        "ground_truth": {"rows": total_rows, "batches": n,
                         "batch_bytes_source": reference_engine.engine.name if reference_engine else "scratch write"},
        "verification": {"ok": not ctx.failures, "failures": ctx.failures},
        "tables_kept": keep_tables,
    }
    writer.write_run(run)
    if not keep_tables:
        shutil.rmtree(run_dir / "tables", ignore_errors=True)
    return run_dir


def _jvm_packages(spark: Any) -> dict[str, str]:
    """The JVM packages the session loaded (Apache Hudi's bundle), as group:artifact -> version."""
    packages = spark.sparkContext.getConf().get("spark.jars.packages", "") or ""
    return {c.rsplit(":", 1)[0]: c.rsplit(":", 1)[1] for c in packages.split(",") if c.count(":") == 2}


def run_profile(ctx: RunContext, engines: list[EngineState], wall: float) -> dict[str, Any]:
    """Where the run's wall time went: seconds per phase (``phase`` or ``phase/engine``), in the
    order they run, and what no phase accounts for. Async maintenance overlaps the batch loop, so
    it is reported beside the phases and not summed with them."""
    phases = {"spark_start": ctx.profile.get("spark_start", 0.0), "generation": sum(ctx.generation_s),
              "ground_truth": ctx.profile.get("ground_truth", 0.0)}
    for st in engines:  # every repetition of an engine adds to its phases
        name = st.engine.name
        phases[f"ingest/{name}"] = phases.get(f"ingest/{name}", 0.0) + sum(st.ingest_latencies)
        phases[f"maintenance/{name}"] = ctx.profile.get(f"maintenance/{name}", 0.0)
        phases[f"queries/{name}"] = ctx.profile.get(f"queries/{name}", 0.0)
    phases["finish"] = ctx.profile.get("finish", 0.0)
    overlapping = {k: v for k, v in ctx.profile.items() if k.startswith("async_maintenance/")}
    return {"phases_s": phases, "overlapping_s": overlapping,
            "unaccounted_s": wall - sum(phases.values())}


def _generation_figures(generation: list[float], ingests: list[float]) -> dict[str, float | None]:
    """Time spent generating batches (once per batch, for every engine), and the median batch's
    generation over the median ingest of one batch by one engine (T2's goal: at most 0.25)."""
    med = statistics.median(generation) if generation else None
    ingest = statistics.median(ingests) if ingests else None
    return {"generation_s": sum(generation), "generation_median_s": med,
            "generation_share_of_ingest": med / ingest if med is not None and ingest else None}


def _measure_batch_bytes(ctx: RunContext, spec: Any) -> dict[int, int]:
    """Bytes of each batch written once as new file groups, when no engine wrote it that way."""
    from engines.spark.insert import insert_new_file_groups
    from engines.table.table import HudiTable, TableConfig, logical_clock

    scratch = ctx.run_dir / "tables" / "_batch_bytes"
    table = HudiTable.create(str(scratch.resolve()), TableConfig("batch_bytes", spec.partition_column, "trace_id"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    out = {}
    for b in range(spec.num_batches):
        out[b] = insert_new_file_groups(table, batch_df(ctx.spark, spec, b)).bytes_written
    shutil.rmtree(scratch, ignore_errors=True)
    return out

