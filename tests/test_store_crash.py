"""Crash safety on the S3 store: the writer is SIGKILLed between the data files and the commit, and
between the commit and the deletes, for Option 1 (commit-before-delete order, so both points exist)
and Option 2; recovery then finishes the scenario and leaves the same rows as a crash-free run on
local disk.

Each kill is real: a child process (``python -m bench.crash_child run``, ``LAYOUTBENCH_CRASH_AT``)
kills itself with SIGKILL at the fault point, its table on moto behind the counting proxy, which this
test process starts and which outlives the children. The commit point on the store is one PUT of the
completed instant (``engines/table/storage.py``); the assertions between the kills check that each
kill landed where it should (an inflight instant with its new files written; a completed instant with
the replaced files still there).
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from bench.child_jvm import archive_path, child_java_options
from bench.crash_child import run_to_end
from bench.scenario import load_scenario
from bench.store.proxy import CountingProxy
from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from bench.store.uri import table_uri
from engines.table import faults
from engines.table.table import HudiTable

REPO = Path(__file__).resolve().parents[1]
CRASH = REPO / "bench" / "scenarios" / "crash.yaml"
# engine -> (kill between data files and commit, kill between commit and deletes)
POINTS = {
    "option1_cbd": ("option1.before_commit", "option1.after_commit"),
    "option2": ("clustering.before_replacecommit", "clean.after_clean_requested"),
}


def _scenario(folder: Path) -> Path:
    """crash.yaml with six batches and a cleaner retaining one commit, so that Option 2's cleaner
    deletes the files its first clustering replaced within the run (the kill between its commit and
    its deletes needs a clean that deletes something)."""
    text = CRASH.read_text().replace("num_batches: 4", "num_batches: 6").replace(
        "cleaner_commits_retained: 2", "cleaner_commits_retained: 1")
    assert "num_batches: 6" in text and "cleaner_commits_retained: 1" in text
    path = folder / "crash_store.yaml"
    path.write_text(text)
    return path


def _java_opts(scenario: Path) -> str:
    """The crash test's short-lived driver options (C1 JIT, serial GC; its class-data archive when one
    is cached already): a child's cost is mostly its JVM's start."""
    return child_java_options(str(scenario), next(iter(POINTS)), use_archive=archive_path().exists())


def _child(scenario: Path, engine: str, table: str, crash_at: str | None,
           java_opts: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != faults.ENV}
    env["PYTHONPATH"] = str(REPO)
    if crash_at:
        env[faults.ENV] = crash_at
    return subprocess.run([sys.executable, "-m", "bench.crash_child", "run", str(scenario), engine, table, "local[1]",
                           java_opts], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)


def _rows(uri: str) -> pa.Table:
    """The table's live rows (data columns), sorted by record key, read through the table core."""
    table = HudiTable.open(uri)
    parts = [pq.read_table(table.storage.abs(s.path), filesystem=table.storage.fs) for s in table.view().snapshot()]
    rows = pa.concat_tables(parts)
    rows = rows.select([c for c in rows.column_names if not c.startswith("_hoodie_")])
    return rows.sort_by("trace_id")


def _crash_and_recover(scenario: Path, engine: str, uri: str, java_opts: str) -> dict[str, object]:
    before_commit, after_commit = POINTS[engine]
    seen: dict[str, object] = {}
    first = _child(scenario, engine, uri, before_commit, java_opts)
    assert first.returncode == -9, first.stderr[-3000:]
    timeline = HudiTable.open(uri).refresh()
    seen["pending_after_first_kill"] = [str(i) for i in timeline.pending()]
    second = _child(scenario, engine, uri, after_commit, java_opts)  # recovers the first crash, then dies after the commit
    assert second.returncode == -9, second.stderr[-3000:]
    table = HudiTable.open(uri)
    live = {s.path for s in table.view().snapshot()}
    physical = {f.path for f in table.storage.list("", recursive=True) if f.path.endswith(".parquet")}
    seen["replaced_files_left"] = len(physical - live)
    last = _child(scenario, engine, uri, None, java_opts)  # recovers and runs the scenario to its end
    assert last.returncode == 0, last.stderr[-3000:]
    return seen


@pytest.mark.slow
def test_kills_on_the_store_recover_to_the_local_disk_rows(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    with S3Server() as server, CountingProxy(server.endpoint, access_key=ACCESS_KEY) as proxy:
        pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=proxy.endpoint,
                          scheme="http", region=REGION, allow_bucket_creation=True).create_dir("crash")
        scenario = _scenario(tmp_path)
        uris = {e: table_uri(proxy.endpoint, "crash", f"tables/{e}") for e in POINTS}
        local = {e: str(tmp_path / "local" / e) for e in POINTS}
        java_opts = _java_opts(scenario)  # before the threads: it imports pyspark, as the spark fixture does
        with ThreadPoolExecutor(len(POINTS)) as pool:
            crashed = {e: pool.submit(_crash_and_recover, scenario, e, uris[e], java_opts) for e in POINTS}
            # the crash-free runs on local disk meanwhile, here on the session's warm Spark (the same
            # batch loop a child runs, without a JVM start of its own each)
            request.getfixturevalue("spark")
            for engine in POINTS:
                assert run_to_end(load_scenario(scenario), engine, local[engine]) == 0
            seen = {e: f.result() for e, f in crashed.items()}
        for engine in POINTS:
            # the first kill left the maintenance instant inflight, its new files written but not committed
            assert seen[engine]["pending_after_first_kill"], (engine, seen[engine])
            # the second kill came after the commit and before the deletes: replaced files still there
            assert seen[engine]["replaced_files_left"] > 0, (engine, seen[engine])
            on_store, on_disk = _rows(uris[engine]), _rows(local[engine])
            assert on_store.num_rows == on_disk.num_rows == len(set(on_disk.column("trace_id").to_pylist()))
            assert on_store.equals(on_disk), engine
