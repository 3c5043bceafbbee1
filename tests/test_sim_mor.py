"""The simulator's Option 2 on MERGE_ON_READ (T21, engines/clustering_mor/sim.py) held to the session's
real corrections run (tests/conftest.py ``corrections_run``: four batches, 10% corrections, its
``option2_mor`` engine with no footer bloom filter): every commit's files and records, the log files'
bytes (the real Avro data block), the queries' files scanned and the log files and bytes they merge;
what the simulator still refuses (inserts padded into small groups' logs)."""

from __future__ import annotations

import pandas as pd
import pytest
from test_sim_corrections import SMALL, _corrected

from bench.scenario import Scenario, load_scenario
from bench.simulate import simulator as simmod
from bench.simulate.costmodel import CostModel
from bench.simulate.logsize import corrections_by_partition, log_block_bytes, log_size_model
from bench.simulate.results_folder import simulate
from bench.simulate.supports import corrections_problems
from bench.simulate.validate import WA_TOLERANCE, validate
from engines.table.model import new_file_id
from runresults import Results

MOR = "option2_mor"
EXACT = ["batch", "kind", "files_written", "live_files", "physical_files", "records_written"]
QUERY_EXACT = ["checkpoint", "query", "files_total", "files_scanned", "log_files_merged", "log_bytes_merged"]


@pytest.fixture(scope="module")
def mor_sim(corrections_run: Results, tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, Results]:
    """The real run and the simulator over its MERGE_ON_READ engine, with the engine's own bytes per
    record (its ingest commits: base files, no footer bloom filter)."""
    real = corrections_run
    sc = Scenario.model_validate(real.run["scenario"])
    sc = sc.model_copy(update={"engines": [e for e in sc.engines if e.name == MOR]})
    c = real.table("commits")
    ing = c[(c.kind == "ingest") & (c.engine == MOR)]
    out = tmp_path_factory.mktemp("sim_mor")
    cal = CostModel(bytes_per_record=float(ing.bytes_written.sum() / ing.records_written.sum()),
                    source="the corrections run's MERGE_ON_READ ingest commits").save(out / "calibration.json")
    return real, Results(simulate(sc, out, calibration_path=cal, run_id="sim", as_run=True))


def _rows(res: Results, table: str, cols: list[str], by: list[str]) -> pd.DataFrame:
    t = res.table(table)
    if table == "queries":
        t = t[t.run == 0] if "run" in t.columns else t
    return t[t.engine == MOR].sort_values(by)[cols].reset_index(drop=True)


def test_every_commit_of_the_mor_engine_matches_the_real_run(mor_sim) -> None:  # noqa: ANN001
    """Deltacommits, upserts into log files, the inline compaction and clustering: the same kinds,
    files written, live and physical files (log files counted) and records at every commit; the
    upserts' log files the same bytes as the real ones; final WA within the validation's tolerance."""
    real, sim = mor_sim
    r, s = (_rows(x, "commits", [*EXACT, "bytes_written", "action"], ["seq"]) for x in (real, sim))
    assert (r.kind == "upsert").sum() == 3 and set(r.action) >= {"deltacommit"}
    pd.testing.assert_frame_equal(s[EXACT], r[EXACT], check_dtype=False)
    assert list(s.action) == list(r.action)
    up = r.kind == "upsert"
    assert s.bytes_written[up].tolist() == r.bytes_written[up].tolist()  # the real log format, byte for byte
    checks = [c for c in validate(real, sim) if c.engine == MOR]
    assert [c for c in checks if ("per commit" in c.figure or "files scanned" in c.figure) and not c.ok] == []
    (wa,) = [c for c in checks if c.figure == "final WA"]
    assert abs(float(wa.simulated) / float(wa.real) - 1) <= WA_TOLERANCE


def test_queries_merge_the_same_log_files(mor_sim) -> None:  # noqa: ANN001
    """Both checkpoints see logs unmerged: files scanned (a slice with logs is never pruned, nor is any
    MOR file: its commit metadata records no column ranges), log files and log bytes merged, equal."""
    real, sim = mor_sim
    r, s = (_rows(x, "queries", QUERY_EXACT, ["checkpoint", "query"]) for x in (real, sim))
    assert (r.log_files_merged > 0).all()
    pd.testing.assert_frame_equal(s, r, check_dtype=False)


def test_the_estimated_log_size_is_near_the_exact_one() -> None:
    """Without rows a log file is ``overhead + records x per_record``, measured on the workload's
    first corrections; on another batch's group within 2% of the real encoder's bytes."""
    spec = _corrected(load_scenario(SMALL), 4).workload
    model = log_size_model(spec)
    assert model.overhead > 1000 and model.per_record > 50  # the header holds the Avro schema
    partition, rows = next(iter(corrections_by_partition(spec, 3).items()))
    instant = "20260101000000007"
    exact = log_block_bytes(rows, instant, partition, new_file_id("", instant, partition, 0, 0, 0))
    assert abs(model.bytes_of(rows.num_rows) / exact - 1) <= 0.02, (model, rows.num_rows, exact)


def test_mor_without_rows_writes_logs_and_compacts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimated mode (no rows): each batch's corrections as log files, compaction every five
    deltacommits, deterministic per seed."""
    sc = _corrected(load_scenario(SMALL), 12)
    sc = sc.model_copy(update={"engines": [sc.engines[0].model_copy(
        update={"name": MOR, "kind": "clustering_mor", "config": {}})]})
    monkeypatch.setattr(simmod, "ROWS_LIMIT", 0)
    rows = simmod.run_simulation(sc, CostModel()).sink.rows
    kinds = [c["kind"] for c in rows["commits"]]
    assert kinds.count("upsert") == 11 and "compaction" in kinds
    assert all(c["action"] == "deltacommit" for c in rows["commits"] if c["kind"] in ("ingest", "upsert"))
    assert simmod.run_simulation(sc, CostModel()).sink.rows == rows


def test_inserts_into_logs_are_refused_naming_the_engine() -> None:
    sc = _corrected(load_scenario(SMALL), 4)
    mor = sc.engines[0].model_copy(update={"name": MOR, "kind": "clustering_mor", "config": {}})
    logs = mor.model_copy(update={"name": "option2_mor_logs", "config": {"hoodie.parquet.small.file.limit": 4194304}})
    assert corrections_problems(sc.model_copy(update={"engines": [*sc.engines, mor]})) == []
    (problem,) = corrections_problems(sc.model_copy(update={"engines": [*sc.engines, mor, logs]}))
    assert "option2_mor_logs (kind clustering_mor)" in problem and "small file groups' logs" in problem
