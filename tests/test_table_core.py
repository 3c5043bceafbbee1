"""Unit tests of the table core: instants, timeline transitions, atomic completion, Avro plans, view rules, lock."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import subprocess
import sys
import uuid
from datetime import UTC, datetime

import pytest
from shared_files import shared_path

from engines.table.avro import (
    BASE_FILE_COMPACTION_PLAN,
    CLUSTERING_PLAN,
    REQUESTED_REPLACE,
    PlanFileError,
    decode_plan,
    encode_plan,
    schema_json,
)
from engines.table.instants import InstantClock, format_instant, parse_instant
from engines.table.lock import LOCK_FILE, LockHeldError, WriterLock
from engines.table.metadata import CommitMetadata, MetadataError
from engines.table.model import (
    _FILE_ID_NAMESPACE,
    FileSlice,
    WriteStat,
    base_file_name,
    file_slices,
    new_file_id,
    parse_base_file_name,
)
from engines.table.storage import Storage
from engines.table.table import HudiTable, TableConfig, logical_clock
from engines.table.timeline import COMMIT, COMPACTION, REPLACE, State, Timeline, TimelineError
from engines.table.view import AsOfError

SEEDS = "seeds/000_c8d7934311f4528d.txt"


def make_table(tmp_path, name="t") -> HudiTable:
    return HudiTable.create(str(tmp_path / name), TableConfig(name, "dt", "trace_id"),
                            clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))


def put_file(table: HudiTable, partition: str, fid: str, instant: str, size: int = 10) -> str:
    rel = f"{partition}/{base_file_name(fid, '0-0-0', instant)}"
    table.storage.write_atomic(rel, b"x" * size)
    return rel


def commit_files(table: HudiTable, files: list[tuple[str, str]], action: str = COMMIT,
                 replaced: dict[str, list[str]] | None = None, complete: bool = True, plan: bytes = b""):
    inst = table.start(action, content=plan)
    stats = []
    for partition, fid in files:
        rel = put_file(table, partition, fid, inst.timestamp)
        stats.append(WriteStat(fid, partition, rel, num_writes=5, file_size=10))
    if complete:
        table.complete(inst, CommitMetadata("INSERT", stats, replaced_file_ids=replaced or {}),
                       replace=action == REPLACE)
    return inst


# -- instants -------------------------------------------------------------------------------
def test_instant_format_roundtrip() -> None:
    moment = datetime(2026, 11, 22, 13, 4, 5, 678000, tzinfo=UTC)
    assert format_instant(moment) == "20261122130405678"
    assert parse_instant("20261122130405678") == moment
    with pytest.raises(ValueError, match="17 digits"):
        parse_instant("2026-11-22")


def test_instants_strictly_increase_within_one_millisecond() -> None:
    clock = InstantClock()
    last = None
    seen = []
    for _ in range(500):
        last = clock.next(last)
        seen.append(last)
    assert seen == sorted(seen) and len(set(seen)) == len(seen)
    assert all(len(s) == 17 for s in seen)


def test_logical_clock_is_deterministic() -> None:
    a, b = logical_clock(datetime(2026, 1, 1, tzinfo=UTC)), logical_clock(datetime(2026, 1, 1, tzinfo=UTC))
    assert a.next(None) == b.next(None) == "20260101000000000"
    assert a.next("20260101000000000") == "20260101000000001"


def test_file_ids_are_the_name_based_uuid_of_where_they_are_written() -> None:
    """new_file_id spells uuid.uuid5 out (no UUID object per file): the same ids as the library's."""
    for i in range(400):
        where = ("bucket-3", f"2026010100000{i % 10}{i:03d}", f"dt=2024-01-{1 + i % 28:02d}-{i % 24:02d}",
                 i % 3, i % 2, i % 5)
        seed = "/".join(map(str, where))
        assert new_file_id(*where) == f"{uuid.uuid5(_FILE_ID_NAMESPACE, seed)}-{where[5]}"
    assert new_file_id("group-é", "20260101000000000", "région=été", 0, 0, 0) == \
        f"{uuid.uuid5(_FILE_ID_NAMESPACE, 'group-é/20260101000000000/région=été/0/0/0')}-0"


