"""Commit and replace-commit metadata as Hudi-compatible JSON (timeline layout 1).

Keys follow Hudi's ``HoodieCommitMetadata`` / ``HoodieReplaceCommitMetadata``:
``partitionToWriteStats``, ``partitionToReplaceFileIds``, ``compacted``, ``extraMetadata``
(``schema`` = Avro schema string), ``operationType``. Each write stat carries Hudi's fields plus
``layoutbench.columnStats`` (per-column min/max as JSON-safe values), which Hudi readers ignore.

JSON is written and read with msgspec. Reading is one typed pass that checks the document's
structure, keeps each write stat's values as they are and each one's column statistics as raw
JSON, decoded only when first read (:class:`LazyColumnStats`): a view over 100,000 files reads
their paths, sizes and row counts, while only planners and the pruner read min/max. A document
that pass refuses (an unexpected shape, ``NaN`` tokens, lone surrogates) is parsed again, by the
standard library where msgspec refuses too, and checked field by field; either pass gives the
same metadata or the same error. (Not orjson: it reads integers beyond 64 bits as floats, and
writes replace metadata half as fast.)
"""

from __future__ import annotations

import json
import math
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from datetime import UTC, date, datetime, timedelta
from itertools import chain
from operator import attrgetter
from typing import Any

import msgspec

from engines.table.model import ColumnStats, WriteStat

_COLUMN_STATS = "layoutbench.columnStats"
_PARSE_ERRORS = (AttributeError, KeyError, TypeError, ValueError, IndexError, OverflowError)


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


def _from_ts_us(microseconds: int) -> datetime:
    return _EPOCH + timedelta(microseconds=microseconds)


def _from_jsonable(value: Any) -> Any:
    if isinstance(value, dict) and "ts_us" in value:
        return _from_ts_us(value["ts_us"])
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
    log_files = getattr(stat, "log_files", None)  # a log file's stat (engines.table.mor.DeltaWriteStat)
    if log_files is not None:
        out.update(baseFile=stat.base_file, logFiles=list(log_files), logVersion=stat.log_version,
                   logOffset=stat.log_offset)
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


class _Timestamp(msgspec.Struct, gc=False):
    ts_us: int


_Bound = _Timestamp | int | float | str | bool | None
_TYPED_COLUMN_STATS = msgspec.json.Decoder(dict[str, tuple[_Bound, _Bound]])


def _typed_column_stats(raw: msgspec.Raw) -> dict[str, tuple[Any, Any]] | None:
    """Column statistics decoded straight into (min, max) tuples; None when they are not of that shape."""
    try:
        stats = _TYPED_COLUMN_STATS.decode(raw)
    except msgspec.DecodeError:
        return None
    for col, (lo, hi) in stats.items():
        if type(lo) is _Timestamp or type(hi) is _Timestamp:
            stats[col] = (_from_ts_us(lo.ts_us) if type(lo) is _Timestamp else lo,
                          _from_ts_us(hi.ts_us) if type(hi) is _Timestamp else hi)
    return stats


def _column_stats_from_json(columns: dict[str, list[Any]]) -> dict[str, tuple[Any, Any]]:
    # Only a timestamp ({"ts_us": ...}) needs converting: one type test per value rather than a call.
    out: dict[str, tuple[Any, Any]] = {}
    for col, (lo, hi) in columns.items():
        out[col] = (lo, hi) if type(lo) is not dict and type(hi) is not dict else (_from_jsonable(lo), _from_jsonable(hi))
    return out


def _decode_column_stats(value: Any) -> dict[str, tuple[Any, Any]]:
    """Column statistics from raw JSON (the usual shape in one typed decode) or a parsed value, checked value by value."""
    if isinstance(value, msgspec.Raw):
        typed = _typed_column_stats(value)
        if typed is not None:
            return typed
        value = _json_document(bytes(value), "column statistics")
    return _column_stats_from_json(value or {})


