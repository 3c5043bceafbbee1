"""The incremental and time-travel gates (bench/gates): their arithmetic on hand-made histories, and
planted bugs caught on real small tables read by hudi-rs, Apache Hudi and our view.

Mutation tests (T17): an Option 2 clustering that re-stamps ``_hoodie_commit_time`` (Hudi's
``hoodie.clustering.preserve.commit.metadata`` off) fails **incremental**; an as-of read that skips
the file groups a later replacecommit replaced fails **time travel**. And the choice the RFC leaves
open: Option 1 keeping each row's commit time passes incremental where commit-before-delete, which
re-stamps, fails.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from bench.gates import incremental, time_travel
from bench.gates.history import EngineHistory, HistoryError, wrong_rows
from bench.gates.readers import APACHE_HUDI, HUDI_RS, OURS
from bench.gates.truth import HistoryTruth, KeyFormatError, KeySum, key_hashes

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


def _keys(n: int, start: int = 0) -> list[str]:
    return [f"{(i * 2654435761 + 12345) % (1 << 64):016x}-000001-{i:08d}" for i in range(start, start + n)]


def _history(batch_sizes: list[int], maintenance: dict[str, str] | None = None) -> EngineHistory:
    """Batches of ``batch_sizes`` rows ingested at instants 001, 002, ...; ``maintenance``: extra
    instants (name -> kind) between them."""
    parts, start = [], 0
    for n in batch_sizes:
        parts.append(pa.table({"trace_id": _keys(n, start)}))
        start += n
    truth = HistoryTruth.of_batches(parts)
    commits = [{"engine": "e", "repeat": 0, "batch": b, "kind": "ingest", "instant": f"{2 * b + 1:03d}"}
               for b in range(len(batch_sizes))]
    commits += [{"engine": "e", "repeat": 0, "batch": -1, "kind": k, "instant": t} for t, k in (maintenance or {}).items()]
    return EngineHistory.of_commits("e", truth, commits)


def test_key_hashes_are_the_truth_modules() -> None:
    from workloads.truth import key_hashes as slow

    keys = pa.array(_keys(500))
    assert [int(h) for h in key_hashes(keys.slice(3, 400))] == slow(keys.slice(3, 400))
    assert KeySum.of(key_hashes(keys)) == KeySum.of(key_hashes(keys.slice(0, 200))) + KeySum.of(key_hashes(keys.slice(200)))
    with pytest.raises(KeyFormatError, match="hex"):
        key_hashes(pa.array(["zz" * 10]))
    with pytest.raises(KeyFormatError, match="shorter"):
        key_hashes(pa.array(["abc"]))


def test_history_needs_one_ingest_instant_per_batch() -> None:
    truth = HistoryTruth.of_batches([pa.table({"trace_id": _keys(2)}), pa.table({"trace_id": _keys(2, 2)})])
    with pytest.raises(HistoryError, match=r"no ingest instant recorded for batches \[1\]"):
        EngineHistory.of_commits("e", truth, [{"engine": "e", "batch": 0, "kind": "ingest", "instant": "001"}])


def test_every_pull_judged_from_commit_times() -> None:
    """Batches of 3, 2 and 4 rows at 001, 003, 005; a compaction at 004 rewrote batches 0 and 1. Kept
    commit times: every pull exact. Re-stamped with 004: the pull from 001 re-emits batch 0's 3 rows,
    the pull from 003 batches 0 and 1's 5. A lost row is missing from every pull before its ingest;
    a second copy is re-emitted by every pull before its stamp."""
    h = _history([3, 2, 4], {"004": "compaction"})
    keys = h.truth.keys
    times = pa.array([h.batch_instants[b] for b in h.truth.batch])
    ok = incremental.check_every_pull(h, keys, times)
    assert (ok.checked, ok.failures, ok.worst, ok.restamped) == (4, 0, 0, 0)
    restamped = pa.array(["004"] * 5 + ["005"] * 4)
    bad = incremental.check_every_pull(h, keys, restamped)
    # pull from 001: returns 9 rows (all stamped > 001), expects 6: batch 0's 3 re-emitted;
    # from 003: returns 9, expects 4: 5 re-emitted; from 004 and 005: exact
    assert (bad.failures, bad.worst, bad.worst_begin, bad.worst_reemitted, bad.restamped) == (2, 5, "003", 5, 5)
    lost = incremental.check_every_pull(h, keys.slice(0, 8), times.slice(0, 8))  # batch 2's last row lost
    assert (lost.failures, lost.worst, lost.worst_missing) == (3, 1, 1)
    twice = incremental.check_every_pull(h, pa.concat_arrays([keys, keys.slice(0, 1)]),
                                         pa.concat_arrays([times, pa.array(["004"])]))
    assert (twice.failures, twice.worst, twice.worst_reemitted) == (2, 1, 1)  # the copy, in pulls before 004


def test_wrong_rows_and_expected_sums() -> None:
    h = _history([3, 2, 4])
    assert h.committed_after("001") == KeySum.of(h.truth.hashes[3:])
    assert h.as_of("003") == KeySum.of(h.truth.hashes[:5]) and h.as_of("000").rows == 0
    expected = h.truth.hashes[3:]
    assert wrong_rows(expected, expected) == (0, 0)
    assert wrong_rows(expected, h.truth.hashes) == (3, 0)
    assert wrong_rows(expected, np.concatenate([expected[1:], expected[1:2]])) == (1, 1)


def test_apache_hudi_sample_crosses_the_maintenance_runs() -> None:
    h = _history([1] * 6, {"004": "compaction", "010": "compaction"})
    assert incremental.sample_begins(h, h.instants) == ["001", "003", "009"]
    assert incremental.sample_begins(h, h.instants[3:]) == ["005", "009"]
    assert time_travel.spark_sample(h, time_travel.retained_instants(h, 4)) == ["007", "009", "011"]


# -- real tables -------------------------------------------------------------------------------------

def _run_engine(spark, tmp_path: Path, name: str, kind: str, config: dict, batches: int = 6,
                every: int = 3) -> tuple[object, EngineHistory]:
    """``batches`` small batches into one engine, maintenance (schedule, execute, clean) after every
    ``every``; the engine and its history against the ground truth."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec, load_scenario
    from workloads.generator import batch_df, batch_table

    scenario = load_scenario(SMALL)
    engine = build_engine(EngineSpec(name=name, kind=kind, config=config), scenario, str(tmp_path / name))
    commits, parts = [], []
    for b in range(batches):
        parts.append(batch_table(scenario.workload, b))
        res = engine.ingest(batch_df(spark, scenario.workload, b))
        commits.append({"engine": name, "batch": b, "kind": "ingest", "instant": res.instant})
        if (b + 1) % every == 0:
            done = engine.execute(engine.schedule())
            assert done is not None and done.instant
            commits.append({"engine": name, "batch": b, "kind": done.kind, "instant": done.instant})
            engine.clean()
    return engine, EngineHistory.of_commits(name, HistoryTruth.of_batches(parts), commits)


