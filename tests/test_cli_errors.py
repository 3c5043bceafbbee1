"""No traceback on a user's terminal (T19.5): one test per class of user error, each a real failure in a
process of its own (as a user runs it): one message on stderr, the documented exit code (docs/cli.md:
3 bad input, 1 a failed run, 130 interrupted), no traceback on the terminal, the traceback in the error
log the message names."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from dead_repository import dead_repository_scenario

from bench.cli import EXIT_BAD_INPUT

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "bench" / "scenarios"
EXIT_INTERRUPTED = 130


def layoutbench(args: list[str], tmp_path: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "LAYOUTBENCH_ERROR_LOG": str(tmp_path / "error.log"), "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run([sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tmp_path)


def one_message(proc: subprocess.CompletedProcess, code: int, tmp_path: Path) -> str:
    """The one line on stderr (no traceback there), after checking the exit code and the error log."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == code, proc.stderr[-3000:]
    # one message: one line, or a scenario's "N problem(s)" line with its one "- ..." item
    assert lines and lines[0].startswith("error: ") and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert len(lines) == 1 or (len(lines) == 2 and "1 problem(s)" in lines[0] and lines[1].startswith("  - ")), lines
    line = " ".join(ln.strip() for ln in lines)
    assert "(traceback in " in line, line
    log = Path(line.rsplit("(traceback in ", 1)[1].rstrip(")"))
    assert log in (tmp_path / "error.log", *tmp_path.glob("r/*/error.log")), log  # ours, or the run's own
    assert "Traceback (most recent call last)" in log.read_text()
    return line


def scenario_file(tmp_path: Path, base: str, **changes: object) -> Path:
    doc = yaml.safe_load((SCENARIOS / base).read_text())
    doc.update(changes)
    path = tmp_path / f"edited-{base}"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_engine_config_error_is_named_before_spark(tmp_path: Path) -> None:
    doc = yaml.safe_load((SCENARIOS / "small.yaml").read_text())
    doc["engines"][3]["config"] = {"sort_colums": ["service"]}
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(doc))
    line = one_message(layoutbench(["run", str(path), "--out", str(tmp_path / "r")], tmp_path), EXIT_BAD_INPUT,
                       tmp_path)
    assert "sort_colums" in line and "option2" in line
    assert not (tmp_path / "r").exists()  # refused before any folder, Spark or engine


def test_unreachable_package_repository_is_one_message_naming_it(tmp_path: Path) -> None:
    # Apache Hudi's bundle resolved by Ivy from a repository nobody listens on, into an empty cache
    path, port = dead_repository_scenario(tmp_path)
    # refused, not retried until a timeout: about 16 s idle (2026-11-28), the JVM's start; no timing is
    # asserted (a loaded machine starts a JVM far slower), the subprocess's own timeout bounds it
    proc = layoutbench(["run", str(path), "--out", str(tmp_path / "r")], tmp_path, timeout=300)
    line = one_message(proc, EXIT_BAD_INPUT, tmp_path)
    assert "JVM packages org.apache.hudi:hudi-spark" in line
    assert f"Ivy could not reach the repository: Server access error at url http://127.0.0.1:{port}/" in line
    assert "Connection refused" in line


def test_missing_calibration_file(tmp_path: Path) -> None:
    proc = layoutbench(["simulate", str(SCENARIOS / "small.yaml"), "--calibration", "/nope/missing.json", "--out",
                        str(tmp_path / "r")], tmp_path)
    assert "no such file: /nope/missing.json" in one_message(proc, EXIT_BAD_INPUT, tmp_path)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("text", "shown"), [
    ('{"commit_overhead_s": 0.2,', "not JSON"),
    ('{"foo": 1}', "unknown field(s) foo"),
    ('{"write_s_per_mb": "fast"}', "write_s_per_mb = 'fast' is not a number"),
    ("[1, 2]", "expected a JSON object"),
])
def test_corrupt_calibration_file(tmp_path: Path, text: str, shown: str) -> None:
    cal = tmp_path / "calibration.json"
    cal.write_text(text)
    proc = layoutbench(["simulate", str(SCENARIOS / "small.yaml"), "--calibration", str(cal), "--out",
                        str(tmp_path / "r")], tmp_path)
    line = one_message(proc, EXIT_BAD_INPUT, tmp_path)
    assert f"calibration file {cal}" in line and shown in line


@pytest.mark.parametrize("base", ["hudi_small.yaml", "s3_small.yaml"])
def test_bad_local_master_with_hudi_or_s3_is_not_blamed_on_packages(tmp_path: Path, base: str) -> None:
    # hudi_small loads Apache Hudi's bundle, s3_small hadoop-aws and a store: the master is named first
    proc = layoutbench(["run", str(SCENARIOS / base), "--master", "local[x]", "--out", str(tmp_path / "r")],
                       tmp_path)
    line = one_message(proc, EXIT_BAD_INPUT, tmp_path)
    assert "'local[x]' is not a master URL" in line and "JVM packages" not in line
    assert not (tmp_path / "r").exists()  # no JVM started, no results folder left behind


def test_stream_bad_scenario_and_missing_file(tmp_path: Path) -> None:
    path = scenario_file(tmp_path, "stream.yaml", stream={"rate": 0})
    line = one_message(layoutbench(["stream", str(path)], tmp_path), EXIT_BAD_INPUT, tmp_path)
    assert "stream.rate" in line
    proc = layoutbench(["stream", str(tmp_path / "missing.yaml")], tmp_path)
    assert f"scenario file {tmp_path / 'missing.yaml'} does not exist" in one_message(proc, EXIT_BAD_INPUT, tmp_path)


def test_stream_bad_local_master(tmp_path: Path) -> None:
    proc = layoutbench(["stream", str(SCENARIOS / "stream.yaml"), "--master", "local[x]", "--out",
                        str(tmp_path / "r")], tmp_path)
    assert "'local[x]' is not a master URL" in one_message(proc, EXIT_BAD_INPUT, tmp_path)
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_stream_interrupted_is_one_line_and_keeps_what_it_wrote(tmp_path: Path) -> None:
    env = {**os.environ, "LAYOUTBENCH_ERROR_LOG": str(tmp_path / "error.log"), "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_CURRENT_TEST", None)
    proc = subprocess.Popen([sys.executable, "-m", "bench.cli", "stream", str(SCENARIOS / "stream.yaml"), "--out",
                             str(tmp_path / "r")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while not list((tmp_path / "r").glob("*/work/baseline")) and time.monotonic() < deadline:
            time.sleep(0.5)  # the first engine's stream has started
        assert proc.poll() is None, proc.communicate()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group: Python and its JVM
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    line = one_message(done, EXIT_INTERRUPTED, tmp_path)
    assert "interrupted" in line
    assert "engine baseline" in line  # the step it was at
    run_dir = next((tmp_path / "r").iterdir())
    assert (run_dir / "spark.log").stat().st_size > 0  # what it wrote is kept
