"""The runner: identical batches into every engine, maintenance on the scenario's schedule,
metrics from each table's own commit metadata (audited against a storage listing), the query
suite at checkpoints verified against ground truth, readers racing maintenance, results stored.

Like LST-Bench, the run records events (one row per instant, maintenance run, query and
isolation probe) and derives cumulative metrics (WA, space amplification) afterwards.
"""

from __future__ import annotations

import json
import math
import shutil
import statistics
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.batch_frame import batch_frame, rows_frame
from bench.batch_loop import MAINTAIN, ROUND_RUNS, SCHEDULE, MaintenanceSchedule, checkpoints_of, run_batches
from bench.engine_factory import build_engine, spark_conf_for
from bench.gates.history_gates import needs_apache_hudi
from bench.gates.in_run import (
    checkpoint_query_rounds,
    final_query_rounds,
    in_rounds,
    measure_gates,
    rounds_run,
    ruled_out_before_rounds,
    ruled_out_by_gates,
)
from bench.ingest_phases import ingest_phases
from bench.interrupt import interrupted, reclaim
from bench.isolation import IsolationProbe
from bench.machine_load import LoadSampler
from bench.partial_results import PartialResults
from bench.process_cpu import TreeCpu
from bench.progress import ProgressBar
from bench.queries import SUITE, QueryParams, add_row_groups, choose_params, run_query
from bench.scale_projection import prefix_projections
from bench.scenario import Scenario, ScenarioError, fingerprint
from bench.store.proxy import run_columns
from bench.store.run_store import run_store
from bench.target_verdict import project_run
from engines.async_service import AsyncService
from engines.base import Engine, MaintenanceResult
from engines.config.registry import MB
from engines.files.gate import routes_by_owner, routes_taken
from engines.maintenance_round import MaintenanceRound, RoundPhase, schedule_if_idle
from engines.spark.session import (
    check_master_syntax,
    get_spark,
    hudi_conf,
    launched_by_spark_submit,
    merge_conf,
    resolve_master,
    warm_up,
)
from engines.table.plans import PLAN_ACTIONS
from engines.table.probe import TableProbe
from engines.table.table import HudiTable
from runresults import (
    ResultsWriter,
    commit_row,
    derive_cumulative,
    git_info,
    new_run_id,
    package_versions,
    run_record,
)
from runresults.review import store_review
from workloads.generator import batch_df, batch_table
from workloads.truth import apply_corrections, corrections_of


class RunStepError(RuntimeError):
    """A step of a run raised: the message names the engine, batch and step; the traceback is in the log."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a step of a run: the message names the step and the log of its traceback."""


@contextmanager
def steps_named(ctx: RunContext) -> Iterator[None]:
    """Turn an exception inside the batch loop into one ``RunStepError`` naming ``ctx.step`` (Ctrl-C
    into a :class:`RunInterrupted` naming it), with the full traceback written to ``error.log`` in the
    results folder."""
    try:
        yield
    except BaseException as exc:
        if not isinstance(exc, Exception) and not interrupted(exc):
            raise  # SystemExit and the like
        log = ctx.run_dir / "error.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"run failed at {ctx.step}\n\n{traceback.format_exc()}")
        if interrupted(exc):
            raise RunInterrupted(f"interrupted at {ctx.step} (traceback in {log})") from exc
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
    service: AsyncService | None = None  # maintenance.mode async: the runner's service beside the loop
    ingests: int = 0  # commits of batches so far (maintenance.async_max_commits counts them)
    ingests_at_maintenance: int = 0  # ... at the start of the last async round that maintained
    ingest_instants: list[str] = field(default_factory=list)  # each ingest commit's instant, in order
    upsert_latencies: list[float] = field(default_factory=list)  # each correction commit's seconds (update_fraction)
    repeat: int = 0  # which repetition (--repeat) this engine's table belongs to
    # warm runs per query at a checkpoint (None: the scenario's); an engine capped below the run's
    # repetitions runs as many more, so its warm medians have as many samples as the designs'
    warm_runs: int | None = None
    batches: int = 0  # how many of the workload's batches it takes (a stated prefix, else all)
    table_dir: Path | None = None  # its table on local disk (None on an object store)
    removed: bool = False  # its table removed once its figures were taken (keep_tables off)


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
    cpu_profile: dict[str, float] = field(default_factory=dict)  # the process tree's CPU seconds, same keys
    cpu: TreeCpu = field(default_factory=TreeCpu)
    store: Any = None  # bench.store.run_store.RunStore when the tables live on the S3 store
    routes_at_start: dict[tuple[str, str], int] = field(default_factory=routes_taken)  # engines.files.gate's count

    def label(self, phase: str, context: str = "") -> Any:
        """Attribute the object-store requests made inside the block to ``phase`` (no-op on local disk)."""
        return self.store.proxy.label(phase, context) if self.store is not None else nullcontext()

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        """Add the wall time of the block to ``profile[phase]``, the process tree's CPU seconds to
        ``cpu_profile[phase]`` (both threads' when blocks overlap: async maintenance)."""
        c0 = self.cpu.seconds()
        t0 = time.perf_counter()
        try:
            yield
        finally:
            wall = time.perf_counter() - t0
            with self.lock:
                self.profile[phase] = self.profile.get(phase, 0.0) + wall
            self.add_cpu(phase, c0)

    def add_cpu(self, phase: str, since: float | None) -> None:
        """Add the process tree's CPU seconds since ``since`` (a :meth:`TreeCpu.seconds`) to ``phase``."""
        now = self.cpu.seconds()
        if now is not None and since is not None:
            with self.lock:
                self.cpu_profile[phase] = self.cpu_profile.get(phase, 0.0) + now - since


