"""Option 2 snapshot isolation with real reader threads, update conflicts, deletes, re-execution."""

from __future__ import annotations

import threading
import time

import pyarrow.parquet as pq
import pytest
from engine_helpers import hudi_keys, keys, new_table, spec, truth_keys

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, ClusteringUpdateConflictError, Option2Config
from engines.spark.reader import read_snapshot
from engines.table.timeline import COMMIT, REPLACE, State
from workloads.generator import batch_df, batch_updates_df

ROW_GROUP = 500


def engine(path, **kw) -> ClusteringEngine:
    ccfg = kw.pop("clustering", ClusteringConfig(small_file_limit=1 << 30, target_file_size=400_000,
                                                 sort_columns=("service", "ts")))
    return ClusteringEngine(new_table(path), Option2Config(clustering=ccfg, row_group_rows=ROW_GROUP,
                                                           bloom_filter=False, **kw))  # sub-MB: data bytes only


def listing(e: ClusteringEngine) -> list[tuple[str, int]]:
    return sorted((x.path, x.size) for x in e.table.storage.list("", recursive=True))


def test_readers_always_see_ground_truth_through_schedule_execute_commit_clean(spark, tmp_path) -> None:
    ws = spec(num_batches=7, batch_records=1500)
    e = engine(tmp_path / "t", cleaner_commits_retained=2)
    for b in range(4):
        e.ingest(batch_df(spark, ws, b))
    truth = {n: truth_keys(ws, n - 1) for n in range(1, 8)}  # completed ingest commits -> keys
    outcomes: list[tuple[str, object]] = []
    stop = threading.Event()

    def expected(view) -> list[str]:
        return truth[len(view.timeline.completed([COMMIT]))]

    def arrow_reader() -> None:  # reads every file of the snapshot it took, as a query engine would
        while not stop.is_set():
            try:
                view = e.table.view()
                got = sorted(k for s in view.snapshot() for k in pq.read_table(
                    e.table.storage.abs(s.path), columns=["_hoodie_record_key"]).column(0).to_pylist())
                outcomes.append(("arrow", got == expected(view) or (len(got), len(expected(view)))))
            except Exception as exc:  # noqa: BLE001
                outcomes.append(("arrow", exc))

    def spark_reader() -> None:
        while not stop.is_set():
            try:
                view = e.table.view()
                df = read_snapshot(spark, e.table.storage, view.snapshot()).df
                n, distinct = df.count(), df.select("trace_id").distinct().count()
                outcomes.append(("spark", (n, distinct) == (len(expected(view)),) * 2 or (n, distinct)))
            except Exception as exc:  # noqa: BLE001
                outcomes.append(("spark", exc))

    threads = [threading.Thread(target=arrow_reader), threading.Thread(target=spark_reader)]
    for t in threads:
        t.start()
    try:
        # both readers warmed up first: a reader's first Spark query (codegen, cold workers) can outlast
        # execute + two ingests, and a snapshot older than the retained commits is the cleaner's to break
        deadline = time.monotonic() + 120
        while {kind for kind, _ in outcomes} != {"arrow", "spark"} and time.monotonic() < deadline:
            time.sleep(0.05)
        instant = e.schedule()
        assert hudi_keys(e.table) == truth[4]
        res = e.execute(instant)
        assert res.files_out >= 2 and hudi_keys(e.table) == truth[4]
        for b in (4, 5):  # two more commits push the replaced file groups out of the retained window
            e.ingest(batch_df(spark, ws, b))
            assert hudi_keys(e.table) == truth[b + 1]
        cleaned = e.clean()
        assert cleaned is not None and cleaned.files_deleted == res.files_in
        assert hudi_keys(e.table) == truth[6]
    finally:
        stop.set()
        for t in threads:
            t.join()
    bad = [o for o in outcomes if o[1] is not True]
    assert len(outcomes) >= 4 and not bad, bad[:3]
    assert {kind for kind, _ in outcomes} == {"arrow", "spark"}
    # time travel to the last retained instant before the clustering, by us and by hudi-rs
    commits = e.table.refresh().completed([COMMIT])
    with pytest.raises(ValueError):  # instants older than the window are no longer readable ...
        keys(e.table, e.table.view().snapshot(as_of="00000000000000000"))
    retained = [c for c in commits if c.timestamp >= cleaned.details["earliest_commit_to_retain"]]
    for c in retained:
        n = commits.index(c) + 1
        assert keys(e.table, e.table.view().snapshot(as_of=c.timestamp)) == truth[n] == hudi_keys(e.table, c.timestamp)