# -- timeline ---------------------------------------------------------------------------------
def test_timeline_file_names_and_states(tmp_path) -> None:
    table = make_table(tmp_path)
    c = commit_files(table, [("dt=a", "f1-0")])
    r = commit_files(table, [("dt=a", "f2-0")], action=REPLACE, complete=False)
    k = table.start(COMPACTION)
    names = sorted(e.path.rsplit("/", 1)[-1] for e in table.storage.list(".hoodie"))
    assert f"{c.timestamp}.commit.requested" in names and f"{c.timestamp}.inflight" in names
    assert f"{c.timestamp}.commit" in names
    assert f"{r.timestamp}.replacecommit.inflight" in names
    assert f"{k.timestamp}.basefilecompaction.inflight" in names
    tl = table.refresh()
    assert [(i.action, i.state) for i in tl] == [
        (COMMIT, State.COMPLETED), (REPLACE, State.INFLIGHT), (COMPACTION, State.INFLIGHT)
    ]
    # a base-file compaction completes as "<t>.commit"
    table.complete(k, CommitMetadata("COMPACT", []))
    assert table.storage.exists(f".hoodie/{k.timestamp}.commit")
    assert table.refresh().get(k.timestamp).state == State.COMPLETED
    assert table.refresh().get(k.timestamp).action == COMPACTION


def test_illegal_transitions_raise(tmp_path) -> None:
    table = make_table(tmp_path)
    tl = table.refresh()
    req = tl.create_requested("20260101000000005", COMMIT)
    with pytest.raises(TimelineError, match="not inflight"):
        tl.complete(req, b"{}")
    inf = tl.transition_to_inflight(req)
    with pytest.raises(TimelineError, match="not requested"):
        tl.transition_to_inflight(req)
    tl.complete(inf, b"{}")
    with pytest.raises(TimelineError, match="not inflight"):
        tl.complete(inf, b"{}")
    with pytest.raises(TimelineError, match="must increase"):
        tl.create_requested("20260101000000001", COMMIT)
    with pytest.raises(TimelineError, match="unknown action"):
        tl.create_requested("20260101000000009", "savepoint")
    with pytest.raises(TimelineError, match="empty"):
        tl.complete(tl.transition_to_inflight(tl.create_requested("20260101000000010", COMMIT)), b"")


def test_crash_before_rename_leaves_nothing_visible(tmp_path) -> None:
    """A child process killed between writing the temp file and the rename: no completed instant."""
    table = make_table(tmp_path)
    inst = commit_files(table, [("dt=a", "f1-0")], complete=False)
    code = f"""
from engines.table.storage import Storage
Storage({str(tmp_path / 't')!r}).write_atomic('.hoodie/{inst.timestamp}.commit', b'{{"operationType": "INSERT"}}')
"""
    env = dict(os.environ, LAYOUTBENCH_CRASH_AT="storage.before_rename")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env)
    assert proc.returncode == -9
    tl = Timeline.load(table.storage)
    assert tl.get(inst.timestamp).state == State.INFLIGHT
    assert table.view().snapshot() == []


