"""The runner with corrections (``workload.update_fraction``): each batch's corrections of earlier keys
are one upsert commit per engine (kind ``upsert``), the ground truth is ``expected_table`` (updates
applied), the MERGE_ON_READ candidate's updates go to log files that queries merge, and the
incremental gate knows that an update gives a row a new commit time."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.gates.history import EngineHistory
from bench.gates.history_gates import history_gate_rows
from bench.gates.readers import FileKeySums, OurReader
from bench.gates.truth import HistoryTruth, KeySum
from bench.scenario import load_scenario
from engines.table.mor import snapshot_read
from engines.table.table import HudiTable
from runresults import Results
from workloads.generator import batch_table
from workloads.truth import corrections_of, expected_table

SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"
BATCHES = 4
NO_BLOOM = {"hoodie.parquet.bloom.filter.enabled": False}


@pytest.fixture(scope="module")
def corrected_run(corrections_run: Results) -> Results:
    """The session's run with corrections (tests/conftest.py ``corrections_run``, shared with the simulator's test)."""
    return corrections_run


def _table(res: Results, engine: str) -> HudiTable:
    return HudiTable.open(str(res.folder / "tables" / engine))


def _rows(table: HudiTable) -> pa.Table:
    """The table's snapshot as the data columns of its rows (a MERGE_ON_READ table merged with its logs)."""
    cols = ["trace_id", "latency_ms", "message"]
    if table.merge_on_read:
        return snapshot_read(table).rows.select(cols)
    return pa.concat_tables([pq.read_table(table.storage.abs(s.path), columns=cols) for s in table.view().snapshot()])


def _sorted(t: pa.Table) -> list[tuple]:
    return sorted(zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True))


def test_every_engine_ends_with_the_corrected_truth(corrected_run: Results) -> None:
    res = corrected_run
    assert res.run["verification"]["ok"], res.run["verification"]["failures"]
    spec = load_scenario(SMALL).workload.model_copy(update={"num_batches": BATCHES, "corrections_fraction": 0.1})
    expected = expected_table(spec, BATCHES - 1).select(["trace_id", "latency_ms", "message"])
    updates = sum(corrections_of(spec, b).num_rows for b in range(BATCHES))
    assert updates > 0 and res.run["ground_truth"]["updates"] == updates
    assert res.run["ground_truth"]["rows"] == expected.num_rows
    assert sum(m.startswith("CORRECTED") for m in expected.column("message").to_pylist()) > 0
    c = res.table("commits")
    for engine in ("baseline", "option1_cbd", "option2_mor"):
        assert _sorted(_rows(_table(res, engine))) == _sorted(expected), engine
        ups = c[(c.engine == engine) & (c.kind == "upsert")]
        assert sorted(ups.batch) == [b for b in range(BATCHES) if corrections_of(spec, b).num_rows], engine
        assert (ups.duration_s > 0).all() and (ups.records_written > 0).all()
        assert ups.bytes_written.sum() > 0 and c[c.engine == engine].sort_values("seq").wa.iloc[-1] > 1
    assert any(k.startswith("upsert/") for k in res.run["profile"]["phases_s"])


def test_mor_updates_go_to_logs_that_queries_merge(corrected_run: Results) -> None:
    res = corrected_run
    c = res.table("commits")
    mor = c[(c.engine == "option2_mor") & (c.kind == "upsert")]
    assert (mor.action == "deltacommit").all()
    files = res.table("files")
    logs = files[(files.engine == "option2_mor") & files.path.str.contains(r"\.log\.")]
    assert len(logs) and logs.live.any() and (logs.size_bytes > 0).all()  # counted among the table's files
    q = res.table("queries")
    first = q[(q.engine == "option2_mor") & (q.checkpoint == 1) & (q.run == 0)]
    assert (first.log_files_merged > 0).all() and (first.log_bytes_merged > 0).all() and first.verified.all()
    cow = q[(q.engine == "baseline") & (q.run == 0)]
    assert (cow.log_files_merged.fillna(0) == 0).all()
    # the read-amplification section: the final checkpoint's cold run and every interleaved round's
    from reports.read_amplification import read_amplification_rows

    rounds = int(res.run["scenario"]["queries"]["rounds"])
    rows = [r for r in read_amplification_rows(res) if r["engine"] == "option2_mor"]
    assert rows and all(r["n"] == rounds + 1 for r in rows), rows


