"""``layoutbench crashtest``: kill the writer (SIGKILL) at every injection point of every engine,
recover, finish the scenario, and count what was lost or duplicated.

For each (engine, point) a child process runs the scenario's batches for that engine alone with
``LAYOUTBENCH_CRASH_AT=<point>``; it dies at the point. A second child opens the table (which
rolls back failed instants and releases the stale lock), resumes from the first batch that has
no completed ingest commit, and runs to the end. The parent then compares the snapshot with the
ground truth: keys missing (rows lost), rows beyond distinct keys (duplicated), a query run on
Spark, and hudi-rs reading the same table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.scenario import Scenario, load_scenario
from engines.table import faults
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT


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
    details: dict[str, Any]


def completed_ingest_commits(table: HudiTable) -> int:
    """Batches committed so far: every engine commits exactly one ``commit`` per batch."""
    return len(table.refresh().completed([COMMIT]))


def run_engine_child(scenario_path: str, engine_name: str, table_path: str, crash_at: str | None,
                     master: str = "local[1]", timeout: float = 600.0) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(faults.ENV, None)
    if crash_at:
        env[faults.ENV] = crash_at
    cmd = [sys.executable, "-m", "bench.crashtest", "child", scenario_path, engine_name, table_path, master]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def child_main(scenario_path: str, engine_name: str, table_path: str, master: str) -> int:
    """Run (or resume) one engine's batches with the scenario's inline maintenance schedule."""
    from bench.engine_factory import build_engine
    from engines.spark.session import get_spark
    from engines.table.rollback import recover
    from workloads.generator import batch_df

    scenario = load_scenario(scenario_path)
    spec = next(e for e in scenario.engines if e.name == engine_name)
    spark = get_spark(master)
    if Path(table_path, ".hoodie", "hoodie.properties").exists():
        recover(HudiTable.open(table_path))
    engine = build_engine(spec, scenario, table_path)
    start = completed_ingest_commits(engine.table)
    every = scenario.maintenance.every_commits
    pending_maintenance = start > 0 and start % every == 0 and _maintenance_missing(engine.table)
    if pending_maintenance:
        _maintain(engine)
    n = scenario.workload.num_batches
    for b in range(start, n):
        engine.ingest(batch_df(spark, scenario.workload, b))
        engine.after_commit()
        if scenario.maintenance.mode != "none" and (b + 1) % every == 0:
            _maintain(engine)
    if scenario.maintenance.final and n % every != 0:
        _maintain(engine)
    engine.close()
    return 0


def _maintenance_missing(table: HudiTable) -> bool:
    """True when the last instant is an ingest commit (the crash hit the maintenance after it)."""
    last = table.refresh().instants[-1] if table.timeline.instants else None
    return last is not None and (last.action == COMMIT or not last.is_completed)


def _maintain(engine: Any) -> None:
    instant = engine.schedule()
    if instant is None:
        pending = getattr(engine, "pending_plan", None)
        instant = pending() if callable(pending) else None
    if instant is not None:
        engine.execute(instant)
    engine.clean()


def snapshot_keys(table: HudiTable) -> list[str]:
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


def truth_keys(scenario: Scenario) -> list[str]:
    from workloads.generator import batch_table

    return [k for b in range(scenario.workload.num_batches)
            for k in batch_table(scenario.workload, b).column("trace_id").to_pylist()]


def verify(table_path: str, expected: set[str]) -> dict[str, Any]:
    table = HudiTable.open(table_path)
    keys = snapshot_keys(table)
    got = set(keys)
    rs = hudi_rs_keys(table_path)
    return {
        "rows": len(keys), "rows_lost": len(expected - got), "rows_duplicated": len(keys) - len(got),
        "unexpected": len(got - expected),
        "hudi_rs_agrees": rs is not None and sorted(rs) == sorted(keys),
    }


def crash_one(scenario_path: str, scenario: Scenario, engine: str, point: str, workdir: Path,
              expected: set[str], master: str) -> CrashOutcome:
    table_path = str((workdir / f"{engine}__{point.replace('.', '_').replace(':', '_')}").resolve())
    t0 = time.perf_counter()
    first = run_engine_child(scenario_path, engine, table_path, point, master)
    crashed = first.returncode == -9
    second = run_engine_child(scenario_path, engine, table_path, None, master)
    recovered = second.returncode == 0
    details: dict[str, Any] = {"first_rc": first.returncode, "second_rc": second.returncode,
                               "seconds": round(time.perf_counter() - t0, 2)}
    if not recovered:
        details["stderr"] = second.stderr[-1500:]
        return CrashOutcome(engine, point, crashed, False, -1, -1, 1, False, details)
    v = verify(table_path, expected)
    details.update(v)
    query_failures = 0
    try:
        table = HudiTable.open(table_path)
        counted = sum(s.num_rows for s in table.view().snapshot())
        query_failures = int(counted != v["rows"])
    except Exception as exc:  # noqa: BLE001
        details["query_error"] = str(exc)
        query_failures = 1
    return CrashOutcome(engine, point, crashed, recovered, v["rows_lost"], v["rows_duplicated"], query_failures,
                        v["hudi_rs_agrees"], details)


def crash_points(scenario: Scenario, reduced: bool = False) -> dict[str, list[str]]:
    """Injection points per engine, from the engines' own step lists."""
    from bench.engine_points import points_for_kind, reduced_points

    pick = reduced_points if reduced else points_for_kind
    return {e.name: pick(e.kind, e.config) for e in scenario.engines if e.kind != "delta_peer"}


