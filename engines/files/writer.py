"""Hudi base files written with pyarrow: what one write task does, in a Spark task or in the driver.

A task (:func:`write_partition_rows`) writes the rows it receives, grouped by partition value, into
``<partition>/<fileId>_<writeToken>_<instant>.parquet``; it rolls to a new file group at a
target size (bytes on disk) or a row cap, uses an explicit row-group size, fills the five
``_hoodie_*`` meta columns, writes Hudi's bloom filter of the record keys and their min/max into
the footer (``spec.bloom``, :mod:`engines.table.bloom`; Hudi's BLOOM index reads them), and
returns one write stat per file (rows, bytes, record-key range, per-column min/max). This is how Hudi writes (its own handles inside Spark tasks) and works
unchanged on a cluster over shared storage. The Spark job around it is :mod:`engines.spark.writer`.

Determinism: file ids are UUIDv5 of (instant, partition, task, attempt, n) and the write token
is ``<taskPartition>-0-<attempt>`` (Hudi puts the stage id in the middle; stage ids depend on
how many jobs ran before, which would make reruns differ byte-wise).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from engines.config.registry import DICTIONARY_PAGE_LIMIT, PARQUET_MAX_FILE_SIZE, ROW_GROUP_ROWS
from engines.table.bloom import BloomConfig, footer_metadata
from engines.table.model import META_COLUMNS, WriteStat, base_file_name, new_file_id
from engines.table.table import HudiTable

NO_ROLL = 1 << 62  # a target_file_bytes no file reaches: the job's rows go to one file per task
# what a merge keeps of a row's own metadata columns when it copies the row unchanged (HoodieMergeHandle
# copies old records as they are: a top-up's old rows, an upsert's untouched rows, a rewrite's rows)
KEPT_META = ("_hoodie_commit_time", "_hoodie_commit_seqno")


@dataclass
class WriteSpec:
    """Everything a write task needs; must be picklable."""

    base_uri: str
    instant: str
    partition_column: str
    record_key: str
    hive_style: bool = True
    target_file_bytes: int = PARQUET_MAX_FILE_SIZE
    max_rows_per_file: int | None = None
    row_group_rows: int = ROW_GROUP_ROWS
    compression: str = "snappy"
    stats_columns: list[str] = field(default_factory=list)
    preserve_commit_metadata: bool = False
    file_id_prefix: str = ""
    file_id_override: str | None = None  # write a new slice of this file group (one output file only)
    bloom: BloomConfig = field(default_factory=BloomConfig)  # the footer bloom filter of every file (Hudi's)
    # "parquet_mr": dictionary-encode only the columns where it pays on the file's first rows, as
    # parquet-mr (Hudi's writer) falls back to plain; "always": pyarrow's default (every column)
    dictionary: str = "parquet_mr"

    def __post_init__(self) -> None:
        if self.dictionary not in ("parquet_mr", "always"):
            raise ValueError(f"unknown dictionary rule {self.dictionary!r}; expected parquet_mr or always")

    @classmethod
    def for_table(cls, table: HudiTable, instant: str, **overrides: object) -> WriteSpec:
        """The spec of a write into ``table`` at ``instant``: its base URI, partition column, record key,
        partition path style and bloom filter, then ``overrides`` (any other field)."""
        spec = cls(base_uri=table.base_uri, instant=instant, partition_column=table.partition_fields[0],
                   record_key=table.record_key, hive_style=table.hive_style, bloom=table.bloom)
        for key, value in overrides.items():
            if not hasattr(spec, key):
                raise TypeError(f"WriteSpec has no field {key!r}")
            setattr(spec, key, value)
        return spec

    def partition_path(self, value: str) -> str:
        return f"{self.partition_column}={value}" if self.hive_style else value


def filesystem_for(base_uri: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow file system of a table's base URI (a local path or ``scheme://...``) and the root in it."""
    if "://" in base_uri:
        return pafs.FileSystem.from_uri(base_uri)
    return pafs.LocalFileSystem(), base_uri


def _column_range(col: pa.ChunkedArray | pa.Array) -> tuple[object, object] | None:
    if len(col) == 0 or col.null_count == len(col):
        return None
    mm = pc.min_max(col)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    return None if lo is None else (lo, hi)


