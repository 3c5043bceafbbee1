"""A Spark standalone cluster from the installed pyspark, bound to 127.0.0.1, for
``make bench-cluster`` and the distributed-determinism test.

``python -m bench.cluster run SCENARIO`` starts a master and one worker, runs the scenario
against ``spark://127.0.0.1:<port>`` (the tables live on the local file system, which master,
worker and driver share on one machine) and stops both, whatever happens.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def spark_home() -> str:
    import pyspark

    return os.environ.get("SPARK_HOME") or str(Path(pyspark.__file__).resolve().parent)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Spark daemon exited early with code {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise TimeoutError(f"Spark daemon did not open port {port} within {timeout:.0f} s")


@contextmanager
def standalone_cluster(cores: int = 2, memory: str = "2g") -> Iterator[str]:
    """Start a master and a worker on 127.0.0.1; yield the master URL; stop both afterwards."""
    home = spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_NO_DAEMONIZE="1")
    port, ui, wport, wui = _free_port(), _free_port(), _free_port(), _free_port()
    work = tempfile.mkdtemp(prefix="layoutbench-worker-")
    logs = open(os.path.join(work, "daemons.log"), "wb")  # noqa: SIM115 - closed in finally
    procs: list[subprocess.Popen] = []
    try:
        master = subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(ui)], env=env, stdout=logs, stderr=logs)
        procs.append(master)
        _wait_port(port, master)
        url = f"spark://127.0.0.1:{port}"
        worker = subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                   "--port", str(wport), "--webui-port", str(wui), "--cores", str(cores),
                                   "--memory", memory, "--work-dir", work, url], env=env, stdout=logs, stderr=logs)
        procs.append(worker)
        _wait_port(wport, worker)
        time.sleep(2.0)  # let the worker register with the master
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        logs.close()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "run":
        print("usage: python -m bench.cluster run SCENARIO [layoutbench run options]", file=sys.stderr)
        return 2
    with standalone_cluster() as url:
        print(f"standalone cluster at {url}", flush=True)
        cmd = [sys.executable, "-m", "bench.cli", "run", argv[1], "--master", url, *argv[2:]]
        return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