class LazyColumnStats(msgspec.Struct, gc=False):
    """The per-column (min, max) of one write stat, a read-only mapping decoded from its JSON when first read.

    The slices of every snapshot of a view share it. A malformed value raises
    :class:`MetadataError` naming the commit and the file when it is first read. A msgspec
    Struct outside the garbage collector's tracking (it can hold no cycle): views make 100,000s
    of them. Pickles as a plain dict.
    """

    raw: Any  # the JSON text (msgspec.Raw) or a parsed JSON value; None once decoded
    source: str = "<metadata>"
    path: str = ""
    stats: dict[str, tuple[Any, Any]] | None = None

    @classmethod
    def of(cls, stats: Mapping[str, tuple[Any, Any]]) -> LazyColumnStats:
        """Read-only statistics already decoded (a copy of ``stats``)."""
        return cls(None, stats=dict(stats))

    @property
    def decoded(self) -> dict[str, tuple[Any, Any]]:
        """The statistics as a dict (do not change it: it is this mapping's own)."""
        stats = self.stats
        if stats is None:
            try:
                stats = _decode_column_stats(self.raw)
            except _PARSE_ERRORS as exc:
                raise MetadataError(f"{self.source}: malformed column statistics of {self.path or 'a write stat'} "
                                    f"({type(exc).__name__}: {exc})") from None
            self.stats, self.raw = stats, None
        return stats

    def __getitem__(self, column: str) -> tuple[Any, Any]:
        return self.decoded[column]

    def __iter__(self) -> Iterator[str]:
        return iter(self.decoded)

    def __len__(self) -> int:
        return len(self.decoded)

    def __contains__(self, column: object) -> bool:
        return column in self.decoded

    def get(self, column: str, default: Any = None) -> Any:
        return self.decoded.get(column, default)

    def keys(self) -> KeysView[str]:
        return self.decoded.keys()

    def values(self) -> ValuesView[tuple[Any, Any]]:
        return self.decoded.values()

    def items(self) -> ItemsView[str, tuple[Any, Any]]:
        return self.decoded.items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyColumnStats):
            return self.decoded == other.decoded
        return self.decoded == other if isinstance(other, Mapping) else NotImplemented

    def __repr__(self) -> str:
        return f"LazyColumnStats({self.decoded!r})"

    def __reduce__(self) -> tuple[type, tuple[dict[str, tuple[Any, Any]]]]:
        return dict, (dict(self.decoded),)


Mapping.register(LazyColumnStats)
NO_COLUMN_STATS = LazyColumnStats.of({})


class _StatRecord(msgspec.Struct, gc=False):
    """A write stat as found: Hudi's fields by their JSON names, values unchecked (see write_stat_from_json)."""

    fileId: Any  # noqa: N815 - Hudi's JSON names
    path: Any = None
    prevCommit: Any = None  # noqa: N815
    numWrites: Any = None  # noqa: N815
    numDeletes: Any = None  # noqa: N815
    numUpdateWrites: Any = None  # noqa: N815
    numInserts: Any = None  # noqa: N815
    totalWriteBytes: Any = None  # noqa: N815
    partitionPath: Any = None  # noqa: N815
    fileSizeInBytes: Any = None  # noqa: N815
    minRecordKey: Any = None  # noqa: N815
    maxRecordKey: Any = None  # noqa: N815
    columnStats: Any = msgspec.field(name=_COLUMN_STATS, default=None)  # noqa: N815


class _RawStatRecord(_StatRecord, gc=False):
    """:class:`_StatRecord` decoded straight from JSON: its column statistics left as raw JSON text."""

    columnStats: msgspec.Raw = msgspec.field(name=_COLUMN_STATS, default=msgspec.Raw(b""))  # noqa: N815


class _CommitDocument(msgspec.Struct, gc=False):
    """The shape the typed pass accepts; anything else is read again and checked by hand."""

    partitionToWriteStats: dict[str, list[_RawStatRecord] | None] | None = None  # noqa: N815
    partitionToReplaceFileIds: dict[str, list[str] | None] | None = None  # noqa: N815
    extraMetadata: dict[str, str] | None = None  # noqa: N815
    operationType: Any = None  # noqa: N815
    compacted: Any = False


