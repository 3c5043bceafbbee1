"""Option 2 on MERGE_ON_READ (kind ``clustering_mor``): a seeded workload with ``update_fraction``
0.1 written through the engine in both insert modes, read by real readers (hudi-rs in every test,
Apache Hudi's Spark datasource in the ``interop`` ones) with the ground truth's rows at every
instant: snapshot, time travel, and read-optimized right after each compaction (when no slice has logs)."""

from __future__ import annotations

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from bench.cli import app
from bench.scenario import EngineSpec
from engines.clustering.config import ClusteringConfig
from engines.clustering_mor.engine import MorClusteringEngine, MorOption2Config
from engines.clustering_mor.key_index import KeyIndex
from engines.clustering_mor.small_files import average_record_bytes, small_file_targets
from engines.files.deltacommit import PendingServiceConflictError, write_deltacommit
from engines.kinds import kind_for_table_type, kind_of
from engines.mor_compaction import executor as compaction_executor
from engines.mor_compaction.planner import SliceLogs
from engines.table.instants import InstantClock
from engines.table.mor import committed_instants, merge_slice, read_optimized_read, snapshot_read
from engines.table.table import HudiTable, TableConfig
from engines.table.timeline import DELTACOMMIT
from workloads.generator import batch_table, batch_updates_table
from workloads.spec import WorkloadSpec, WorkloadSpecError
from workloads.truth import expected_table

SPEC = WorkloadSpec.parse({"seed": 11, "num_batches": 7, "batch_records": 240, "batch_mb": None, "num_partitions": 2,
                           "update_fraction": 0.1})
COLUMNS = ["trace_id", "dt", "latency_ms", "message"]
INSERT_MODES = {"base_files": 0, "small_file_logs": 150_000}


def rows_of(table: pa.Table) -> list[tuple]:
    if table.num_rows == 0:
        return []
    return sorted(zip(*(table.column(c).cast(pa.string()).to_pylist() for c in COLUMNS), strict=True))


def hudi_rs_rows(base: str, as_of: str | None = None, read_optimized: bool = False) -> list[tuple]:
    import hudi

    opts = hudi.HudiReadOptions()
    if as_of:
        opts = opts.with_as_of_timestamp(as_of)
    if read_optimized:
        opts = opts.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    batches = hudi.HudiTableBuilder.from_base_uri(base).build().read(opts)
    return rows_of(pa.Table.from_batches(batches)) if batches else []


class Run:
    """The engine's run over :data:`SPEC`: the truth after each instant, and the compaction instants."""

    def __init__(self, table: HudiTable, engine: MorClusteringEngine) -> None:
        self.table, self.engine = table, engine
        self.at: dict[str, list[tuple]] = {}
        self.compactions: list[str] = []
        self.clusterings: list[str] = []


def run_engine(tmp_path, insert_small_file_limit: int) -> Run:
    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id", table_type="MERGE_ON_READ",
                                                            ordering_field="ts"), clock=InstantClock())
    config = MorOption2Config(clustering=ClusteringConfig(small_file_limit=60_000, target_file_size=200_000),
                              max_file_size=200_000, insert_small_file_limit=insert_small_file_limit,
                              compact_max_delta_commits=3, mode="inline", inline_max_commits=4, bloom_filter=False,
                              cleaner_commits_retained=50)
    run = Run(table, MorClusteringEngine(table, config))
    for b in range(SPEC.num_batches):
        rows = batch_table(SPEC, b) if b == 0 else pa.concat_tables([batch_table(SPEC, b), batch_updates_table(SPEC, b)])
        truth = rows_of(expected_table(SPEC, b))
        run.at[run.engine.upsert(rows).instant] = truth
        for done in run.engine.after_commit():
            if done.kind in ("compaction", "clustering"):
                run.at[done.instant] = truth
                (run.compactions if done.kind == "compaction" else run.clusterings).append(done.instant)
    return run


@pytest.fixture(scope="module", params=list(INSERT_MODES))
def engine_run(request, tmp_path_factory) -> tuple[str, Run]:
    return request.param, run_engine(tmp_path_factory.mktemp(request.param), INSERT_MODES[request.param])


def test_the_run_is_what_the_engine_says(engine_run) -> None:
    mode, run = engine_run
    timeline = run.table.refresh()
    assert len(timeline.completed([DELTACOMMIT])) == SPEC.num_batches
    assert run.compactions and run.clusterings  # both services ran on their cadences
    assert not timeline.pending()
    stats = [s for i in timeline.completed([DELTACOMMIT]) for s in run.table.commit_metadata(i).write_stats]
    log_inserts = sum(s.num_inserts for s in stats if ".log." in s.path)
    log_updates = sum(s.num_update_writes for s in stats if ".log." in s.path)
    assert log_updates > 0  # updates always go to logs
    assert (log_inserts > 0) == (mode == "small_file_logs")
    for inst in run.clusterings:  # clustering writes parquet only
        assert all(s.path.endswith(".parquet") for s in run.table.commit_metadata(timeline.get(inst)).write_stats)


