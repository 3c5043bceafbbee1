"""``layoutbench sweep``: the grid file's validation, the winner / crossover logic, and a tiny map
run end to end with its four corners run for real and compared with the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.simulate.sweep import SweepError, load_sweep
from reports.map_winners import crossovers, winners
from runresults import ResultsWriter
from runresults.plain_ledger import DEFAULT_MARGIN

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "bench" / "sweeps" / "tiny.yaml"
SHIPPED = REPO / "bench" / "sweeps" / "rfc19_map.yaml"


def _sweep(tmp_path: Path, body: str) -> Path:
    (tmp_path / "base.yaml").write_text((REPO / "bench" / "scenarios" / "sweep_tiny.yaml").read_text())
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nbase: base.yaml\n" + body)
    return path


@pytest.mark.parametrize(("body", "names"), [
    ("parameters:\n  batch_size: [1, 2]\n", ["batch_size", "unknown parameter"]),
    ("parameters:\n  maintenance_every: []\n", ["maintenance_every", "empty"]),
    ("parameters:\n  maintenance_every: [0, 3]\n", ["every_commits", "maintenance_every=0"]),
    ("parameters:\n  small_file_limit_mb: [0.5, 99]\n", ["small_file_limit_mb=99", "max_file_mb"]),
    ("parameters:\n  maintenance_every: [2.5]\n", ["maintenance_every", "whole numbers"]),
    ("parameters:\n  maintenance_every: [2, 3]\naxes: [late_fraction]\n", ["axes", "late_fraction"]),
    ("parameters:\n  batch_mb: {from: 1, to: 0, steps: 0}\n", ["steps"]),
    ("parameters: {}\n", ["no parameters"]),
])
def test_bad_sweep_files_name_the_field(tmp_path: Path, body: str, names: list[str]) -> None:
    with pytest.raises(SweepError) as err:
        load_sweep(_sweep(tmp_path, body))
    for n in names:
        assert n in str(err.value), str(err.value)


def test_bad_sweep_is_one_message_and_exit_3(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["sweep", str(_sweep(tmp_path, "parameters:\n  nope: [1]\n"))])
    assert res.exit_code == EXIT_BAD_INPUT
    assert "nope" in res.output and "Traceback" not in res.output


def test_shipped_sweep_has_500_points() -> None:
    assert len(load_sweep(SHIPPED).points()) >= 500


def _rows(values: dict[tuple[int, str], float]) -> list[dict]:
    kinds = {"b": "cow_baseline", "o1": "append_compaction", "o2": "clustering"}
    return [{"x": x, "engine": e, "kind": kinds[e], "usd_per_tb": v, "wa": v} for (x, e), v in values.items()]


def test_choice_equivalent_within_the_margin_and_crossover() -> None:
    """The lowest figure wins; inside the margin of the lowest it is "equivalent"; a change of
    choice between neighbouring values is a crossover."""
    m = DEFAULT_MARGIN
    rows = _rows({(1, "b"): 3.0, (1, "o1"): 1.0, (1, "o2"): 1.0 + 2 * m,
                  (2, "b"): 3.0, (2, "o1"): 1.0, (2, "o2"): 1.0 + m / 2,
                  (3, "b"): 3.0, (3, "o1"): 1.0 + 2 * m, (3, "o2"): 1.0})
    found = {w.point["x"]: w.winner for w in winners(rows, ["x"], ["usd_per_tb"])}
    assert found == {1: "Option 1", 2: "Option 1 = Option 2", 3: "Option 2"}
    cross = crossovers(winners(rows, ["x"], ["usd_per_tb"]), {"x": [1, 2, 3]})
    assert [(c.lo, c.hi, c.before, c.after) for c in cross] == [
        (1, 2, "Option 1", "Option 1 = Option 2"), (2, 3, "Option 1 = Option 2", "Option 2")]
    # the margin is the sweep's: at 1% the 2.5% difference decides
    assert {w.point["x"]: w.winner for w in winners(rows, ["x"], ["usd_per_tb"], margin=0.01)}[2] == "Option 1"


def test_whole_candidates_no_best_variant_per_criterion() -> None:
    """A design is its cheapest candidate by the ledger, and every criterion shows that candidate's
    figure: option2_sorted writes less (WA) but costs more, so Option 2's WA is option2's."""
    rows = [{"x": 1, "engine": "option2", "kind": "clustering", "usd_per_tb": 10.0, "wa": 2.0},
            {"x": 1, "engine": "option2_sorted", "kind": "clustering", "usd_per_tb": 12.0, "wa": 1.0},
            {"x": 1, "engine": "baseline", "kind": "cow_baseline", "usd_per_tb": 20.0, "wa": 1.5},
            {"x": 1, "engine": "delta", "kind": "delta_peer", "usd_per_tb": 1.0, "wa": 0.1}]  # a peer never competes
    by = {w.criterion: w for w in winners(rows, ["x"], ["usd_per_tb", "wa"])}
    assert (by["usd_per_tb"].winner, by["usd_per_tb"].variants["Option 2"]) == ("Option 2", "option2")
    assert by["wa"].values == {"Option 2": 2.0, "Baseline": 1.5}
    assert by["wa"].winner == "Baseline"
    assert set(by["wa"].variants.values()) == {"option2", "baseline"}


def _gates_run(folder: Path, failing: dict[str, str], requires: list[str] | None = None) -> Path:
    """A run's results folder holding only its gates: ``failing`` engine -> the gate it fails."""
    w = ResultsWriter(folder)
    engines = ["baseline", "option1_rfc", "option1_cbd", "option2_sorted"]
    for e in engines:
        for gate in ("isolation", "incremental", "time_travel"):
            bad = failing.get(e) == gate
            w.add("gates", engine=e, gate=gate, reader="apache_hudi", passed=not bad, checked=10,
                  failures=3 if bad else 0, figure=9000.0 if bad else 0.0, figure_unit="rows re-emitted",
                  detail="planted")
    review = {"requires": requires} if requires is not None else {}
    w.write_run({"run_id": folder.name, "scenario": {"name": "t", "review": review},
                 "engines": {e: {"kind": "x"} for e in engines}})
    return folder


