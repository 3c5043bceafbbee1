"""Run comparison and the CI gate: a worsened copy is flagged (more files, more bytes, 2x slower),
identical runs pass; the gate fails on any layout change and on a 4x slower ratio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from results_factory import make_results, worsen

from bench.perfcheck import BASELINE
from reports import compare_runs
from reports.compare import timing_verdict
from reports.perfcheck import (
    RATIO_TOLERANCE,
    best_of,
    check,
    extract_figures,
    only_timing_regressed,
    perf_check,
    write_baseline,
)
from runresults import Results


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    a = make_results(root / "a")
    same = make_results(root / "same")
    return a, same, worsen(a, root / "worse")


def test_identical_runs_pass(runs) -> None:
    a, same, _ = runs
    res = compare_runs(a, same)
    assert not res.regressed, [r for r in res.rows if r["verdict"] == "regressed"]
    assert res.counts()["same"] == len(res.rows)
    assert (same / "compare.md").read_text().startswith("# a (A) vs same (B)")


def test_worsened_copy_is_flagged(runs) -> None:
    a, _, worse = runs
    res = compare_runs(a, worse)
    bad = {(r["engine"], r["metric"]) for r in res.rows if r["verdict"] == "regressed"}
    for engine in Results(a).engines:
        for metric in ("live files", "physical files", "bytes written", "WA", "ingest p50 s"):
            assert (engine, metric) in bad, (engine, metric)
    assert ("option2", "maintenance s") in bad and ("option2", "service_hours warm median s") in bad
    row = next(r for r in res.rows if r["engine"] == "option2" and r["metric"] == "ingest p50 s")
    assert row["change"] == "2.00x"
    # the other direction improves
    back = compare_runs(worse, a, out=worse.parent / "back")
    assert not back.regressed and back.counts()["improved"] > 0


def test_compare_cli_exit_code(runs) -> None:
    from typer.testing import CliRunner

    from bench.cli import app

    a, same, worse = runs
    cli = CliRunner()
    assert cli.invoke(app, ["compare", str(a), str(same)]).exit_code == 0
    assert cli.invoke(app, ["compare", str(a), str(worse)]).exit_code == 1


def test_missing_engine_regresses(runs, tmp_path: Path) -> None:
    a, _, _ = runs
    fewer = make_results(tmp_path / "fewer", engines=["baseline", "option2"])
    res = compare_runs(a, fewer)
    assert res.regressed
    assert {"option1_rfc", "option1_cbd"} <= {r["engine"] for r in res.rows if r["metric"] == "(engine)"}


def test_timing_rule() -> None:
    assert timing_verdict(1.0, 1.4, 1.5)[1] == "same"
    assert timing_verdict(1.0, 2.0, 1.5)[1] == "regressed"
    assert timing_verdict(1.0, 0.5, 1.5)[1] == "improved"
    assert timing_verdict(0.001, 0.004, 1.5, min_delta_s=0.01)[1] == "same"  # jitter on tiny timings
    assert timing_verdict(1.0, None, 1.5)[1] == "regressed"


def test_perf_gate_on_results_folders(runs, tmp_path: Path) -> None:
    a, same, worse = runs
    baseline = write_baseline(Results(a), tmp_path / "ci.json", reason="test baseline")
    stored = json.loads(baseline.read_text())
    assert stored["reason"] == "test baseline" and stored["calibration"]["pyarrow_rewrite_s"] == 0.25
    assert not perf_check(baseline, same).regressed
    res = perf_check(baseline, worse)
    bad = {r["metric"] for r in res.rows if r["verdict"] == "regressed"}
    assert {"live_files", "bytes_written", "wa"} <= bad
    assert "option2.ingest_p50/spark_plain_append" not in bad  # 2x is inside the 3x tolerance
    slow = worsen(a, tmp_path / "slow", extra_files=0, bytes_factor=1.0, slower=4.0)
    bad = {r["metric"] for r in perf_check(baseline, slow).rows if r["verdict"] == "regressed"}
    assert bad and all("/" in m for m in bad)  # only the timing ratios
    with pytest.raises(ValueError):
        write_baseline(Results(a), tmp_path / "x.json", reason=" ")


def test_perf_gate_fails_on_any_layout_change() -> None:
    baseline = json.loads(BASELINE.read_text())
    assert not check(baseline, json.loads(json.dumps(baseline))).regressed
    engine = next(iter(baseline["deterministic"]))
    for delta in (1, -1):  # fewer files is a change too: the baseline must be updated with a reason
        changed = json.loads(json.dumps(baseline))
        changed["deterministic"][engine]["live_files"] += delta
        assert check(baseline, changed).regressed
    slow = json.loads(json.dumps(baseline))
    key = next(iter(slow["ratios"]))
    slow["ratios"][key] *= RATIO_TOLERANCE + 1
    assert check(baseline, slow).regressed
    assert only_timing_regressed(check(baseline, slow))  # a slow ratio earns a re-run ...
    assert not check(baseline, best_of(slow, baseline)).regressed  # ... and passes if the re-run is fast
    assert check(baseline, best_of(slow, slow)).regressed
    extra = json.loads(json.dumps(baseline))
    extra["deterministic"]["newcomer"] = dict(extra["deterministic"][engine])
    assert check(baseline, extra).regressed
    assert not only_timing_regressed(check(baseline, extra))  # layout changes never get a re-run


def test_extract_figures_without_calibration(tmp_path: Path) -> None:
    run = make_results(tmp_path / "run", engines=["option2"], calibration=False)
    figures = extract_figures(Results(run))
    assert figures["ratios"] == {} and figures["deterministic"]["option2"]["live_files"] == 3
    assert extract_figures(Results(run), {"pyarrow_rewrite_s": 1.0})["ratios"]
