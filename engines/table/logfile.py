"""Hudi's log files (MERGE_ON_READ file slices): names, blocks, a writer and a reader.

A log file ``<partition>/.<fileId>_<baseInstant>.log.<version>_<writeToken>`` belongs to the file
slice of ``fileId`` whose base file was written at ``baseInstant`` (table version 6; versions
start at 1). It is a sequence of blocks, each written as Hudi's ``HoodieLogFormatWriter`` writes
log format version 1 (all integers big-endian):

| bytes | field                                   | notes                                                          |
| ----- | --------------------------------------- | -------------------------------------------------------------- |
| 6     | magic ``#HUDI#``                        | starts every block                                             |
| 8     | block size (long)                       | bytes after this field, up to and including the reverse pointer |
| 4     | log format version (int)                | 1                                                              |
| 4     | block type (int)                        | 0 command, 1 delete, 2 corrupt, 3 Avro data, 4 HFile, 5 Parquet |
| 4+…   | header: entry count, then per entry     | key ordinal (int), value length (int), UTF-8 value             |
| 8     | content length (long)                   |                                                                |
| n     | content                                 | per block type, below                                          |
| 4+…   | footer (same encoding as the header)    | empty in every block Hudi writes                               |
| 8     | reverse pointer (long)                  | bytes of the block before this field (magic included): size + 6 |

Header keys (ordinals): 0 ``INSTANT_TIME`` (the deltacommit that wrote the block), 1
``TARGET_INSTANT_TIME`` (command blocks: the instant rolled back), 2 ``SCHEMA`` (data blocks:
the writer's Avro schema, meta fields first), 3 ``COMMAND_BLOCK_TYPE`` (``0`` = rollback).

| block         | content                                                                                     |
| ------------- | ------------------------------------------------------------------------------------------- |
| Avro data (3) | log block version 3 (int), record count (int), per record: length (int) + Avro binary datum |
| delete (1)    | version 3 (int), length (int), Avro binary ``HoodieDeleteRecordList``                      |
| command (0)   | empty                                                                                       |
| Parquet (5)   | a whole Parquet file (read here; this module writes Avro data blocks only)                  |

Delete records are written as Apache Hudi 1.2.0 writes them: ``orderingVal`` = ``IntWrapper(0)``
in the ``HoodieDeleteRecordList`` schema whose ``orderingVal`` is a union of value wrappers
(Hudi's natural-order delete, 0 being its default ordering value: it wins over every earlier
write of the key; a null ``orderingVal`` makes Hudi 1.2's merger fail with a
NullPointerException). Hudi's newer source declares ``orderingVal`` an array of wrappers; both
forms are read.

**Corrupt blocks.** The reader follows Hudi's ``HoodieLogFileReader``: a block whose size runs
past the end of the file, or whose reverse pointer does not match its size, is corrupt; the
reader records a :class:`CorruptBlock` (file, offset, reason) and resumes at the next magic, so
a truncated last block (a writer killed mid-append) ends the read at the last good block. A
block whose frame is sound but whose content does not decode is reported the same way and
skipped (where Hudi would fail the read). The reader never raises on bad bytes.
"""

from __future__ import annotations

import io
import json
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from typing import Any

import fastavro

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
LOG_BLOCK_VERSION = 3
LOG_BASE_VERSION = 1  # the first log file of a slice is .log.1
ROLLBACK_COMMAND = "0"

_LONG = struct.Struct(">q")
_INT = struct.Struct(">i")
# A file id never starts with a dot: "..<fileId>_..." is Hadoop's checksum of a log file (the local
# file system writes ".<name>.crc" beside every file Apache Hudi writes), not a log file.
_NAME = re.compile(r"^\.([^._/][^_/]*)_(\d+)\.log\.(\d+)_([^_/]+)$")