def table_state(probe: TableProbe, small_limit: int) -> dict[str, Any]:
    """Live and physical files and bytes, small files and metadata bytes of the table now. A
    MERGE_ON_READ table's log files count as files (live: those of the snapshot's slices), as Hudi's
    file system view counts a slice's logs with its base file; small files are base files."""
    slices, physical = probe.state()
    logs = probe.live_logs()
    return {
        "live_files": len(slices) + len(logs), "physical_files": len(physical),
        "live_bytes": sum(s.size_bytes for s in slices) + sum(g.size for g in logs),
        "physical_bytes": sum(b.size for b in physical),
        "small_files": sum(1 for s in slices if s.size_bytes < small_limit), "metadata_bytes": probe.metadata_bytes(),
    }


def record_instant(ctx: RunContext, st: EngineState, batch: int, kind: str, instant: str, action: str,
                   operation: str, duration: float, stats: list, replaced: int,
                   phases: dict[str, float] | None = None) -> None:
    """One commits row: what the instant wrote (from its metadata) and the table state after it;
    ``phases``: an ingest's plan / write / commit seconds (:mod:`bench.ingest_phases`)."""
    t0 = time.perf_counter()
    state = table_state(st.engine.probe(), int(ctx.scenario.sizing.small_file_limit_mb * MB))
    with ctx.lock:
        st.seq += 1
        ctx.writer.add("commits", **commit_row(
            engine=st.engine.name, repeat=st.repeat, seq=st.seq, batch=batch, instant=instant, action=action,
            operation=operation, kind=kind, duration_s=duration, records_written=sum(s.num_writes for s in stats),
            bytes_written=sum(int(s.total_write_bytes or s.file_size) for s in stats),
            files_written=len(stats), files_replaced=replaced, **state, **(phases or {})))
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
    writes = st.engine.probe().instant_writes(res.instant)
    if writes is None:
        return
    record_instant(ctx, st, batch, res.kind, res.instant, writes.action, writes.operation, res.duration_s,
                   writes.stats, writes.replaced or res.files_in)


# the object-store request label of each phase of a maintenance round
_ROUND_LABELS = {RoundPhase.SCHEDULE: "maintenance_planning", RoundPhase.FIND: "maintenance_planning",
                 RoundPhase.EXECUTE: "maintenance_execution", RoundPhase.CLEAN: "cleaner"}


def maintain(ctx: RunContext, st: EngineState, batch: int, truth: pa.Table | None, mode: str,
             step: str = MAINTAIN) -> None:
    """One maintenance step of :mod:`bench.batch_loop`, a round of :mod:`engines.maintenance_round`:
    ``MAINTAIN`` schedules, executes (the new plan, else the earliest pending one) and cleans;
    ``SCHEDULE`` only schedules, when no plan is pending; ``EXECUTE`` executes every pending plan,
    earliest first, and cleans. Each execution is recorded as it completes. Reader threads race
    the first runs (every engine: for the baseline, whose merge happens at ingest, the readers race
    its cleaner)."""
    engine = st.engine

    def phase(name: RoundPhase) -> Any:
        return ctx.label(_ROUND_LABELS[name], f"batch {batch}")

    if step == SCHEDULE:
        schedule_if_idle(engine, phase)
        return

    def executed(res: MaintenanceResult) -> None:
        with ctx.label("harness", f"batch {batch}"):  # the table state right after the instant, before the cleaner
            record_maintenance(ctx, st, batch, res, mode)

    rnd = MaintenanceRound(engine, ROUND_RUNS[step], phase=phase,
                           on_executed=executed)
    rnd.schedule()
    probe = None
    iso = ctx.scenario.isolation
    if iso.enabled and truth is not None and st.repeat == 0 and st.isolation_runs < iso.max_maintenance_runs:
        st.isolation_runs += 1
        probe = IsolationProbe(ctx.spark, engine, truth, iso.queries, iso.readers,
                               ctx.scenario.workload.partition_column,
                               window_hours=ctx.scenario.queries.service_window_hours)
        probe.start()
    try:
        rnd.execute()
        cleaned = rnd.clean()
    finally:
        if probe is not None:
            for row in probe.stop(rnd.next_plan or "clean"):
                ctx.writer.add("isolation", **row)
    if cleaned is not None and (cleaned.files_deleted or cleaned.instant):
        with ctx.label("harness", f"batch {batch}"):
            record_maintenance(ctx, st, batch, cleaned, mode)


