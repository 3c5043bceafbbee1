"""``layoutbench crashtest``: kill the writer (SIGKILL) at every injection point of every engine,
recover, finish the scenario, and count what was lost or duplicated.

For each (engine, point) a child process (:mod:`bench.crash_child`) runs the scenario's batches for
that engine alone with ``LAYOUTBENCH_CRASH_AT=<point>`` and dies there. For a ``rollback.*`` point
the child is first killed at the engine's characteristic mid-write point, then a second, Spark-free
child recovering the table is killed inside the rollback. The parent then opens the table on its
own warm Spark session — which rolls back failed instants, finishes interrupted rollbacks and
releases the stale lock — resumes from the first batch without a completed ingest commit, runs to
the end, and checks the snapshot against the ground truth: keys missing (rows lost), rows beyond
distinct keys (duplicated), a Spark query per partition (failures = errors, plus whether its
counts match the truth), and hudi-rs reading the same table.

Speed (issue T7: >= 25 points in <= 10 min): recovery runs in-process (one JVM start per point,
not two); a reference run per engine (no crash, in-process) saves a copy of the table before each
step and records which step reaches which point, so a child starts from the copy taken just
before the step it dies in rather than from batch 0 (the n-th hit is counted from there); up to
``parallel`` children run at once while the parent finishes earlier points; and children start a
lean driver JVM (:mod:`bench.child_jvm`). The reference run's own result is checked too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.crash_child import run_to_end
from bench.progress import ProgressBar
from bench.scenario import Scenario, load_scenario
from engines.kinds import kind_of
from engines.table import faults
from engines.table.table import HudiTable

ARCHIVE_MIN_JOBS = 8  # below this, building the class-data archive costs more than it saves


@dataclass(frozen=True)
class CrashJob:
    engine: str
    point: str
    first_crash: str | None = None  # rollback points: the write crash whose rollback is killed

    @property
    def slug(self) -> str:
        return f"{self.engine}__{self.point}".replace(".", "_").replace(":", "_")


@dataclass
class CrashOutcome:
    engine: str
    point: str
    crashed: bool
    recovered: bool
    rows_lost: int
    rows_duplicated: int
    query_failures: int
    hudi_rs_agrees: bool
    details: dict[str, Any] = field(default_factory=dict)


def _child(args: list[str], crash_at: str | None, timeout: float = 600.0) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    if crash_at:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "bench.crash_child", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


@dataclass
class Prefixes:
    """Copies of one engine's table before each step of a crash-free run, and the points each step hit."""

    root: Path
    labels: list[str] = field(default_factory=list)
    hits_before: list[dict[str, int]] = field(default_factory=list)  # cumulative hits at each boundary

    def start_for(self, point: str) -> tuple[Path | None, str, str]:
        """(copy to start from or None, the crash target counted from there, the step label)."""
        name, _, nth = point.partition(":")
        n = int(nth) if nth.isdigit() else 1
        if self.hits_before and self.hits_before[0].get(name, 0) >= n:
            return None, point, "table setup"  # reached before the first step: start from nothing
        for i in range(len(self.labels) - 1):
            if self.hits_before[i + 1].get(name, 0) >= n:
                left = n - self.hits_before[i].get(name, 0)
                return self.root / str(i), name if left == 1 else f"{name}:{left}", self.labels[i]
        return None, point, "never reached"


def reference_run(scenario: Scenario, engine: str, root: Path) -> Prefixes:
    """Run ``engine`` without a crash, copying the table before every step (see module docstring)."""
    from engines.table.lock import LOCK_FILE

    hits: dict[str, int] = {}
    remove = faults.observe(lambda name: hits.__setitem__(name, hits.get(name, 0) + 1))
    prefixes = Prefixes(root)
    table_path = root / "table"

    def boundary(label: str) -> None:
        dest = root / str(len(prefixes.labels))
        if table_path.exists():
            shutil.copytree(table_path, dest, ignore=lambda d, names: [n for n in names if n == Path(LOCK_FILE).name])
        prefixes.labels.append(label)
        prefixes.hits_before.append(dict(hits))

    try:
        run_to_end(scenario, engine, str(table_path), on_boundary=boundary)
    finally:
        remove()
    return prefixes


def crash_phase(job: CrashJob, scenario_path: str, table_path: str, master: str, java_opts: str,
                prefixes: Prefixes | None = None) -> dict[str, Any]:
    """Run the child(ren) that die at ``job``'s point; returns their exit codes and timings."""
    t0 = time.perf_counter()
    target = job.first_crash or job.point
    out: dict[str, Any] = {}
    if prefixes is not None:
        start, target, out["started_before"] = prefixes.start_for(target)
        if start is not None and start.exists():
            shutil.copytree(start, table_path)
    first = _child(["run", scenario_path, job.engine, table_path, master, java_opts], target)
    out["first_rc"] = first.returncode
    crashed = first.returncode == -9
    if job.first_crash is not None:
        second = _child(["recover", table_path], job.point)
        out["rollback_rc"] = second.returncode
        crashed = crashed and second.returncode == -9
    elif first.returncode not in (0, -9):
        out["child_stderr"] = first.stderr[-1500:]
    out["crashed"] = crashed
    out["crash_s"] = round(time.perf_counter() - t0, 2)
    return out


