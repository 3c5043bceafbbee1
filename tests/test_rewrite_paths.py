"""The shuffle-free rewrite paths on real Spark: same rows, even outputs, order, determinism, temp files."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from engine_helpers import ingest, new_table, spec

from engines.clustering.config import ClusteringConfig
from engines.clustering.engine import ClusteringEngine, Option2Config
from engines.files import gate
from engines.files.inputs import inspect_inputs
from engines.table.rollback import rollback_inflight
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, Instant, State
from workloads.generator import batch_table

DATA = ["ts", "dt", "service", "host", "level", "trace_id", "latency_ms", "message"]


def clustered(spark, path, sort: tuple[str, ...], preserve: bool = True) -> tuple[HudiTable, list[pa.Table]]:
    ws = spec(num_partitions=1, num_batches=6, batch_records=2000)
    e = ClusteringEngine(new_table(path), Option2Config(
        clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=400_000, sort_columns=sort),
        row_group_rows=1000, preserve_commit_metadata=preserve,
        bloom_filter=False))  # a 400 KB target: data bytes only, without the ~431 KB footer bloom filter
    ingest(spark, e, ws, range(6))
    before = sorted(s.path for s in e.snapshot())
    instant = e.schedule()
    res = e.execute(instant)
    assert res.files_out >= 2, res
    outs = [pq.read_table(e.table.storage.abs(s.path)) for s in sorted(e.snapshot(), key=lambda s: s.path)]
    truth = pa.concat_tables([batch_table(ws, b) for b in range(6)])
    got = pa.concat_tables([t.select(DATA) for t in outs])
    assert sorted(got.column("trace_id").to_pylist()) == sorted(truth.column("trace_id").to_pylist())
    assert got.sort_by("trace_id").equals(truth.select(DATA).sort_by("trace_id"))
    rows = [t.num_rows for t in outs]
    assert max(rows) - min(rows) <= 1 if not sort else max(rows) <= 1.1 * min(rows)
    assert all(md.row_group(i).num_rows <= 1000 for md in (pq.read_metadata(e.table.storage.abs(p.path))
                                                             for p in e.snapshot()) for i in range(md.num_row_groups))
    assert not e.table.storage.exists(f".hoodie/.temp/{instant}")
    assert all(p not in before for p in (s.path for s in e.snapshot()))
    return e.table, outs


def test_unsorted_clustering_keeps_input_order_and_commit_metadata(spark, tmp_path) -> None:
    table, outs = clustered(spark, tmp_path / "t", ())
    # rows keep their commit time and seqno; file names/partition paths are the new files'
    for t, s in zip(outs, sorted(table.view().snapshot(), key=lambda s: s.path), strict=True):
        assert set(t.column("_hoodie_file_name").to_pylist()) == {s.file_name}
        times, seqnos = t.column("_hoodie_commit_time").to_pylist(), t.column("_hoodie_commit_seqno").to_pylist()
        assert all(q.startswith(f"{c}_") for c, q in zip(times, seqnos, strict=True))
    assert len(set(pa.concat_tables(outs).column("_hoodie_commit_time").to_pylist())) == 6


@pytest.mark.parametrize("preserve", [True, False])
@pytest.mark.parametrize("single_task_bytes", [gate.SINGLE_TASK_BYTES, 0], ids=["one-task", "two-stage"])
def test_sorted_clustering_disjoint_sorted_outputs(spark, tmp_path, monkeypatch, preserve, single_task_bytes) -> None:
    monkeypatch.setattr(gate, "SINGLE_TASK_BYTES", single_task_bytes)
    table, outs = clustered(spark, tmp_path / "t", ("service", "ts"), preserve)
    keys = []
    for t in outs:
        k = list(zip(t.column("service").to_pylist(), t.column("ts").to_pylist(),
                     t.column("trace_id").to_pylist(), strict=True))
        assert k == sorted(k)
        keys.append(k)
    keys.sort()
    assert all(a[-1] < b[0] for a, b in zip(keys, keys[1:], strict=False))
    if not preserve:
        assert len(set(pa.concat_tables(outs).column("_hoodie_commit_time").to_pylist())) == 1


@pytest.mark.parametrize("sort,single_task_bytes", [((), 0), (("service", "ts"), 0),
                                                     (("service", "ts"), gate.SINGLE_TASK_BYTES)])
def test_rewrite_is_deterministic(spark, tmp_path, monkeypatch, sort, single_task_bytes) -> None:
    """Reruns write the same bytes, whether the tasks run as a Spark job (a, c) or in the driver (b)."""
    monkeypatch.setattr(gate, "SINGLE_TASK_BYTES", single_task_bytes)
    ws = spec(num_partitions=1, num_batches=4, batch_records=2000)
    e = ClusteringEngine(new_table(tmp_path / "a"), Option2Config(clustering=ClusteringConfig(
        small_file_limit=1 << 30, target_file_size=150_000, sort_columns=sort), row_group_rows=1000))
    ingest(spark, e, ws, range(4))
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    shutil.copytree(tmp_path / "a", tmp_path / "c")
    digests = []
    for name, local_bytes in (("a", -1), ("b", gate.LOCAL_BYTES), ("c", -1)):
        monkeypatch.setattr(gate, "LOCAL_BYTES", local_bytes)
        t = HudiTable.open(str(tmp_path / name))
        eng = ClusteringEngine(t, e.config)
        eng.execute(eng.schedule())
        digests.append(sorted((s.path, t.storage.read_bytes(s.path)) for s in t.view().snapshot()))
    assert digests[0] == digests[1] == digests[2]


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
@pytest.mark.parametrize("foreign", [False, True])
def test_hudi_split_writes_whole_input_files_per_output(spark, tmp_path, foreign: bool) -> None:
    """``clustering_split: hudi``: each output holds whole input files, the plan's slices coalesced as
    Apache Hudi's clustering does (engines.files.splits.split_files), on the pyarrow and the Spark path."""
    from engines.files.splits import split_files
    from workloads.generator import batch_df

    ws = spec(num_partitions=1, num_batches=6, batch_records=1500)
    e = ClusteringEngine(new_table(tmp_path / "t"), Option2Config(
        clustering=ClusteringConfig(small_file_limit=1 << 30, target_file_size=300_000),
        clustering_split="hudi", bloom_filter=False))
    for b in range(6):
        e.ingest(batch_df(spark, ws, b).limit(300 + 200 * b))  # uneven files: the split shows
    if foreign:
        path = e.table.storage.abs(e.snapshot()[0].path)
        pq.write_table(pq.read_table(path), path, store_schema=False)  # as a non-Arrow writer would
    plan = e.load_plan(e.schedule())
    (group,) = plan.groups
    assert group.num_output_files >= 2
    expected = sorted(sum(rows for _, _, rows in run)
                      for run in split_files([s.num_rows for s in group.slices], group.num_output_files))
    e.execute()
    assert sorted(s.num_rows for s in e.snapshot()) == expected
    assert len(set(expected)) > 1  # not an even split


