"""MERGE_ON_READ in results and reports, on synthetic results folders: the read-amplification
columns (results format 7; older folders read them as null) and their section, and "Ours next to
Apache Hudi" pairing the MOR reference kinds with Option 2 on MERGE_ON_READ through the registry."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reports.hudi_fidelity import fidelity_pairs
from reports.read_amplification import read_amplification_rows, read_amplification_section
from runresults import FORMAT_VERSION, Results, ResultsWriter

ENGINES = {
    "baseline": {"kind": "cow_baseline", "config": {}},
    "option2_sorted": {"kind": "clustering", "config": {"sort_columns": ["service", "ts"]}},
    "option2_mor": {"kind": "clustering_mor", "config": {}},
    "option2_mor_sorted": {"kind": "clustering_mor", "config": {"sort_columns": ["service", "ts"]}},
    "hudi_cow": {"kind": "hudi", "config": {"preset": "hudi_cow"}},
    "hudi_clustering": {"kind": "hudi", "config": {"preset": "hudi_clustering", "sort_columns": ["service", "ts"]}},
    "hudi_mor": {"kind": "hudi_mor", "config": {}},
    "hudi_mor_clustering": {"kind": "hudi_mor_clustering", "config": {"sort_columns": ["service", "ts"]}},
}


def _query(engine: str, checkpoint: int, run: int, latency: float, ro: float | None, log_bytes: int | None) -> dict:
    return {"engine": engine, "checkpoint": checkpoint, "query": "full_scan_by_level", "run": run,
            "latency_s": latency, "files_total": 4, "files_scanned": 4, "files_pruned": 0, "result_rows": 3,
            "verified": True, "error": None, "log_files_merged": None if log_bytes is None else 2,
            "log_bytes_merged": log_bytes, "ro_latency_s": ro}


def folder(tmp_path: Path, engines: dict, queries: list[dict]) -> Results:
    writer = ResultsWriter(tmp_path / "run")
    for row in queries:
        writer.add("queries", **row)
    writer.write_run({"engines": engines, "scenario": {"name": "mor"}})
    return Results(tmp_path / "run")


def test_pairs_by_registry(tmp_path: Path) -> None:
    pairs = {(ours, hudi) for _label, ours, hudi in fidelity_pairs(folder(tmp_path, ENGINES, []))}
    assert pairs == {("baseline", "hudi_cow"), ("option2_sorted", "hudi_clustering"), ("option2_mor", "hudi_mor"),
                     ("option2_mor_sorted", "hudi_mor_clustering")}


def test_mor_kinds_without_a_mor_engine_of_ours_pair_with_nothing(tmp_path: Path) -> None:
    engines = {k: v for k, v in ENGINES.items() if "mor" not in k or k.startswith("hudi")}
    pairs = {hudi for _label, _ours, hudi in fidelity_pairs(folder(tmp_path, engines, []))}
    assert pairs == {"hudi_cow", "hudi_clustering"}


def test_read_amplification_rows_are_the_final_checkpoints_medians(tmp_path: Path) -> None:
    queries = [_query("hudi_mor", 9, r, lat, ro, 3 * 1024 * 1024) for r, (lat, ro) in
               enumerate([(4.0, 1.0), (2.0, 1.0), (3.0, 2.0)])]
    queries += [_query("hudi_mor", 4, 0, 100.0, 1.0, 1)]  # an earlier checkpoint: not in the section
    queries += [_query("baseline", 9, r, 1.0, None, None) for r in range(3)]  # no log files: no row
    rows = read_amplification_rows(folder(tmp_path, ENGINES, queries))
    assert rows == [{"engine": "hudi_mor", "query": "full_scan_by_level", "checkpoint": 9, "log files merged": "2",
                     "log MB merged": "3.00", "snapshot s": "3.000", "read-optimized s": "1.000",
                     "snapshot / read-optimized": "2.00", "n": 3}]


def test_a_folder_before_format_7_has_no_section(tmp_path: Path) -> None:
    res = folder(tmp_path, ENGINES, [_query("baseline", 9, 0, 1.0, None, None)])
    table = pq.read_table(res.folder / "queries.parquet")
    pq.write_table(table.drop_columns(["log_files_merged", "log_bytes_merged", "ro_latency_s"]),
                   res.folder / "queries.parquet")
    run = json.loads((res.folder / "run.json").read_text())
    (res.folder / "run.json").write_text(json.dumps({**run, "format_version": 6}))
    old = Results(res.folder)
    assert old.table("queries").ro_latency_s.isna().all()
    assert read_amplification_section(old) is None
    assert FORMAT_VERSION == 8 and isinstance(old.table("queries"), pd.DataFrame)


def test_the_ledger_counts_a_mor_compaction_as_maintenance(tmp_path: Path) -> None:
    """A MERGE_ON_READ compaction row (Apache Hudi's inline one, or ours) is maintenance compute."""
    from results_factory import make_design_results

    from runresults.review.ledger import ledger
    from runresults.review.prices import DEFAULT_PRICES

    run = make_design_results(tmp_path / "run")
    before = ledger(Results(run), "option2", DEFAULT_PRICES, 6.0).core_seconds["maintenance"]
    path = Path(run) / "maintenance.parquet"
    table = pq.read_table(path).to_pandas()
    extra = {c: None for c in table.columns} | {"engine": "option2", "batch": 3, "kind": "compaction",
                                                "instant": "20260101000000999", "mode": "engine",
                                                "duration_s": 7.0, "repeat": 0}
    pd.concat([table, pd.DataFrame([extra])], ignore_index=True).pipe(
        lambda df: pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path))
    after = ledger(Results(run), "option2", DEFAULT_PRICES, 6.0)
    cores = after.cores
    assert after.core_seconds["maintenance"][0] == pytest.approx(before[0] + 7.0 * cores)
    assert after.core_seconds["maintenance"][1:] == pytest.approx(before[1:])