def snapshot_keys(table: HudiTable) -> list[str]:
    if table.merge_on_read:  # every slice's logs merged over its base
        from engines.table.mor import snapshot_read

        return snapshot_read(table).rows.column("_hoodie_record_key").to_pylist()
    keys: list[str] = []
    for s in table.view().snapshot():
        keys += pq.read_table(table.storage.abs(s.path), columns=["_hoodie_record_key"]).column(0).to_pylist()
    return keys


def hudi_rs_keys(base: str) -> list[str] | None:
    try:
        import hudi

        batches = hudi.HudiTableBuilder.from_base_uri(base).build().read()
    except BaseException:  # noqa: BLE001 - hudi-rs panics are BaseException; disagreement is the outcome
        return None
    if not batches:
        return []
    return pa.Table.from_batches(batches).column("_hoodie_record_key").to_pylist()


@dataclass(frozen=True)
class Truth:
    keys: frozenset[str]
    rows_per_partition: dict[str, int]


def scenario_truth(scenario: Scenario) -> Truth:
    from workloads.generator import batch_table

    tbl = pa.concat_tables([batch_table(scenario.workload, b) for b in range(scenario.workload.num_batches)])
    part = scenario.workload.partition_column
    counts = tbl.group_by(part).aggregate([(part, "count")])
    return Truth(frozenset(tbl.column("trace_id").to_pylist()),
                 dict(zip(counts.column(part).to_pylist(), counts.column(f"{part}_count").to_pylist(), strict=True)))


def query_check(table: HudiTable, partition_column: str, truth: Truth) -> dict[str, Any]:
    """Count rows per partition with Spark over the snapshot (a MERGE_ON_READ table: over our merged
    read of it, which Spark's base-file reader is not); an exception is a query failure."""
    from engines.spark.reader import read_snapshot
    from engines.spark.session import get_spark

    if table.merge_on_read:
        from engines.table.mor import snapshot_read

        try:
            rows = snapshot_read(table).rows
            counts = rows.group_by(partition_column).aggregate([(partition_column, "count")])
            got = dict(zip(counts.column(0).to_pylist(), counts.column(1).to_pylist(), strict=True))
        except Exception as exc:  # noqa: BLE001 - any error a reader would see is the measured outcome
            return {"query_failures": 1, "query_error": str(exc)[:500]}
        return {"query_failures": 0, "query_matches_truth": got == truth.rows_per_partition}
    try:
        df = read_snapshot(get_spark(), table.storage, table.view().snapshot()).df
        got = {r[0]: r[1] for r in df.groupBy(partition_column).count().collect()}
    except Exception as exc:  # noqa: BLE001 - any error a reader would see is the measured outcome
        return {"query_failures": 1, "query_error": str(exc)[:500]}
    return {"query_failures": 0, "query_matches_truth": got == truth.rows_per_partition}


def finish_phase(job: CrashJob, scenario: Scenario, table_path: str, truth: Truth) -> dict[str, Any]:
    """Recover and finish in this process, then verify against the ground truth."""
    t0 = time.perf_counter()
    try:
        resumed_at = run_to_end(scenario, job.engine, table_path)
    except Exception as exc:  # noqa: BLE001 - an unrecoverable table is the outcome being measured
        return {"recovered": False, "recover_error": f"{type(exc).__name__}: {exc}"[:1500]}
    table = HudiTable.open(table_path)
    keys = snapshot_keys(table)
    got = set(keys)
    rs = hudi_rs_keys(table_path)
    out: dict[str, Any] = {
        "recovered": True, "resumed_at_batch": resumed_at, "rows": len(keys),
        "rows_lost": len(truth.keys - got), "rows_duplicated": len(keys) - len(got),
        "unexpected": len(got - truth.keys), "hudi_rs_agrees": rs is not None and sorted(rs) == sorted(keys),
    }
    out.update(query_check(table, scenario.workload.partition_column, truth))
    out["finish_s"] = round(time.perf_counter() - t0, 2)
    return out