class BlockType(IntEnum):
    """``HoodieLogBlockType`` ordinals."""

    COMMAND = 0
    DELETE = 1
    CORRUPTED = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """``HoodieLogBlock.HeaderMetadataType`` ordinals (the ones written here)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3


@dataclass(frozen=True, order=True)
class LogFileName:
    """The parts of a log file's name."""

    file_id: str
    base_instant: str
    version: int
    write_token: str

    @property
    def name(self) -> str:
        return f".{self.file_id}_{self.base_instant}.log.{self.version}_{self.write_token}"

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        """The parts of ``name`` (a file name, no folder), or None if it is no log file."""
        m = _NAME.match(name)
        return None if m is None else cls(m.group(1), m.group(2), int(m.group(3)), m.group(4))


@dataclass(frozen=True)
class LogFile:
    """A log file found by a listing: its partition, path (relative to the base) and name parts."""

    partition: str
    path: str
    size: int
    name: LogFileName

    @property
    def file_group(self) -> tuple[str, str]:
        return (self.partition, self.name.file_id)


@dataclass
class LogBlock:
    """One block read from a log file; ``records`` decoded (data and delete blocks)."""

    block_type: BlockType
    header: dict[int, str]
    offset: int
    records: list[dict[str, Any]] = field(default_factory=list)
    deleted_keys: list[tuple[str, str]] = field(default_factory=list)  # (recordKey, partitionPath)

    @property
    def instant(self) -> str:
        return self.header.get(HeaderKey.INSTANT_TIME, "")

    @property
    def rollback_target(self) -> str | None:
        """The instant a rollback command block rolls back (None for other blocks)."""
        if self.block_type != BlockType.COMMAND or self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) != ROLLBACK_COMMAND:
            return None
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)


@dataclass(frozen=True)
class CorruptBlock:
    """A stretch of a log file that is no readable block."""

    path: str
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"corrupt log block in {self.path} at byte {self.offset}: {self.reason}"


@dataclass
class LogReadResult:
    """What :func:`read_log` found: the good blocks in file order and the corrupt stretches."""

    path: str
    blocks: list[LogBlock]
    corrupt: list[CorruptBlock]


# -- writing ------------------------------------------------------------------------------------
def _metadata_bytes(metadata: Mapping[int, str]) -> bytes:
    out = [_INT.pack(len(metadata))]
    for key in metadata:  # in the mapping's order (Hudi's HashMap order varies from JVM to JVM)
        value = metadata[key].encode("utf-8")
        out += [_INT.pack(int(key)), _INT.pack(len(value)), value]
    return b"".join(out)


def encode_block(block_type: BlockType, header: Mapping[int, str], content: bytes,
                 footer: Mapping[int, str] | None = None) -> bytes:
    """One block framed as ``HoodieLogFormatWriter.appendBlocks`` frames it (format version 1)."""
    head, foot = _metadata_bytes(header), _metadata_bytes(footer or {})
    size = 4 + 4 + len(head) + 8 + len(content) + len(foot) + 8
    body = b"".join([_INT.pack(LOG_FORMAT_VERSION), _INT.pack(int(block_type)), head,
                     _LONG.pack(len(content)), content, foot])
    return MAGIC + _LONG.pack(size) + body + _LONG.pack(len(MAGIC) + 8 + len(body))


@cache
def _parsed(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


def avro_data_block(instant: str, schema_json: str, records: Sequence[Mapping[str, Any]]) -> bytes:
    """An Avro data block (``HoodieAvroDataBlock``): ``records`` in the Avro ``schema_json``."""
    schema = _parsed(schema_json)
    out = [_INT.pack(LOG_BLOCK_VERSION), _INT.pack(len(records))]
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, dict(record))
        datum = buf.getvalue()
        out += [_INT.pack(len(datum)), datum]
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.AVRO_DATA, header, b"".join(out))