def test_hudi_rs_reads_the_truth_at_every_instant(engine_run) -> None:
    _, run = engine_run
    base = run.table.base_uri
    latest = list(run.at.values())[-1]
    assert rows_of(snapshot_read(run.table).rows) == latest == hudi_rs_rows(base)
    for instant, rows in run.at.items():  # time travel: every instant is inside the cleaner's retention
        assert hudi_rs_rows(base, instant) == rows, instant
        assert rows_of(snapshot_read(run.table, instant).rows) == rows, instant
    for instant in run.compactions:  # just compacted: no slice has logs, read-optimized is the snapshot
        if all(not s.logs for s in run.table.view().merge_slices(instant)):
            assert rows_of(read_optimized_read(run.table, instant).rows) == run.at[instant]
    assert hudi_rs_rows(base, read_optimized=True) == rows_of(read_optimized_read(run.table).rows)


@pytest.mark.interop
@pytest.mark.slow
def test_apache_hudi_reads_the_truth_at_every_instant(spark, engine_run) -> None:
    _, run = engine_run

    def read(**opts: str) -> list[tuple]:
        df = spark.read.format("hudi").options(**opts).load(run.table.base_uri)
        return rows_of(pa.Table.from_pylist([r.asDict() for r in df.select(*COLUMNS).collect()]))

    assert read() == list(run.at.values())[-1]
    for instant, rows in run.at.items():
        assert read(**{"as.of.instant": instant}) == rows, instant
    assert read(**{"hoodie.datasource.query.type": "read_optimized"}) == rows_of(read_optimized_read(run.table).rows)


def test_the_key_index_follows_every_kind_of_instant(engine_run) -> None:
    """Replayed instant by instant (deltacommits, compactions, clusterings) or built from the table at
    once, it names for every live key the file group whose merged slice holds it."""
    _, run = engine_run
    table = run.table
    expected: dict[tuple[str, str], str] = {}
    committed = committed_instants(table, None)
    for s in table.view().merge_slices():
        base, records, _ = merge_slice(table, s, committed, [])
        for key in ([] if base is None else base.column("_hoodie_record_key").to_pylist()) + \
                [r["_hoodie_record_key"] for r in records]:
            expected[(s.partition, key)] = s.file_id
    parts, keys = [p for p, _ in expected], [k for _, k in expected]
    fresh = KeyIndex(table)
    assert run.engine.index.locate(parts, keys) == list(expected.values()) == fresh.locate(parts, keys)
    assert len(run.engine.index) == len(fresh) == len(expected) == len(run.at[list(run.at)[-1]])
    assert fresh.locate(["dt=2026-01-01"], ["no-such-key"]) == [None]


def test_a_write_under_a_pending_compaction_runs_it_first(tmp_path) -> None:
    run = run_engine(tmp_path, 0)
    table, engine, latest = run.table, run.engine, list(run.at.values())[-1]
    last = batch_updates_table(SPEC, SPEC.num_batches - 1)  # re-applying the last corrections changes no row
    write_deltacommit(table, last)  # another writer's deltacommit leaves logs ...
    pending = compaction_executor.schedule(table, engine.config.compaction, force=True)  # ... and a pending plan
    with pytest.raises(PendingServiceConflictError):
        write_deltacommit(table, last)  # the table core refuses an update to a group under it
    res = engine.upsert(last)  # the engine executes the pending compaction first
    timeline = table.refresh()
    assert timeline.get(pending).is_completed and res.instant > pending
    assert rows_of(snapshot_read(table).rows) == latest == hudi_rs_rows(table.base_uri)


# -- pure parts ---------------------------------------------------------------------------------
def test_small_file_candidates_are_hudis() -> None:
    slices = [SliceLogs("p", "a", "1", "a.parquet", 50, (), 0), SliceLogs("p", "b", "1", "b.parquet", 10, (), 0),
              SliceLogs("p", "c", "1", "c.parquet", 5, (".c.log.1",), 9),  # has logs: not padded
              SliceLogs("p", "d", "1", "d.parquet", 1, (), 0),  # pending plan
              SliceLogs("p", "e", "1", "e.parquet", 500, (), 0),  # not small
              SliceLogs("q", "f", "1", "f.parquet", 20, (), 0)]
    held = {("p", "d"): "9"}
    got = small_file_targets(slices, 100, 1, 1000, 10.0, held)
    assert [(t.partition, t.file_id, t.records) for t in got] == [("p", "b", 99), ("q", "f", 98)]
    assert [t.file_id for t in small_file_targets(slices, 100, 2, 1000, 10.0, held)] == ["b", "a", "f"]
    assert small_file_targets(slices, 0, 5, 1000, 10.0, held) == []
    assert average_record_bytes([(10, 1), (5000, 50)], 100) == 100.0
    assert average_record_bytes([], 100) == 1024.0


