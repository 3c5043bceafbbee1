"""Kill and restart a live stream: a real SIGKILL of the streaming process at a chosen step, then
a restart from its checkpoint; nothing may be lost or duplicated, and hudi-rs must agree.

The child (``bench.stream.child``) streams with ``LAYOUTBENCH_CRASH_AT`` set and dies there; this
process then resumes the same stream on its own Spark session (recovery, the same landing folder
and checkpoint, Spark replaying the micro-batch its commit log lacks) and checks every key of the
ground truth is in the live snapshot exactly once. One ``crash`` row per kill.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.scenario import Scenario
from bench.stream.child import resume
from bench.stream.verify import key_check, truth_of
from engines.kinds import kind_of
from engines.table import faults

# the kill points of the crash matrix for streams, by the table service's fault points a kind marks
# (engines.kinds.EngineKind.fault_points)
KILL_POINTS: dict[str, tuple[str, ...]] = {
    "option1": ("option1.before_commit", "stream.after_table_commit:3"),
    "clustering": ("clustering.after_group_written", "stream.after_table_commit:3"),
}


def kill_points(kind: str) -> tuple[str, ...]:
    """The stream kill points of an engine of ``kind`` (none for a kind without a service of ours)."""
    return KILL_POINTS.get(kind_of(kind).fault_points or "", ())


def kill_child(scenario_path: str, engine: str, root: Path, master: str, point: str,
               timeout: float = 400.0) -> subprocess.CompletedProcess:
    """Run the streaming child until ``point`` kills it (return code -9 when it did)."""
    env = {**os.environ, faults.ENV: point, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    root.mkdir(parents=True, exist_ok=True)
    # its own process group: the child's JVM (PySpark's gateway) is in it, and must die with the child
    proc = subprocess.Popen([sys.executable, "-m", "bench.stream.child", scenario_path, engine, str(root), master],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        _kill_group(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _kill_group(pgid: int, wait_s: float = 30.0) -> None:
    """SIGKILL what is left of the child's process group and wait until it is gone. A killed driver's
    JVM would otherwise run its streaming query on for a moment, orphaned, and write the next
    micro-batch's offsets into the checkpoint the restart is using (Spark: CONCURRENT_STREAM_LOG_UPDATE)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the killed stream's process group {pgid} did not exit within {wait_s:.0f} s")


def kill_and_restart(spark: Any, scenario: Scenario, scenario_path: str, engine: str, point: str, root: Path,
                     master: str = "local[2]") -> dict[str, Any]:
    """One kill and restart; the ``crash`` table's row for it."""
    from bench.crashtest import hudi_rs_keys

    if os.environ.get(faults.ENV):
        raise ValueError(f"unset {faults.ENV} before a kill test: it would kill this process")
    t0 = time.perf_counter()
    child = kill_child(scenario_path, engine, root, master, point)
    details: dict[str, Any] = {"child_rc": child.returncode, "child_s": round(time.perf_counter() - t0, 1)}
    if child.returncode != -9:
        details["child_stderr"] = child.stderr[-1500:]
    landed_before = len((root / "arrivals.jsonl").read_text().splitlines()) if (root / "arrivals.jsonl").exists() else 0
    eng, run = resume(spark, scenario, engine, root)
    try:
        truth = truth_of(scenario, run.good_names)
        keys = key_check(eng, truth)
        replayed = sum(1 for r in run.sink.state.rows if r.get("replayed"))
        hudi_ok = None
        if eng.table_format == "hudi":
            rs = hudi_rs_keys(str((root / "table").resolve()))
            ours = Counter(truth.column("trace_id").to_pylist())
            hudi_ok = rs is not None and Counter(rs) == ours
    finally:
        eng.close()
    details.update(landed_before_restart=landed_before, replayed_micro_batches=replayed, restart_error=run.error,
                   rows=keys["rows"], total_s=round(time.perf_counter() - t0, 1))
    return {"engine": engine, "point": f"stream:{point}", "recovered": run.error is None and child.returncode == -9,
            "rows_lost": keys["rows_lost"], "rows_duplicated": keys["rows_duplicated"], "query_failures": 0,
            "hudi_rs_agrees": hudi_ok, "details": json.dumps(details, default=str)}