# HoodieDeleteRecordList, its value wrappers spelt out (the schema is not in the block)
_WRAPPERS = [{"type": "record", "name": f"{n}Wrapper", "fields": [{"name": "value", "type": t}]}
             for n, t in (("Boolean", "boolean"), ("Int", "int"), ("Long", "long"), ("Float", "float"),
                          ("Double", "double"), ("Bytes", "bytes"), ("String", "string"), ("Date", "int"),
                          ("Decimal", "bytes"), ("TimeMicros", "long"), ("TimestampMicros", "long"))]


def _delete_list_schema(ordering: Any) -> Any:
    item = {"type": "record", "name": "HoodieDeleteRecord", "fields": [
        {"name": "recordKey", "type": ["null", "string"]},
        {"name": "partitionPath", "type": ["null", "string"]},
        {"name": "orderingVal", "type": ordering}]}
    return fastavro.parse_schema({"type": "record", "name": "HoodieDeleteRecordList",
                                  "namespace": "org.apache.hudi.avro.model",
                                  "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": item}}]})


_NATURAL_ORDER = ("org.apache.hudi.avro.model.IntWrapper", {"value": 0})  # fastavro's (branch, value) union form
_DELETE_SCHEMAS = (_delete_list_schema(["null", *_WRAPPERS]),  # Hudi 0.x to 1.2.0
                   _delete_list_schema(["null", {"type": "array", "items": ["null", *_WRAPPERS]}]))  # newer source


def delete_block(instant: str, schema_json: str, keys: Iterable[tuple[str, str]]) -> bytes:
    """A delete block (``HoodieDeleteBlock``, version 3) of (recordKey, partitionPath) pairs."""
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_SCHEMAS[0], {"deleteRecordList": [
        {"recordKey": k, "partitionPath": p, "orderingVal": _NATURAL_ORDER} for k, p in keys]})
    data = buf.getvalue()
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.DELETE, header, _INT.pack(LOG_BLOCK_VERSION) + _INT.pack(len(data)) + data)


def rollback_block(instant: str, target: str) -> bytes:
    """A rollback command block (``HoodieCommandBlock``): readers drop ``target``'s blocks."""
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.TARGET_INSTANT_TIME: target,
              HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND}
    return encode_block(BlockType.COMMAND, header, b"")


# -- reading ------------------------------------------------------------------------------------
class _Truncated(ValueError):
    pass


def _take(data: bytes, pos: int, n: int) -> bytes:
    if n < 0 or pos + n > len(data):
        raise _Truncated(f"{n} bytes needed at byte {pos}, file ends at {len(data)}")
    return data[pos:pos + n]


def _read_metadata(data: bytes, pos: int) -> tuple[dict[int, str], int]:
    (count,) = _INT.unpack(_take(data, pos, 4))
    pos += 4
    if count < 0 or count > 64:
        raise ValueError(f"implausible header/footer entry count {count}")
    out: dict[int, str] = {}
    for _ in range(count):
        key, length = struct.unpack(">ii", _take(data, pos, 8))
        out[key] = _take(data, pos + 8, length).decode("utf-8")
        pos += 8 + length
    return out, pos


def _decode_avro(content: bytes, schema_json: str) -> list[dict[str, Any]]:
    schema = _parsed(schema_json)
    (version, count) = struct.unpack(">ii", _take(content, 0, 8))
    if version != LOG_BLOCK_VERSION:
        raise ValueError(f"Avro data block version {version}, only {LOG_BLOCK_VERSION} is read")
    pos, out = 8, []
    for _ in range(count):
        (length,) = _INT.unpack(_take(content, pos, 4))
        datum = io.BytesIO(_take(content, pos + 4, length))
        out.append(fastavro.schemaless_reader(datum, schema, None))
        if datum.tell() != length:
            raise ValueError(f"Avro record at content byte {pos} is {length} bytes, decoded {datum.tell()}")
        pos += 4 + length
    return out


def _decode_parquet(content: bytes) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(content)).to_pylist()


