"""``layoutbench inspect`` on our tables and on tables written by Apache Hudi."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime

from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from engines.table.metadata import CommitMetadata
from engines.table.model import WriteStat, base_file_name
from engines.table.table import HudiTable, TableConfig, logical_clock
from engines.table.timeline import COMMIT

runner = CliRunner()


def test_inspect_json_on_our_table(tmp_path) -> None:
    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "k"),
                             clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))
    inst = table.start(COMMIT)
    rel = f"dt=a/{base_file_name('f1-0', '0-0-0', inst.timestamp)}"
    table.storage.write_atomic(rel, b"x" * 100)
    table.complete(inst, CommitMetadata("INSERT", [WriteStat("f1-0", "dt=a", rel, 7, 100)]))
    result = runner.invoke(app, ["inspect", table.base_uri, "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["live_files"] == 1 and info["snapshot_rows"] == 7 and info["small_files"] == 1
    assert info["timeline"] == [{"instant": inst.timestamp, "action": "commit", "state": "COMPLETED"}]


def test_inspect_real_hudi_table_and_time_travel(hudi_fixtures, tmp_path) -> None:
    with zipfile.ZipFile(hudi_fixtures / "sample_table/cow/v6_simplekeygen_nonhivestyle.zip") as zf:
        zf.extractall(tmp_path)
    base = str(tmp_path / "v6_simplekeygen_nonhivestyle")
    result = runner.invoke(app, ["inspect", base])
    assert result.exit_code == 0, result.output
    assert "snapshot rows 4" in result.output
    result = runner.invoke(app, ["inspect", base, "--as-of", "20240418172802262", "--json"])
    assert json.loads(result.output)["snapshot_rows"] == 3
    result = runner.invoke(app, ["inspect", base, "--as-of", "20990101000000000"])
    assert result.exit_code == EXIT_BAD_INPUT and "not a completed commit" in result.output


def test_inspect_reads_merge_on_read(hudi_fixtures, tmp_path) -> None:
    with zipfile.ZipFile(hudi_fixtures / "sample_table/mor/parquet/v6_nonpartitioned.zip") as zf:
        zf.extractall(tmp_path)
    result = runner.invoke(app, ["inspect", str(tmp_path / "v6_nonpartitioned")])
    assert result.exit_code == 0, result.output
    assert "MERGE_ON_READ" in result.output and "snapshot rows 4" in result.output
    assert "live log files 1" in result.output


def test_inspect_not_a_table(tmp_path) -> None:
    result = runner.invoke(app, ["inspect", str(tmp_path)])
    assert result.exit_code == EXIT_BAD_INPUT and "not a Hudi table" in result.output