_TYPED_DECODER = msgspec.json.Decoder(_CommitDocument)
_ENCODER = msgspec.json.Encoder()
_TO_RECORDS = list[_StatRecord]


def _int(value: Any) -> int:
    return value if type(value) is int else int(value or 0)


def _write_stat(r: _StatRecord, partition: str, source: str) -> WriteStat:
    """A :class:`WriteStat` of a record; TypeError/ValueError on a value that is not what it should be."""
    path = r.path or ""
    return WriteStat(
        file_id=r.fileId,
        partition=r.partitionPath if r.partitionPath is not None else partition,
        path=path,
        num_writes=_int(r.numWrites),
        file_size=_int(r.fileSizeInBytes or r.totalWriteBytes),
        total_write_bytes=_int(r.totalWriteBytes),
        prev_commit=str(r.prevCommit or "null"),
        num_inserts=_int(r.numInserts),
        num_update_writes=_int(r.numUpdateWrites),
        num_deletes=_int(r.numDeletes),
        min_record_key=r.minRecordKey,
        max_record_key=r.maxRecordKey,
        column_stats=LazyColumnStats(r.columnStats, source, path) if r.columnStats else NO_COLUMN_STATS,
    )


def write_stat_from_json(d: dict[str, Any], partition: str) -> WriteStat:
    """A write stat from its JSON object (column statistics decoded when first read)."""
    return _write_stat(msgspec.convert(d, _StatRecord), partition, "<write stat>")


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
        return msgspec.json.decode(data)  # not orjson: it reads integers beyond 64 bits as floats
    except msgspec.DecodeError:
        pass  # msgspec is stricter than the json module: let that decide
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise MetadataError(f"{source}: not valid commit metadata JSON ({exc})") from None


def _checked_write_stats(value: Any) -> dict[str, list[_StatRecord]]:
    """``partitionToWriteStats`` of a parsed document checked for shape: a list of objects with a ``fileId`` per partition."""
    out: dict[str, list[_StatRecord]] = {}
    for partition, items in (value or {}).items():
        items = items or []
        if not isinstance(items, list):
            raise TypeError(f"write stats of partition {partition!r} are not a list")
        for item in items:
            if not isinstance(item, dict) or "fileId" not in item:
                raise TypeError(f"a write stat of partition {partition!r} is not an object with a fileId")
        out[partition] = msgspec.convert(items, _TO_RECORDS)
    return out


WrittenColumns = tuple[list[str], list[int], list[ColumnStats], list[int | None]]
"""Paths, row counts (numWrites), column stats and sizes (fileSizeInBytes) of written files, column by column."""

_PATH_OF, _ROWS_OF, _SIZE_OF, _STATS_OF = map(attrgetter, ("path", "numWrites", "fileSizeInBytes", "columnStats"))