def test_update_under_pending_plan_rejected_insert_proceeds(spark, tmp_path) -> None:
    ws = spec(num_batches=5, corrections_fraction=0.05)
    e = engine(tmp_path / "t")
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    before, timeline = listing(e), [str(i) for i in e.table.refresh().instants]
    with pytest.raises(ClusteringUpdateConflictError, match=instant) as err:
        e.upsert(batch_updates_df(spark, ws, 3))
    assert "hoodie.clustering.updates.strategy=reject" in str(err.value) and "nothing was written" in str(err.value)
    assert err.value.plans == [instant] and err.value.conflicts
    assert all(f"{p}/{f}" in str(err.value) for p, f in err.value.conflicts)
    assert listing(e) == before and [str(i) for i in e.table.refresh().instants] == timeline
    e.ingest(batch_df(spark, ws, 3))  # a pure insert in the same window succeeds
    e.execute(instant)
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)
    res = e.upsert(batch_updates_df(spark, ws, 3))  # after the clustering the update goes through
    assert res.operation == "UPSERT" and keys(e.table) == truth_keys(ws, 3)
    updated = set(batch_updates_df(spark, ws, 3).toPandas()["trace_id"])
    rows = read_snapshot(spark, e.table.storage, e.snapshot()).df.toPandas()
    assert rows[rows.trace_id.isin(updated)].message.str.startswith("CORRECTED").all()


def test_allow_strategy_update_is_lost_by_the_clustering(spark, tmp_path) -> None:
    """Hudi's documented hazard (HUDI-3846): under allow, the update lands in the old file group,
    which the completing clustering replaces with its pre-update rows."""
    ws = spec(num_batches=5, corrections_fraction=0.05)
    e = engine(tmp_path / "t", update_strategy="allow")
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    res = e.upsert(batch_updates_df(spark, ws, 3))
    conflicting = set(e.table.commit_metadata(e.table.refresh().get(res.instant)).extra["conflictingFileGroups"]
                      .split(","))
    updated = set(batch_updates_df(spark, ws, 3).toPandas()["trace_id"])
    in_plan = set()  # updated keys written into file groups the pending plan holds
    for st in res.stats:
        if f"{st.partition}/{st.file_id}" in conflicting:
            t = pq.read_table(e.table.storage.abs(st.path), columns=["trace_id"]).column(0).to_pylist()
            in_plan |= set(t) & updated
    assert in_plan
    msg = read_snapshot(spark, e.table.storage, e.snapshot()).df.toPandas()
    assert msg[msg.trace_id.isin(updated)].message.str.startswith("CORRECTED").all()
    e.execute(instant)
    after = read_snapshot(spark, e.table.storage, e.snapshot()).df.toPandas()
    assert keys(e.table) == truth_keys(ws, 2)
    assert not after[after.trace_id.isin(in_plan)].message.str.startswith("CORRECTED").any()  # lost
    assert after[after.trace_id.isin(updated - in_plan)].message.str.startswith("CORRECTED").all()


def test_delete_removes_keys_and_whole_file_groups(spark, tmp_path) -> None:
    ws = spec(num_batches=3, batch_records=400)
    e = engine(tmp_path / "t")
    e.ingest(batch_df(spark, ws, 0))
    e.ingest(batch_df(spark, ws, 1))
    first = batch_df(spark, ws, 0).select("trace_id", "dt")  # every row of batch 0's file groups
    res = e.delete(first)
    assert res.operation == "DELETE" and keys(e.table) == sorted(set(truth_keys(ws, 1)) - set(truth_keys(ws, 0)))
    assert keys(e.table) == hudi_keys(e.table)
    assert any(s.num_writes == 0 for s in res.stats)  # emptied file groups got an empty slice


def test_failed_clustering_is_invisible_then_rerun(spark, tmp_path) -> None:
    ws = spec(num_batches=4, batch_records=800)

    class Boom(RuntimeError):
        pass

    e = engine(tmp_path / "t", clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=200_000,
                                                           max_bytes_per_group=250_000), max_parallel_groups=1)
    for b in range(4):
        e.ingest(batch_df(spark, ws, b))
    instant = e.schedule()
    assert len(e.load_plan(instant).groups) >= 2
    seen: list[str] = []

    def fail_after_first_group(step: str) -> None:
        seen.append(step)
        if step == "clustering.after_group_written":
            raise Boom(step)

    e.on_step = fail_after_first_group
    with pytest.raises(Boom):
        e.execute(instant)
    assert seen == ["clustering.after_inflight", "clustering.after_group_written"]
    assert e.table.refresh().get(instant).state == State.INFLIGHT
    partial = [f for f in e.table.view().base_files if f.instant == instant]
    assert partial  # the first group's files are on storage ...
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)  # ... and invisible
    e.on_step = None
    res = e.execute(instant)  # rolls the failed attempt back (plan kept), then runs it again
    assert res.details["rolled_back_attempt"] is not None  # the failed attempt was rolled back first
    assert e.table.refresh().get(instant).state == State.COMPLETED
    assert len(e.table.refresh().completed(["rollback"])) == 1
    assert keys(e.table) == truth_keys(ws, 3) == hudi_keys(e.table)
    assert not e.table.refresh().pending([REPLACE])