class _OpenFile:
    def __init__(self, spec: WriteSpec, fs: pafs.FileSystem, root: str, partition_value: str,
                 task: int, attempt: int, seq: int, schema: pa.Schema) -> None:
        self.spec = spec
        self.partition = spec.partition_path(partition_value)
        if spec.file_id_override is not None:
            if seq > 0:
                raise ValueError(f"file group {spec.file_id_override} can take one output file only; "
                                 "raise target_file_bytes or split the rows")
            self.file_id = spec.file_id_override
        else:
            self.file_id = new_file_id(spec.file_id_prefix, spec.instant, self.partition, task, attempt, seq)
        token = f"{task}-0-{attempt}"
        self.name = base_file_name(self.file_id, token, spec.instant)
        self.rel = f"{self.partition}/{self.name}" if self.partition else self.name
        if type(fs).__name__ not in ("S3FileSystem", "GcsFileSystem"):  # object stores have no directories
            fs.create_dir(f"{root}/{self.partition}" if self.partition else root, recursive=True)
        self.sink = fs.open_output_stream(f"{root}/{self.rel}")
        self.schema = schema
        self._writer: pq.ParquetWriter | None = None  # opened at the first rows (they choose the encodings)
        self.rows = 0
        self.ranges: dict[str, tuple[object, object]] = {}
        self.keys: list[pa.ChunkedArray] = []  # record keys in write order, for the bloom filter

    def writer_for(self, first: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            dictionary: bool | list[str] = True
            if self.spec.dictionary == "parquet_mr" and first is not None:
                dictionary = dictionary_columns(first)
            self._writer = pq.ParquetWriter(self.sink, self.schema, compression=self.spec.compression,
                                            write_statistics=True, use_dictionary=dictionary)
        return self._writer

    def write(self, table: pa.Table) -> None:
        self.writer_for(table).write_table(table, row_group_size=self.spec.row_group_rows)
        self.rows += table.num_rows
        if self.spec.bloom.enabled:
            self.keys.append(table.column("_hoodie_record_key"))
        for col in self.spec.stats_columns + ["_hoodie_record_key"]:
            if col not in table.column_names:
                continue
            rng = _column_range(table.column(col))
            if rng is None:
                continue
            cur = self.ranges.get(col)
            self.ranges[col] = rng if cur is None else (min(cur[0], rng[0]), max(cur[1], rng[1]))

    @property
    def bytes_so_far(self) -> int:
        return self.sink.tell()

    def close(self) -> WriteStat:
        if self.keys:  # Hudi's footer: the bloom filter and the min/max record keys (engines.table.bloom)
            keys = pa.chunked_array([c for k in self.keys for c in k.chunks], pa.string())
            key_range = self.ranges.get("_hoodie_record_key")  # tracked chunk by chunk in write()
            self.writer_for(None).add_key_value_metadata(footer_metadata(keys, self.spec.bloom, key_range))
            self.keys = []
        self.writer_for(None).close()
        size = self.sink.tell()
        self.sink.close()
        key_range = self.ranges.pop("_hoodie_record_key", (None, None))
        return WriteStat(
            file_id=self.file_id, partition=self.partition, path=self.rel, num_writes=self.rows,
            file_size=size, min_record_key=key_range[0], max_record_key=key_range[1],
            column_stats={c: self.ranges[c] for c in self.spec.stats_columns if c in self.ranges},
        )


def dictionary_columns(first: pa.Table) -> list[str]:
    """The columns parquet-mr would keep dictionary-encoded after the first page of ``first``:
    those whose dictionary plus bit-packed ids are smaller than the plain values
    (DictionaryValuesWriter.isCompressionSatisfying) and whose dictionary fits its page limit."""
    out = []
    for name in first.column_names:
        col = first.column(name).drop_null()
        if len(col) == 0 or pa.types.is_boolean(col.type):
            continue
        uniq = pc.unique(col)
        if pa.types.is_binary(col.type) or pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            plain = int(pc.sum(pc.binary_length(col)).as_py() or 0) + 4 * len(col)
            dict_bytes = int(pc.sum(pc.binary_length(uniq)).as_py() or 0) + 4 * len(uniq)
        elif hasattr(col.type, "bit_width") and col.type.bit_width >= 8:
            plain, dict_bytes = col.type.bit_width // 8 * len(col), col.type.bit_width // 8 * len(uniq)
        else:
            out.append(name)
            continue
        ids = len(col) * max(1, (len(uniq) - 1).bit_length()) // 8
        if dict_bytes + ids < plain and dict_bytes <= DICTIONARY_PAGE_LIMIT:
            out.append(name)
    return out


def _repeat(value: str, n: int) -> pa.Array:
    return pa.repeat(pa.scalar(value, pa.string()), n)


def _with_meta_columns(batch: pa.Table, spec: WriteSpec, partition: str, file_name: str,
                       task: int, start_seq: int) -> pa.Table:
    n = batch.num_rows
    data_cols = [c for c in batch.column_names if c not in META_COLUMNS]
    keys = batch.column(spec.record_key).cast(pa.string())
    commit_time = _repeat(spec.instant, n)
    seqs = pa.array(np.arange(start_seq, start_seq + n, dtype=np.int64)).cast(pa.string())
    seqno = pc.binary_join_element_wise(f"{spec.instant}_{task}_", seqs, "")
    if spec.preserve_commit_metadata and "_hoodie_commit_time" in batch.column_names:
        # keep the original commit time of rewritten rows; rows new in this write get this instant
        commit_time = pc.coalesce(batch.column("_hoodie_commit_time").cast(pa.string()), commit_time)
        seqno = pc.coalesce(batch.column("_hoodie_commit_seqno").cast(pa.string()), seqno)
    meta = {
        "_hoodie_commit_time": commit_time,
        "_hoodie_commit_seqno": seqno,
        "_hoodie_record_key": keys,
        "_hoodie_partition_path": _repeat(partition, n),
        "_hoodie_file_name": _repeat(file_name, n),
    }
    arrays = [meta[c] for c in META_COLUMNS] + [batch.column(c) for c in data_cols]
    return pa.Table.from_arrays(arrays, names=list(META_COLUMNS) + data_cols)


def write_partition_rows(spec: WriteSpec, batches: Iterable[pa.RecordBatch | pa.Table], task: int,
                         attempt: int) -> list[WriteStat]:
    """Write one task's rows; the pure-pyarrow core of the Spark write (also used by tests)."""
    fs, root = filesystem_for(spec.base_uri)
    open_files: dict[str, _OpenFile] = {}
    counters: dict[str, int] = {}
    seqs: dict[str, int] = {}
    stats: list[WriteStat] = []
    for rb in batches:
        if rb.num_rows == 0:
            continue
        table = rb if isinstance(rb, pa.Table) else pa.Table.from_batches([rb])
        parts = table.column(spec.partition_column)
        values = pc.unique(parts).to_pylist()
        for value in sorted(v for v in values if v is not None):
            chunk = table.filter(pc.equal(parts, value)) if len(values) > 1 else table
            offset = 0
            while offset < chunk.num_rows:
                f = open_files.get(value)
                if f is None:
                    n = counters.get(value, 0)
                    counters[value] = n + 1
                    out_schema = _with_meta_columns(chunk.slice(0, 0), spec, "", "", task, 0).schema
                    f = _OpenFile(spec, fs, root, value, task, attempt, n, out_schema)
                    open_files[value] = f
                room = chunk.num_rows - offset
                if spec.max_rows_per_file:
                    room = min(room, spec.max_rows_per_file - f.rows)
                room = min(room, spec.row_group_rows)
                piece = chunk.slice(offset, room)
                seq = seqs.get(value, 0)
                f.write(_with_meta_columns(piece, spec, f.partition, f.name, task, seq))
                seqs[value] = seq + room
                offset += room
                full_rows = spec.max_rows_per_file is not None and f.rows >= spec.max_rows_per_file
                if full_rows or f.bytes_so_far >= spec.target_file_bytes:
                    stats.append(f.close())
                    del open_files[value]
    for value in sorted(open_files):
        stats.append(open_files[value].close())
    return stats


def write_empty_file(spec: WriteSpec, partition_value: str, data_schema: pa.Schema) -> WriteStat:
    """A 0-row base file (a new slice of ``spec.file_id_override`` whose rows were all deleted)."""
    fs, root = filesystem_for(spec.base_uri)
    out_schema = _with_meta_columns(data_schema.empty_table(), spec, "", "", 0, 0).schema
    return _OpenFile(spec, fs, root, partition_value, 0, 0, 0, out_schema).close()
