"""Reports from a real small run: every engine in the tables, valid PNGs, a self-contained HTML;
compare flags a worsened copy and passes identical runs; the CI gate catches a layout change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from bench.cli import app
from bench.perfcheck import check
from reports import compare_runs, render_report

runner = CliRunner()


def test_report_contents(small_run, tmp_path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(small_run.folder, run_dir, ignore=shutil.ignore_patterns("tables"))
    paths = render_report(run_dir, design_review=True)
    md = paths["report.md"].read_text()
    for engine in small_run.engines:
        assert f"| {engine} |" in md
    assert "## Design review" in md and "| criterion |" in md and "### Findings" in md
    for name, p in paths.items():
        if name.startswith("report"):
            continue
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    html = paths["report.html"].read_text()
    assert "http://" not in html and "https://" not in html
    assert html.count("data:image/png;base64,") == len(paths) - 2


def _worsen(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("tables"))
    t = pq.read_table(dst / "commits.parquet").to_pandas()
    t["live_files"] += 3
    t["bytes_written"] = t["bytes_written"] * 2
    t["duration_s"] = t["duration_s"] * 2
    import pyarrow as pa

    from bench.results import TABLES

    pq.write_table(pa.Table.from_pandas(t, schema=TABLES["commits"], preserve_index=False), dst / "commits.parquet")


def test_compare_flags_worse_and_passes_identical(small_run, tmp_path) -> None:
    assert not compare_runs(small_run.folder, small_run.folder, out=tmp_path).regressed
    worse = tmp_path / "worse"
    _worsen(small_run.folder, worse)
    res = compare_runs(small_run.folder, worse)
    bad = {(r["engine"], r["metric"]) for r in res.rows if r["verdict"] == "regressed"}
    assert ("baseline", "live files") in bad and ("option2", "bytes written") in bad
    assert ("option2", "ingest p50 s") in bad
    result = runner.invoke(app, ["compare", str(small_run.folder), str(worse)])
    assert result.exit_code == 1


def test_perf_gate_fails_on_layout_change() -> None:
    baseline = json.loads((Path(__file__).resolve().parents[1] / "bench" / "baselines" / "ci.json").read_text())
    same = json.loads(json.dumps(baseline))
    assert not check(baseline, same).regressed
    changed = json.loads(json.dumps(baseline))
    engine = next(iter(changed["deterministic"]))
    changed["deterministic"][engine]["live_files"] += 1
    assert check(baseline, changed).regressed
    slow = json.loads(json.dumps(baseline))
    key = next(iter(slow["ratios"]))
    slow["ratios"][key] *= 4
    assert check(baseline, slow).regressed
