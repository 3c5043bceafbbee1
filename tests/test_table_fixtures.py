"""Our reader against real tables written by Apache Hudi (../shared/fixtures/hudi-tables)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from shared_files import HUDI_FIXTURES, SHARED, keys_or_skip

from engines.table.table import HudiTable

EXPECTED_FILE = SHARED / HUDI_FIXTURES / "expected.json"
EXPECTED = json.loads(EXPECTED_FILE.read_text()) if EXPECTED_FILE.exists() else {}
COW = sorted(k for k, v in EXPECTED.items() if v["table_type"] == "COPY_ON_WRITE")
MOR = sorted(k for k, v in EXPECTED.items() if v["table_type"] == "MERGE_ON_READ")


def extract(hudi_fixtures: Path, key: str, tmp_path: Path) -> Path:
    with zipfile.ZipFile(hudi_fixtures / key) as zf:
        zf.extractall(tmp_path)
    return tmp_path / EXPECTED[key]["table_root_in_zip"].rstrip("/")


def record_keys(table: HudiTable, slices) -> list[str]:
    """Record keys of a snapshot: the meta column, else the key fields as Hudi's key generators render them."""
    fields = [f for f in table.record_key.split(",") if f]
    keys: list[str] = []
    for s in slices:
        t = pq.read_table(table.storage.abs(s.path))
        if "_hoodie_record_key" in t.column_names and t.column("_hoodie_record_key").null_count == 0:
            keys += t.column("_hoodie_record_key").to_pylist()
        elif len(fields) == 1:
            keys += [str(v) for v in t.column(fields[0]).to_pylist()]
        else:
            cols = [t.column(f).to_pylist() for f in fields]
            keys += [",".join(f"{f}:{v}" for f, v in zip(fields, row, strict=True)) for row in zip(*cols, strict=True)]
    return keys


@pytest.mark.parametrize("key", keys_or_skip(COW, f"{HUDI_FIXTURES}/expected.json"))
def test_snapshot_matches_expected(hudi_fixtures: Path, tmp_path: Path, key: str) -> None:
    root = extract(hudi_fixtures, key, tmp_path)
    expected = EXPECTED[key]["expected"]
    table = HudiTable.open(str(root))
    snap = table.view().snapshot()
    assert sum(s.num_rows for s in snap) == expected["snapshot_rows_hudi_0_5_0"]
    assert len(snap) == expected["file_slices_hudi_0_5_0"]
    assert sorted(record_keys(table, snap)) == expected["snapshot_record_keys_sorted"]


@pytest.mark.parametrize("key", keys_or_skip(COW, f"{HUDI_FIXTURES}/expected.json"))
def test_time_travel_matches_expected(hudi_fixtures: Path, tmp_path: Path, key: str) -> None:
    root = extract(hudi_fixtures, key, tmp_path)
    view = HudiTable.open(str(root)).view()
    for instant, (rows, slices) in EXPECTED[key]["expected"]["time_travel_rows_and_slices_by_instant_hudi_0_5_0"].items():
        snap = view.snapshot(as_of=instant)
        assert (sum(s.num_rows for s in snap), len(snap)) == (rows, slices), instant


@pytest.mark.parametrize("key", keys_or_skip(COW, f"{HUDI_FIXTURES}/expected.json"))
def test_view_sizes_match_storage(hudi_fixtures: Path, tmp_path: Path, key: str) -> None:
    """Sizes the view takes from Hudi's write stats (fileSizeInBytes) are the files' sizes."""
    root = extract(hudi_fixtures, key, tmp_path)
    table = HudiTable.open(str(root))
    view = table.view()
    sizes = {e.path: e.size for e in table.storage.list("", recursive=True)}
    assert all(b.size == sizes[b.path] for b in view.base_files)
    assert all(f.size == sizes[f.path] for f in view.other_files)


@pytest.mark.parametrize("key", keys_or_skip(MOR, f"{HUDI_FIXTURES}/expected.json"))
def test_merge_on_read_rows_match_expected(hudi_fixtures: Path, tmp_path: Path, key: str) -> None:
    """hudi-rs's rows of the MERGE_ON_READ fixtures: merged, read-optimized and as of every instant."""
    from engines.table.mor import read_optimized_read, snapshot_read

    root = extract(hudi_fixtures, key, tmp_path)
    table = HudiTable.open(str(root))
    expected = EXPECTED[key]["expected"]
    assert snapshot_read(table).rows.num_rows == expected["snapshot_rows_hudi_0_5_0"]
    assert read_optimized_read(table).rows.num_rows == expected["read_optimized_rows_hudi_0_5_0"]
    for instant, (rows, _slices) in expected["time_travel_rows_and_slices_by_instant_hudi_0_5_0"].items():
        assert snapshot_read(table, instant).rows.num_rows == rows, instant


def test_fixture_rows_readable_with_pyarrow(hudi_fixtures: Path, tmp_path: Path) -> None:
    key = "sample_table/cow/v6_simplekeygen_nonhivestyle.zip"
    root = extract(hudi_fixtures, key, tmp_path)
    table = HudiTable.open(str(root))
    snap = table.view().snapshot()
    total = pa.concat_tables([pq.read_table(table.storage.abs(s.path)) for s in snap])
    assert total.num_rows == EXPECTED[key]["expected"]["snapshot_rows_hudi_0_5_0"]