def _decode_deletes(content: bytes) -> list[tuple[str, str]]:
    version, length = struct.unpack(">ii", _take(content, 0, 8))
    if version != LOG_BLOCK_VERSION:
        raise ValueError(f"delete block version {version}, only {LOG_BLOCK_VERSION} is read")
    data = _take(content, 8, length)
    for schema in _DELETE_SCHEMAS:
        buf = io.BytesIO(data)
        try:
            doc = fastavro.schemaless_reader(buf, schema, None)
        except Exception:  # noqa: BLE001 - try the other Hudi version's schema
            continue
        if buf.tell() == len(data):
            return [(r["recordKey"], r["partitionPath"] or "") for r in doc["deleteRecordList"]]
    raise ValueError("delete block content matches neither HoodieDeleteRecordList schema")


def _decode_block(data: bytes, pos: int, end: int, path: str) -> LogBlock:
    """The block whose frame runs from ``pos`` (its magic) to ``end``."""
    version, block_type = struct.unpack(">ii", _take(data, pos + 14, 8))
    if version != LOG_FORMAT_VERSION:
        raise ValueError(f"log format version {version}, only {LOG_FORMAT_VERSION} is read")
    kind = BlockType(block_type)
    header, p = _read_metadata(data, pos + 22)
    (content_length,) = _LONG.unpack(_take(data, p, 8))
    content = _take(data, p + 8, content_length)
    _, p = _read_metadata(data, p + 8 + content_length)
    if p + 8 != end:
        raise ValueError(f"block fields end at byte {p + 8}, its size says {end}")
    block = LogBlock(kind, header, pos)
    if kind == BlockType.AVRO_DATA:
        block.records = _decode_avro(content, header[HeaderKey.SCHEMA])
    elif kind == BlockType.PARQUET_DATA:
        block.records = _decode_parquet(content)
    elif kind == BlockType.DELETE:
        block.deleted_keys = _decode_deletes(content)
    elif kind != BlockType.COMMAND:
        raise ValueError(f"{kind.name} blocks are not read by layoutbench")
    return block


def read_log_bytes(data: bytes, path: str) -> LogReadResult:
    """Every good block of a log file's bytes; corrupt stretches reported (see the module docstring)."""
    blocks: list[LogBlock] = []
    corrupt: list[CorruptBlock] = []
    pos = 0
    while pos < len(data):
        if data[pos:pos + 6] != MAGIC:
            nxt = data.find(MAGIC, pos + 1)
            corrupt.append(CorruptBlock(path, pos, "no magic #HUDI# where a block should start"))
            pos = len(data) if nxt < 0 else nxt
            continue
        reason = None
        if pos + 14 > len(data):
            reason = "the block size runs past the end of the file"
        else:
            (size,) = _LONG.unpack(data[pos + 6:pos + 14])
            end = pos + 14 + size
            if size < 24 or end > len(data):
                reason = f"block size {size} runs past the end of the file ({len(data)} bytes)"
            elif _LONG.unpack(data[end - 8:end])[0] != size + len(MAGIC):
                reason = f"reverse pointer {_LONG.unpack(data[end - 8:end])[0]} does not match block size {size}"
        if reason is None:
            try:
                blocks.append(_decode_block(data, pos, end, path))
                pos = end
                continue
            except (ValueError, KeyError, IndexError, EOFError, struct.error, UnicodeDecodeError) as exc:
                reason = f"block content does not decode ({type(exc).__name__}: {exc})"
            except Exception as exc:  # noqa: BLE001 - fastavro/pyarrow raise many types on garbage
                reason = f"block content does not decode ({type(exc).__name__}: {exc})"
        corrupt.append(CorruptBlock(path, pos, reason))
        nxt = data.find(MAGIC, pos + 1)
        pos = len(data) if nxt < 0 else nxt
    return LogReadResult(path, blocks, corrupt)
