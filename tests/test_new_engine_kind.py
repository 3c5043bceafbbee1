"""A new engine kind is its package plus one registry entry (T20): a design kind written here into a
temporary package (``engine.py``, ``sim.py``), with one config key of its own declared in its entry, goes
through ``layoutbench validate``, the simulator's core, a real run (the runner, real Spark and Parquet) and
the report, then is removed. Nothing under engines/, bench/, reports/ or runresults/ is edited for it."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.engine_factory import build_engine
from bench.runner import run_scenario
from bench.scenario import ScenarioError, parse_scenario
from bench.simulate.results_folder import simulate
from engines.config import parsers as p
from engines.config.registry import Setting, for_kind
from engines.kinds import KINDS, EngineKind, design_families, register, unregister
from reports.render import render_report
from runresults import Results
from runresults.review import review_of

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"
NAME, FAMILY = "tiny_design", "Tiny design (test)"

ENGINE = '''
"""Option 1 whose APPEND ingest (and compaction) sorts by service when its own key says so."""

from dataclasses import dataclass, replace

from engines.append_compaction.engine import AppendCompactionEngine, Option1Config
from engines.config.registry import settings


@dataclass
class TinyConfig(Option1Config, settings(kind="tiny_design")):
    """Option 1's config and the kind's own key (tiny_by_service), from the config registry."""


class TinyEngine(AppendCompactionEngine):
    def __init__(self, table, config, name=None, on_step=None):
        config = replace(config, sort_columns=("service",)) if config.tiny_by_service else config
        super().__init__(table, config, name or "tiny_design", on_step)
'''
SIM = '''
"""The tiny design on the simulator's table: Option 1's, sorted by service when its own key says so."""

from engines.append_compaction.sim import AppendCompactionSim


class TinySim(AppendCompactionSim):
    def __init__(self, planner, options):
        by_service = {"sort_columns": ["service"]} if options.get("tiny_by_service") else {}
        super().__init__(planner, {**options, **by_service})
'''
ENTRY = EngineKind(
    FAMILY, "Option 1 with APPEND ingest sorted by service (a test kind)", "tiny_pkg.engine:TinyEngine",
    "tiny_pkg.engine:TinyConfig", "engines.append_compaction.config:CompactionConfig", "compaction",
    service="compaction", fault_points="option1", settings=NAME, sim="tiny_pkg.sim:TinySim",
    keys=(Setting("tiny_by_service", (NAME,), False, p.boolean, "", "sort each batch by service before it is written"),))


def _scenario_doc(value: object = True) -> dict:
    doc = yaml.safe_load(SMALL.read_text())
    doc["workload"]["num_batches"] = 3
    doc["engines"] = [{"name": "control", "kind": "append_only", "config": {"hoodie.parquet.bloom.filter.enabled": False}},
                      {"name": "tiny", "kind": NAME, "config": {"tiny_by_service": value}}]
    doc["maintenance"]["every_commits"] = 2
    doc["queries"].update(checkpoint_every=3, rounds=1)
    doc["isolation"]["enabled"] = False
    doc["spark"]["master"] = "local[1]"
    return doc


def _write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def tiny_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - the package's folder
    package = tmp_path / "pkgs" / "tiny_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A test engine kind."""\n')
    (package / "engine.py").write_text(textwrap.dedent(ENGINE))
    (package / "sim.py").write_text(textwrap.dedent(SIM))
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    register(NAME, ENTRY)
    try:
        yield package
    finally:
        if NAME in KINDS:
            unregister(NAME)


def test_a_new_design_kind_is_its_package_plus_one_entry(tiny_kind: Path, tmp_path: Path, spark) -> None:  # noqa: ANN001
    # validate: the kind and its own key are known, a bad value of the key is refused naming it
    runner = CliRunner()
    ok = runner.invoke(app, ["validate", str(_write(tmp_path / "ok.yaml", _scenario_doc()))])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["validate", str(_write(tmp_path / "bad.yaml", _scenario_doc("sideways")))])
    assert bad.exit_code == EXIT_BAD_INPUT and "tiny_by_service" in bad.output, bad.output
    assert FAMILY in design_families()

    scenario = parse_scenario(_scenario_doc())
    # the engine factory builds it generically from the entry, its own key through the config registry
    engine = build_engine(scenario.engines[1], scenario, str(tmp_path / "table"))
    assert type(engine).__name__ == "TinyEngine" and engine.config.tiny_by_service is True
    assert engine.config.sort_columns == ("service",)  # the key's behaviour, in its own package
    engine.close()
    # the simulator's core, through the kind's sim.py
    sim = Results(simulate(scenario, tmp_path / "sim", run_id="sim"))
    assert sim.run["simulation"]["not_simulated"] == []
    commits = sim.table("commits")
    tiny = commits[commits.engine == "tiny"]
    assert set(tiny.kind) == {"ingest", "compaction"}, set(tiny.kind)  # its own service ran

    # a real run: the runner builds it from the entry, runs its compaction, and the report shows its family
    run = Results(run_scenario(scenario, out=tmp_path / "runs", progress=False, run_id="real"))
    real = run.table("commits")
    assert len(real[(real.engine == "tiny") & (real.kind == "ingest")]) == 3
    assert not run.table("maintenance").query("engine == 'tiny'").empty
    assert run.run["engines"]["tiny"]["config"]["tiny_by_service"] is True
    review = review_of(run)  # the verdict's review: the new design competes, under its own family
    assert review["candidates"]["tiny"]["family"] == FAMILY and review["candidates"]["tiny"]["competes"]
    assert "tiny" not in review["references"]
    report = render_report(run.folder)["report.md"].read_text()
    assert FAMILY in report, report

    # removed: the kind and its key are gone, and nothing tracked under the harness was edited for it
    unregister(NAME)
    assert "tiny_by_service" not in for_kind(NAME) and FAMILY not in design_families()
    with pytest.raises(ScenarioError, match="unknown engine kind"):
        parse_scenario(_scenario_doc())
    edited = subprocess.run(["git", "status", "--porcelain", "--", "engines", "bench", "reports", "runresults"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "tiny" not in edited