def _by_reader(rows: list[dict]) -> dict[str, dict]:
    return {r["reader"]: r for r in rows}


@pytest.mark.parametrize(("kind", "config", "every", "passes"), [
    ("clustering", {}, 3, True),
    # the planted bug: Option 2's clustering re-stamps the rows it rewrites
    ("clustering", {"hoodie.clustering.preserve.commit.metadata": False}, 3, False),
    ("append_compaction", {"order": "commit_before_delete"}, 3, False),
    ("append_compaction", {"order": "commit_before_delete", "preserve_commit_time": True}, 3, True),
    # no table service: its small-file top-ups copy the old rows with their commit time, as HoodieMergeHandle
    ("cow_baseline", {}, 99, True),
], ids=["option2", "option2_restamps", "option1_cbd", "option1_keep_time", "baseline_top_ups"])
def test_incremental_gate_on_real_tables(spark, tmp_path: Path, kind: str, config: dict, every: int,
                                         passes: bool) -> None:
    """hudi-rs (every instant, and its own incremental query) and Apache Hudi's incremental query
    agree: a design that re-stamps compacted or clustered rows re-emits them, one that keeps their
    commit time does not."""
    engine, history = _run_engine(spark, tmp_path, "e", kind, config, every=every)
    if every > 6:  # the top-ups happened: some file group has more than one slice
        assert any(len(files) > 1 for files in engine.table.view().file_groups().values())
    rows = _by_reader(incremental.gate_rows("e", engine.table, history, spark))
    assert set(rows) == {HUDI_RS, APACHE_HUDI}
    for reader, row in rows.items():
        assert row["gate"] == "incremental" and row["passed"] is passes, (reader, row["detail"])
        assert (row["figure"] == 0) is passes and (row["failures"] == 0) is passes, row
    active = [i.timestamp for i in engine.table.refresh().completed_data_instants()]
    begins = len(incremental.sample_begins(history, active))
    assert rows[HUDI_RS]["checked"] == len(history.instants) + begins
    if passes:
        assert rows[APACHE_HUDI]["checked"] == begins
    else:  # a pull across a rewrite re-emits rows; Apache Hudi's later pulls (Spark jobs) are not run
        assert "re-emitted" in rows[APACHE_HUDI]["detail"] and rows[APACHE_HUDI]["figure"] > 0
        checked = rows[APACHE_HUDI]["checked"]
        assert rows[APACHE_HUDI]["failures"] == 1 and 1 <= checked <= begins, rows[APACHE_HUDI]
        assert (checked < begins) is ("not run: the gate failed at the first wrong one" in rows[APACHE_HUDI]["detail"])
    engine.close()


