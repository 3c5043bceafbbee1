"""The command line's conventions: exit codes, --version, the Spark master's precedence, one message
for a failed step of a run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, EXIT_OK, EXIT_USAGE, app
from engines.spark.session import on_loopback, resolve_master
from runresults import git_info

REPO = Path(__file__).resolve().parents[1]
cli = CliRunner()


def test_version_prints_package_version_and_git_sha() -> None:
    result = cli.invoke(app, ["--version"])
    assert result.exit_code == EXIT_OK, result.output
    sha = git_info(str(REPO))["sha"]
    assert result.output.startswith("layoutbench 0.") and (sha is None or sha in result.output)


def test_usage_error_exits_2() -> None:
    assert cli.invoke(app, ["run", "--no-such-option", "x.yaml"]).exit_code == EXIT_USAGE
    assert cli.invoke(app, ["compare", "only-one-run"]).exit_code == EXIT_USAGE


def test_bad_scenario_table_or_results_folder_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nworkload: {num_batches: 0}\n")
    for args in (["validate", str(bad)], ["run", str(tmp_path / "missing.yaml")],
                 ["inspect", str(tmp_path)], ["report", str(tmp_path / "no-run")]):
        result = cli.invoke(app, args)
        assert result.exit_code == EXIT_BAD_INPUT, (args, result.output)
        assert "error:" in result.output


def test_master_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAYOUTBENCH_SPARK_MASTER", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert resolve_master(None, None) == "local[*]"
    assert resolve_master(None, "local[2]") == "local[2]"
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")  # launched by spark-submit: its master stands
    assert resolve_master(None, "local[2]") is None
    monkeypatch.setenv("LAYOUTBENCH_SPARK_MASTER", "spark://10.0.0.1:7077")
    assert resolve_master(None, "local[2]") == "spark://10.0.0.1:7077"
    assert resolve_master("local[1]", "local[2]") == "local[1]"


def test_driver_binds_to_loopback_only_for_local_masters() -> None:
    assert on_loopback("local[2]") and on_loopback("spark://127.0.0.1:7077") and on_loopback("spark://localhost:7077")
    assert not on_loopback("spark://10.0.0.1:7077") and not on_loopback("yarn")


def test_a_value_hudi_does_not_implement_is_refused_by_run_before_spark_starts(tmp_path: Path) -> None:
    """An index type Apache Hudi does not have used to surface as a failed ingest at batch 0, after
    Spark started; validate (which run applies first) now refuses it, naming the key and Hudi's values."""
    scenario = yaml.safe_load((REPO / "bench" / "scenarios" / "hudi_small.yaml").read_text())
    scenario["workload"]["num_batches"] = 1
    scenario["engines"] = [{"name": "hudi_cow", "kind": "hudi",
                            "config": {"preset": "hudi_cow", "hoodie.index.type": "NO_SUCH_INDEX"}}]
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(scenario))
    result = cli.invoke(app, ["run", str(path), "--out", str(tmp_path / "results")])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    flat = " ".join(result.output.split())
    assert "hoodie.index.type=NO_SUCH_INDEX" in flat and "'BLOOM'" in flat, flat
    assert "Traceback" not in result.output
    assert not list((tmp_path / "results").glob("*/error.log"))


def test_unreachable_master_is_one_message_naming_it_at_once(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:  # a port nobody listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"spark://127.0.0.1:{port}"
    t0 = time.monotonic()
    proc = subprocess.run([str(Path(sys.executable).parent / "layoutbench"), "run", str(REPO / "bench" / "scenarios" / "small.yaml"),
                           "--master", url, "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert time.monotonic() - t0 < 60
    assert proc.returncode == EXIT_BAD_INPUT, proc.stderr[-2000:]
    assert f"Spark master {url} is unreachable" in proc.stderr and "Traceback" not in proc.stderr