# -- metadata ---------------------------------------------------------------------------------
def test_commit_metadata_is_hudi_json(tmp_path) -> None:
    stat = WriteStat("f1-0", "dt=a", "dt=a/f.parquet", num_writes=3, file_size=100,
                     column_stats={"ts": (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))})
    meta = CommitMetadata("CLUSTER", [stat], schema='{"type":"record"}', replaced_file_ids={"dt=a": ["f0-0"]})
    doc = json.loads(meta.to_json(replace=True))
    assert doc["operationType"] == "CLUSTER"
    assert doc["partitionToReplaceFileIds"] == {"dt=a": ["f0-0"]}
    assert doc["extraMetadata"]["schema"] == '{"type":"record"}'
    w = doc["partitionToWriteStats"]["dt=a"][0]
    assert {"fileId", "path", "numWrites", "totalWriteBytes", "fileSizeInBytes", "prevCommit"} <= w.keys()
    back = CommitMetadata.from_json(meta.to_json(replace=True))
    assert back.write_stats[0].column_stats == stat.column_stats
    assert back.replaced_file_ids == {"dt=a": ["f0-0"]}


def test_commit_metadata_json_edge_values() -> None:
    stat = WriteStat("f1-0", "dt=a", "dt=a/f.parquet", num_writes=3, file_size=100,
                     column_stats={"x": (float("nan"), 1.0), "y": (-float("inf"), 2.0), "z": (1, 2**70), "é": ("a", "ü")})
    data = CommitMetadata("INSERT", [stat]).to_json()
    back = CommitMetadata.from_json(data)
    assert back.write_stats[0].column_stats == {"z": (1, 2**70), "é": ("a", "ü")}  # no NaN/inf in JSON
    assert back.written_files() == {"dt=a/f.parquet": (3, {"z": (1, 2**70), "é": ("a", "ü")}, 100)}
    legacy = data.replace(b'"z":[1,' + str(2**70).encode() + b"]", b'"z":[NaN,1.5]')  # what json.dumps wrote
    assert CommitMetadata.from_json(legacy).write_stats[0].column_stats["z"][1] == 1.5


def test_malformed_write_stat_errors_name_source_when_read() -> None:
    meta = CommitMetadata.from_json(b'{"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": "x"}]}}',
                                    source="y.commit")
    with pytest.raises(MetadataError, match="y.commit"):
        meta.write_stats  # noqa: B018 - parsed on first read
    with pytest.raises(MetadataError, match="y.commit"):
        CommitMetadata.from_json(b'{"partitionToWriteStats": {"p": [{"fileId": "f", "path": "a", "numWrites": "x"}]}}',
                                 source="y.commit").written_files()


@pytest.mark.parametrize("data", [b"", b"{", b"[1,2]", b'{"partitionToWriteStats": {"p": [1]}}', b"\xff\xfe"])
def test_bad_commit_metadata_errors_name_source(data: bytes) -> None:
    with pytest.raises(MetadataError, match="x.commit"):
        CommitMetadata.from_json(data, source="x.commit")


# -- Avro plans -------------------------------------------------------------------------------
def _seed_schema(name: str) -> dict:
    """The schema as printed in the RFC page, parsed from the seed text."""
    text = shared_path(SEEDS).read_text()
    start = text.index('"name": "HoodieBaseFileCompactionPlan"' if name == BASE_FILE_COMPACTION_PLAN
                       else '"name":"HoodieClusteringPlan"')
    start = text.rindex("{", 0, start)
    depth, i = 0, start
    while True:
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return json.loads(text[start:i + 1].replace("\xa0", " "))


@pytest.mark.parametrize("name", [BASE_FILE_COMPACTION_PLAN, CLUSTERING_PLAN])
def test_shipped_schemas_are_the_seeds_verbatim(name: str) -> None:
    assert schema_json(name) == _seed_schema(name)


def test_plans_roundtrip() -> None:
    comp = {"operations": [{"baseFilePaths": ["dt=a/x.parquet"], "partitionPath": "dt=a",
                            "metrics": {"fileCount": 1.0}}], "extraMetadata": {"k": "v"}, "version": 1}
    assert decode_plan(BASE_FILE_COMPACTION_PLAN, encode_plan(BASE_FILE_COMPACTION_PLAN, comp), "p") == comp
    plan = {"clusteringGroups": [{"fileIds": ["f1-0"], "partitionPath": "dt=a", "metrics": {"totalBytes": 5.0}}],
            "targetFileSize": 1024, "sortColumns": ["service"], "extraMetadata": None, "version": 1}
    req = {"operationType": "CLUSTER", "clusteringPlan": plan, "extraMetadata": None, "version": 1}
    assert decode_plan(REQUESTED_REPLACE, encode_plan(REQUESTED_REPLACE, req), "r")["clusteringPlan"] == plan
    assert encode_plan(REQUESTED_REPLACE, req) == encode_plan(REQUESTED_REPLACE, req)  # same plan, same bytes


