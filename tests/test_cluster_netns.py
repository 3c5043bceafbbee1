"""A real two-host Spark cluster: network namespaces joined by a veth pair (10.213.0.0/30, which
exists only inside them). Host A runs a standalone master and a worker; host B runs the driver
(``layoutbench run small.yaml --master spark://10.213.0.1:PORT``). Executors on A reach the driver
on B over the pair, as on two machines; the file system is shared, so only the network differs.
The deterministic figures equal the local run's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.netns import namespaces_unavailable, two_hosts
from reports.perfcheck import extract_figures
from runresults import Results

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"


def figures(results: Results) -> dict:
    """perf-check's deterministic figures per engine, and per commit its bytes, files, rows, WA. Query
    runs are counted at the checkpoints' own runs (run 0): the final checkpoint's warm runs are the
    interleaved rounds' when the review measures (the `run` command), one per query otherwise."""
    c = results.table("commits").sort_values(["engine", "seq"])
    per_commit = {engine: g[["instant", "bytes_written", "files_written", "records_written", "live_files",
                             "physical_files", "wa"]].round(6).to_dict("records")
                  for engine, g in c.groupby("engine")}
    engines = {name: {k: v for k, v in figs.items() if k not in ("queries_total", "queries_verified")}
               for name, figs in extract_figures(results)["deterministic"].items()}
    q = results.table("queries")
    own = q[q.run == 0]
    verified = {engine: (len(g), int(g.verified.sum())) for engine, g in own.groupby("engine")}
    return {"engines": engines, "commits": per_commit, "checkpoint_queries": verified}


@pytest.fixture(scope="module")
def hosts():
    why = namespaces_unavailable()
    if why:
        pytest.skip(f"no network namespaces on this machine: {why}")
    with two_hosts() as pair:
        yield pair


def test_hosts_reach_each_other_and_are_removed_even_on_failure() -> None:
    """A server on host A answers host B over the pair; after an error inside the block the
    namespaces are gone and the process left inside them is killed."""
    why = namespaces_unavailable()
    if why:
        pytest.skip(f"no network namespaces on this machine: {why}")
    server = ("import socket; s = socket.create_server(('{addr}', 7077)); print('up', flush=True);"
              "c, _ = s.accept(); c.sendall(b'hello from A'); c.close(); import time; time.sleep(300)")
    client = "import socket; print(socket.create_connection(('{addr}', 7077), timeout=10).recv(64).decode())"
    with pytest.raises(RuntimeError, match="boom"), two_hosts(f"selftest{os.getpid()}") as (a, b):  # parallel suites on one host never share a name
        names = (a.netns, b.netns)
        srv = subprocess.Popen(a.command([sys.executable, "-c", server.format(addr=a.address)]),
                               stdout=subprocess.PIPE, text=True)
        assert srv.stdout.readline().strip() == "up"
        got = subprocess.run(b.command([sys.executable, "-c", client.format(addr=a.address)]),
                             capture_output=True, text=True, timeout=30)
        assert got.stdout.strip() == "hello from A", got.stderr
        # B's own loopback is not A's: the address is reachable only over the pair
        assert b.address != a.address
        raise RuntimeError("boom")
    assert srv.wait(timeout=10) == -9  # killed by the clean-up, not left running
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in listed.split() for n in names)


@pytest.mark.slow
def test_two_host_cluster_matches_local(hosts, small_run: Results, tmp_path) -> None:
    from bench.cluster import standalone_cluster

    cluster_host, driver_host = hosts
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    driver_env = {k: v for k, v in os.environ.items() if k not in ("LAYOUTBENCH_SPARK_MASTER", "SPARK_LOCAL_IP")}
    driver_env.update(env, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    with standalone_cluster(cores=2, memory="2g", host=cluster_host, env=env) as url:
        assert url.startswith(f"spark://{cluster_host.address}:")
        proc = subprocess.run(driver_host.command([sys.executable, "-m", "bench.cli", "run", str(SMALL),
                                                   "--master", url, "--out", str(tmp_path)]),
                              capture_output=True, text=True, timeout=900, env=driver_env, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    remote = Results(Path(proc.stdout.strip().splitlines()[-1]))
    assert remote.run["spark_master"] == url
    assert remote.run["verification"]["ok"], remote.run["verification"]["failures"]
    # The driver advertised its own namespace's address, not the loopback: executors on the other host used it.
    assert remote.run["spark_driver_host"] == driver_host.address
    assert figures(remote) == figures(small_run)
