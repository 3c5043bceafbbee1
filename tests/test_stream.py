"""Continuous ingestion (T13): a short Structured Streaming run per engine verified against ground
truth, with async table services overlapping the stream, bad input quarantined or counted, and a
real SIGKILL of the streaming process restarted from its checkpoint with nothing lost or duplicated."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from bench.scenario import parse_scenario
from bench.stream.engine_stream import landing_names
from bench.stream.landing import BAD_NAME, OLD_NAME, OLD_RECORDS, Landing, batch_name, batch_of, schedule
from bench.stream.ratesearch import lag_slope
from bench.stream.sink import micro_batch_files
from workloads.generator import batch_table

DOC = {
    "name": "stream_test",
    "workload": {"seed": 5, "num_batches": 5, "batch_records": 800, "partition_granularity": "day",
                 "num_partitions": 2, "late_fraction": 0.1},
    "engines": [{"name": "baseline", "kind": "cow_baseline"},
                {"name": "option1_cbd", "kind": "append_compaction", "config": {"order": "commit_before_delete"}},
                {"name": "option2", "kind": "clustering"},
                {"name": "delta", "kind": "delta_peer"}],
    "sizing": {"small_file_limit_mb": 0.6, "target_file_mb": 0.8, "max_file_mb": 0.8, "row_group_rows": 1000,
               "cleaner_commits_retained": 2},
    "maintenance": {"mode": "async", "async_interval_s": 0.5},
    "queries": {"warm_runs": 1, "suite": ["full_scan_by_level", "point_lookup"]},
    "isolation": {"enabled": False},
    "stream": {"rate": 2.0, "async_max_commits": 2, "retention_hours": 168, "bad_input": True, "timeout_s": 240,
               "rate_search": {"enabled": False}},
}


def test_landing_files_are_the_generators_batches(tmp_path: Path) -> None:
    sc = parse_scenario(DOC)
    landing = Landing(tmp_path, sc.workload, tmp_path / "cache", 168)
    landing.drop(batch_name(2))
    assert pq.read_table(landing.folder / batch_name(2)).equals(batch_table(sc.workload, 2))
    assert landing.schema_problem(landing.folder / batch_name(2)) is None
    landing.drop(BAD_NAME)
    assert "missing columns" in landing.schema_problem(landing.folder / BAD_NAME)
    landing.drop(OLD_NAME)
    old = pq.read_table(landing.folder / OLD_NAME)
    assert old.num_rows == OLD_RECORDS and old.schema.equals(batch_table(sc.workload, 0).schema)
    assert batch_of(batch_name(7)) == 7 and batch_of(BAD_NAME) is None
    # a restarted landing keeps the arrival times already logged
    again = Landing(tmp_path, sc.workload, tmp_path / "cache", 168)
    assert again.arrivals == landing.arrivals
    assert schedule(["a", "b", "c"], 2.0) == [(0.0, "a"), (0.5, "b"), (1.0, "c")]
    names = landing_names([0, 1, 2, 3, 4, 5], bad_input=True)
    assert names.count(BAD_NAME) == 1 and names.count(OLD_NAME) == 1 and len(names) == 8


def test_micro_batch_files_from_the_checkpoint(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    (ck / "offsets").mkdir(parents=True)
    (ck / "sources" / "0").mkdir(parents=True)
    for batch, offset in ((0, 1), (1, 3)):
        (ck / "offsets" / str(batch)).write_text('v1\n{"batchWatermarkMs":0}\n' + json.dumps({"logOffset": offset}))

    def entry(n: int) -> str:
        return json.dumps({"path": f"file:///land/b{n}.parquet", "timestamp": 1, "batchId": n})

    (ck / "sources" / "0" / "0").write_text("v1\n" + entry(0))
    (ck / "sources" / "0" / "1").write_text("v1\n" + entry(1))
    (ck / "sources" / "0" / "3.compact").write_text("v1\n" + "\n".join(entry(n) for n in range(4)))
    assert micro_batch_files(ck, 0) == [Path("/land/b0.parquet"), Path("/land/b1.parquet")]
    assert micro_batch_files(ck, 1) == [Path("/land/b2.parquet"), Path("/land/b3.parquet")]


def test_lag_slope_tells_a_bounded_lag_from_a_growing_one() -> None:
    arrivals = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert abs(lag_slope(arrivals, [a + 0.5 for a in arrivals])) < 1e-9
    assert lag_slope(arrivals, [0.5, 2.0, 3.5, 5.0, 6.5]) == pytest.approx(0.5)


@pytest.mark.slow
def test_short_stream_every_engine_verified(spark, tmp_path: Path) -> None:
    from bench.results import Results
    from bench.stream.run import run_stream_scenario

    results = Results(run_stream_scenario(parse_scenario(DOC), out=tmp_path, run_id="s"))
    assert results.run["verification"] == {"ok": True, "failures": []}
    stream = results.table("stream")
    maint = results.table("maintenance")
    for name, s in results.run["stream"].items():
        assert s["keys"]["rows_lost"] == 0 and s["keys"]["rows_duplicated"] == 0, name
        assert s["quarantined"] == [BAD_NAME], name  # named, and the stream went on
        assert s["late_rows"] == OLD_RECORDS, name  # counted and ingested (the keys check holds them)
        mine = stream[(stream.engine == name) & (stream.run == "fixed")]
        assert mine.freshness_s.dropna().gt(0).all() and mine.files.sum() == 6, name
    q = results.table("queries")
    assert len(q) and q.verified.all()
    for name in ("option1_cbd", "option2", "delta"):  # async services ran while the stream was live
        assert (maint[maint.engine == name]["mode"] == "stream-async").any(), name
    assert (maint[maint.engine == "option2"]["kind"] == "clustering").any()
    lag = results.table("stream_lag")
    assert set(lag.engine) == set(results.engines) and lag.backlog_batches.ge(0).all()
    from reports import render_report

    md = Path(render_report(results.folder)["report.md"]).read_text()
    assert "## Continuous ingestion" in md and "plots/stream_lag.png" in md and BAD_NAME in md


@pytest.mark.slow
@pytest.mark.parametrize("engine,point", [("option1_cbd", "option1.before_commit"),
                                          ("option2", "stream.after_table_commit:3")])
def test_sigkill_and_restart_from_checkpoint(spark, tmp_path: Path, engine: str, point: str) -> None:
    from bench.stream.killtest import kill_and_restart

    doc = {**DOC, "engines": [e for e in DOC["engines"] if e["name"] == engine],
           "stream": {**DOC["stream"], "bad_input": False, "rate": 1.5}}
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    row = kill_and_restart(spark, parse_scenario(doc), str(path), engine, point, tmp_path / "run")
    details = json.loads(row["details"])
    assert details["child_rc"] == -9, details
    assert row["recovered"], details
    assert row["rows_lost"] == 0 and row["rows_duplicated"] == 0, details
    assert row["hudi_rs_agrees"], details
    if point.startswith("stream.after_table_commit"):
        assert details["replayed_micro_batches"] >= 1  # the table had it; Spark's log did not: skipped


def test_stream_tables_have_schemas() -> None:
    from bench.results import TABLES

    for name in ("stream", "stream_lag", "stream_rates"):
        assert isinstance(TABLES[name], pa.Schema)
    assert pd.DataFrame(columns=TABLES["stream"].names).empty


@pytest.mark.slow
def test_update_under_a_pending_plan_is_rejected_then_retried(spark, tmp_path: Path) -> None:
    """The landing folder's generator batches only insert; an update file (``u<b>``) makes a
    micro-batch upsert. Option 2 rejects it while its file groups are under a pending clustering
    plan (reject strategy); the sink retries once the plan was executed, as Hudi's sink retries a
    failed micro-batch: nothing lost, the corrections visible, the update committed after the plan."""
    from bench.engine_factory import build_engine
    from bench.stream.engine_stream import stream_engine
    from bench.stream.landing import update_name
    from bench.stream.run import _spec
    from bench.stream.verify import key_check, truth_of
    from workloads.generator import batch_df, batch_updates_table

    doc = {**DOC, "workload": {**DOC["workload"], "corrections_fraction": 0.2},
           "engines": [{"name": "option2", "kind": "clustering"}],
           "maintenance": {"mode": "async", "async_interval_s": 600},  # the service runs only when woken
           "stream": {**DOC["stream"], "bad_input": False, "async_max_commits": 50}}
    sc = parse_scenario(doc)
    es = sc.engines[0]
    engine = build_engine(_spec(es), sc, str((tmp_path / "table").resolve()))
    try:
        for b in (0, 1):
            engine.ingest(batch_df(spark, sc.workload, b))
        plan = engine.schedule()
        assert plan is not None and engine.pending_plan() == plan
        names = [update_name(2), batch_name(2)]
        run = stream_engine(spark, sc, engine, es.kind, tmp_path / "run", "fixed", 2.0, [], tmp_path / "cache",
                            names=names)
        assert run.error is None, run.error
        conflicts = run.sink.state.conflicts
        assert conflicts and conflicts[0]["plans"] == [plan] and conflicts[0]["file_groups"] > 0, conflicts
        timeline = engine.table.refresh()
        assert plan in {i.timestamp for i in timeline.completed(["replacecommit"])}
        upd = next(r for r in run.sink.state.rows if r["batches"] == update_name(2))
        assert upd["instant"] > plan  # written after the plan completed, onto its output file groups
        truth = truth_of(sc, [batch_name(0), batch_name(1), *names])
        keys = key_check(engine, truth)
        assert keys["rows_lost"] == keys["rows_duplicated"] == keys["rows_unexpected"] == 0, keys
        probe = engine.probe()
        live = pa.concat_tables([pq.read_table(probe.storage.abs(s.path), columns=["trace_id", "message"])
                                 for s in probe.snapshot()])
        message = dict(zip(live.column("trace_id").to_pylist(), live.column("message").to_pylist(), strict=True))
        corrected = batch_updates_table(sc.workload, 2)
        assert corrected.num_rows > 0
        for k, m in zip(corrected.column("trace_id").to_pylist(), corrected.column("message").to_pylist(),
                        strict=True):
            assert message[k] == m
    finally:
        engine.close()


@pytest.mark.parametrize("kind", ["append_only", "delta_peer"])
def test_an_update_to_an_inserts_only_engine_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    """The stream's upsert path goes through the engine protocol: an engine without an update path
    refuses it with one error naming the engine, before anything is written."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec, load_scenario
    from engines.base import InsertsOnlyError

    scenario = load_scenario(Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml")
    engine = build_engine(EngineSpec(name=f"my_{kind}", kind=kind), scenario, str(tmp_path / "t"))
    try:
        with pytest.raises(InsertsOnlyError, match=f"my_{kind} takes inserts only"):
            engine.upsert(None)  # type: ignore[arg-type]
        assert engine.committed_extras() == []
    finally:
        engine.close()
