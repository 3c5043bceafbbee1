"""Which file slice a log file belongs to, as Apache Hudi 1.x decides it on our MERGE_ON_READ tables.

Hudi 1.x files a log file into the newest slice of its group whose base instant is at or before
the *completion time* of the instant the log's name carries (``HoodieFileGroup.getBaseInstantTime``),
and on a table version 6 timeline that completion time is the completed instant file's modification
time (``InstantGeneratorV1``). Runs use the logical clock, whose instants lie months before the wall
clock: with real modification times every log went to its group's newest slice, so on
``option2_mor_logs`` (inserts appended to small groups' logs, then compacted and cleaned) Apache
Hudi's incremental pull opened logs the cleaner had removed and its as-of read of an older slice
lost the inserts in that slice's logs, while ours and hudi-rs, which read the base instant in the
name, passed. The completed file's modification time is now the instant time
(:func:`engines.table.instants.completion_mtime_ns`).
"""

from __future__ import annotations

import os
from datetime import datetime

import pyarrow as pa
import pytest

from bench.gates import incremental, time_travel
from bench.gates.history import EngineHistory
from bench.gates.readers import APACHE_HUDI, HUDI_RS, OURS
from bench.gates.truth import HistoryTruth
from engines.clustering.config import ClusteringConfig
from engines.clustering_mor.engine import MorClusteringEngine, MorOption2Config
from engines.table.instants import completion_mtime_ns
from engines.table.table import HudiTable, TableConfig, logical_clock
from engines.table.timeline import METAFOLDER, State
from workloads.generator import batch_table
from workloads.spec import WorkloadSpec
from workloads.truth import corrections_of

SPEC = WorkloadSpec.parse({"seed": 11, "num_batches": 7, "batch_records": 240, "batch_mb": None, "num_partitions": 2,
                           "update_fraction": 0.1})
RETAINED = 4  # hoodie.cleaner.commits.retained: small, so the cleaner removes older slices within the run


def _local_instant(mtime_ns: int) -> str:
    """A modification time as Hudi formats it (``HoodieInstantTimeGenerator.formatDate``, the JVM's zone)."""
    seconds, rest = divmod(mtime_ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds).strftime("%Y%m%d%H%M%S") + f"{rest // 1_000_000:03d}"


def _run(tmp_path) -> tuple[HudiTable, EngineHistory]:
    """Option 2 on MERGE_ON_READ with inserts appended to small groups' logs, on the logical clock:
    an insert and an upsert of corrections per batch, compaction every 3 deltacommits, clustering
    every 4, the cleaner after each commit; the history the gates judge."""
    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id", table_type="MERGE_ON_READ",
                                                            ordering_field="ts"),
                             clock=logical_clock(datetime(2026, 1, 1)))
    config = MorOption2Config(clustering=ClusteringConfig(small_file_limit=60_000, target_file_size=200_000),
                              max_file_size=200_000, insert_small_file_limit=150_000, compact_max_delta_commits=3,
                              mode="inline", inline_max_commits=4, bloom_filter=False,
                              cleaner_commits_retained=RETAINED)
    engine = MorClusteringEngine(table, config)
    commits, parts, updates = [], [], []

    def write(b: int, kind: str, rows: pa.Table) -> None:
        commits.append({"engine": "e", "batch": b, "kind": kind, "instant": engine.upsert(rows).instant})
        for done in engine.after_commit():
            if done.kind in ("compaction", "clustering"):
                commits.append({"engine": "e", "batch": b, "kind": done.kind, "instant": done.instant})

    for b in range(SPEC.num_batches):
        parts.append(batch_table(SPEC, b))
        updates.append(corrections_of(SPEC, b))
        write(b, "ingest", parts[-1])
        if updates[-1].num_rows:
            write(b, "upsert", updates[-1])
    return table, EngineHistory.of_commits("e", HistoryTruth.of_batches(parts, updates=updates), commits)


@pytest.fixture(scope="module")
def logs_run(tmp_path_factory) -> tuple[HudiTable, EngineHistory]:
    return _run(tmp_path_factory.mktemp("mor_logs"))


def test_a_completed_instant_completes_at_its_own_time(logs_run) -> None:
    """Every completed instant file reads back, as Hudi formats modification times, as the instant itself."""
    table, _ = logs_run
    timeline = table.refresh()
    done = timeline.completed()
    assert {i.action for i in done} >= {"deltacommit", "compaction", "replacecommit", "clean"}
    for inst in done:
        entry = table.storage.entry(f"{METAFOLDER}/{timeline.file_name(inst, State.COMPLETED)}")
        assert entry is not None and entry.mtime_ns == completion_mtime_ns(inst.timestamp), inst
        assert _local_instant(entry.mtime_ns) == inst.timestamp
    requested = os.path.join(table.storage.local_path(METAFOLDER), timeline.file_name(done[0], State.REQUESTED))
    assert os.stat(requested).st_mtime_ns != completion_mtime_ns(done[0].timestamp)  # only the commit point


def test_the_run_has_what_broke_apache_hudis_reads(logs_run) -> None:
    """The shape the gates need: log files holding inserts in a group that has a newer slice, and
    log files of older slices removed by the cleaner."""
    table, history = logs_run
    timeline = table.refresh()
    stats = [(i.timestamp, s) for i in timeline.completed(["deltacommit"]) for s in table.commit_metadata(i).write_stats]
    log_inserts = [(t, s.path) for t, s in stats if ".log." in s.path and s.num_inserts]
    assert log_inserts
    assert any(not table.storage.exists(s.path) for _, s in stats if ".log." in s.path)  # cleaned
    slices = {}
    for f in table.view().base_files:
        slices.setdefault((f.partition, f.file_id), []).append(f.instant)
    assert any(len(v) > 1 for v in slices.values())
    assert len(history.instants) > RETAINED


@pytest.mark.parametrize("gate", ["incremental", "time_travel"])
def test_apache_hudi_passes_both_history_gates_on_logs_of_older_slices(spark, logs_run, gate) -> None:
    """Apache Hudi's incremental pull from the first instant and its as-of reads in the cleaner's
    retention return the ground truth's rows, as ours and hudi-rs do. Before the completion times,
    the pull raised ``HoodieIOException`` on a cleaned log file and the as-of read of the oldest
    retained instant lost the inserts of its slices' logs."""
    table, history = logs_run
    if gate == "incremental":
        rows = incremental.gate_rows("e", table, history, spark)
        readers = {HUDI_RS, APACHE_HUDI}
    else:
        rows = time_travel.gate_rows("e", table, history, RETAINED, spark)
        readers = {OURS, HUDI_RS, APACHE_HUDI}
    assert {r["reader"] for r in rows} == readers
    for row in rows:
        assert row["passed"] is True and row["figure"] == 0, (row["reader"], row["detail"])