def audit(ctx: RunContext, st: EngineState, truth_rows: int) -> None:
    """Metadata vs storage listing and rows vs ground truth; mismatches are reported as errors."""
    t0 = time.perf_counter()
    ctx.failures += [f"{st.engine.name}: {f}" for f in st.engine.probe().audit(truth_rows)]
    ctx.overhead_s += time.perf_counter() - t0


def expected_results(ctx: RunContext, truth: pa.Table, params: QueryParams) -> dict[str, Any]:
    """Each suite query's ground-truth answer at a checkpoint (pyarrow), computed once and checked
    against every engine's result there."""
    return {name: SUITE[name].reference(truth, params) for name in ctx.scenario.queries.suite}


def run_checkpoint(ctx: RunContext, st: EngineState, checkpoint: int, truth: pa.Table, params: QueryParams,
                   expected: Mapping[str, Any] | None = None, warm_runs: int | None = None) -> None:
    """Audit the engine's table and run the query suite on its snapshot, each result verified against
    ``expected`` (:func:`expected_results`; computed here when not given): one cold run and ``warm_runs``
    warm runs per query (None: the engine's)."""
    engine = st.engine
    if expected is None:
        expected = expected_results(ctx, truth, params)
    with ctx.label("harness", f"checkpoint {checkpoint}"):
        audit(ctx, st, truth.num_rows)
    t0 = time.perf_counter()
    probe = engine.probe()
    with ctx.label("query_planning", f"checkpoint {checkpoint}"):
        snap, overlay = probe.query_snapshot()
    live = {s.path: s for s in snap}
    with ctx.label("harness", f"checkpoint {checkpoint}"):
        live_logs = {g.path for g in probe.live_logs()} if st.repeat == 0 else set()
        for b in probe.physical_files() if st.repeat == 0 else ():
            s = live.get(b.path)
            ctx.writer.add("files", engine=engine.name, checkpoint=checkpoint, partition=b.partition,
                           file_id=b.file_id, path=b.path, size_bytes=b.size, rows=s.num_rows if s else None,
                           live=s is not None or b.path in live_logs)
    ctx.overhead_s += time.perf_counter() - t0
    qs = ctx.scenario.queries
    for name in qs.suite:
        query = SUITE[name]
        if warm_runs is None:
            warm_runs = qs.warm_runs if st.warm_runs is None else st.warm_runs
        for run in range(warm_runs + 1):
            with ctx.label("query_scan", f"{name}@{checkpoint}") as tally:
                res = run_query(ctx.spark, probe.storage, snap, query, params, count_row_groups_too=False,
                                overlay=overlay)
            if run == 0 and res.error is None:
                with ctx.label("harness", f"{name}@{checkpoint}"):  # footers read for the results, not by the query
                    add_row_groups(res, probe.storage, query, params)
            verified = res.error is None and (not qs.verify or res.result == expected[name])
            if res.error is None and qs.verify and res.result != expected[name]:
                ctx.failures.append(f"{engine.name}: query {name} at checkpoint {checkpoint} returned "
                                    f"{str(res.result)[:200]}, expected {str(expected[name])[:200]}")
            if res.error is not None:
                ctx.failures.append(f"{engine.name}: query {name} failed: {res.error}")
            ctx.writer.add("queries", engine=engine.name, repeat=st.repeat, checkpoint=checkpoint, query=name, run=run,
                           latency_s=res.latency_s, files_total=res.files_total, files_scanned=res.files_scanned,
                           files_pruned=res.files_pruned, row_groups_total=res.row_groups_total if run == 0 else None,
                           row_groups_scanned=res.row_groups_scanned if run == 0 else None,
                           rows_scanned=res.rows_scanned if run == 0 else None, result_rows=res.result_rows,
                           verified=verified, error=res.error, planning_s=res.planning_s,
                           execution_s=res.execution_s, log_files_merged=res.log_files_merged,
                           log_bytes_merged=res.log_bytes_merged, ro_latency_s=res.ro_latency_s, **run_columns(tally))


def warm_runs_of(warm_runs: int, engine_repeat: int | None, repeats: int) -> int:
    """Warm runs per query for an engine that runs ``engine_repeat`` of the run's ``repeats``
    repetitions (None: all): the scenario's ``warm_runs``, times as many as it runs fewer, so that a
    peer run once has as many warm samples per query as a design run every time."""
    runs = min(engine_repeat or repeats, repeats)
    return warm_runs * math.ceil(repeats / runs)


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


def _start_async(ctx: RunContext, st: EngineState) -> AsyncService:
    """``maintenance.mode: async``: the one async service loop, maintaining ``st``'s engine beside
    the batch loop; a failure is recorded and the run goes on."""
    gate = ctx.scenario.maintenance.async_max_commits

    def work() -> None:
        ingests, runs = st.ingests, st.maintenance_runs
        if gate is not None and _ingests_since_maintenance(st) < gate:
            return  # Hudi's async.max.commits: no plan until that many commits followed the last one
        with ctx.timed(f"async_maintenance/{st.engine.name}"):
            maintain(ctx, st, -1, None, "async")
        if st.maintenance_runs > runs:
            st.ingests_at_maintenance = ingests

    def failed(exc: Exception) -> None:
        ctx.failures.append(f"{st.engine.name}: async maintenance failed: {type(exc).__name__}: {exc}")

    return AsyncService(work, f"async-{st.engine.name}", ctx.scenario.maintenance.async_interval_s, failed)


