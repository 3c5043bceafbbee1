"""`run`'s and `stream`'s progress (T19.7) in a real process: on a terminal's stderr (a pseudo-terminal
here) the line names the engine, the repetition, the batch and the phase (stream: the micro-batch, the
lag and the rate step); on a pipe nothing is drawn, and stdout stays the results folder."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import yaml

from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

REPO = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def tiny_run(tmp_path: Path) -> Path:
    """small.yaml cut to three batches of one design: maintenance and a checkpoint at batch 3."""
    doc = yaml.safe_load((REPO / "bench" / "scenarios" / "small.yaml").read_text())
    doc.update(name="tiny", engines=[e for e in doc["engines"] if e["name"] == "option2"])
    doc["workload"]["num_batches"] = 3
    doc["isolation"] = {"enabled": False}
    doc["queries"] = {"warm_runs": 1, "checkpoint_every": 3, "suite": ["full_scan_by_level"]}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def tiny_stream(tmp_path: Path) -> Path:
    """Three batches into Option 2 at a fixed rate, then one rate-search step of three batches."""
    doc = {"name": "tinystream",
           "workload": {"seed": 5, "num_batches": 3, "batch_records": 400, "partition_granularity": "day",
                        "num_partitions": 1, "late_fraction": 0.0},
           "engines": [{"name": "option2", "kind": "clustering"}],
           "sizing": {"small_file_limit_mb": 0.6, "target_file_mb": 0.8, "max_file_mb": 0.8,
                      "row_group_rows": 1000, "cleaner_commits_retained": 2},
           "maintenance": {"mode": "async", "async_interval_s": 0.5},
           "queries": {"warm_runs": 1, "suite": ["full_scan_by_level"]},
           "isolation": {"enabled": False},
           "stream": {"rate": 2.0, "async_max_commits": 2, "retention_hours": 168, "bad_input": False,
                      "timeout_s": 120, "rate_search": {"enabled": True, "start": 2.0, "max_steps": 1,
                                                        "refine": 0, "batches_per_step": 3}},
           "spark": {"master": "local[2]"}}
    path = tmp_path / "tinystream.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def env_of(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}  # as a user's shell
    env.update(PYTHONPATH=str(REPO), COLUMNS="250", TERM="xterm", LAYOUTBENCH_ERROR_LOG=str(tmp_path / "error.log"),
               AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY, AWS_DEFAULT_REGION=REGION)
    return env


def user_bucket(server: S3Server) -> pafs.S3FileSystem:
    """The store as a user reaches it, with the bucket ``userbucket`` made."""
    fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=server.endpoint,
                           scheme="http", region=REGION, allow_bucket_creation=True)
    fs.create_dir("userbucket")
    return fs


def on_a_terminal(argv: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """Run with stderr on a pseudo-terminal; the process and what reached the terminal, escapes removed."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []
    try:
        proc = subprocess.Popen([sys.executable, "-m", "bench.cli", *argv], stdout=subprocess.PIPE, stderr=slave,
                                text=True, env=env_of(tmp_path), cwd=tmp_path)
        os.close(slave)
        slave = -1
        while True:  # drained as it comes: a full terminal buffer would block the child
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        stdout = proc.stdout.read() if proc.stdout else ""
        proc.wait(600)
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, "")
    return done, ANSI.sub("", b"".join(chunks).decode(errors="replace"))


def test_run_shows_engine_repetition_batch_and_phase_on_a_terminal(tmp_path: Path) -> None:
    proc, shown = on_a_terminal(["run", str(tiny_run(tmp_path)), "--repeat", "2", "--out", str(tmp_path / "r")],
                                tmp_path)
    assert proc.returncode == 0, shown[-3000:]
    for line in ("tiny · batch 1/3 · option2 (repetition 1/2) · ingest",
                 "tiny · batch 3/3 · option2 (repetition 2/2) · ingest",
                 "tiny · batch 3/3 · option2 (repetition 2/2) · maintenance",
                 "tiny · batch 3/3 · option2 (repetition 1/2) · checkpoint queries"):
        assert line in shown, (line, shown[-3000:])
    assert proc.stdout.strip().splitlines()[-1].startswith(str(tmp_path / "r"))


@pytest.mark.slow
def test_run_on_a_pipe_draws_nothing_and_its_folder_lands_in_the_bucket(tmp_path: Path) -> None:
    with S3Server() as server:
        fs = user_bucket(server)
        out = f"s3://userbucket/runs?endpoint_override={server.endpoint}&scheme=http"
        proc = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(tiny_run(tmp_path)), "--out", out],
                              capture_output=True, text=True, timeout=600, env=env_of(tmp_path), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "batch 1/3" not in proc.stderr and "\x1b[" not in proc.stderr, proc.stderr[-2000:]
        where = proc.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"s3://userbucket/runs/\d{8}T\d{6}-tiny", where), where
        key = where.removeprefix("s3://")
        for name in ("run.json", "commits.parquet", "spark.log"):
            assert fs.get_file_info(f"{key}/{name}").type == pafs.FileType.File, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]  # no local copy, no ./s3:/ folder


@pytest.mark.slow
def test_stream_shows_micro_batches_lag_and_rate_step_and_lands_in_the_bucket(tmp_path: Path) -> None:
    with S3Server() as server:
        fs = user_bucket(server)
        out = f"s3://userbucket/streams?endpoint_override={server.endpoint}&scheme=http"
        proc, shown = on_a_terminal(["stream", str(tiny_stream(tmp_path)), "--out", out], tmp_path)
        assert proc.returncode == 0, shown[-3000:]
        assert re.search(r"option2 · fixed rate · micro-batch \d+ · committed \d+/\d+ batches · lag ", shown), shown[-3000:]
        assert "option2 · rate step 2/s · micro-batch" in shown, shown[-3000:]
        where = proc.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"s3://userbucket/streams/\d{8}T\d{6}-tinystream-stream", where), where
        key = where.removeprefix("s3://")
        assert fs.get_file_info(f"{key}/run.json").type == pafs.FileType.File
        assert fs.get_file_info(f"{key}/stream.parquet").type == pafs.FileType.File
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tinystream.yaml"]
