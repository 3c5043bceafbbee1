"""The registry of engine kinds (engines/kinds.py): a new kind is its package plus one entry.

The tiny kind (tests/tiny_kind/: an engine and its simulated behaviour) is registered, run through
the simulator and the report, and removed, with no edit to reports or to the simulator's core."""

from __future__ import annotations

from pathlib import Path

import kind_strings
import pytest
import yaml

from bench.engine_factory import build_engine
from bench.scenario import ScenarioError, parse_scenario
from bench.simulate.results_folder import simulate
from engines.kinds import KINDS, EngineKind, family_of, kind_of
from reports.render import render_report
from runresults import Results

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "bench" / "scenarios" / "small.yaml"
TINY = EngineKind("Tiny append (test)", "APPEND sorted by service, never maintained",
                  "tiny_kind.engine:TinyAppendEngine", "engines.append_compaction.engine:Option1Config",
                  "engines.append_compaction.config:CompactionConfig", "compaction", role="reference",
                  maintains=False, settings="append_compaction", sim="tiny_kind.sim:TinyAppendSim")


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
    assert kind_strings.scan() == []


# Each shape a kind's name can decide by, planted in a module outside the registry (tests/kind_strings.py)
PLANTED = {
    "subscript": 'def f(info):\n    return info["kind"] == "clustering"\n',
    "list": 'def f(kind):\n    return kind in ["clustering"]\n',
    "tuple": 'def f(kind):\n    return kind not in ("append_only", "delta_peer")\n',
    "any variable": 'def f(k):\n    return k == "append_only"\n',
    "dict key": 'def f(kind):\n    return {"clustering": 1}[kind]\n',
    "startswith": 'def f(kind):\n    return kind.startswith("hudi")\n',
    "case": 'def f(kind):\n    match kind:\n        case "clustering":\n            return 1\n',
    "registry constants": "from engines.config.registry import COW, O2\n\ndef f(kind):\n    return kind in (COW, O2)\n",
    "module constant": 'CONTROL = "append_only"\n\ndef f(engine):\n    return engine != CONTROL\n',
    "class constant": 'class C:\n    KIND = "hudi"\n',
    "parameter default": 'def f(frame, slow="append_only"):\n    return frame[slow]\n',
    "engine spec": 'def f(EngineSpec):\n    return EngineSpec(name="w", kind="clustering")\n',
}
# "clustering" and "hudi" are a table service and a table format too: outside a kind's context they pass
NOT_A_KIND = 'def f(entry, split):\n    return entry.service == "clustering" or split in ("even", "hudi")\n'


@pytest.mark.parametrize("shape", sorted(PLANTED))
def test_the_guard_finds_a_planted_kind_comparison(shape: str, tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(PLANTED[shape])
    names = set(kind_strings.registered())
    found = list(kind_strings.findings(planted, names, "bench/planted.py", kind_strings.shared_words(),
                                       kind_strings.defined_constants()))
    assert found, shape
    planted.write_text(NOT_A_KIND)
    assert list(kind_strings.findings(planted, names, "bench/planted.py", kind_strings.shared_words())) == []


def test_a_planted_comparison_fails_the_whole_scan(tmp_path: Path) -> None:
    for top in kind_strings.TOPS:
        (tmp_path / top).mkdir()
    assert kind_strings.scan(tmp_path) == []
    (tmp_path / "reports" / "planted.py").write_text(PLANTED["module constant"])
    assert kind_strings.scan(tmp_path) == ["reports/planted.py:1: constant CONTROL",
                                           "reports/planted.py:4: compared append_only"]


def test_the_simulator_core_has_no_kind_branch() -> None:
    """What differs between kinds is asked through the protocol, each question answered for every kind."""
    from bench.simulate import simulator
    from bench.simulate.behaviour import SimBehaviour
    from engines.sim import KindSim

    core = Path(simulator.__file__).read_text()
    for word in ("merge_on_read", "clustering_mor", "type: ignore", "getattr(e.behaviour", "mor_inserts"):
        assert word not in core, word
    asked = {n for n in vars(SimBehaviour) if not n.startswith("_")} | set(SimBehaviour.__annotations__)
    assert asked <= {n for n in dir(KindSim) if not n.startswith("_")}, asked - set(dir(KindSim))


def test_every_kind_answers_the_registry_questions() -> None:
    for name, entry in KINDS.items():
        assert kind_of(name) is entry and entry.family and entry.label
        for field in ("engine", "config", "planner", "sim"):
            if getattr(entry, field):
                assert entry.load(field) is not None, (name, field)
        assert entry.simulated == (entry.sim is not None)
    with pytest.raises(ValueError, match="unknown engine kind 'warp_drive'; known: cow_baseline"):
        kind_of("warp_drive")
