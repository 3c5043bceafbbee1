"""The file-system view's column-wise build against a plain file-by-file reading of the same rules."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow.fs as pafs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_files import HUDI_FIXTURES, keys_or_skip
from test_table_core import commit_files, make_table
from test_table_fixtures import COW, extract

from engines.table.metadata import CommitMetadata
from engines.table.model import FileSlice, WriteStat, base_file_name, parse_base_file_name
from engines.table.storage import Storage
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, REPLACE, Timeline
from engines.table.view import BaseFile, FileSystemView, parse_base_file_names

TOKENS = ("0-0-0", "1-0-10", "9-9-9")


# -- names ------------------------------------------------------------------------------------
name_parts = st.text(alphabet="ab_.-0²٣x", max_size=6)
names = st.one_of(
    st.builds(lambda f, t, i, ext: f"{f}_{t}_{i}{ext}", name_parts, name_parts,
              st.text(alphabet="0123456789²٣a_", max_size=5), st.sampled_from([".parquet", ".parquet.x", ".log", ""])),
    st.text(alphabet="ab_.-0²\n", max_size=12).filter(bool),
)


@settings(deadline=None)
@given(st.lists(names, max_size=8))
def test_bulk_name_parsing_is_parse_base_file_name(batch: list[str]) -> None:
    parsed = [parse_base_file_name(n) for n in batch]
    bulk = parse_base_file_names(batch)
    if bulk is not None:
        assert None not in parsed
        assert list(zip(*bulk, strict=True)) == [(p[0], p[2]) for p in parsed]  # type: ignore[index]
    else:  # some name is no base file name, or has an instant with digits \d does not know
        assert None in parsed or any(not p[2].isascii() for p in parsed if p)


def test_bulk_name_parsing_on_tricky_names() -> None:
    good = ["f1-0_0-0-0_20260101000000000.parquet", "a.b_c_1.parquet", "x\ny_1-0_0012.parquet"]
    assert parse_base_file_names(good) == (["f1-0", "a.b", "x\ny"], ["20260101000000000", "1", "0012"])
    for bad in [".f_t_1.parquet", "f_t_1.parquetx", "f__1.parquet", "f_t_u_1.parquet", "f_t_1a.parquet",
                "_t_1.parquet", "f_t_.parquet", "f_t_1.parquet.crc", ".hoodie_partition_metadata", "f_t_²1.parquet"]:
        assert parse_base_file_names([*good, bad]) is None, bad
    assert parse_base_file_name("f_t_²1.parquet") == ("f", "t", "²1")  # str.isdigit: parsed one by one
    assert parse_base_file_names([]) == ([], [])


# -- views ------------------------------------------------------------------------------------
def reference_view(storage: Storage, timeline: Timeline, as_of: str | None = None):
    """(snapshot, base files, other files) by the rules of view.py, file by file, from a listing with sizes."""
    base, other = [], []
    for e in storage.list("", recursive=True):
        if e.path.startswith(".hoodie/"):
            continue
        partition, _, name = e.path.rpartition("/")
        parsed = parse_base_file_name(name)
        if parsed is None:
            other.append((e.path, e.size))
        else:
            base.append(BaseFile(partition, parsed[0], parsed[1], parsed[2], e.path, e.size))
    data = {i.timestamp: i for i in timeline.completed_data_instants()}
    pending = {i.timestamp for i in timeline.pending()}
    start = timeline.instants[0].timestamp if timeline.instants else None

    def committed(instant: str) -> bool:
        if as_of is not None and instant > as_of:
            return False
        return instant in data or (instant not in pending and start is not None and instant < start)

    written: dict[str, WriteStat] = {}
    replaced: set[tuple[str, str]] = set()
    for inst in data.values():
        meta = CommitMetadata.from_json(timeline.read(inst))
        written.update({s.path: s for s in meta.write_stats if s.path})
        if inst.action in (REPLACE, COMPACTION) and (as_of is None or inst.timestamp <= as_of):
            replaced |= {(p, f) for p, ids in meta.replaced_file_ids.items() for f in ids}
    groups: dict[tuple[str, str], list[BaseFile]] = {}
    for b in base:
        groups.setdefault((b.partition, b.file_id), []).append(b)
    snapshot = []
    for key in sorted(groups):
        files = [b for b in groups[key] if committed(b.instant)]
        if key in replaced or not files:
            continue
        b = max(reversed(files), key=lambda f: f.instant)  # equal instants: the last listed
        stat = written.get(b.path)
        rows, stats = (stat.num_writes, stat.column_stats) if stat is not None and stat.num_writes else (0, {})
        snapshot.append(FileSlice(b.partition, b.file_id, b.instant, b.path, b.size, rows, dict(stats)))
    return snapshot, base, other


def put(table: HudiTable, partition: str, fid: str, token: str, instant: str, size: int) -> str:
    rel = f"{partition}/{base_file_name(fid, token, instant)}" if partition else base_file_name(fid, token, instant)
    table.storage.write_atomic(rel, b"x" * size)
    return rel


def random_table(tmp_path: Path, seed: int) -> HudiTable:
    """Commits, failed and pending writes, replaces, new slices of old groups, equal instants, odd files."""
    rng = random.Random(seed)
    table = make_table(tmp_path)
    partitions = ["dt=a", "dt=a-b", "dt=b/h=1", ""]
    groups: list[tuple[str, str]] = []
    put(table, "dt=a", "old-0", "0-0-0", "19990101000000000", 7)  # archived commit: no write stat
    for n in range(8):
        replace = n > 2 and rng.random() < 0.3
        inst = table.start(REPLACE if replace else "commit")
        stats, written = [], set()
        for _ in range(rng.randint(1, 6)):
            if groups and rng.random() < 0.4:
                partition, fid = rng.choice(groups)
            else:
                partition, fid = rng.choice(partitions), f"f{n}{rng.randint(0, 99)}-0"
                groups.append((partition, fid))
            size, token = rng.randint(1, 50), rng.choice(TOKENS)
            if (partition, fid, token) in written:
                continue  # a file is written once: write stats record the size it keeps
            written.add((partition, fid, token))
            rel = put(table, partition, fid, token, inst.timestamp, size)
            if rng.random() < 0.85:  # else no write stat: the view stats the file
                columns = {"ts": (rng.randint(0, 9), rng.randint(10, 99))} if rng.random() < 0.5 else {}
                stats.append(WriteStat(fid, partition, rel, rng.choice([0, 3, 5]), size, column_stats=columns))
        victims = rng.sample(groups, min(2, len(groups))) if replace else []
        replaced: dict[str, list[str]] = {}
        for partition, fid in victims:
            replaced.setdefault(partition, []).append(fid)
        if rng.random() < 0.8:
            table.complete(inst, CommitMetadata("INSERT", stats, replaced_file_ids=replaced), replace=replace)
    for rel in ["dt=a/.hoodie_partition_metadata", "dt=a/f_t_1.parquet.crc", "dt=b/h=1/f9-0_0-0-0_2026²1.parquet",
                "dt=a/f8-0_0-0-0_x.parquet", "notes.txt"]:
        table.storage.write_atomic(rel, b"zz")
    return table


def views(table: HudiTable, tmp_path: Path) -> list[FileSystemView]:
    """The view over the local file system (listing without sizes) and over a wrapped one (with sizes)."""
    local = Storage(table.storage.root)
    wrapped = Storage(Path(table.storage.root).name,
                      pafs.SubTreeFileSystem(str(Path(table.storage.root).parent), pafs.LocalFileSystem()))
    assert wrapped.list_names() is None and local.list_names() is not None
    # the local timeline is listed by scandir without stats, the wrapped one by pyarrow: the same timeline
    fast, listed = Timeline.load(local), Timeline.load(wrapped)
    assert (fast.instants, fast.completed_files) == (listed.instants, listed.completed_files)
    return [FileSystemView(s, Timeline.load(s), read_footers=False) for s in (local, wrapped)]


def assert_same_as_reference(table: HudiTable, tmp_path: Path) -> None:
    timeline = Timeline.load(table.storage)
    for view in views(table, tmp_path):
        for as_of in [None, *[i.timestamp for i in timeline.completed_data_instants()]]:
            snapshot, base, other = reference_view(table.storage, timeline, as_of)
            got = view.snapshot(as_of)
            assert got == snapshot and [s.column_stats for s in got] == [s.column_stats for s in snapshot], as_of
        assert view.base_files == base
        assert [(e.path, e.size) for e in view.other_files] == other
        expected_groups: dict[tuple[str, str], list[BaseFile]] = {}
        for b in sorted(base, key=lambda b: b.instant):
            expected_groups.setdefault((b.partition, b.file_id), []).append(b)
        assert list(view.file_groups().items()) == sorted(expected_groups.items(), key=lambda kv: kv[0])
        assert view.partitions() == sorted({b.partition for b in base})
        assert view.uncommitted_files() == [b for b in base if not view.is_committed(b.instant)]


@pytest.mark.parametrize("seed", range(12))
def test_view_equals_file_by_file_reading_on_random_tables(tmp_path: Path, seed: int) -> None:
    assert_same_as_reference(random_table(tmp_path, seed), tmp_path)


def test_view_equals_file_by_file_reading_on_simple_table(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    commit_files(table, [("dt=a", f"f{i}-0") for i in range(30)] + [("dt=b", "g-0"), ("dt=b", "g-10")])
    assert_same_as_reference(table, tmp_path)


@pytest.mark.parametrize("key", keys_or_skip(COW, f"{HUDI_FIXTURES}/expected.json"))
def test_view_equals_file_by_file_reading_on_hudi_tables(hudi_fixtures: Path, tmp_path: Path, key: str) -> None:
    assert_same_as_reference(HudiTable.open(str(extract(hudi_fixtures, key, tmp_path))), tmp_path)


def test_slices_share_read_only_column_stats(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    inst = table.start("commit")
    rel = put(table, "dt=a", "f1-0", "0-0-0", inst.timestamp, 10)
    table.complete(inst, CommitMetadata("INSERT", [WriteStat("f1-0", "dt=a", rel, 5, 10, column_stats={"x": (1, 2)})]))
    view = table.view()
    with pytest.raises(TypeError):
        view.snapshot()[0].column_stats["x"] = (0, 0)  # type: ignore[index]
    assert view.snapshot()[0].column_stats == {"x": (1, 2)}


def test_written_columns_skip_stats_without_path_unread_and_convert_the_rest() -> None:
    data = (b'{"partitionToWriteStats": {"p": [{"fileId": "f", "numWrites": "x"}, '
            b'{"fileId": "g", "path": "p/g", "numWrites": "7", "fileSizeInBytes": -1}, '
            b'{"fileId": "h", "path": "p/h", "numWrites": null, "fileSizeInBytes": true}, '
            b'{"fileId": "i", "path": "p/i", "numWrites": 2, "fileSizeInBytes": 4, '
            b'"layoutbench.columnStats": {"c": [1, 2]}}]}}')
    meta = CommitMetadata.from_json(data)
    assert meta.written_columns() == (["p/g", "p/h", "p/i"], [7, 0, 2], [{}, {}, {"c": (1, 2)}], [None, None, 4])
    assert meta.written_files() == {"p/g": (7, {}, None), "p/h": (0, {}, None), "p/i": (2, {"c": (1, 2)}, 4)}


def test_list_names_groups_the_sizeless_listing_by_folder(tmp_path: Path) -> None:
    table = random_table(tmp_path, 0)
    grouped = table.storage.list_names("", recursive=True)
    assert grouped is not None and all(names == sorted(names) for _, names in grouped)
    assert sorted(prefix + n for prefix, names in grouped for n in names) == [
        e.path for e in table.storage.list("", recursive=True)]