def run_crashtest(scenario_path: str, out_dir: str | Path, engines: list[str] | None = None,
                  points: list[str] | None = None, master: str = "local[1]", reduced: bool = False) -> Path:
    """Every (engine, point) pair; writes a results folder with the ``crash`` table."""
    from bench.results import ResultsWriter, git_info, machine_info, new_run_id, package_versions

    scenario = load_scenario(scenario_path)
    run_dir = Path(out_dir) / new_run_id(f"crash-{scenario.name}")
    writer = ResultsWriter(run_dir)
    expected = set(truth_keys(scenario))
    matrix = crash_points(scenario, reduced)
    t0 = time.perf_counter()
    for engine, engine_points in matrix.items():
        if engines and engine not in engines:
            continue
        for point in engine_points:
            if points and point not in points:
                continue
            o = crash_one(scenario_path, scenario, engine, point, run_dir / "tables", expected, master)
            print(f"{engine:16s} {point:45s} crashed={o.crashed} recovered={o.recovered} lost={o.rows_lost} "
                  f"dup={o.rows_duplicated} hudi-rs={'ok' if o.hudi_rs_agrees else 'DISAGREES'}", flush=True)
            writer.add("crash", engine=o.engine, point=o.point, recovered=o.recovered, rows_lost=o.rows_lost,
                       rows_duplicated=o.rows_duplicated, query_failures=o.query_failures,
                       hudi_rs_agrees=o.hudi_rs_agrees, details=json.dumps({"crashed": o.crashed, **o.details}))
    run = {"run_id": run_dir.name, "kind": "crashtest", "scenario": scenario.model_dump(mode="json"),
           "seed": scenario.workload.seed, "git": git_info(), "versions": package_versions(), "machine": machine_info(),
           "engines": {e.name: {"kind": e.kind, "config": e.config} for e in scenario.engines},
           "simulated": False, "wall_time_s": time.perf_counter() - t0,
           "verification": {"ok": True, "failures": []}}
    writer.write_run(run)
    return run_dir


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "child":
        sys.exit(child_main(*sys.argv[2:6]))
    print("usage: python -m bench.crashtest child SCENARIO ENGINE TABLE MASTER", file=sys.stderr)
    sys.exit(2)