def _ingests_since_maintenance(st: EngineState) -> int:
    """Ingest commits after the newest maintenance plan, as Hudi's async gate counts them: by instant
    on the table's timeline. A count taken before the plan is scheduled would miss an ingest that
    completes in between, which then precedes the plan and yet counts toward the next one."""
    table = getattr(st.engine, "table", None)
    if not isinstance(table, HudiTable):  # no timeline of ours (delta-rs): the rounds' own count
        return st.ingests - st.ingests_at_maintenance
    plans = [i.timestamp for i in table.refresh().instants if i.action in PLAN_ACTIONS]
    last = max(plans, default="")
    return sum(1 for t in st.ingest_instants if t > last)


class _RunSteps:
    """The runner's part of the batch loop (:func:`bench.batch_loop.run_batches`): one generated batch
    into every engine, maintenance recorded, queries at checkpoints."""

    def __init__(self, ctx: RunContext, engines: list[EngineState], bar: ProgressBar,
                 reference: EngineState | None, repeats: int, keep_tables: bool = True) -> None:
        self.ctx, self.engines, self.bar = ctx, engines, bar
        self.reference, self.repeats, self.keep_tables = reference, repeats, keep_tables
        self.spec = ctx.scenario.workload
        self.truth_parts: list[pa.Table] = []  # each batch's inserted rows
        self.update_parts: list[pa.Table] = []  # each batch's corrections of earlier keys (update_fraction)
        self.truth: pa.Table | None = None  # the rows the tables must hold now, corrections applied
        self.df: Any = None
        self.updates_df: Any = None  # this batch's corrections (None: none)
        self.final = False
        self.last_checkpoint: tuple[int, QueryParams, dict[str, Any]] | None = None  # for the query rounds
        self.ruled_out: set[str] = set()  # candidates a required gate ruled out before the rounds
        # the cache is filled before the clocks only when an engine reads a small batch through Spark;
        # the others read the driver's rows, and a fill nobody reads cost ~0.1 s per batch
        self.fill_cache = any(st.engine.reads_batch_in_spark for st in engines)
        # the rows so far, written as the run goes (a run cut off keeps what it measured)
        self.partial = PartialResults(ctx.writer, ctx.scenario, {st.engine.name: st.batches for st in engines})

    def show(self, st: EngineState, b: int, phase: str) -> None:
        """The progress line: scenario, batch, engine, repetition (when there are several) and phase."""
        rep = f" (repetition {st.repeat + 1}/{self.repeats})" if self.repeats > 1 else ""
        self.bar.describe(f"{self.ctx.scenario.name} · batch {b + 1}/{self.ctx.scenario.batches_run} · "
                          f"{st.engine.name}{rep} · {phase}")

    def begin_batch(self, b: int) -> None:
        ctx = self.ctx
        ctx.step = f"batch {b}, generation"
        c0 = ctx.cpu.seconds()
        t0 = time.perf_counter()
        table = batch_table(self.spec, b)
        self.truth_parts.append(table)
        updates = corrections_of(self.spec, b)
        self.update_parts.append(updates)
        inserted = table if self.truth is None else pa.concat_tables([self.truth, table])
        self.truth = apply_corrections(inserted, self.spec, b)
        # generated before any clock starts: no engine's ingest time includes generation or the cache
        # fill (none when every engine reads the driver's rows)
        self.df = batch_frame(ctx.spark, self.spec, b, table, self.fill_cache)
        self.updates_df = rows_frame(ctx.spark, self.spec, updates, self.fill_cache) if updates.num_rows else None
        ctx.generation_s.append(time.perf_counter() - t0)
        ctx.add_cpu("generation", c0)

    def ingest(self, st: EngineState, b: int) -> None:
        ctx = self.ctx
        self.show(st, b, "ingest")
        ctx.step = f"engine {st.engine.name}, batch {b}, ingest"
        res = self._commit(st, b, "ingest", f"batch {b}", st.engine.ingest, self.df, st.ingest_latencies)
        if st is self.reference:
            ctx.batch_bytes[b] = res.bytes_written
        self._after_commit(st, b)
        if self.updates_df is not None:
            self.upsert(st, b)

    def upsert(self, st: EngineState, b: int) -> None:
        """Batch ``b``'s corrections of earlier keys as one upsert commit (kind ``upsert``), timed and
        recorded like an ingest, then the engine's after-commit work."""
        ctx = self.ctx
        ctx.step = f"engine {st.engine.name}, batch {b}, upsert of {self.update_parts[b].num_rows} corrections"
        self._commit(st, b, "upsert", f"batch {b} upsert", st.engine.upsert, self.updates_df, st.upsert_latencies)
        self._after_commit(st, b)

    def _commit(self, st: EngineState, b: int, kind: str, context: str, write: Any, df: Any,
                latencies: list[float]) -> Any:
        """One timed write of batch ``b`` (``kind`` ingest or upsert): its CPU phase ``<kind>/<engine>``,
        its latency, and its instant's row."""
        ctx = self.ctx
        c0 = ctx.cpu.seconds()
        t0 = time.perf_counter()
        with ctx.label("ingest", context), ingest_phases() as phases:
            res = write(df)
        dur = time.perf_counter() - t0
        ctx.add_cpu(f"{kind}/{st.engine.name}", c0)
        latencies.append(dur)
        st.ingests += 1
        st.ingest_instants.append(res.instant)
        with ctx.label("harness", f"batch {b}"):
            record_instant(ctx, st, b, kind, res.instant, res.action, res.operation, dur, res.stats,
                           sum(len(v) for v in res.replaced.values()), phases)
        return res

    def _after_commit(self, st: EngineState, b: int) -> None:
        ctx = self.ctx
        ctx.step = f"engine {st.engine.name}, batch {b}, after-commit maintenance"
        with ctx.timed(f"maintenance/{st.engine.name}"):
            with ctx.label("cleaner", f"batch {b}"):
                after = st.engine.after_commit()
            for m in after:
                record_maintenance(ctx, st, b, m, "engine")

    def maintain(self, st: EngineState, b: int, step: str) -> None:
        ctx = self.ctx
        mode = ctx.scenario.maintenance.mode
        ctx.step = f"engine {st.engine.name}, batch {b}, {'final' if self.final else mode} maintenance"
        self.show(st, b, "maintenance")
        with ctx.timed(f"maintenance/{st.engine.name}"):
            maintain(ctx, st, b, self.truth, mode, step)

    def end_batch(self, b: int) -> None:
        self.df.unpersist()
        if self.updates_df is not None:
            self.updates_df.unpersist()
        self.bar.advance()
        self.partial.tick(b)

    def before_final(self, b: int) -> None:
        self.final = True
        for st in self.engines:
            if st.service is not None:
                st.service.close()

    def checkpoint(self, b: int) -> None:
        ctx = self.ctx
        truth = self.truth
        assert truth is not None
        params = choose_params(truth, self.spec.partition_column, ctx.scenario.queries.service_window_hours)
        with ctx.timed("expected_results"):  # the same answers for every engine: computed once
            expected = expected_results(ctx, truth, params)
        if b == ctx.scenario.batches_run - 1:
            self.last_checkpoint = (b, params, expected)
        qs = ctx.scenario.queries
        # With the review's interleaved rounds (T17) the rounds are the final checkpoint's warm runs of the
        # engines in them: each query runs here once, cold, on the first repetition's table, and a later
        # repetition's table, whose layout must equal the first's (repeat_mismatches), is audited (the
        # ledger prices every repetition's final query seconds from the rounds). An earlier checkpoint
        # queries every repetition, its warm runs the ledger's samples of the query seconds there, except
        # under ``queries.checkpoint_rounds``: the first repetition's tables then take that many rounds
        # after their cold runs (with one repetition, the ledger's samples: runresults.review.ledger).
        review_rounds = rounds_run(ctx.scenario)
        kinds = {e.name: e.kind for e in ctx.scenario.engines}
        final = b == ctx.scenario.batches_run - 1
        rounds_here = review_rounds and (final or qs.checkpoint_rounds > 0)
        if rounds_here:
            self.ruled_out = ruled_out_before_rounds(ctx)
        in_them: list[EngineState] = []  # the engines whose warm runs here are the rounds
        for st in self.engines:
            if b not in checkpoints_of(st.batches, qs.checkpoint_every):
                continue
            self.show(st, b, "checkpoint queries")
            ctx.step = f"engine {st.engine.name}, batch {b}, queries"
            # an engine with a stated prefix takes an earlier checkpoint's rounds (its own last one
            # included, so a scale run compares every layout on the same batches), never the final's
            rounds_for = rounds_here and (st.batches == ctx.scenario.batches_run or not final) and in_rounds(
                ctx.scenario, kinds[st.engine.name])
            with ctx.timed(f"queries/{st.engine.name}"):
                if rounds_for and final and st.repeat > 0:
                    audit(ctx, st, truth.num_rows)
                else:
                    cold_only = rounds_for and st.repeat == 0 and st.engine.name not in self.ruled_out
                    run_checkpoint(ctx, st, b, truth, params, expected, warm_runs=0 if cold_only else None)
                    if cold_only and not final:
                        in_them.append(st)
        if in_them:
            ctx.step = f"the interleaved query rounds at checkpoint {b}"
            self.bar.describe(f"{ctx.scenario.name} · checkpoint {b + 1} · interleaved query rounds")
            checkpoint_query_rounds(ctx, [st.engine for st in in_them], (b, params, expected), qs.checkpoint_rounds,
                                    "checkpoint_rounds", every_engine=True)
        for st in self.engines:
            if b == st.batches - 1 < ctx.scenario.batches_run - 1 and not self.keep_tables and not st.removed:
                remove_table(st)  # a prefix done: its figures are taken, its disk is given back
        self.partial.write(b)


