"""``--out s3://bucket/prefix`` on every command that writes a results folder (T19.6), against our moto
server reached as an external endpoint over its socket: the folder lands in the bucket through
pyarrow.fs, nothing named ``s3:`` appears on local disk, and a missing bucket is one message naming
it before any engine or Spark starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from dead_repository import dead_repository_scenario

from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"
STREAM = REPO / "bench" / "scenarios" / "stream.yaml"


@pytest.fixture(scope="module")
def store() -> Iterator[tuple[S3Server, pafs.S3FileSystem]]:
    with S3Server() as server:
        fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=server.endpoint,
                               scheme="http", region=REGION, allow_bucket_creation=True)
        fs.create_dir("userbucket")  # made beforehand, as a user would
        yield server, fs


def layoutbench(args: list[str], cwd: Path, timeout: float = 300, **env_vars: str) -> subprocess.CompletedProcess:
    """The command line in a process of its own, with the store's credentials in the environment."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "AWS_DEFAULT_REGION": REGION, "PYTHONPATH": str(REPO), "LAYOUTBENCH_ERROR_LOG": str(cwd / "error.log"),
           **env_vars}
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd)


def out_uri(server: S3Server, bucket: str, prefix: str) -> str:
    return f"s3://{bucket}/{prefix}?endpoint_override={server.endpoint}&scheme=http"


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_simulate_writes_its_folder_to_the_bucket(store, tmp_path: Path) -> None:
    server, fs = store
    proc = layoutbench(["simulate", str(SMALL), "--out", out_uri(server, "userbucket", "sims")], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = proc.stdout.strip().splitlines()[-1]
    assert where.startswith("s3://userbucket/sims/"), where
    key = where.removeprefix("s3://")
    run = json.loads(fs.open_input_stream(f"{key}/run.json").read())
    assert run["simulated"] and run["run_id"] == key.rsplit("/", 1)[-1]
    assert fs.get_file_info(f"{key}/commits.parquet").type == pafs.FileType.File
    assert list(tmp_path.iterdir()) == []  # no ./s3:/ folder, no local copy left behind


@pytest.mark.parametrize("command", [["simulate", str(SMALL)], ["stream", str(STREAM)], ["run", str(SMALL)],
                                     ["validate", str(SMALL)], ["crashtest", str(REPO / "bench" / "scenarios" / "crash.yaml")],
                                     ["sweep", str(REPO / "bench" / "sweeps" / "rfc19_map.yaml")]])
def test_a_missing_bucket_is_named_before_anything_starts(store, tmp_path: Path, command: list[str]) -> None:
    server, _ = store
    t0 = time.monotonic()
    proc = layoutbench([*command, "--out", out_uri(server, "no-such-bucket", "x")], tmp_path, timeout=120)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "bucket 'no-such-bucket' does not exist" in one_error_line(proc.stderr)
    assert time.monotonic() - t0 < 30  # no Spark started: a JVM alone takes longer on this machine
    assert [p.name for p in tmp_path.iterdir()] == ["error.log"]  # nothing written: no folder, no spark.log
    assert "Traceback" in (tmp_path / "error.log").read_text()


def test_credentials_in_the_out_uri_are_refused_unechoed(store, tmp_path: Path) -> None:
    server, _ = store
    uri = f"s3://AKIAEXAMPLE:sekrit@userbucket/x?endpoint_override={server.endpoint}&scheme=http"
    proc = layoutbench(["simulate", str(SMALL), "--out", uri], tmp_path)
    assert proc.returncode == 3
    line = one_error_line(proc.stderr)
    assert "AWS_ACCESS_KEY_ID" in line and "sekrit" not in proc.stderr + proc.stdout


def test_a_failed_run_leaves_its_folder_in_the_bucket_not_in_tmp(store, tmp_path: Path) -> None:
    # a real failure after the run folder exists: Apache Hudi's bundle from a repository nobody serves
    server, fs = store
    path, _ = dead_repository_scenario(tmp_path)
    staging = tmp_path / "tmp"
    staging.mkdir()
    proc = layoutbench(["run", str(path), "--out", out_uri(server, "userbucket", "failed")], tmp_path, timeout=120,
                       TMPDIR=str(staging))
    line = one_error_line(proc.stderr)
    assert proc.returncode == 3 and "JVM packages" in line, line
    # the message names the Spark log where it now is: in the bucket
    log = line.split("(Spark's log: ", 1)[1].split(")", 1)[0]
    assert log.startswith("s3://userbucket/failed/") and log.endswith("/spark.log"), line
    assert "Server access error at url" in fs.open_input_stream(log.removeprefix("s3://")).read().decode()
    assert not list(staging.glob("layoutbench-results-*"))  # no copy left in the temp folder
