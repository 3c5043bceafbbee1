"""A real S3-protocol server on 127.0.0.1 for runs and tests: moto's server mode in a child process.

MinIO is not installable here; moto (``moto[server]``, PyPI) serves the S3 REST API over HTTP,
including multipart upload, ranged GET and paginated LIST (tests/test_store.py checks each over
the socket). It is started and stopped by whoever needs it (:class:`S3Server` is a context
manager) and binds to the loopback only.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ACCESS_KEY = "layoutbench"
SECRET_KEY = "layoutbench-secret"
REGION = "us-east-1"


class StoreError(OSError):
    """The object store could not be reached or answered an error; the message names the store
    and the operation."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise StoreError(f"{what} did not accept connections on {host}:{port} within {timeout_s:.0f} s")


def _die_with_parent() -> None:
    """In the server's process before it starts: SIGTERM it when the process that started it dies,
    even by SIGKILL (a run killed by a timeout leaves no server behind). The kernel watches the thread
    that started it: start the server from one that outlives it (the main thread, as the runner and the
    tests do). Linux only; elsewhere a no-op."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class S3Server:
    """moto's S3 server as a child process on 127.0.0.1 (its log in a temporary file)."""

    def __init__(self, port: int | None = None) -> None:
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.log_path = Path(tempfile.mkdtemp(prefix="layoutbench-moto-")) / "moto.log"

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> S3Server:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", self.host, "-p", str(self.port)],
                                         stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        try:
            wait_for_port(self.host, self.port, 30, f"the S3 server (moto, log {self.log_path})")
        except StoreError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