def remove_table(st: EngineState) -> None:
    """Close ``st``'s engine and remove its table from local disk (its figures are in the results)."""
    st.engine.close()
    st.removed = True
    if st.table_dir is not None:
        shutil.rmtree(st.table_dir, ignore_errors=True)


def run_scenario(scenario: Scenario, out: str | Path | None = None, master: str | None = None,
                 keep_tables: bool | None = None, progress: bool = True, run_id: str | None = None,
                 scenario_path: str | Path | None = None, repeat: int | None = None) -> Path:
    """Run a scenario end to end and return its results folder (``scenario_path``: the YAML it was
    loaded from, recorded in ``run.json``; ``repeat``: repetitions of the timed parts, default the
    scenario's ``repeat``; ``keep_tables``: default the scenario's, and without it each engine's
    tables are removed once its figures are taken). A scenario whose tables would not fit the
    output folder's free disk is refused before Spark starts (:mod:`bench.disk_estimate`)."""
    from bench.disk_estimate import check_disk

    repeats = scenario.repeat if repeat is None else repeat
    if not isinstance(repeats, int) or repeats < 1:
        raise ScenarioError(f"repeat must be a whole number of at least 1, got {repeats!r}")
    keep_tables = scenario.keep_tables if keep_tables is None else keep_tables
    check_disk(scenario, out, repeats)
    if (chosen := resolve_master(master, scenario.spark.master)) is not None:
        check_master_syntax(chosen)  # a bad master leaves no results folder behind
    wall0 = time.perf_counter()
    run_dir = Path(out or scenario.output) / (run_id or new_run_id(scenario.name))
    writer = ResultsWriter(run_dir)
    with run_store(scenario.store, run_dir.name) as store:
        return _run(scenario, run_dir, writer, store, master, keep_tables, progress, scenario_path, repeats, wall0)


