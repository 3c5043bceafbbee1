"""A Spark standalone cluster from the installed pyspark, bound to 127.0.0.1 (or to a network
namespace's address, :mod:`bench.netns`), for ``make bench-cluster`` and the cluster tests.

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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from bench.netns import Host


def spark_home() -> str:
    import pyspark

    return os.environ.get("SPARK_HOME") or str(Path(pyspark.__file__).resolve().parent)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port_open(address: str, port: int, inside: Host | None) -> bool:
    if inside is None:
        with socket.socket() as s:
            return s.connect_ex((address, port)) == 0
    probe = f"import socket; socket.create_connection(({address!r}, {port}), timeout=2).close()"
    return subprocess.run(inside.command([sys.executable, "-c", probe]), capture_output=True).returncode == 0


def _wait(ready: Callable[[], bool], proc: subprocess.Popen, what: str, log: Path, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Spark {what} exited early with code {proc.returncode} (log: {log})")
        if ready():
            return
        time.sleep(0.3)
    raise TimeoutError(f"Spark {what} was not ready within {timeout:.0f} s (log: {log})")


@contextmanager
def standalone_cluster(cores: int = 2, memory: str = "2g", host: Host | None = None,
                       env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Start a master and a worker; yield the master URL; stop both afterwards.

    On 127.0.0.1 by default; with ``host`` (a network namespace from :mod:`bench.netns`), inside
    that namespace on its address, reachable from the other namespace's driver. ``env`` adds to
    the daemons' environment (their executors inherit it)."""
    home = spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    address = host.address if host is not None else "127.0.0.1"
    wrap = host.command if host is not None else list
    daemon_env = dict(os.environ, SPARK_HOME=home, SPARK_LOCAL_IP=address, PYSPARK_PYTHON=sys.executable,
                      SPARK_NO_DAEMONIZE="1", **(env or {}))
    port, ui, wport, wui = _free_port(), _free_port(), _free_port(), _free_port()
    work = Path(tempfile.mkdtemp(prefix="layoutbench-worker-"))
    master_log, worker_log = work / "master.log", work / "worker.log"
    procs: list[subprocess.Popen] = []
    try:
        with open(master_log, "wb") as log:
            master = subprocess.Popen(wrap([spark_class, "org.apache.spark.deploy.master.Master", "--host", address,
                                            "--port", str(port), "--webui-port", str(ui)]),
                                      env=daemon_env, stdout=log, stderr=log)
        procs.append(master)
        _wait(lambda: _port_open(address, port, host), master, "master", master_log)
        url = f"spark://{address}:{port}"
        with open(worker_log, "wb") as log:
            worker = subprocess.Popen(wrap([spark_class, "org.apache.spark.deploy.worker.Worker", "--host", address,
                                            "--port", str(wport), "--webui-port", str(wui), "--cores", str(cores),
                                            "--memory", memory, "--work-dir", str(work), url]),
                                      env=daemon_env, stdout=log, stderr=log)
        procs.append(worker)
        _wait(lambda: b"Successfully registered with master" in worker_log.read_bytes(), worker, "worker", worker_log)
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