def test_time_travel_gate_catches_an_as_of_read_that_skips_replaced_groups(spark, tmp_path: Path,
                                                                         monkeypatch) -> None:
    """Our view's as-of read, hudi-rs and Apache Hudi pass on Option 2; planted bug: our view
    excludes the file groups replaced as of the latest instant instead of as of the read's, so an
    as-of read before a clustering skips the groups it replaced: time travel fails (ours only)."""
    from engines.table.timeline import Timeline

    engine, history = _run_engine(spark, tmp_path, "o2", "clustering", {}, batches=6, every=2)
    retained = 2  # the small scenario's hoodie.cleaner.commits.retained
    rows = _by_reader(time_travel.gate_rows("o2", engine.table, history, retained, spark))
    assert {r: row["passed"] for r, row in rows.items()} == {OURS: True, HUDI_RS: True, APACHE_HUDI: True}, rows
    assert rows[OURS]["checked"] == retained and rows[HUDI_RS]["checked"] == retained + rows[APACHE_HUDI]["checked"]

    replaced = Timeline.replaced_file_groups
    monkeypatch.setattr(Timeline, "replaced_file_groups", lambda self, as_of=None: replaced(self, None))
    bad = time_travel.gate_rows("o2", engine.table, history, retained, None, readers=(OURS,))[0]
    assert bad["passed"] is False and bad["failures"] >= 1 and bad["figure"] == bad["failures"], bad
    assert "expected" in bad["detail"]
    engine.close()


def test_time_travel_gate_fails_option1_rfc_order(spark, tmp_path: Path) -> None:
    """docs/apache-hudi.md: the RFC order deletes the compaction's inputs with no replace record, so
    an as-of read before it returns 0 rows with no error; every reader sees it."""
    engine, history = _run_engine(spark, tmp_path, "rfc", "append_compaction", {"order": "rfc"})
    rows = _by_reader(time_travel.gate_rows("rfc", engine.table, history, 3, spark))
    assert all(row["passed"] is False for row in rows.values()), rows
    assert "0 rows" in rows[APACHE_HUDI]["detail"]
    engine.close()


