"""``layoutbench sweep``: the grid file's validation, the winner / crossover logic, and a tiny map
run end to end with its four corners run for real and compared with the simulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.simulate.sweep import SweepError, load_sweep
from reports.map_winners import TIE, crossovers, winners

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
    return [{"x": x, "engine": e, "kind": kinds[e], "wa": v} for (x, e), v in values.items()]


def test_winner_tie_and_crossover() -> None:
    """The lowest figure wins; within TIE of the next it is a tie; a change of winner between
    neighbouring values is a crossover."""
    rows = _rows({(1, "b"): 3.0, (1, "o1"): 1.0, (1, "o2"): 2.0,
                  (2, "b"): 3.0, (2, "o1"): 1.0, (2, "o2"): 1.0 + TIE / 2,
                  (3, "b"): 3.0, (3, "o1"): 1.5, (3, "o2"): 1.0})
    found = {w.point["x"]: w.winner for w in winners(rows, ["x"], ["wa"])}
    assert found == {1: "Option 1", 2: "Option 1 = Option 2", 3: "Option 2"}
    cross = crossovers(winners(rows, ["x"], ["wa"]), {"x": [1, 2, 3]})
    assert [(c.lo, c.hi, c.before, c.after) for c in cross] == [
        (1, 2, "Option 1", "Option 1 = Option 2"), (2, 3, "Option 1 = Option 2", "Option 2")]


def test_best_variant_stands_for_its_design() -> None:
    rows = [{"x": 1, "engine": "option2", "kind": "clustering", "wa": 2.0},
            {"x": 1, "engine": "option2_sorted", "kind": "clustering", "wa": 1.0},
            {"x": 1, "engine": "baseline", "kind": "cow_baseline", "wa": 1.5},
            {"x": 1, "engine": "delta", "kind": "delta_peer", "wa": 0.1}]  # a peer never competes
    (w,) = winners(rows, ["x"], ["wa"])
    assert (w.winner, w.variants["Option 2"]) == ("Option 2", "option2_sorted")


@pytest.mark.slow
def test_tiny_map_with_real_corners(spark, tmp_path: Path) -> None:
    """The tiny sweep end to end: map.md with a heatmap per criterion, and the four corners run
    for real, each printed with its errors (file counts per commit exact for every corner)."""
    res = CliRunner().invoke(app, ["sweep", str(TINY), "--out", str(tmp_path), "--validate-corners", "--workers", "1"])
    assert res.exit_code == 0, res.output
    folder = Path(res.output.strip().splitlines()[-1])
    text = (folder / "map.md").read_text()
    assert "## Where the answer changes" in text and "### Validation at the corners" in text
    assert len(list((folder / "plots").glob("map_*.png"))) == 6
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