def _rfc_sweep(tmp_path: Path) -> Path:
    base = (REPO / "bench" / "scenarios" / "sweep_tiny.yaml").read_text().replace(
        "  - {name: option1_cbd,",
        "  - {name: option1_rfc, kind: append_compaction, config: {order: rfc, "
        "hoodie.parquet.bloom.filter.enabled: false}}\n  - {name: option1_cbd,")
    (tmp_path / "base.yaml").write_text(base)
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nbase: base.yaml\ncalibration: " + str(REPO / "bench" / "sweeps" /
                    "sweep_tiny_calibration.json") + "\nparameters:\n  maintenance_every: [2, 3]\n")
    return path


def test_a_candidate_failing_a_required_gate_stays_out_of_the_map(tmp_path: Path) -> None:
    """option1_rfc fails incremental at the run: it is not simulated, not in sweep.parquet, never
    stands for Option 1, and map.md names it with the gate; when the run does not require
    incremental it competes again."""
    sweep = _rfc_sweep(tmp_path)
    gates = _gates_run(tmp_path / "run", {"option1_rfc": "incremental"})
    res = CliRunner().invoke(app, ["sweep", str(sweep), "--out", str(tmp_path / "out"), "--workers", "1",
                                   "--gates", str(gates)])
    assert res.exit_code == 0, res.output
    folder = Path(res.output.strip().splitlines()[-1])
    import json

    import pandas as pd

    table = pd.read_parquet(folder / "sweep.parquet")
    assert "option1_rfc" not in set(table.engine) and {"baseline", "option1_cbd", "option2_sorted"} <= set(table.engine)
    run = json.loads((folder / "sweep.json").read_text())
    assert list(run["excluded"]) == ["option1_rfc"] and "incremental" in run["excluded"]["option1_rfc"]
    text = (folder / "map.md").read_text()
    assert "`option1_rfc` fails incremental (9000 rows re-emitted" in text, text
    assert "best variant" not in text
    from reports.decision_map import SweepResults

    assert all("option1_rfc" not in w.variants.values() for w in SweepResults(folder).winners)

    relaxed = _gates_run(tmp_path / "run2", {"option1_rfc": "incremental"}, requires=["isolation"])
    from bench.simulate.sweep import load_sweep as load

    assert "option1_rfc" in [e.name for e in load(sweep, gates_run=relaxed).base.engines]