def _run(scenario: Scenario, run_dir: Path, writer: ResultsWriter, store: Any, master: str | None, keep_tables: bool,
         progress: bool, scenario_path: str | Path | None, repeats: int, wall0: float) -> Path:
    spec = scenario.workload
    cpu = TreeCpu()
    c_session = cpu.seconds()
    t_session = time.perf_counter()
    # Apache Hudi's bundle also when no engine is Apache Hudi's: it is a reader of the gates (bench.gates)
    # Apache Hudi reads the gates' tables when the run measures them; a session spark-submit launched keeps
    # the packages it was given (the gates then read without Apache Hudi, and say so)
    gates_conf = (hudi_conf() if scenario.review.measure and not launched_by_spark_submit()
                  and needs_apache_hudi(e.kind for e in scenario.engines) else {})
    conf = merge_conf(spark_conf_for(scenario), gates_conf, store.spark_conf() if store is not None else {},
                      scenario.spark.conf)
    spark = get_spark(resolve_master(master, scenario.spark.master), conf=conf, log_path=run_dir / "spark.log")
    reclaim()  # Ctrl-C is ours to name, not PySpark's to forward to the JVM it also stops
    warm_up(spark)  # Python worker start-up belongs to no engine's timings
    ctx = RunContext(scenario, run_dir, writer, spark, store=store, cpu=cpu)
    ctx.profile["spark_start"] = time.perf_counter() - t_session
    cpu.rescan()  # the JVM and its Python daemon are up now
    ctx.add_cpu("spark_start", c_session)
    engines: list[EngineState] = []  # repetition 0's engines, then repetition 1's, ...: designs alternate
    with steps_named(ctx):  # an engine's config error is one message naming the engine, like a step's
        for r in range(repeats):
            for es in (e for e in scenario.engines if e.repeat is None or r < e.repeat):
                ctx.step = f"engine {es.name}, set-up"
                table_path = (store.table_uri(_table_dir(Path(""), es.name, r).as_posix()) if store is not None
                              else str(_table_dir(run_dir, es.name, r).resolve()))
                with ctx.label("setup"):
                    engines.append(EngineState(build_engine(es, scenario, table_path), repeat=r,
                                               warm_runs=warm_runs_of(scenario.queries.warm_runs, es.repeat, repeats),
                                               batches=scenario.batches_of(es.name),
                                               table_dir=None if store is not None else _table_dir(run_dir, es.name, r)))
    n = scenario.batches_run  # the workload's batches, or the first of them (run --batches)
    # the batches' bytes from an engine that writes each batch once and takes every batch
    reference_engine = next((e for e in engines if e.repeat == 0 and e.engine.writes_batches_once
                             and e.batches == n), None)
    schedule = MaintenanceSchedule.of(scenario)
    if schedule.runs_async:
        for st in engines:
            st.service = _start_async(ctx, st)
    checkpoints = set().union(*(checkpoints_of(st.batches, scenario.queries.checkpoint_every) for st in engines))
    load = LoadSampler([st.table_dir for st in engines if st.table_dir is not None])
    # engine, repetition, batch and phase on a terminal's stderr; silent on a pipe and under tests
    bar = ProgressBar(scenario.name, total=n, unit="batches", enabled=None if progress else False)
    with bar, steps_named(ctx), load:
        steps = _RunSteps(ctx, engines, bar, reference_engine, repeats, keep_tables)
        run_batches(steps, engines, schedule, n, checkpoints=checkpoints, prefix=lambda st: st.batches)
        truth_parts = steps.truth_parts
        # T17's gates before its rounds: they only read the tables the batch loop left, and a candidate a
        # required gate rules out shows no figure beside the gates table, so the rounds skip it
        if scenario.review.measure:  # the default and small scenarios
            ctx.step = "gates"
            bar.describe(f"{scenario.name} · gates")
            measure_gates(ctx, git_info(str(Path(__file__).resolve().parents[1])).get("sha"))
            _history_gates(ctx, engines, truth_parts, steps.update_parts)
        if rounds_run(scenario):  # T17's interleaved rounds
            ctx.step = "the final checkpoint's interleaved query rounds"
            bar.describe(f"{scenario.name} · interleaved query rounds")
            final_query_rounds(ctx, [st.engine for st in engines if st.repeat == 0 and st.batches == n],
                               steps.last_checkpoint, every_engine=scenario.queries.interleaved,
                               skip=steps.ruled_out | ruled_out_by_gates(ctx))
    with ctx.timed("finish"):  # engines closed, batch bytes measured when no engine wrote them once, WA derived
        for st in engines:
            if st.service is not None:
                st.service.close()
            if not st.removed:
                st.engine.close()
        if reference_engine is None:
            ctx.batch_bytes.update(_measure_batch_bytes(ctx, spec))
        derive_cumulative(writer, ctx.batch_bytes, frozenset(st.engine.name for st in engines if st.engine.own_batch_bytes))
        if not schedule.runs_async:  # async maintenance races the batch loop: its layout is not reproducible
            ctx.failures += repeat_mismatches(writer)
        if store is not None:
            for row in store.request_rows():
                writer.add("requests", **row)
    wall = time.perf_counter() - wall0
    total_rows = steps.truth.num_rows if steps.truth is not None else 0
    run = run_record(
        run_id=run_dir.name, scenario=scenario, simulated=False, wall_time_s=wall, spark_master=spark.sparkContext.master,
        overhead_s=ctx.overhead_s, failures=ctx.failures, git_cwd=str(Path(__file__).resolve().parents[1]),
        versions={**package_versions(), **_jvm_packages(spark)},
        engines={es.name: {"kind": es.kind, "config": es.config,
                           "table_path": (store.public_uri(_table_dir(Path(""), es.name, 0).as_posix()) if store
                                          else str(_table_dir(run_dir, es.name, 0).resolve()))}
                 for es in scenario.engines},
        store=store.describe() if store is not None else {"kind": "local"},
        scenario_path=str(scenario_path) if scenario_path is not None else None,
        spark_driver_host=spark.sparkContext.getConf().get("spark.driver.host"),
        scenario_fingerprint=fingerprint(scenario), repeat=repeats,
        profile=run_profile(ctx, engines, wall),
        **_generation_figures(ctx.generation_s, [d for st in engines for d in st.ingest_latencies]),
        ground_truth={"rows": total_rows, "batches": n, "updates": sum(u.num_rows for u in steps.update_parts),
                      "batch_bytes_source": reference_engine.engine.name if reference_engine else "scratch write"},
        tables_kept=keep_tables, load=load.summary(),
        scale_wa=prefix_projections(scenario, writer.rows["commits"]))
    writer.write_run(run)
    c0, t0 = cpu.seconds(), time.perf_counter()
    store_review(run_dir)  # the answer as data, from the folder just written (its seconds: review.elapsed_s)
    add_to_profile(run_dir, "review", time.perf_counter() - t0, _since(cpu, c0))
    if scenario.review.project:  # the verdict at the user's scale (its seconds: review.choice.target.elapsed_s)
        c0, t0 = cpu.seconds(), time.perf_counter()
        project_run(run_dir, scenario)
        add_to_profile(run_dir, "projection", time.perf_counter() - t0, _since(cpu, c0))
    if not keep_tables:
        shutil.rmtree(run_dir / "tables", ignore_errors=True)
        if store is not None and hasattr(store, "remove_tables"):  # the user's own store keeps them otherwise
            store.remove_tables()
    return run_dir


