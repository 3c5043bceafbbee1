"""The simulator's speed benchmark (bench.sim_speed): what it compares and what it records. Its
timings are reported by ``make bench-sim``, never asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bench.sim_speed import Timing, compare_tables, run, summary


def _folder(root: Path, name: str, tables: dict[str, pd.DataFrame]) -> Path:
    folder = root / name
    folder.mkdir()
    for table, frame in tables.items():
        frame.to_parquet(folder / f"{table}.parquet")
    return folder


def test_a_moved_figure_a_renamed_file_and_a_new_table_are_told_apart(tmp_path: Path) -> None:
    files = pd.DataFrame({"engine": ["a", "a"], "path": ["x.parquet", "y.parquet"], "size_bytes": [10, 20]})
    old = _folder(tmp_path, "old", {"files": files, "commits": pd.DataFrame({"wa": [1.0, 2.0]})})
    renamed = files.assign(path=["p.parquet", "q.parquet"])
    same = _folder(tmp_path, "same", {"files": renamed, "commits": pd.DataFrame({"wa": [1.0, 2.0], "new": [0, 0]}),
                                      "gates": pd.DataFrame({"ok": [True]})})
    assert compare_tables(old, same) == {"moved": [], "renamed": ["files.parquet"], "only_in_one": ["gates.parquet"]}
    moved = _folder(tmp_path, "moved", {"files": files.assign(size_bytes=[10, 21]),
                                        "commits": pd.DataFrame({"wa": [1.0, 2.0, 3.0]})})
    assert compare_tables(old, moved)["moved"] == ["commits.parquet", "files.parquet"]


def test_summary_pairs_each_run_with_the_old_code_of_its_round() -> None:
    runs = [Timing("old", 0, 100.0, 90.0, 800, 0.5, ""), Timing("serial", 0, 20.0, 19.0, 700, 0.5, ""),
            Timing("old", 1, 50.0, 45.0, 800, 0.5, ""), Timing("serial", 1, 20.0, 19.0, 700, 0.5, "")]
    got = summary(runs)
    assert got["old"]["n"] == 2 and got["old"]["wall_median_s"] == 75.0
    assert "wall_ratio_to_old_median" not in got["old"]
    assert got["serial"]["wall_ratio_to_old_median"] == (0.2 + 0.4) / 2


def test_a_small_scenario_is_timed_serial_and_by_its_own_choice(tmp_path: Path) -> None:
    record = tmp_path / "speed.json"
    result = run("bench/scenarios/small.yaml", 1, None, record)
    assert json.loads(record.read_text()) == result
    assert [r["variant"] for r in result["runs"]] == ["serial", "own choice"]
    assert result["machine"]["cores"] and result["commit"]
    assert result["tables_against_first_run"]["own choice 1"]["moved"] == []
