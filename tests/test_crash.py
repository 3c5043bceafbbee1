"""Crash safety, for real: the writer is SIGKILLed at an injection point, the table recovered and the
scenario finished; rows lost / duplicated are counted against ground truth (reduced set of points)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.crashtest import Prefixes, run_crashtest
from reports.render import crash_section
from runresults import Results

CRASH = str(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "crash.yaml")
CRASH_MOR = str(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "crash_mor.yaml")


def test_prefix_start_counts_hits_from_the_copy(tmp_path) -> None:
    p = Prefixes(tmp_path, ["ingest:0", "ingest:1", "maintain:1", "end"],
                 [{}, {"a": 1}, {"a": 2}, {"a": 2, "b": 3}])
    assert p.start_for("a") == (tmp_path / "0", "a", "ingest:0")
    assert p.start_for("a:2") == (tmp_path / "1", "a", "ingest:1")
    assert p.start_for("b:2") == (tmp_path / "2", "b:2", "maintain:1")
    assert p.start_for("c") == (None, "c", "never reached")
    setup = Prefixes(tmp_path, ["ingest:0", "end"], [{"s": 1}, {"s": 3}])
    assert setup.start_for("s") == (None, "s", "table setup")  # hit while the table was created
    assert setup.start_for("s:3") == (tmp_path / "0", "s:2", "ingest:0")


KILLED_MID_ACTION = """
import sys, time
from pathlib import Path
from engines.table import faults
d = Path(sys.argv[1])
with faults.killed_mid_action("ingest.mid_write", lambda: (d / "first").exists()):
    (d / "first").write_text("1")  # the job's first output is on storage ...
    time.sleep(5)
    (d / "second").write_text("2")  # ... and it is killed before the rest
(d / "after").write_text("3")
"""


@pytest.mark.parametrize("target", ["ingest.mid_write", "other.point"])
def test_killed_mid_action_kills_while_the_action_runs(tmp_path, target) -> None:
    env = {**os.environ, "LAYOUTBENCH_CRASH_AT": target}
    rc = subprocess.run([sys.executable, "-c", KILLED_MID_ACTION, str(tmp_path)], env=env, timeout=60,
                        cwd=Path(__file__).resolve().parents[1]).returncode
    written = sorted(p.name for p in tmp_path.iterdir())
    if target == "ingest.mid_write":
        assert (rc, written) == (-9, ["first"])
    else:
        assert (rc, written) == (0, ["after", "first", "second"])


@pytest.mark.slow
def test_crash_matrix_reduced(tmp_path) -> None:
    run = Results(run_crashtest(CRASH, tmp_path, engines=["option1_rfc", "option1_cbd", "option2"],
                                points=["option1.before_commit", "clustering.after_group_written",
                                        "rollback.after_partial_files_removed"]))
    crash = run.table("crash").set_index(["engine", "point"])
    assert len(crash) == 6
    assert crash.recovered.all()
    rfc = crash.loc[("option1_rfc", "option1.before_commit")]
    assert rfc.rows_lost > 0 and rfc.rows_duplicated == 0  # the RFC order's measured hazard
    for key in crash.index.drop(("option1_rfc", "option1.before_commit")):
        row = crash.loc[key]
        assert (row.rows_lost, row.rows_duplicated, row.query_failures) == (0, 0, 0), key
        details = json.loads(row.details)
        assert details["crashed"] and details["query_matches_truth"], key
        assert row.hudi_rs_agrees, key
    rollback = json.loads(crash.loc[("option2", "rollback.after_partial_files_removed")].details)
    assert rollback["first_crash"] == "clustering.after_group_written" and rollback["rollback_rc"] == -9
    assert all(r["rows_lost"] == 0 for r in run.run["crashtest"]["reference_runs"].values())
    matrix = crash_section(run)
    assert f"| option1.before_commit | ok | lost {int(rfc.rows_lost)} | - |" in matrix, matrix


@pytest.mark.slow
def test_crash_matrix_reduced_mor(tmp_path) -> None:
    """Option 2 on MERGE_ON_READ killed inside its compaction: recovered, nothing lost or duplicated."""
    run = Results(run_crashtest(CRASH_MOR, tmp_path, points=["compaction.after_group_written"]))
    crash = run.table("crash").set_index(["engine", "point"])
    row = crash.loc[("option2_mor", "compaction.after_group_written")]
    assert len(crash) == 1 and row.recovered and row.hudi_rs_agrees
    assert (row.rows_lost, row.rows_duplicated, row.query_failures) == (0, 0, 0)
    details = json.loads(row.details)
    assert details["crashed"] and details["query_matches_truth"]


def test_engine_points_are_the_steps_each_engine_passes() -> None:
    from bench.engine_points import points_for_kind

    rfc = points_for_kind("append_compaction", {"order": "rfc"})
    cbd = points_for_kind("append_compaction", {"order": "commit_before_delete"})
    cbd_now = points_for_kind("append_compaction", {"order": "commit_before_delete", "cbd_delete": "immediate"})
    assert "option1.after_old_file_deleted" in rfc and "clean.after_file_deleted" not in rfc
    assert "option1.after_old_file_deleted" not in cbd and "clean.after_file_deleted" in cbd
    assert "option1.after_old_file_deleted" in cbd_now
    assert all(len(set(p)) == len(p) for p in (rfc, cbd, cbd_now))
