"""Crash safety, for real: the writer is SIGKILLed at an injection point, the table recovered and the
scenario finished; rows lost / duplicated are counted against ground truth (reduced set of points)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.crashtest import Prefixes, run_crashtest
from bench.results import Results
from reports.render import crash_section

CRASH = str(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "crash.yaml")


def test_prefix_start_counts_hits_from_the_copy(tmp_path) -> None:
    p = Prefixes(tmp_path, ["ingest:0", "ingest:1", "maintain:1", "end"],
                 [{}, {"a": 1}, {"a": 2}, {"a": 2, "b": 3}])
    assert p.start_for("a") == (tmp_path / "0", "a", "ingest:0")
    assert p.start_for("a:2") == (tmp_path / "1", "a", "ingest:1")
    assert p.start_for("b:2") == (tmp_path / "2", "b:2", "maintain:1")
    assert p.start_for("c") == (None, "c", "never reached")


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
