"""Reports from a results folder alone: every engine in the tables, valid PNGs, a self-contained HTML,
a design review computed from the numbers (a synthetic folder, and one real small run)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from results_factory import make_results

from reports import render_report
from reports.answer import gates_frame, ledger_frame
from reports.design_review import findings
from reports.summary import summarize
from runresults import Results
from runresults.review import review

PNG = b"\x89PNG\r\n\x1a\n"
PLOTS = {"live_files", "physical_files", "bytes_written", "write_amplification", "space_amplification",
         "ingest_latency", "maintenance", "query_latency", "query_final", "query_files_scanned"}


@pytest.fixture(scope="module")
def factory_run(tmp_path_factory) -> Path:
    return make_results(tmp_path_factory.mktemp("reports") / "run", crash=True)


def _check_report(run_dir: Path, engines: list[str], plots: set[str]) -> dict[str, Path]:
    paths = render_report(run_dir, design_review=True)
    md = paths["report.md"].read_text()
    summary = md.split("## Summary per engine", 1)[1].split("##", 1)[0]
    for engine in engines:
        assert f"| {engine} |" in summary, engine
    assert "## Design review" in md and "| criterion |" in md and "### Findings" in md
    assert "### When the answer would change" in md
    assert plots <= set(paths), plots - set(paths)
    for name, p in paths.items():
        if not name.startswith("report"):
            assert p.is_file() and p.read_bytes()[:8] == PNG, name
            assert f"plots/{p.name}" in md
    html = paths["report.html"].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)
    assert "<link" not in html and "<script" not in html and "@import" not in html
    assert html.count("data:image/png;base64,") == len(paths) - 2
    return paths


def test_report_from_synthetic_folder(factory_run: Path) -> None:
    paths = _check_report(factory_run, list(Results(factory_run).engines), PLOTS)
    md = paths["report.md"].read_text()
    # setup: scenario, machine, versions, git SHA
    for text in ("scenario `factory`", "2 cores", "pyarrow", "0" * 40, "same-run calibration"):
        assert text in md, text
    # summary columns the issue lists
    header = next(line for line in md.splitlines() if line.startswith("| engine | design |"))
    for col in ("WA", "space amp peak", "space amp final", "ingest p50 s", "ingest p95 s", "ingest max s",
                "ingest MB/s", "maintenance s", "maintenance MB written", "live files", "physical files",
                "mean file MB", "isolation ok/failed/wrong", "verification", "service_hours s (files)"):
        assert f"| {col} |" in header, col
    assert "| option1_rfc | Option 1 |" in md and "| 5/3/1 |" in md
    html = paths["report.html"].read_text()
    assert "<table>" in html and "<strong>option1_rfc</strong>" in html


def test_design_review_is_computed(factory_run: Path) -> None:
    """The review's tables come from the folder: option1_rfc fails isolation and no loss (the factory's
    reader failures and crash losses) and so shows in the gates table only; every other candidate
    has a ledger. (The old table showed each design's best variant per criterion, which put
    option1_rfc's space amplification beside option1_cbd's ingest: that mix is gone.)"""
    results = Results(factory_run)
    summaries = summarize(results)
    rev = review(results)
    gates = gates_frame(rev).set_index("candidate")
    assert gates.loc["option1_rfc", "isolation (required)"].startswith("FAIL 4 of 9")
    assert gates.loc["option1_rfc", "no loss (required)"].startswith("FAIL 1 of 2, 10583 rows lost")
    assert gates.loc["option1_cbd", "isolation (required)"].startswith("pass (9 checked")
    assert gates.loc["baseline", "incremental (required)"] == "not measured"
    ledger = ledger_frame(rev)
    assert "option1_rfc" not in set(ledger.candidate) and {"baseline", "option1_cbd", "option2"} <= set(ledger.candidate)
    assert rev["choice"]["run"]["representatives"]["Option 1"] == "option1_cbd"
    text = "\n".join(findings(results, summaries))
    assert "4 of 9 reader queries during compaction failed or returned wrong rows (3 failed, 1 wrong" in text
    assert "missed up to 3048 rows" in text
    assert "space amplification peaks at 2.000x" in text and "scenario `factory`" in text


def test_missing_figures_say_so(tmp_path: Path) -> None:
    run = make_results(tmp_path / "run", engines=["option1_cbd", "option2"], crash=False, calibration=False)
    md = render_report(run, design_review=True)["report.md"].read_text()
    assert "Crash safety figure missing" in md
    assert "Baseline: no engine of this design in the run" in md
    assert "| not measured |" in md  # the gates no row checked
    assert "Not measured in this run, so not part of the choice: no loss, incremental, time travel" in md


def test_report_of_real_small_run(small_run, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(small_run.folder, run_dir, ignore=shutil.ignore_patterns("tables"))
    md = _check_report(run_dir, small_run.engines, PLOTS - {"maintenance"})["report.md"].read_text()
    assert "- generation: " in md and "% of the median ingest of one batch by one engine" in md


def test_simulation_fills_conditions(factory_run: Path, tmp_path: Path) -> None:
    sim = make_results(tmp_path / "sim", engines=["option1_cbd", "option2"], batches=24)
    run = json.loads((sim / "run.json").read_text())
    run.update(simulated=True, simulation={"horizon_batches": 24, "requests": {"option2": {"put": 10, "usd": 0.01}}})
    (sim / "run.json").write_text(json.dumps(run))
    out = tmp_path / "run"
    shutil.copytree(factory_run, out)
    md = render_report(out, design_review=True, simulation_dir=sim)["report.md"].read_text()
    assert "At scale (simulated `factory`, 24 batches): option2 WA" in md and "≈ $0.01" in md
    assert "No simulation was attached" not in md


def test_crash_run_attached_with_report_crash(tmp_path: Path) -> None:
    """``report --crash CRASH_RUN``: a run without crash rows gets its crash criteria, verdict and
    matrix from a crash test's folder, engines matched by name; a folder with no crash rows is refused."""
    run = make_results(tmp_path / "run", crash=False)
    crash_run = make_results(tmp_path / "crash", crash=True)
    plain = render_report(run, design_review=True)["report.md"].read_text()
    assert "crashtest` and attach it with" in plain
    md = render_report(run, design_review=True, crash_dir=crash_run)["report.md"].read_text()
    assert "attached with `--crash`" in md
    expected = {s.engine: s.crash_points for s in summarize(Results(crash_run))}
    got = {s.engine: s.crash_points for s in summarize(Results(run), Results(crash_run))}
    assert got == expected and any(got.values())
    assert "no crash test attached" not in md.split("## Setup", 1)[0]
    from runresults import ResultsError

    with pytest.raises(ResultsError, match="no crash rows"):
        render_report(run, design_review=True, crash_dir=run)
