"""No traceback on a user's terminal (T19): each class of user error is one line and its exit code,
with the traceback in a log file the line names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, EXIT_FAILED, app
from bench.cli_errors import command
from engines.spark.session import JvmPackagesError
from engines.table.lock import LockHeldError

REPO = Path(__file__).resolve().parents[1]
cli = CliRunner()


@pytest.fixture
def error_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "error.log"
    monkeypatch.setenv("LAYOUTBENCH_ERROR_LOG", str(log))
    return log


def _one_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


@pytest.mark.parametrize(("exc", "code", "shown"), [
    (FileNotFoundError(2, "No such file or directory", "/nope/calibration.json"), EXIT_BAD_INPUT,
     "no such file: /nope/calibration.json"),
    (JvmPackagesError("Spark could not start with JVM packages x:y:1: Maven Central unreachable"), EXIT_BAD_INPUT,
     "Maven Central unreachable"),
    (LockHeldError("the table's writer lock is held by pid 7"), EXIT_BAD_INPUT, "writer lock is held"),
    (KeyError("engine"), EXIT_FAILED, "KeyError: 'engine'"),  # our bug, not the user's: exit 1, still one line
])
def test_each_error_class_is_one_line_and_its_exit_code(error_log: Path, exc: Exception, code: int,
                                                         shown: str) -> None:
    demo = typer.Typer()

    @command(demo)
    def boom() -> None:
        raise exc

    @command(demo)
    def other() -> None:  # a second command keeps typer from collapsing the app into `boom`
        pass

    result = cli.invoke(demo, ["boom"])
    assert result.exit_code == code
    line = _one_line(result.output)
    assert shown in line and str(error_log) in line
    assert "Traceback" in error_log.read_text()


def test_missing_calibration_file(error_log: Path) -> None:
    result = cli.invoke(app, ["simulate", str(REPO / "bench/scenarios/small.yaml"), "--calibration",
                              "/nope/missing.json"])
    assert result.exit_code == EXIT_BAD_INPUT
    assert "no such file: /nope/missing.json" in _one_line(result.output)


def test_bad_local_master_is_named_before_the_jvm_starts(tmp_path: Path) -> None:
    # a process of its own: no session exists yet, as for a user (the suite's own session would be reused)
    env = {**os.environ, "LAYOUTBENCH_ERROR_LOG": str(tmp_path / "error.log"), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(REPO / "bench/scenarios/small.yaml"),
                           "--master", "local[x]", "--out", str(tmp_path / "results")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr
    assert "'local[x]' is not a master URL" in _one_line(proc.stderr)
    assert "JVM packages" not in proc.stderr
    assert not list((tmp_path / "results").glob("*/spark.log")) or all(
        p.stat().st_size == 0 for p in (tmp_path / "results").glob("*/spark.log"))
