"""The registry of engine kinds (engines/kinds.py): a new kind is its package plus one entry.

The tiny kind (tests/tiny_kind/: an engine and its simulated behaviour) is registered, run through
the simulator and the report, and removed, with no edit to reports or to the simulator's core."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bench.engine_factory import build_engine
from bench.scenario import ScenarioError, parse_scenario
from bench.simulate.simulator import simulate
from engines.kinds import KINDS, EngineKind, family_of, kind_of
from reports.render import render_report
from runresults import Results

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"
TINY = EngineKind("Tiny append (test)", "APPEND sorted by service, never maintained",
                  "tiny_kind.engine:TinyAppendEngine", "engines.append_compaction.engine:Option1Config",
                  "engines.append_compaction.config:CompactionConfig", "compaction", role="reference",
                  maintains=False, settings="append_compaction", sim="tiny_kind.sim:TinyAppendSim")
KIND_NAMES = "|".join(KINDS)


def _scenario() -> dict:
    doc = yaml.safe_load(SMALL.read_text())
    off = {"hoodie.parquet.bloom.filter.enabled": False}
    doc["engines"] = [{"name": "control", "kind": "append_only", "config": off},
                      {"name": "tiny", "kind": "tiny_append", "config": off},
                      {"name": "option1_rfc", "kind": "append_compaction", "config": {"order": "rfc", **off}}]
    # files cut small enough that a batch's partition is several files: sorting decides their ranges
    doc["sizing"].update(small_file_limit_mb=0.04, target_file_mb=0.05, max_file_mb=0.05)
    return doc


def test_a_new_kind_is_its_package_plus_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "tiny_append", TINY)
    scenario = parse_scenario(_scenario())
    engine = build_engine(scenario.engines[1], scenario, str(tmp_path / "table"))  # generic, from the entry
    assert type(engine).__name__ == "TinyAppendEngine" and engine.config.sort_columns == ("service",)
    engine.close()

    run = Results(simulate(scenario, tmp_path / "sim", run_id="sim"))
    assert run.run["simulation"]["not_simulated"] == []
    commits, queries = run.table("commits"), run.table("queries")
    tiny, control = commits[commits.engine == "tiny"], commits[commits.engine == "control"]
    assert set(tiny.kind) == {"ingest"} and len(tiny) == scenario.workload.num_batches  # never maintained
    assert tiny.files_written.tolist() == control.files_written.tolist()  # the same APPEND ...
    assert run.table("maintenance").query("engine == 'tiny'").empty
    q = queries[queries["query"] == "service_hours"]
    scanned = {e: int(q[q.engine == e].files_scanned.sum()) for e in ("tiny", "control")}
    assert scanned["tiny"] < scanned["control"], scanned  # ... sorted by service: its own behaviour

    report = render_report(run.folder)["report.md"].read_text()
    assert "Tiny append (test)" in report and family_of("tiny_append") == "Tiny append (test)"

    monkeypatch.delitem(KINDS, "tiny_append")
    with pytest.raises(ScenarioError, match="unknown engine kind"):
        parse_scenario(_scenario())


def test_no_module_outside_the_registry_compares_a_kind_string() -> None:
    literal = rf"['\"]({KIND_NAMES})['\"]"
    compared = re.compile(rf"kind(\"\))? *(==|!=|not in|in) *[({{]?{literal}|{literal} *(==|!=) *[a-z_.]*kind\b")
    found = [f"{p.relative_to(REPO)}:{i}" for top in ("engines", "bench", "reports", "runresults", "workloads")
             for p in sorted((REPO / top).rglob("*.py")) if p != REPO / "engines" / "kinds.py"
             for i, line in enumerate(p.read_text().splitlines(), 1) if compared.search(line)]
    assert found == []


def test_every_kind_answers_the_registry_questions() -> None:
    for name, entry in KINDS.items():
        assert kind_of(name) is entry and entry.family and entry.label
        for field in ("engine", "config", "planner", "sim"):
            if getattr(entry, field):
                assert entry.load(field) is not None, (name, field)
        assert entry.simulated == (entry.sim is not None)
    with pytest.raises(ValueError, match="unknown engine kind 'warp_drive'; known: cow_baseline"):
        kind_of("warp_drive")
