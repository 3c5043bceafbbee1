"""The Delta peer (delta-rs) in the same harness: verified queries, audited log, VACUUM by commit
count, readers racing OPTIMIZE, and the same figures as our engines."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bench.runner import run_scenario
from bench.scenario import load_scenario
from engines.delta_peer.engine import DeltaPeerConfig, DeltaPeerEngine
from engines.delta_peer.log import DeltaLog
from engines.table.storage import Storage
from runresults import Results

SMALL_SCENARIO = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


@pytest.fixture(scope="module")
def delta_run(spark, tmp_path_factory):
    sc = load_scenario(SMALL_SCENARIO)
    doc = sc.model_dump(mode="json")
    doc["name"] = "delta"
    doc["engines"] = [
        {"name": "option1_cbd", "kind": "append_compaction", "config": {"order": "commit_before_delete"}},
        {"name": "delta", "kind": "delta_peer"},
        {"name": "delta_zorder", "kind": "delta_peer", "config": {"sort_columns": ["service", "ts"]}},
    ]
    scenario = type(sc).model_validate(doc)
    out = tmp_path_factory.mktemp("delta")
    return Results(run_scenario(scenario, out=out, progress=False, run_id="delta"))


def test_delta_peer_run_verifies(delta_run: Results) -> None:
    assert delta_run.run["verification"]["ok"], delta_run.run["verification"]["failures"]
    q = delta_run.table("queries")
    for engine in ("delta", "delta_zorder"):
        rows = q[q.engine == engine]
        assert len(rows) > 0 and rows.verified.all()


def test_delta_peer_maintenance_and_vacuum(delta_run: Results) -> None:
    m = delta_run.table("maintenance")
    opt = m[(m.engine == "delta") & (m.kind == "optimize")]
    assert len(opt) >= 1 and (opt.files_in > opt.files_out).all()
    z = m[(m.engine == "delta_zorder") & (m.kind == "z_order")]
    assert len(z) >= 1
    cleaned = m[(m.engine == "delta") & (m.kind == "clean")]
    assert cleaned.files_deleted.sum() > 0
    c = delta_run.table("commits")
    d = c[c.engine == "delta"].sort_values("seq")
    last = d.iloc[-1]
    assert last.wa > 1.0  # optimize rewrote bytes beyond the appends
    assert last.physical_files >= last.live_files


def test_delta_peer_readers_never_fail(delta_run: Results) -> None:
    iso = delta_run.table("isolation")
    rows = iso[iso.engine.str.startswith("delta")]
    assert len(rows) > 0 and (rows.outcome == "ok").all()


def test_delta_log_replay_matches_delta_rs(delta_run: Results) -> None:
    from deltalake import DeltaTable

    path = delta_run.run["engines"]["delta"]["table_path"]
    ours = DeltaLog(Storage(path)).active()
    theirs = {f.split("/", 2)[-1] if f.startswith("/") else f for f in DeltaTable(path).file_uris()}
    assert {p.rsplit("/", 1)[-1] for p in ours} == {p.rsplit("/", 1)[-1] for p in theirs}
    assert sum(a.num_records for a in ours.values()) == delta_run.run["ground_truth"]["rows"]


def test_delta_peer_rejects_bad_config(tmp_path) -> None:
    with pytest.raises(ValueError, match="min_files"):
        DeltaPeerEngine(str(tmp_path), DeltaPeerConfig(min_files=1))


def test_report_sets_ours_beside_delta(delta_run: Results) -> None:
    from reports.delta_peer import peer_rows
    from reports.summary import summarize

    rows = peer_rows(delta_run, summarize(delta_run))
    assert [(r["ours"], r["peer"]) for r in rows] == [("option1_cbd", "delta")]
    assert rows[0]["maintenance ratio"].endswith("x")
    # the time ratio splits into what the plans read and how fast it was rewritten
    ours_mb, peer_mb = (float(x) for x in rows[0]["MB read (ours / peer)"].split(" / "))
    assert ours_mb > 0 and peer_mb > 0
    per_byte = float(rows[0]["s per 100 MB read ratio"].rstrip("x"))
    total = float(rows[0]["maintenance ratio"].rstrip("x"))
    assert total == pytest.approx(per_byte * ours_mb / peer_mb, rel=0.05)


def _old_rule_doomed(engine: DeltaPeerEngine) -> set[str]:
    """Files VACUUM by commit count removed before delta-rs's keep_versions did it: those a data
    version at or before the oldest retained one removed (the rule the replaced code applied)."""
    horizon = engine.retained_versions()[0]
    return {p for p, v in engine.log.removed_at().items() if v <= horizon and engine.storage.exists(p)}


def test_vacuum_keep_versions_removes_what_commit_count_retention_removes(spark, tmp_path) -> None:
    from engine_helpers import spec

    from workloads.generator import batch_df

    s = spec(num_batches=9, batch_records=600)
    engine = DeltaPeerEngine(str(tmp_path / "delta"), DeltaPeerConfig(cleaner_commits_retained=2, min_files=2,
                                                                      partition_column=s.partition_column))
    cleaned: list[set[str]] = []
    for b in range(s.num_batches):
        engine.ingest(batch_df(spark, s, b))
        if b % 3 == 2:
            engine.schedule()
            assert engine.execute() is not None
            expected = _old_rule_doomed(engine)
            res = engine.clean()
            gone = {p for p in expected if not engine.storage.exists(p)}
            assert gone == expected and (res.files_deleted if res else 0) == len(expected)
            assert not [p for p in engine.log.active() if not engine.storage.exists(p)]  # live files stay
            cleaned.append(expected)
    assert sum(map(len, cleaned)) > 0
    ops = [va.operation for va in engine.log.versions()]
    assert "VACUUM START" in ops and "VACUUM END" in ops  # delta-rs recorded its vacuum in the log


def test_delta_log_replay_matches_get_add_actions(delta_run: Results) -> None:
    """Our replay against delta-rs's own: paths, sizes, record counts, partition values and min/max."""
    import pyarrow as pa
    from deltalake import DeltaTable

    path = delta_run.run["engines"]["delta"]["table_path"]
    ours = DeltaLog(Storage(path)).active()
    theirs = pa.table(DeltaTable(path).get_add_actions(flatten=True)).to_pylist()
    assert {t["path"] for t in theirs} == set(ours)
    checked = 0
    for t in theirs:
        a = ours[t["path"]]
        assert (a.size, a.num_records) == (t["size_bytes"], t["num_records"])
        assert a.partition == f"dt={t['partition.dt']}"
        for col, (lo, hi) in a.column_stats.items():
            if f"min.{col}" not in t:
                continue
            if isinstance(hi, datetime):  # Delta truncates to ms; our max is rounded up to stay a bound
                assert (lo, hi) == (t[f"min.{col}"], t[f"max.{col}"] + timedelta(milliseconds=1)), (t["path"], col)
            else:
                assert (lo, hi) == (t[f"min.{col}"], t[f"max.{col}"]), (t["path"], col)
        checked += len(a.column_stats)
    assert checked > 0