def _since(cpu: TreeCpu, c0: float | None) -> float | None:
    now = cpu.seconds()
    return now - c0 if now is not None and c0 is not None else None


def add_to_profile(run_dir: str | Path, phase: str, wall_s: float, cpu_s: float | None) -> None:
    """Record a phase that runs after ``run.json`` is written (the review, the projection, the report)
    in its profile's ``after_run_s`` and ``after_run_cpu_s``."""
    path = Path(run_dir) / "run.json"
    run = json.loads(path.read_text())
    profile = run.setdefault("profile", {})
    profile.setdefault("after_run_s", {})[phase] = round(wall_s, 3)
    if cpu_s is not None:
        profile.setdefault("after_run_cpu_s", {})[phase] = round(cpu_s, 3)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(run, indent=2, default=str))
    tmp.replace(path)


def _history_gates(ctx: RunContext, engines: list[EngineState], truth_parts: list[pa.Table],
                   update_parts: list[pa.Table]) -> None:
    """The incremental and time-travel gates (:mod:`bench.gates.history_gates`) on the first
    repetition's tables, as the run left them (``update_parts``: each batch's corrections, whose
    upsert commits give the rows they update a new commit time); a gate that cannot run is a run failure."""
    from bench.gates.history_gates import history_gate_rows

    ctx.step = "gates: incremental, time travel"
    first = [st.engine for st in engines if st.repeat == 0]
    try:
        rows = history_gate_rows(first, ctx.writer.rows["commits"], truth_parts,
                                 ctx.scenario.sizing.cleaner_commits_retained, ctx.spark, ctx.timed,
                                 updates=update_parts)
    except Exception as exc:  # noqa: BLE001 - recorded as a failure of the run, traceback in the log
        log = ctx.run_dir / "error.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"gates failed\n\n{traceback.format_exc()}")
        ctx.failures.append(f"gates (incremental, time travel) failed: {type(exc).__name__}: {exc} (traceback in {log})")
        return
    for row in rows:
        ctx.writer.add("gates", **row)