# -- configuration and validation -------------------------------------------------------------------
def test_table_type_picks_the_mor_kind_and_refuses_a_kind_without_it() -> None:
    assert kind_of("clustering_mor").table_types == ("MERGE_ON_READ",)
    assert kind_for_table_type("clustering", "merge_on_read") == "clustering_mor"
    assert kind_for_table_type("clustering_mor", "COPY_ON_WRITE") == "clustering"
    spec = EngineSpec(name="o2", kind="clustering", config={"table_type": "MERGE_ON_READ", "max_file_mb": 10})
    assert (spec.kind, spec.config) == ("clustering_mor", {"max_file_mb": 10})
    with pytest.raises(ValueError, match="engine kind 'append_compaction' has no MERGE_ON_READ .config key table_type"):
        EngineSpec(name="o1", kind="append_compaction", config={"table_type": "MERGE_ON_READ"})


def test_validate_refuses_mor_on_a_kind_without_it(tmp_path) -> None:
    doc = (tmp_path / "s.yaml")
    doc.write_text("name: s\nworkload: {num_batches: 2, batch_records: 100, batch_mb: null, update_fraction: 0.1}\n"
                   "engines:\n  - {name: o1, kind: append_compaction, config: {table_type: MERGE_ON_READ}}\n")
    res = CliRunner().invoke(app, ["validate", str(doc)])
    assert res.exit_code == 3, res.output
    assert "append_compaction" in res.output and "table_type" in res.output
    doc.write_text(doc.read_text().replace("append_compaction", "clustering"))
    ok = CliRunner().invoke(app, ["validate", str(doc)])
    assert ok.exit_code == 0, ok.output


def test_update_fraction_is_the_alias_of_corrections_fraction() -> None:
    assert WorkloadSpec.parse({"update_fraction": 0.1}).corrections_fraction == 0.1
    with pytest.raises(WorkloadSpecError, match="update_fraction and corrections_fraction are one field"):
        WorkloadSpec.parse({"update_fraction": 0.1, "corrections_fraction": 0.1})


def test_the_engine_is_built_from_a_scenario(tmp_path) -> None:
    from bench.engine_factory import build_engine
    from bench.scenario import load_scenario

    sc = load_scenario("bench/scenarios/crash_mor.yaml")
    engine = build_engine(sc.engines[0], sc, str(tmp_path / "t"))
    assert isinstance(engine, MorClusteringEngine) and engine.table.merge_on_read
    assert engine.config.insert_small_file_limit == 400_000 and engine.config.compact_max_delta_commits == 2
    assert engine.pending_plan() is None


def test_probe_counts_log_files_as_hudis_file_system_view_does(tmp_path) -> None:
    """HudiProbe.state lists every log file beside the base files (their bytes as storage reports them), and
    the runner's table state counts the live slices' logs as live files: physical and live bytes, and so
    space amplification and the storage ledger, include the bytes of the logs holding the updates."""
    from bench.runner import table_state
    from engines.table.probe import HudiProbe

    table = HudiTable.create(str(tmp_path / "t"), TableConfig("t", "dt", "trace_id", table_type="MERGE_ON_READ",
                                                            ordering_field="ts"), clock=InstantClock())
    engine = MorClusteringEngine(table, MorOption2Config(max_file_size=200_000, compact_max_delta_commits=3,
                                                         bloom_filter=False, cleaner_commits_retained=50))
    for b in range(3):
        rows = batch_table(SPEC, b) if b == 0 else pa.concat_tables([batch_table(SPEC, b), batch_updates_table(SPEC, b)])
        engine.upsert(rows)
    probe = HudiProbe(table)
    listed = {e.path: e.size for e in table.storage.list("", recursive=True)
              if e.path.endswith(".parquet") or ".log." in e.path}
    logs = {p: n for p, n in listed.items() if ".log." in p}
    assert len(logs) >= 2  # the updates of batches 1 and 2, each in a log of the group holding its keys
    snap, physical = probe.state()
    assert {f.path: f.size for f in physical} == listed  # every base and log file, at its size on storage
    live_logs = probe.live_logs()
    assert live_logs and {g.path for g in live_logs} <= set(logs)
    state = table_state(probe, 100_000)
    assert state["physical_bytes"] == sum(listed.values()) and state["physical_files"] == len(listed)
    assert state["live_bytes"] == sum(s.size_bytes for s in snap) + sum(g.size for g in live_logs)
    assert state["live_files"] == len(snap) + len(live_logs)
    assert engine.compaction.schedule() is not None  # due after 3 deltacommits
    engine.compaction.execute()  # the logs merged into new base files: none live, all still physical
    assert probe.live_logs() == [] and {f.path for f in probe.state()[1]} >= set(logs)