def test_invalid_record_rejected_before_writing() -> None:
    with pytest.raises(PlanFileError, match="does not match"):
        encode_plan(BASE_FILE_COMPACTION_PLAN, {"operations": [{"baseFilePaths": [1]}]})


@pytest.mark.parametrize("cut", [0, 10, 40, -3])
def test_truncated_plan_file_names_the_file(cut: int) -> None:
    data = encode_plan(BASE_FILE_COMPACTION_PLAN, {"operations": [{"baseFilePaths": ["a"] * 20,
                                                                    "partitionPath": "p", "metrics": None}],
                                                   "extraMetadata": None, "version": 1})
    with pytest.raises(PlanFileError, match="20260101.basefilecompaction.requested"):
        decode_plan(BASE_FILE_COMPACTION_PLAN, data[:cut], ".hoodie/20260101.basefilecompaction.requested")


# -- view -------------------------------------------------------------------------------------
def test_view_rules_pending_failed_replaced_and_time_travel(tmp_path) -> None:
    table = make_table(tmp_path)
    c1 = commit_files(table, [("dt=a", "f1-0"), ("dt=b", "f2-0")])
    c2 = commit_files(table, [("dt=a", "f3-0")])
    failed = commit_files(table, [("dt=a", "f9-0")], complete=False)  # failed ingest
    assert {s.file_id for s in table.view().snapshot()} == {"f1-0", "f2-0", "f3-0"}
    plan = encode_plan(REQUESTED_REPLACE, {"operationType": "CLUSTER", "clusteringPlan": {
        "clusteringGroups": [{"fileIds": ["f1-0", "f3-0"], "partitionPath": "dt=a", "metrics": None}],
        "targetFileSize": 100, "sortColumns": None, "extraMetadata": None, "version": 1},
        "extraMetadata": None, "version": 1})
    r = commit_files(table, [("dt=a", "c1-0")], action=REPLACE, complete=False, plan=plan)
    view = table.view()
    assert {s.file_id for s in view.snapshot()} == {"f1-0", "f2-0", "f3-0"}  # pending hides nothing
    assert view.pending_clustering_file_groups() == {("dt=a", "f1-0"): r.timestamp, ("dt=a", "f3-0"): r.timestamp}
    assert {b.file_id for b in view.uncommitted_files()} == {"f9-0", "c1-0"}
    stat = WriteStat("c1-0", "dt=a", view.base_files[[b.file_id for b in view.base_files].index("c1-0")].path, 10, 10)
    table.complete(r, CommitMetadata("CLUSTER", [stat], replaced_file_ids={"dt=a": ["f1-0", "f3-0"]}), replace=True)
    view = table.view()
    assert {s.file_id for s in view.snapshot()} == {"c1-0", "f2-0"}
    assert {s.file_id for s in view.snapshot(as_of=c2.timestamp)} == {"f1-0", "f2-0", "f3-0"}
    assert {s.file_id for s in view.snapshot(as_of=c1.timestamp)} == {"f1-0", "f2-0"}
    with pytest.raises(AsOfError, match="not a completed commit"):
        view.snapshot(as_of=failed.timestamp)


