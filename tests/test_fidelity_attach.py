"""`make bench-hudi` apart from `make bench` (T19): the fidelity run is attached to a report by
`--fidelity` or found beside it by git SHA, and a report without one says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from results_factory import make_results

from reports import render_report
from runresults import ResultsError

SCENARIOS = Path(__file__).resolve().parents[1] / "bench" / "scenarios"


def _set_sha(folder: Path, sha: str) -> None:
    run = json.loads((folder / "run.json").read_text())
    run["git"] = {"sha": sha, "dirty": False}
    (folder / "run.json").write_text(json.dumps(run))


def test_bench_hudi_runs_the_default_batches_and_sizes() -> None:
    default = yaml.safe_load((SCENARIOS / "default.yaml").read_text())
    hudi = yaml.safe_load((SCENARIOS / "hudi.yaml").read_text())
    for section in ("workload", "sizing", "maintenance"):
        assert hudi[section] == default[section], section
    # the interleaved rounds run only with the review's gates, which the fidelity run does not measure
    rounds = ("rounds", "checkpoint_rounds")
    assert ({k: v for k, v in hudi["queries"].items() if k not in rounds}
            == {k: v for k, v in default["queries"].items() if k not in rounds})
    assert not [e for e in default["engines"] if e["kind"] == "hudi"], "Apache Hudi's writers run in make bench-hudi"
    assert {e["kind"] for e in hudi["engines"]} >= {"hudi", "cow_baseline", "clustering"}


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
def test_report_names_the_fidelity_run_or_says_none(tmp_path: Path) -> None:
    bench = make_results(tmp_path / "results" / "20260101T000000-default", engines=["baseline", "option2"])
    md = render_report(bench)["report.md"].read_text()
    assert "No fidelity run is attached" in md

    fid = make_results(tmp_path / "results" / "20260101T010000-hudi", engines=["baseline", "hudi_cow"])
    md = render_report(bench)["report.md"].read_text()  # same SHA beside it: found by itself
    assert f"`{fid.resolve()}`" in md and "(baseline vs hudi_cow)" in md

    _set_sha(fid, "1" * 40)  # another commit's run is not this one's evidence
    assert "No fidelity run is attached" in render_report(bench)["report.md"].read_text()
    md = render_report(bench, fidelity_dir=fid)["report.md"].read_text()  # unless asked for by name
    assert "(baseline vs hudi_cow)" in md


def test_fidelity_folder_without_hudi_is_refused(tmp_path: Path) -> None:
    bench = make_results(tmp_path / "a", engines=["baseline"])
    other = make_results(tmp_path / "b", engines=["baseline"])
    with pytest.raises(ResultsError, match="not a fidelity run"):
        render_report(bench, fidelity_dir=other)
