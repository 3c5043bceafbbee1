"""Scenario validation: every shipped scenario validates; malformed files get one message naming every problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.scenario import ScenarioError, load_scenario
from runresults import Results

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "bench" / "scenarios").glob("*.yaml"))
runner = CliRunner()


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_shipped_scenarios_validate(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.engines
    # the simulator's scenarios (sim_*) would not fit a real run's disk: checked for `simulate`
    result = runner.invoke(app, ["validate", str(path), *(["--simulate"] if path.name.startswith("sim_") else [])])
    assert result.exit_code == 0, result.output


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_every_problem_in_one_message(tmp_path: Path) -> None:
    p = write(tmp_path, """
name: bad
colour: blue
workload: {num_batches: 0, batch_mb: -1}
engines:
  - {name: a, kind: cow_baseline}
  - {name: a, kind: warp_drive}
queries: {warm_runs: "three", suite: [nope]}
sizing: {small_file_limit_mb: 200, max_file_mb: 100}
""")
    with pytest.raises(ScenarioError) as err:
        load_scenario(p)
    msg = str(err.value)
    for fragment in ["colour: unknown key", "workload.num_batches", "engines.1.kind", "queries.warm_runs",
                     "queries.suite", "sizing"]:
        assert fragment in msg, (fragment, msg)
    result = runner.invoke(app, ["validate", str(p)])
    assert result.exit_code == EXIT_BAD_INPUT and "colour" in result.output


@pytest.mark.parametrize("text,needle", [
    ("- just a list", "must be a YAML mapping"),
    ("name: x\nworkload: {}\nengines: [", "not valid YAML"),
    ("name: x\nworkload: {}\nengines: []", "at least one engine"),
    ("name: x\nworkload: {}\nengines: [{name: a, kind: clustering}, {name: a, kind: clustering}]", "unique"),
])
def test_malformed_files(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ScenarioError, match=needle):
        load_scenario(write(tmp_path, text))


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="does not exist"):
        load_scenario(tmp_path / "nope.yaml")


def test_select_engines_rejects_unknown(tmp_path: Path) -> None:
    sc = load_scenario(SCENARIOS[0])
    with pytest.raises(ScenarioError, match="unknown engines"):
        sc.select_engines(["nope"])


def test_corrections_refused_for_an_engine_that_takes_inserts_only(tmp_path: Path) -> None:
    """``update_fraction`` > 0 naming the append-only control and the Delta peer: one message naming both,
    exit 3, before Spark starts; the COW baseline and Option 1 take updates (through the COW merge)."""
    text = ("name: x\nworkload: {num_batches: 2, batch_records: 100, batch_mb: null, update_fraction: 0.1}\n"
            "engines:\n  - {name: base, kind: cow_baseline}\n  - {name: o1, kind: append_compaction}\n"
            "  - {name: ctl, kind: append_only}\n  - {name: delta, kind: delta_peer}\n")
    p = write(tmp_path, text)
    result = runner.invoke(app, ["validate", str(p)])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    out = " ".join(result.output.split())
    assert "ctl (kind append_only), delta (kind delta_peer)" in out and "take inserts only" in out
    assert "update_fraction is 0.1" in out
    assert "base (kind" not in out and "o1 (kind" not in out
    assert "Traceback" not in result.output
    p.write_text(text.replace("update_fraction: 0.1", "update_fraction: 0.0"))
    assert runner.invoke(app, ["validate", str(p)]).exit_code == 0
    kept = text.replace("  - {name: ctl, kind: append_only}\n  - {name: delta, kind: delta_peer}\n", "")
    p.write_text(kept)
    assert runner.invoke(app, ["validate", str(p)]).exit_code == 0
    p.write_text(kept.replace("update_fraction: 0.1", "delete_fraction: 0.1"))
    result = runner.invoke(app, ["validate", str(p)])
    assert result.exit_code == EXIT_BAD_INPUT and "no deletes" in " ".join(result.output.split())


def test_corrections_are_refused_where_the_simulator_would_ignore_them(tmp_path: Path) -> None:
    """The simulator models the copy-on-write upsert of a workload with corrections and MERGE_ON_READ
    Option 2's log files, compaction and inserts appended to small groups' logs (T21), not a MOR engine
    whose compaction the maintenance round schedules: a review projection and `simulate` go ahead without
    such an engine (their upsert commits in the figures), and with one both are refused, naming it,
    rather than giving figures of a compaction it does not model."""
    text = ("name: x\nworkload: {num_batches: 2, batch_records: 100, batch_mb: null, update_fraction: 0.1}\n"
            "engines:\n  - {name: base, kind: cow_baseline}\n")
    mor = ("  - {name: mor, kind: clustering, config: {table_type: MERGE_ON_READ}}\n"
           "  - {name: morlogs, kind: clustering, config: {table_type: MERGE_ON_READ, "
           "hoodie.parquet.small.file.limit: 4194304}}\n")
    late = "  - {name: morasync, kind: clustering, config: {table_type: MERGE_ON_READ, compaction_inline: false}}\n"
    p = write(tmp_path, text + mor + "review: {project: true}\n")
    assert runner.invoke(app, ["validate", str(p)]).exit_code == 0
    p = write(tmp_path, text + mor + late + "review: {project: true}\n")
    result = runner.invoke(app, ["validate", str(p)])
    out = " ".join(result.output.split())
    assert result.exit_code == EXIT_BAD_INPUT and "review.project" in out and "morasync (kind clustering_mor)" in out
    p = write(tmp_path, text + mor + late)
    result = runner.invoke(app, ["simulate", str(p), "--out", str(tmp_path / "out")])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    out = " ".join(result.output.split())
    assert "morasync (kind clustering_mor)" in out and "MERGE_ON_READ" in out and not (tmp_path / "out").exists()
    p = write(tmp_path, text + mor)
    result = runner.invoke(app, ["simulate", str(p), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    commits = Results(next((tmp_path / "out").iterdir())).table("commits")
    assert list(commits[commits.engine == "base"].kind) == ["ingest", "ingest", "upsert"]
    mine = commits[commits.engine == "mor"]
    assert list(mine.kind[:3]) == ["ingest", "ingest", "upsert"] and set(mine.action[:3]) == {"deltacommit"}
    shutil.rmtree(tmp_path / "out")
    p = write(tmp_path, text)
    result = runner.invoke(app, ["simulate", str(p), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    commits = Results(next((tmp_path / "out").iterdir())).table("commits")
    assert list(commits.kind) == ["ingest", "ingest", "upsert"]