def test_new_slice_of_same_file_group_supersedes_old(tmp_path) -> None:
    table = make_table(tmp_path)
    commit_files(table, [("dt=a", "f1-0")])
    inst = table.start(COMMIT)
    rel = put_file(table, "dt=a", "f1-0", inst.timestamp, size=20)
    table.complete(inst, CommitMetadata("UPSERT", [WriteStat("f1-0", "dt=a", rel, 8, 20)]))
    snap = table.view().snapshot()
    assert len(snap) == 1 and snap[0].instant == inst.timestamp and snap[0].num_rows == 8


def test_local_listing_without_sizes_lists_what_pyarrow_lists(tmp_path) -> None:
    root = tmp_path / "t"
    (root / "a" / "b").mkdir(parents=True)
    (root / "c").mkdir()
    (tmp_path / "other").mkdir()
    (root / "a" / "f1").write_bytes(b"abc")
    (root / "a" / "b" / "f2").write_bytes(b"x")
    (root / ".hidden").touch()
    (tmp_path / "other" / "o").write_bytes(b"yy")
    (root / "linkdir").symlink_to(tmp_path / "other")
    (root / "linkfile").symlink_to(root / "a" / "f1")
    (root / "broken").symlink_to(tmp_path / "nowhere")
    os.mkfifo(root / "fifo")
    storage = Storage(str(root))
    for rel, recursive in [("", True), ("", False), ("a", True), ("a", False), ("missing", True)]:
        full = storage.list(rel, recursive=recursive)
        fast = storage.list(rel, recursive=recursive, sizes=False)
        assert [e.path for e in fast] == [e.path for e in full], (rel, recursive)
        assert all(e.size is None and e.mtime_ns is None for e in fast)
    assert [e.path for e in storage.list("", recursive=True)] == [
        ".hidden", "a/b/f2", "a/f1", "linkdir/o", "linkfile"]
    assert storage.entry("a/f1") == storage.list("a")[0] and storage.entry("a") is None
    assert storage.entry("broken") is None


def test_view_sizes_are_the_files_sizes_with_or_without_write_stats(tmp_path) -> None:
    table = make_table(tmp_path)
    commit_files(table, [("dt=a", "f1-0"), ("dt=b", "f2-0")])
    commit_files(table, [("dt=a", "f9-0")], complete=False)  # no write stat: its size from storage
    inst = table.start(COMMIT)
    rel = put_file(table, "dt=a", "f3-0", inst.timestamp, size=20)
    table.complete(inst, CommitMetadata("UPSERT", [WriteStat("f3-0", "dt=a", rel, 8, 20)]))
    table.storage.write_atomic("dt=a/.hoodie_partition_metadata", b"#props")
    listed = [e for e in table.storage.list("", recursive=True) if not e.path.startswith(".hoodie/")]
    view = table.view()
    assert [(b.path, b.size) for b in view.base_files] == [
        (e.path, e.size) for e in listed if parse_base_file_name(e.path.rsplit("/", 1)[-1])]
    assert view.other_files == [e for e in listed if not parse_base_file_name(e.path.rsplit("/", 1)[-1])]
    assert {s.path: s.size_bytes for s in view.snapshot()} == {b.path: b.size for b in view.base_files
                                                              if b.file_id != "f9-0"}
    assert list(view.file_groups()) == [("dt=a", "f1-0"), ("dt=a", "f3-0"), ("dt=a", "f9-0"), ("dt=b", "f2-0")]


def test_file_groups_and_snapshot_order_slices_by_instant_whatever_the_listing_order(tmp_path) -> None:
    table = make_table(tmp_path)
    first = commit_files(table, [("dt=a", "f1-0")])
    for token, size in [("9-9-9", 30), ("0-0-0", 40)]:  # listed before / after the first file
        inst = table.start(COMMIT)
        rel = f"dt=a/{base_file_name('f1-0', token, inst.timestamp)}"
        table.storage.write_atomic(rel, b"x" * size)
        table.complete(inst, CommitMetadata("UPSERT", [WriteStat("f1-0", "dt=a", rel, size, size)]))
    view = table.view()
    files = view.file_groups()[("dt=a", "f1-0")]
    assert [f.instant for f in files] == sorted(f.instant for f in files) and files[0].instant == first.timestamp
    assert [(s.size_bytes, s.num_rows) for s in view.snapshot()] == [(40, 40)]
    assert [(s.size_bytes, s.num_rows) for s in view.snapshot(as_of=files[1].instant)] == [(30, 30)]


