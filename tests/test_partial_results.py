"""Results written as the run goes (bench/partial_results.py): a folder cut off mid-run reads, marked
incomplete with the batches each engine took so far; the finished run replaces it."""

from __future__ import annotations

from pathlib import Path

from bench.partial_results import PartialResults
from bench.scenario import load_scenario
from runresults import Results, ResultsWriter, commit_row

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


def _commit(writer: ResultsWriter, engine: str, batch: int) -> None:
    writer.add("commits", **commit_row(
        engine=engine, seq=batch + 1, batch=batch, instant=f"2026010100000{batch}", action="commit",
        operation="INSERT", kind="ingest", duration_s=0.5, records_written=100, bytes_written=1000,
        files_written=1, files_replaced=0, batch_bytes=1000, live_files=batch + 1, physical_files=batch + 1,
        live_bytes=1000 * (batch + 1), physical_bytes=1000 * (batch + 1), small_files=batch + 1, metadata_bytes=0))


def test_a_run_cut_off_keeps_the_rows_it_measured(tmp_path: Path) -> None:
    sc = load_scenario(SMALL).first_batches(4)
    writer = ResultsWriter(tmp_path / "run")
    partial = PartialResults(writer, sc, {"baseline": 3, "option2": 4}, every_s=3600)
    for b in range(3):
        _commit(writer, "baseline", b)
        _commit(writer, "option2", b)
        partial.tick(b)  # within every_s: nothing written yet
    assert not (tmp_path / "run" / "run.json").exists()
    partial.write(2)  # e.g. after the checkpoint where baseline's prefix ends
    _commit(writer, "option2", 3)  # measured after the last write: not in the folder

    res = Results(tmp_path / "run")
    assert res.incomplete is not None
    assert res.incomplete["batches_done"] == 3 and res.incomplete["batches_run"] == 4
    assert res.incomplete["engines_batches_done"] == {"baseline": 3, "option2": 3}
    commits = res.table("commits")
    assert len(commits) == 6 and set(commits.engine) == {"baseline", "option2"}
    assert set(res.engines) == {e.name for e in sc.engines}
    assert not list((tmp_path / "run").glob("*.tmp"))  # each file replaced whole


def test_the_finished_run_replaces_the_partial_folder(tmp_path: Path) -> None:
    sc = load_scenario(SMALL)
    writer = ResultsWriter(tmp_path / "run")
    _commit(writer, "baseline", 0)
    PartialResults(writer, sc, {"baseline": 6}).write(0)
    _commit(writer, "baseline", 1)
    writer.write_run({"run_id": "run", "scenario": sc.model_dump(mode="json"), "engines": {"baseline": {}}})
    res = Results(tmp_path / "run")
    assert res.incomplete is None and len(res.table("commits")) == 2
