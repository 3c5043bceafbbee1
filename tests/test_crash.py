"""Crash safety, for real: the writer is SIGKILLed at an injection point, the table recovered and the
scenario finished; rows lost / duplicated are counted against ground truth (reduced set of points)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.crashtest import run_crashtest
from bench.results import Results

CRASH = str(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "crash.yaml")


@pytest.mark.slow
def test_crash_matrix_reduced(tmp_path) -> None:
    run = Results(run_crashtest(CRASH, tmp_path, engines=["option1_rfc", "option1_cbd", "option2"],
                                points=["option1.before_commit", "clustering.after_group_written"]))
    crash = run.table("crash").set_index(["engine", "point"])
    assert len(crash) == 3
    assert crash.recovered.all()
    rfc = crash.loc[("option1_rfc", "option1.before_commit")]
    assert rfc.rows_lost > 0 and rfc.rows_duplicated == 0  # the RFC order's measured hazard
    for key in [("option1_cbd", "option1.before_commit"), ("option2", "clustering.after_group_written")]:
        row = crash.loc[key]
        assert (row.rows_lost, row.rows_duplicated, row.query_failures) == (0, 0, 0), key
        assert '"crashed": true' in row.details, key
        assert row.hudi_rs_agrees