def test_file_slices_fast_constructor_builds_the_same_slices() -> None:
    rows = [("f1-0", "20260101000000000", "dt=a/f.parquet", 10, 5, {"x": (1, 2)}),
            ("f2-0", "20260101000000001", "dt=a/g.parquet", 0, 7, {})]
    fast = file_slices("dt=a", *map(list, zip(*rows, strict=True)))
    slow = [FileSlice("dt=a", *row) for row in rows]
    assert fast == slow and list(map(repr, fast)) == list(map(repr, slow)) and list(map(hash, fast)) == list(map(hash, slow))
    assert [dataclasses.astuple(s) for s in fast] == [dataclasses.astuple(s) for s in slow]
    assert fast[0].file_group == ("dt=a", "f1-0") and pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast[0].num_rows = 1  # type: ignore[misc]
    with pytest.raises(ValueError, match="unequal lengths"):
        file_slices("dt=a", ["f1-0"], [], [], [], [], [])


# -- lock and properties ------------------------------------------------------------------------
def test_second_writer_gets_clear_error_and_stale_lock_is_taken_over(tmp_path) -> None:
    storage = Storage(str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", f"""
from engines.table.lock import WriterLock
from engines.table.storage import Storage
import time, sys
WriterLock(Storage({str(tmp_path)!r}), owner='child').acquire()
print('locked', flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(LockHeldError, match="locked by another writer: pid"):
            WriterLock(storage).acquire()
    finally:
        child.kill()
        child.wait()
    # the holder is dead: the lock is stale and is taken over
    lock = WriterLock(storage, owner="me")
    lock.acquire()
    assert json.loads(storage.read_bytes(LOCK_FILE))["owner"] == "me"
    lock.release()
    assert not storage.exists(LOCK_FILE)


def test_properties_written_for_hudi(tmp_path) -> None:
    table = make_table(tmp_path)
    props = HudiTable.open(table.base_uri).properties
    assert props["hoodie.table.version"] == "6" and props["hoodie.timeline.layout.version"] == "1"
    assert props["hoodie.table.partition.fields"] == "dt"
    assert props["hoodie.datasource.write.hive_style_partitioning"] == "true"
    with pytest.raises(FileExistsError):
        make_table(tmp_path)


def test_not_a_hudi_table(tmp_path) -> None:
    from engines.table.properties import NotAHudiTableError

    with pytest.raises(NotAHudiTableError, match="not a Hudi table"):
        HudiTable.open(str(tmp_path))


def test_base_file_names() -> None:
    assert parse_base_file_name("abc-0_1-2-3_20260101000000000.parquet") == ("abc-0", "1-2-3", "20260101000000000")
    assert parse_base_file_name("bad_id-0_0-0-0_2026.parquet") is None
    assert parse_base_file_name(".hoodie_partition_metadata") is None
    with pytest.raises(ValueError, match="must not contain"):
        base_file_name("bad_id", "0-0-0", "1")


def test_probe_audit_compares_commit_sizes_with_storage(tmp_path) -> None:
    from engines.table.probe import HudiProbe

    table = make_table(tmp_path)
    commit_files(table, [("dt=a", "f1"), ("dt=a", "f2")])
    probe = HudiProbe(table)
    assert probe.audit(expected_rows=10) == []
    rel = table.view().snapshot()[0].path
    table.storage.write_atomic(rel, b"x" * 12)  # changed behind the commit's back
    assert probe.audit(expected_rows=10) == [f"{rel} is 12 bytes on storage, 10 in commit "
                                             f"{table.view().snapshot()[0].instant}"]
