"""Commit and replace-commit metadata as Hudi-compatible JSON (timeline layout 1).

Keys follow Hudi's ``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``:
``partitionToWriteStats``, ``partitionToReplaceFileIds``, ``compacted``, ``extraMetadata``
(``schema`` = Avro schema string), ``operationType``. Each write stat carries Hudi's fields plus
``layoutbench.columnStats`` (per-column min/max as JSON-safe values), which Hudi readers ignore.

JSON is written and read with orjson; the standard library takes over for what orjson refuses
(integers beyond 64 bits, non-string keys; on reading, ``NaN`` tokens and lone surrogates).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from itertools import chain
from typing import Any

import orjson

from engines.table.model import ColumnStats, WriteStat

_COLUMN_STATS = "layoutbench.columnStats"
_PARSE_ERRORS = (AttributeError, KeyError, TypeError, ValueError, IndexError)


class MetadataError(ValueError):
    """Commit metadata that cannot be parsed; the message names the source."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"ts_us": int(value.timestamp() * 1_000_000)} if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _from_jsonable(value: Any) -> Any:
    if isinstance(value, dict) and "ts_us" in value:
        return _EPOCH + timedelta(microseconds=value["ts_us"])
    return value


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def write_stat_to_json(stat: WriteStat) -> dict[str, Any]:
    """Hudi's write-stat object; a column whose min or max is NaN or infinite is left out (JSON has no such number)."""
    out: dict[str, Any] = {
        "fileId": stat.file_id,
        "path": stat.path,
        "prevCommit": stat.prev_commit,
        "numWrites": stat.num_writes,
        "numDeletes": stat.num_deletes,
        "numUpdateWrites": stat.num_update_writes,
        "numInserts": stat.num_inserts,
        "totalWriteBytes": stat.total_write_bytes,
        "totalWriteErrors": 0,
        "partitionPath": stat.partition,
        "fileSizeInBytes": stat.file_size,
    }
    if stat.min_record_key is not None:
        out["minRecordKey"] = stat.min_record_key
        out["maxRecordKey"] = stat.max_record_key
    columns = {
        col: [_jsonable(lo), _jsonable(hi)]
        for col, (lo, hi) in stat.column_stats.items()
        if _finite(lo) and _finite(hi)
    }
    if columns:
        out[_COLUMN_STATS] = columns
    return out


def _column_stats_from_json(columns: dict[str, list[Any]]) -> ColumnStats:
    # Only a timestamp ({"ts_us": ...}) needs converting: one type test per value rather than a call
    # (views read 100,000s of these).
    out: ColumnStats = {}
    for col, (lo, hi) in columns.items():
        out[col] = (lo, hi) if type(lo) is not dict and type(hi) is not dict else (_from_jsonable(lo), _from_jsonable(hi))
    return out


def write_stat_from_json(d: dict[str, Any], partition: str) -> WriteStat:
    return WriteStat(
        file_id=d["fileId"],
        partition=d.get("partitionPath", partition) if d.get("partitionPath") is not None else partition,
        path=d.get("path") or "",
        num_writes=int(d.get("numWrites") or 0),
        file_size=int(d.get("fileSizeInBytes") or d.get("totalWriteBytes") or 0),
        total_write_bytes=int(d.get("totalWriteBytes") or 0),
        prev_commit=str(d.get("prevCommit") or "null"),
        num_inserts=int(d.get("numInserts") or 0),
        num_update_writes=int(d.get("numUpdateWrites") or 0),
        num_deletes=int(d.get("numDeletes") or 0),
        min_record_key=d.get("minRecordKey"),
        max_record_key=d.get("maxRecordKey"),
        column_stats=_column_stats_from_json(d.get(_COLUMN_STATS) or {}),
    )


def _avro_document(data: bytes, source: str) -> dict[str, Any]:
    import io

    import fastavro

    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # fastavro raises many types on corrupt input
        raise MetadataError(f"{source}: corrupt Avro commit metadata ({type(exc).__name__}: {exc})") from None
    if len(records) != 1 or not isinstance(records[0], dict):
        raise MetadataError(f"{source}: expected one Avro commit-metadata record, found {len(records)}")
    return records[0]


def _json_document(data: bytes, source: str) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # orjson is stricter than the json module: let that decide
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise MetadataError(f"{source}: not valid commit metadata JSON ({exc})") from None


def _checked_write_stats(value: Any) -> dict[str, list[dict[str, Any]]]:
    """``partitionToWriteStats`` checked for shape: a list of objects with a ``fileId`` per partition."""
    out: dict[str, list[dict[str, Any]]] = {}
    for partition, items in (value or {}).items():
        items = items or []
        if not isinstance(items, list):
            raise TypeError(f"write stats of partition {partition!r} are not a list")
        for item in items:
            if not isinstance(item, dict) or "fileId" not in item:
                raise TypeError(f"a write stat of partition {partition!r} is not an object with a fileId")
        out[partition] = items
    return out


WrittenColumns = tuple[list[str], list[int], list[ColumnStats], list[int | None]]
"""Paths, row counts (numWrites), column stats and sizes (fileSizeInBytes) of written files, column by column."""