def test_every_run_records_both_gates_for_every_engine(small_run) -> None:
    """``run_scenario`` checks both gates on every engine after the last checkpoint and times them."""
    gates = small_run.table("gates")
    engines = set(small_run.run["engines"])
    assert set(gates.engine) == engines
    for engine in engines:
        mine = gates[gates.engine == engine]
        assert set(mine.gate) >= {"incremental", "time_travel"}, engine  # beside the in-run gates (test_gates)
        mine = mine[mine.gate.isin(["incremental", "time_travel"])]
        assert set(mine[mine.gate == "time_travel"].reader) == {OURS, HUDI_RS, APACHE_HUDI}
        assert set(mine[mine.gate == "incremental"].reader) == {HUDI_RS, APACHE_HUDI}
    passed = {(r.engine, r.gate, r.reader): r.passed for r in gates.itertuples()}
    assert passed[("option2", "incremental", APACHE_HUDI)] and passed[("option2", "time_travel", APACHE_HUDI)]
    assert not passed[("option1_cbd", "incremental", APACHE_HUDI)] and passed[("option1_cbd", "time_travel", OURS)]
    assert not passed[("option1_rfc", "time_travel", HUDI_RS)]
    phases = small_run.run["profile"]["phases_s"]
    assert {f"gates/{g}/{e}" for g in ("incremental", "time_travel") for e in engines} <= set(phases)


def test_an_update_gives_its_row_a_new_commit_time() -> None:
    """Batches 0-2 ingested at 001, 003, 005; batch 2's upsert (at 006) corrects two rows of batch 0.
    A pull from 003 returns batch 2's rows and the two corrected rows; as of 005 the corrected rows are
    at their old version, as of 006 at batch 2's (the same keys: only the versioned checksum differs)."""
    from bench.gates.truth import message_versions, versioned_hashes

    parts = [pa.table({"trace_id": _keys(4, 4 * b)}) for b in range(3)]
    updates = [parts[0].slice(0, 0), parts[0].slice(0, 0), parts[0].slice(1, 2)]
    truth = HistoryTruth.of_batches(parts, updates=updates)
    assert truth.has_updates and truth.updated.tolist() == [-1, 2, 2, -1] + [-1] * 8
    commits = [{"engine": "e", "repeat": 0, "batch": b, "kind": "ingest", "instant": f"{2 * b + 1:03d}"} for b in range(3)]
    commits.append({"engine": "e", "repeat": 0, "batch": 2, "kind": "upsert", "instant": "006"})
    h = EngineHistory.of_commits("e", truth, commits)
    assert h.maintenance == [] and h.upsert_instants == {2: "006"}
    assert h.committed_after("003") == KeySum.of(np.concatenate([truth.hashes[8:], truth.hashes[1:3]]))
    assert h.committed_after("005") == KeySum.of(truth.hashes[1:3])
    stamps = pa.array(["001", "006", "006", "001"] + ["003"] * 4 + ["005"] * 4)
    check = incremental.check_every_pull(h, pa.array(_keys(12)), stamps)
    assert check.failures == 0, check
    stale = incremental.check_every_pull(h, pa.array(_keys(12)), pa.array(["001"] * 4 + ["003"] * 4 + ["005"] * 4))
    assert stale.failures == 3 and stale.worst_missing == 2  # the pulls from 001, 003 and 005 miss the update
    before, after = h.as_of("005"), h.as_of("006")
    assert before == KeySum.of(truth.hashes) and before.rows == after.rows and before != after
    versions = message_versions(pa.array(["x", "CORRECTED in batch 2: x", "CORRECTED in batch 2: y"] + ["z"] * 9))
    assert after == KeySum.of(versioned_hashes(truth.hashes, versions))
    with pytest.raises(HistoryError, match="no upsert instant recorded for the corrections of batches \\[2\\]"):
        EngineHistory.of_commits("e", truth, commits[:-1])