def crash_jobs(scenario: Scenario, reduced: bool = False) -> list[CrashJob]:
    """Every (engine, point) of the scenario's engines, from the engines' own step lists."""
    from bench.engine_points import ROLLBACK, points_for_kind, reduced_points, rollback_trigger

    jobs: list[CrashJob] = []
    for e in scenario.engines:
        if not kind_of(e.kind).hudi_rs_reads:  # recovery rolls back a Hudi timeline
            continue
        pick = reduced_points if reduced else points_for_kind
        jobs += [CrashJob(e.name, p) for p in pick(e.kind, e.config)]
        if not reduced:
            jobs += [CrashJob(e.name, p, rollback_trigger(e.kind)) for p in ROLLBACK]
    return jobs


def run_crashtest(scenario_path: str, out_dir: str | Path, engines: list[str] | None = None,
                  points: list[str] | None = None, master: str = "local[1]", reduced: bool = False,
                  parallel: int = 2, use_prefixes: bool = True) -> Path:
    """Every selected (engine, point) job; writes a results folder with the ``crash`` table."""
    from bench.child_jvm import child_java_options
    from engines.spark.session import get_spark
    from runresults import ResultsWriter, git_info, machine_info, new_run_id, package_versions

    if faults.ENV in os.environ:
        raise ValueError(f"unset {faults.ENV} before running the crash test: it would kill this process")
    scenario = load_scenario(scenario_path)
    scenario_path = str(Path(scenario_path).resolve())
    run_dir = Path(out_dir) / new_run_id(f"crash-{scenario.name}")
    tables = run_dir / "tables"
    writer = ResultsWriter(run_dir)
    jobs = [j for j in crash_jobs(scenario, reduced)
            if (not engines or j.engine in engines) and (not points or j.point in points)]
    t0 = time.perf_counter()
    truth = scenario_truth(scenario)
    get_spark("local[2]")
    java_opts = child_java_options(scenario_path, jobs[0].engine, len(jobs) >= ARCHIVE_MIN_JOBS) if jobs else ""
    setup_s = time.perf_counter() - t0
    reference: dict[str, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool, \
            ProgressBar("crash test", total=len(jobs), unit="jobs") as bar:
        futures: dict[Future, CrashJob] = {}
        for engine in dict.fromkeys(j.engine for j in jobs):
            bar.describe(f"reference run: {engine}")
            t1 = time.perf_counter()
            prefixes = reference_run(scenario, engine, run_dir / "prefixes" / engine) if use_prefixes else None
            if prefixes is not None:
                table = HudiTable.open(str(prefixes.root / "table"))
                keys = snapshot_keys(table)
                reference[engine] = {"seconds": round(time.perf_counter() - t1, 2), "steps": len(prefixes.labels),
                                     "rows_lost": len(truth.keys - set(keys)),
                                     "rows_duplicated": len(keys) - len(set(keys))}
            for j in (j for j in jobs if j.engine == engine):
                futures[pool.submit(crash_phase, j, scenario_path, str((tables / j.slug).resolve()), master,
                                    java_opts, prefixes)] = j
        bar.describe("crash test")
        for fut in as_completed(futures):
            job = futures[fut]
            details = {"first_crash": job.first_crash, **fut.result()}
            details.update(finish_phase(job, scenario, str((tables / job.slug).resolve()), truth))
            o = CrashOutcome(job.engine, job.point, details["crashed"], details["recovered"],
                             details.get("rows_lost", -1), details.get("rows_duplicated", -1),
                             details.get("query_failures", 1), details.get("hudi_rs_agrees", False), details)
            print(f"{o.engine:14s} {o.point:42s} crashed={o.crashed} recovered={o.recovered} lost={o.rows_lost} "
                  f"dup={o.rows_duplicated} query_failures={o.query_failures} "
                  f"hudi-rs={'ok' if o.hudi_rs_agrees else 'DISAGREES'}", flush=True)
            writer.add("crash", engine=o.engine, point=o.point, recovered=o.recovered, rows_lost=o.rows_lost,
                       rows_duplicated=o.rows_duplicated, query_failures=o.query_failures,
                       hudi_rs_agrees=o.hudi_rs_agrees, details=json.dumps(o.details, sort_keys=True))
            bar.advance(description=f"crash test: {o.engine} {o.point}")
    if use_prefixes:
        shutil.rmtree(run_dir / "prefixes", ignore_errors=True)
    run = {"run_id": run_dir.name, "kind": "crashtest", "scenario": scenario.model_dump(mode="json"),
           "seed": scenario.workload.seed, "git": git_info(), "versions": package_versions(), "machine": machine_info(),
           "engines": {e.name: {"kind": e.kind, "config": e.config} for e in scenario.engines},
           "simulated": False, "wall_time_s": time.perf_counter() - t0,
           "crashtest": {"jobs": len(jobs), "parallel": parallel, "child_master": master,
                         "setup_s": round(setup_s, 2), "child_java_options": java_opts,
                         "reference_runs": reference},
           "verification": {"ok": True, "failures": []}}
    writer.write_run(run)
    return run_dir