def test_foreign_files_take_the_spark_path(spark, tmp_path) -> None:
    ws = spec(num_partitions=1, num_batches=2, batch_records=500)
    e = ClusteringEngine(new_table(tmp_path / "t"), Option2Config(clustering=ClusteringConfig(
        small_file_limit=1 << 30, target_file_size=1 << 30)))
    ingest(spark, e, ws, range(2))
    slices = e.snapshot()
    assert inspect_inputs(e.table.storage, slices, True) is not None
    path = e.table.storage.abs(slices[0].path)
    pq.write_table(pq.read_table(path), path, store_schema=False)  # as a non-Arrow writer would
    assert inspect_inputs(e.table.storage, slices, True) is None
    e.execute(e.schedule())  # the Spark path: same rows, each output sorted by record key
    outs = [pq.read_table(e.table.storage.abs(s.path)) for s in e.snapshot()]
    assert sorted(pa.concat_tables(outs).column("trace_id").to_pylist()) == sorted(
        pa.concat_tables([batch_table(ws, b) for b in range(2)]).column("trace_id").to_pylist())
    assert all(t.column("trace_id").to_pylist() == sorted(t.column("trace_id").to_pylist()) for t in outs)


def test_sorted_runs_left_by_a_killed_attempt_are_rolled_back(spark, tmp_path) -> None:
    ws = spec(num_partitions=1, num_batches=3, batch_records=1000)
    e = ClusteringEngine(new_table(tmp_path / "t"), Option2Config(clustering=ClusteringConfig(
        small_file_limit=1 << 30, target_file_size=1 << 30, sort_columns=("service",))))
    ingest(spark, e, ws, range(3))
    instant = e.schedule()
    # what a SIGKILL during stage 2 leaves: an inflight instant and sorted runs on storage
    e.table.refresh().transition_to_inflight(Instant(instant, REPLACE, State.REQUESTED))
    e.table.storage.write_atomic(f".hoodie/.temp/{instant}/group-0/run-0.arrow", b"partial")
    assert rollback_inflight(e.table, instant, keep_plan=True).plan_kept
    assert not e.table.storage.exists(f".hoodie/.temp/{instant}")
    e.execute(instant)
    assert sorted(pa.concat_tables([pq.read_table(e.table.storage.abs(s.path)) for s in e.snapshot()])
                  .column("trace_id").to_pylist()) == sorted(
        pa.concat_tables([batch_table(ws, b) for b in range(3)]).column("trace_id").to_pylist())