def test_gates_run_without_gates_is_refused(tmp_path: Path) -> None:
    w = ResultsWriter(tmp_path / "run")
    w.write_run({"run_id": "r", "scenario": {"name": "t"}, "engines": {}})
    with pytest.raises(SweepError, match="no gates table"):
        load_sweep(_rfc_sweep(tmp_path), gates_run=tmp_path / "run")


@pytest.mark.slow
def test_tiny_map_with_real_corners(spark, tmp_path: Path) -> None:
    """The tiny sweep end to end: map.md with a heatmap per criterion, and the four corners run
    for real, each printed with its errors (file counts per commit exact for every corner)."""
    res = CliRunner().invoke(app, ["sweep", str(TINY), "--out", str(tmp_path), "--validate-corners", "--workers", "1"])
    assert res.exit_code == 0, res.output
    folder = Path(res.output.strip().splitlines()[-1])
    text = (folder / "map.md").read_text()
    assert "## Where the answer changes" in text and "### Validation at the corners" in text
    assert len(list((folder / "plots").glob("map_*.png"))) == 7  # the ledger and six figures
    import json

    val = json.loads((folder / "sweep.json").read_text())["validation"]
    assert len(val) == 4
    print("\n" + "\n".join(f"{v['corner']}: {v['ok']}/{v['checks']} ok, scanned {v['files_scanned_equal']}, "
                           f"WA {v['worst_wa_error']}; {v['failures'][:3]}" for v in val))
    assert all(v["checks"] > 0 for v in val)
    # Option 1 and Option 2 write what the planners say: their file counts are exact at every corner.
    # The baseline's bucket split follows byte sizes, which an uncalibrated simulator estimates, so
    # its errors are printed (in the map too) and not asserted.
    not_baseline = [f for v in val for f in v["failures"] if not f.startswith("baseline:")]
    assert [f for f in not_baseline if "per commit" in f] == [], not_baseline


def test_map_text_says_equivalent_inside_the_margin(tmp_path: Path) -> None:
    """A rendered map: at x=2 Option 1 and Option 2 are 2.5% apart (inside 5%): "equivalent", not a win."""
    import json

    import pandas as pd

    from reports.decision_map import render_section
    from runresults import SWEEP_RUN, SWEEP_TABLE

    rows = _rows({(1, "b"): 3.0, (1, "o1"): 1.0, (1, "o2"): 1.2, (2, "b"): 3.0, (2, "o1"): 1.0, (2, "o2"): 1.025})
    pd.DataFrame(rows).to_parquet(tmp_path / SWEEP_TABLE, index=False)
    (tmp_path / SWEEP_RUN).write_text(json.dumps({
        "sweep": {"name": "t"}, "base_scenario": "b", "values": {"x": [1, 2]}, "axes": ["x"], "base_values": {"x": 1},
        "points": 2, "wall_time_s": 1.0, "machine": {"cores": 2}, "margin": 0.05, "candidates": ["b", "o1", "o2"],
        "gates_run": None, "excluded": {}}))
    text, _ = render_section(tmp_path)
    assert "Option 1 and Option 2 equivalent at 1 of 2 points" in text, text
    assert "Along x, Option 1 at 1 gives way to Option 1 and Option 2 at 2" in text
    assert "(±5%) of the best are equivalent" in text and "No run's gates were given" in text