def test_apache_hudi_reads_every_key_at_its_corrected_version(spark, corrected_run: Results) -> None:
    """The time-travel gate's Apache Hudi reader computes the versioned checksum in Spark (the correction's
    batch from the message, mixed into the key hash as a wrapping long): equal to ours on both table types,
    and different from the checksum of the keys alone."""
    from bench.gates.readers import apache_hudi_key_sum

    res = corrected_run
    for engine in ("baseline", "option2_mor"):
        table = _table(res, engine)
        ours = OurReader(table, FileKeySums(table, versions=True)).key_sum()
        theirs = apache_hudi_key_sum(spark, table.base_uri, versions=True)
        assert theirs == ours, engine
        assert apache_hudi_key_sum(spark, table.base_uri) != theirs
        assert apache_hudi_key_sum(spark, table.base_uri).rows == theirs.rows


def test_incremental_gate_counts_an_update_as_a_new_commit(corrected_run: Results) -> None:
    """With the corrections in the truth every pull is exact on the COW baseline (its merge keeps the
    commit time of the rows it does not update) and on MOR; a truth without them fails the same tables."""
    res = corrected_run
    spec = load_scenario(SMALL).workload.model_copy(update={"num_batches": BATCHES, "corrections_fraction": 0.1})
    parts = [batch_table(spec, b) for b in range(BATCHES)]
    updates = [corrections_of(spec, b) for b in range(BATCHES)]
    assert HistoryTruth.of_batches(parts, updates=updates).has_updates
    engines = [SimpleNamespace(name=n, table_format="hudi", table=_table(res, n)) for n in ("baseline", "option2_mor")]
    commits = res.table("commits").to_dict("records")
    rows = history_gate_rows(engines, commits, parts, 2, None, lambda phase: nullcontext(), updates=updates)
    inc = {r["engine"]: r for r in rows if r["gate"] == "incremental" and r["reader"] == "hudi_rs"}
    assert inc["baseline"]["passed"] and inc["option2_mor"]["passed"], inc
    tt = [r for r in rows if r["gate"] == "time_travel" and r["reader"] in ("ours", "hudi_rs")]
    assert tt and all(r["passed"] for r in tt), tt
    blind = history_gate_rows(engines, commits, parts, 2, None, lambda phase: nullcontext())
    assert all(not r["passed"] for r in blind if r["gate"] == "incremental" and r["reader"] == "hudi_rs"), blind
    history = EngineHistory.of_commits("baseline", HistoryTruth.of_batches(parts, updates=updates), commits)
    ups = {int(r["batch"]): r["instant"] for r in commits if r["engine"] == "baseline" and r["kind"] == "upsert"}
    last = max(ups)
    # as of the last batch's ingest its corrections are not applied yet; as of its upsert they are: the same
    # keys at other versions (what the time-travel gate's readers are checked against, from each row's message)
    before, after = history.as_of(history.batch_instants[last]), history.as_of(ups[last])
    assert before.rows == after.rows and before != after
    reader = OurReader(_table(res, "baseline"), FileKeySums(_table(res, "baseline"), versions=True))
    assert reader.key_sum(ups[last]) == after and reader.key_sum() == after
    assert OurReader(_table(res, "option2_mor"), FileKeySums(_table(res, "option2_mor"), versions=True)).key_sum() == after
    # a pull from the last batch's ingest returns exactly that batch's corrections, upserted after it
    assert history.committed_after(history.batch_instants[last]) == KeySum.of_keys(updates[last].column("trace_id"))
    assert updates[last].num_rows > 0
