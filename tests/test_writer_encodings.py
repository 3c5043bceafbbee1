"""Our base files choose their column encodings as parquet-mr (Hudi's writer) does: dictionary only
where it pays on the first rows, plain for near-unique columns (record keys, sequence numbers,
timestamps, free text)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from engines.files.writer import WriteSpec, dictionary_columns, write_partition_rows


def _table(n: int = 3000) -> pa.Table:
    return pa.table({
        "trace_id": [f"{i * 7919:016x}-000001-{i:08d}" for i in range(n)],
        "dt": ["2026-01-01"] * n,
        "service": [f"svc-{i % 7:03d}" for i in range(n)],
        "ts": pa.array(range(10**6, 10**6 + n), pa.timestamp("us")),
        "latency_ms": [i * 0.37 for i in range(n)],
        "level": ["INFO" if i % 5 else "WARN" for i in range(n)],
    })


def test_dictionary_only_where_it_pays() -> None:
    assert dictionary_columns(_table()) == ["dt", "service", "level"]


def test_written_files_fall_back_to_plain_like_parquet_mr(tmp_path) -> None:
    spec = WriteSpec(base_uri=str(tmp_path), instant="20260101000000000", partition_column="dt",
                     record_key="trace_id", stats_columns=["ts"])
    (stat,) = write_partition_rows(spec, [_table()], 0, 0)
    meta = pq.ParquetFile(tmp_path / stat.path).metadata.row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).has_dictionary_page for i in range(meta.num_columns)}
    assert not encodings["trace_id"] and not encodings["_hoodie_record_key"] and not encodings["ts"]
    assert encodings["service"] and encodings["_hoodie_partition_path"]
    always = WriteSpec(base_uri=str(tmp_path / "always"), instant="20260101000000000", partition_column="dt",
                       record_key="trace_id", dictionary="always")
    (big,) = write_partition_rows(always, [_table()], 0, 0)
    assert big.file_size > stat.file_size  # pyarrow's dictionary on unique columns costs bytes