def _jvm_packages(spark: Any) -> dict[str, str]:
    """The JVM packages the session loaded (Apache Hudi's bundle), as group:artifact -> version."""
    packages = spark.sparkContext.getConf().get("spark.jars.packages", "") or ""
    return {c.rsplit(":", 1)[0]: c.rsplit(":", 1)[1] for c in packages.split(",") if c.count(":") == 2}


def run_profile(ctx: RunContext, engines: list[EngineState], wall: float) -> dict[str, Any]:
    """Where the run's wall time went: seconds per phase (``phase`` or ``phase/engine``), in the
    order they run, and what no phase accounts for. Async maintenance overlaps the batch loop, so
    it is reported beside the phases and not summed with them. ``routes``: how many write jobs ran in
    the driver or as Spark tasks, and why (:func:`engines.files.gate.choose_route`)."""
    phases = {"spark_start": ctx.profile.get("spark_start", 0.0), "generation": sum(ctx.generation_s)}
    for st in engines:  # every repetition of an engine adds to its phases
        name = st.engine.name
        phases[f"ingest/{name}"] = phases.get(f"ingest/{name}", 0.0) + sum(st.ingest_latencies)
        if st.upsert_latencies:  # the corrections' upsert commits (workload.update_fraction)
            phases[f"upsert/{name}"] = phases.get(f"upsert/{name}", 0.0) + sum(st.upsert_latencies)
        phases[f"maintenance/{name}"] = ctx.profile.get(f"maintenance/{name}", 0.0)
        phases[f"queries/{name}"] = ctx.profile.get(f"queries/{name}", 0.0)
    phases["expected_results"] = ctx.profile.get("expected_results", 0.0)
    phases.update({k: v for k, v in ctx.profile.items() if k in ("checkpoint_rounds", "query_rounds") or k.startswith("gates/")})
    phases["finish"] = ctx.profile.get("finish", 0.0)
    overlapping = {k: v for k, v in ctx.profile.items() if k.startswith("async_maintenance/")}
    # the route each write job took (engines.files.gate), counted over the run per engine (its tables'
    # jobs; the gates' and the harness's scratch tables under "harness"): engine -> "job: where (reason)" -> jobs
    owners = {t.base_uri: st.engine.name for st in engines if (t := getattr(st.engine, "table", None)) is not None}
    routes = routes_by_owner(ctx.routes_at_start, owners)
    total_cpu = ctx.cpu.seconds()
    cpu = {k: round(ctx.cpu_profile[k], 3) for k in phases if k in ctx.cpu_profile}
    return {"phases_s": phases, "overlapping_s": overlapping,
            "unaccounted_s": wall - sum(phases.values()), "routes": routes,
            # the process tree's CPU seconds (this process, Spark's JVM, its Python workers) per phase and
            # in all: on a shared machine they estimate a phase's idle time where wall time cannot
            "cpu_s": cpu, "cpu_total_s": round(total_cpu, 3) if total_cpu is not None else None}


def _generation_figures(generation: list[float], ingests: list[float]) -> dict[str, float | None]:
    """Time spent generating batches (once per batch, for every engine), and the median batch's
    generation over the median ingest of one batch by one engine (T2's goal: at most 0.25)."""
    med = statistics.median(generation) if generation else None
    ingest = statistics.median(ingests) if ingests else None
    return {"generation_s": sum(generation), "generation_median_s": med,
            "generation_share_of_ingest": med / ingest if med is not None and ingest else None}


def _measure_batch_bytes(ctx: RunContext, spec: Any) -> dict[int, int]:
    """Bytes of each batch written once as new file groups, when no engine wrote it that way."""
    from bench.engine_factory import engine_bloom
    from engines.spark.insert import insert_new_file_groups
    from engines.table.table import HudiTable, TableConfig, logical_clock

    scratch = ctx.run_dir / "tables" / "_batch_bytes"
    table = HudiTable.create(str(scratch.resolve()), TableConfig("batch_bytes", spec.partition_column, "trace_id"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    table.bloom = engine_bloom(ctx.scenario.engines[0], ctx.scenario)  # as the simulator's reference write
    out = {}
    for b in range(ctx.scenario.batches_run):
        out[b] = insert_new_file_groups(table, batch_df(ctx.spark, spec, b)).bytes_written
    shutil.rmtree(scratch, ignore_errors=True)
    return out