def _written_columns(items: Iterable[dict[str, Any]]) -> WrittenColumns:
    """:meth:`CommitMetadata.written_columns` of JSON write stats: one pass over them, then checks column-wise."""
    paths: list[str] = []
    rows: list[Any] = []
    columns: list[Any] = []
    sizes: list[Any] = []
    for d in items:
        path = d.get("path")
        if path:  # a stat naming no file is skipped unread
            paths.append(path)
            rows.append(d.get("numWrites"))
            columns.append(d.get(_COLUMN_STATS))
            sizes.append(d.get("fileSizeInBytes"))
    if not set(map(type, rows)) <= {int}:
        rows = [n if type(n) is int else int(n or 0) for n in rows]
    if not (set(map(type, sizes)) <= {int} and min(sizes, default=0) >= 0):
        sizes = [n if type(n) is int and n >= 0 else None for n in sizes]
    return paths, rows, [_column_stats_from_json(c) if c else {} for c in columns], sizes


class CommitMetadata:
    """What a completed commit / replacecommit records.

    Write stats parsed by :meth:`from_json` are kept as JSON objects until :attr:`write_stats` is
    first read (their values are checked then: a malformed one raises :class:`MetadataError`);
    :meth:`written_files` reads what a file slice needs without building them.
    """

    def __init__(
        self,
        operation_type: str,
        write_stats: list[WriteStat] | None = None,
        schema: str | None = None,
        replaced_file_ids: dict[str, list[str]] | None = None,
        extra: dict[str, str] | None = None,
        compacted: bool = False,
    ) -> None:
        self.operation_type = operation_type
        self.schema = schema
        self.replaced_file_ids = {} if replaced_file_ids is None else replaced_file_ids
        self.extra = {} if extra is None else extra
        self.compacted = compacted
        self._write_stats: list[WriteStat] | None = [] if write_stats is None else write_stats
        self._json_stats: dict[str, list[dict[str, Any]]] = {}
        self._source = "<metadata>"

    @property
    def write_stats(self) -> list[WriteStat]:
        if self._write_stats is None:
            try:
                self._write_stats = [
                    write_stat_from_json(d, partition) for partition, items in self._json_stats.items() for d in items
                ]
            except _PARSE_ERRORS as exc:
                raise MetadataError(f"{self._source}: malformed write stat ({type(exc).__name__}: {exc})") from None
            self._json_stats = {}
        return self._write_stats

    def written_files(self) -> dict[str, tuple[int, ColumnStats, int | None]]:
        """Path -> (numWrites, column stats, fileSizeInBytes) of every write stat that names its file.

        The size is None when the stat records none (not a non-negative integer).
        """
        paths, rows, columns, sizes = self.written_columns()
        return dict(zip(paths, zip(rows, columns, sizes, strict=True), strict=True))

    def written_columns(self) -> WrittenColumns:
        """:meth:`written_files` column by column (no tuple per file), in write-stat order."""
        if self._write_stats is not None:
            stats = [s for s in self._write_stats if s.path]
            return ([s.path for s in stats], [s.num_writes for s in stats], [s.column_stats for s in stats],
                    [s.file_size for s in stats])
        try:
            return _written_columns(chain.from_iterable(self._json_stats.values()))
        except _PARSE_ERRORS as exc:
            raise MetadataError(f"{self._source}: malformed write stat ({type(exc).__name__}: {exc})") from None

    @property
    def partition_to_write_stats(self) -> dict[str, list[WriteStat]]:
        out: dict[str, list[WriteStat]] = {}
        for s in self.write_stats:
            out.setdefault(s.partition, []).append(s)
        return out

    @property
    def bytes_written(self) -> int:
        return sum(s.total_write_bytes or 0 for s in self.write_stats)

    @property
    def records_written(self) -> int:
        return sum(s.num_writes for s in self.write_stats)

    def to_json(self, replace: bool = False) -> bytes:
        extra = dict(self.extra)
        if self.schema is not None:
            extra["schema"] = self.schema
        doc: dict[str, Any] = {
            "partitionToWriteStats": {
                p: [write_stat_to_json(s) for s in stats]
                for p, stats in sorted(self.partition_to_write_stats.items())
            },
            "compacted": self.compacted,
            "extraMetadata": extra,
            "operationType": self.operation_type,
        }
        if replace or self.replaced_file_ids:
            doc["partitionToReplaceFileIds"] = {
                p: ids if isinstance(ids, list | tuple) else list(ids) for p, ids in sorted(self.replaced_file_ids.items())
            }
        try:
            return orjson.dumps(doc)  # compact, as json.dumps(separators=(",", ":")) but UTF-8 unescaped
        except TypeError:  # beyond orjson (integers over 64 bits, non-string keys): the json module decides
            return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes, source: str = "<metadata>") -> CommitMetadata:
        """Parse layout-1 JSON, or the Avro container a Hudi 1.x completed instant holds."""
        doc = _avro_document(data, source) if data[:4] == b"Obj\x01" else _json_document(data, source)
        if not isinstance(doc, dict):
            raise MetadataError(f"{source}: commit metadata must be a JSON object, got {type(doc).__name__}")
        try:
            json_stats = _checked_write_stats(doc.get("partitionToWriteStats"))
            replaced = {
                p: ids if isinstance(ids, list) else list(ids or [])  # a parsed list is ours already
                for p, ids in (doc.get("partitionToReplaceFileIds") or {}).items()
            }
            extra = {str(k): str(v) for k, v in (doc.get("extraMetadata") or {}).items()}
        except _PARSE_ERRORS as exc:
            raise MetadataError(f"{source}: malformed commit metadata ({type(exc).__name__}: {exc})") from None
        schema = extra.pop("schema", None)
        meta = cls(
            operation_type=str(doc.get("operationType") or "UNKNOWN"),
            schema=schema,
            replaced_file_ids=replaced,
            extra=extra,
            compacted=bool(doc.get("compacted", False)),
        )
        meta._write_stats, meta._json_stats, meta._source = None, json_stats, source
        return meta