def _written_columns(records: list[_StatRecord], source: str) -> WrittenColumns:
    """:meth:`CommitMetadata.written_columns` of records, column by column, the checks column-wise."""
    paths = list(map(_PATH_OF, records))
    if not all(paths):  # a stat naming no file is skipped unread
        records = [r for r, path in zip(records, paths, strict=True) if path]
        paths = list(filter(None, paths))
    rows = list(map(_ROWS_OF, records))
    if not set(map(type, rows)) <= {int}:
        rows = [n if type(n) is int else int(n or 0) for n in rows]
    sizes = list(map(_SIZE_OF, records))
    if not (set(map(type, sizes)) <= {int} and min(sizes, default=0) >= 0):
        sizes = [n if type(n) is int and n >= 0 else None for n in sizes]
    column_json = list(map(_STATS_OF, records))
    if any(column_json):
        stats = [LazyColumnStats(c, source, p) if c else NO_COLUMN_STATS for c, p in zip(column_json, paths, strict=True)]
    else:
        stats = [NO_COLUMN_STATS] * len(paths)
    return paths, rows, stats, sizes


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
        self._records: dict[str, list[_StatRecord]] = {}
        self._source = "<metadata>"

    @property
    def write_stats(self) -> list[WriteStat]:
        if self._write_stats is None:
            try:
                self._write_stats = [
                    _write_stat(r, partition, self._source) for partition, items in self._records.items() for r in items
                ]
            except _PARSE_ERRORS as exc:
                raise MetadataError(f"{self._source}: malformed write stat ({type(exc).__name__}: {exc})") from None
            self._records = {}
        return self._write_stats

    def written_files(self) -> dict[str, tuple[int, ColumnStats, int | None]]:
        """Path -> (numWrites, column stats, fileSizeInBytes) of every write stat that names its file.

        The size is None when the stat records none (not a non-negative integer).
        """
        paths, rows, columns, sizes = self.written_columns()
        return dict(zip(paths, zip(rows, columns, sizes, strict=True), strict=True))

    def written_columns(self) -> WrittenColumns:
        """:meth:`written_files` column by column (no tuple per file), in write-stat order.

        Column statistics are read-only (:class:`LazyColumnStats`), so callers may share them."""
        if self._write_stats is not None:
            stats = [s for s in self._write_stats if s.path]
            return ([s.path for s in stats], [s.num_writes for s in stats],
                    [s.column_stats if isinstance(s.column_stats, LazyColumnStats) else LazyColumnStats.of(s.column_stats)
                     for s in stats],
                    [s.file_size for s in stats])
        try:
            return _written_columns(list(chain.from_iterable(self._records.values())), self._source)
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
            return _ENCODER.encode(doc)  # compact, as json.dumps(separators=(",", ":")) but UTF-8 unescaped
        except TypeError:  # beyond msgspec (non-string keys): the json module decides
            return json.dumps(doc, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes, source: str = "<metadata>") -> CommitMetadata:
        """Parse layout-1 JSON, or the Avro container a Hudi 1.x completed instant holds."""
        if data[:4] != b"Obj\x01":
            try:
                typed = _TYPED_DECODER.decode(data)
            except msgspec.DecodeError:
                pass  # not the usual shape, or JSON msgspec refuses: read and checked field by field below
            else:
                return cls._from_typed(typed, source)
        doc = _avro_document(data, source) if data[:4] == b"Obj\x01" else _json_document(data, source)
        return cls._from_document(doc, source)

    @classmethod
    def _from_document(cls, doc: Any, source: str) -> CommitMetadata:
        """The metadata of a parsed JSON (or Avro) document, checked field by field."""
        if not isinstance(doc, dict):
            raise MetadataError(f"{source}: commit metadata must be a JSON object, got {type(doc).__name__}")
        try:
            records = _checked_write_stats(doc.get("partitionToWriteStats"))
            replaced = {
                p: ids if isinstance(ids, list) else list(ids or [])  # a parsed list is ours already
                for p, ids in (doc.get("partitionToReplaceFileIds") or {}).items()
            }
            extra = {str(k): str(v) for k, v in (doc.get("extraMetadata") or {}).items()}
        except _PARSE_ERRORS as exc:
            raise MetadataError(f"{source}: malformed commit metadata ({type(exc).__name__}: {exc})") from None
        return cls._parsed(records, replaced, extra, doc.get("operationType"), doc.get("compacted", False), source)

    @classmethod
    def _from_typed(cls, doc: _CommitDocument, source: str) -> CommitMetadata:
        """The metadata of a document the typed pass accepted: what the checks of :meth:`from_json` give."""
        records = {p: items or [] for p, items in (doc.partitionToWriteStats or {}).items()}
        replaced = {p: ids or [] for p, ids in (doc.partitionToReplaceFileIds or {}).items()}
        return cls._parsed(records, replaced, doc.extraMetadata or {}, doc.operationType, doc.compacted, source)

    @classmethod
    def _parsed(cls, records: dict[str, list[_StatRecord]], replaced: dict[str, list[str]], extra: dict[str, str],
                operation_type: Any, compacted: Any, source: str) -> CommitMetadata:
        schema = extra.pop("schema", None)
        meta = cls(
            operation_type=str(operation_type or "UNKNOWN"),
            schema=schema,
            replaced_file_ids=replaced,
            extra=extra,
            compacted=bool(compacted),
        )
        meta._write_stats, meta._records, meta._source = None, records, source
        return meta
