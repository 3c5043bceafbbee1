"""The progress bar of crashtest and long simulate runs: drawn on a terminal (a real pseudo-terminal
here), quiet on a pipe, under tests, and before its delay has passed."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
from bench.progress import ProgressBar
with ProgressBar("crash test", total=3, unit="jobs", delay_s=float(sys.argv[1])) as bar:
    for i in range(3):
        time.sleep(0.05)
        bar.advance(description=f"job {i}")
print("done")
"""


def stderr_of(delay_s: float, on_terminal: bool, under_test: bool = False) -> str:
    """Run the child with stderr on a pseudo-terminal (or a pipe); return what reached stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(PYTHONPATH=str(REPO), COLUMNS="100", TERM="xterm")
    if under_test:
        env["PYTEST_CURRENT_TEST"] = "tests/test_progress.py::x (call)"
    argv = [sys.executable, "-c", CHILD, str(delay_s)]
    if not on_terminal:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
        assert proc.stdout.strip() == "done"
        return proc.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=slave, text=True, timeout=60, env=env)
        os.close(slave)
        slave = -1
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other side is closed and drained
                break
            if not data:
                break
            chunks.append(data)
        assert proc.stdout.strip() == "done"  # stdout stays the command's own output
        return b"".join(chunks).decode(errors="replace")
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)


def test_bar_is_drawn_on_a_terminal() -> None:
    out = stderr_of(0.0, on_terminal=True)
    assert "3/3" in out and "jobs" in out and "job 2" in out


def test_bar_is_quiet_on_a_pipe_under_tests_and_before_its_delay() -> None:
    assert stderr_of(0.0, on_terminal=False) == ""
    assert stderr_of(0.0, on_terminal=True, under_test=True) == ""
    assert stderr_of(60.0, on_terminal=True) == ""
