"""``.hoodie/hoodie.properties``: create and read (Java properties format, as Hudi writes it)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

from engines.table.storage import Storage

PROPERTIES_FILE = ".hoodie/hoodie.properties"


class NotAHudiTableError(FileNotFoundError):
    """The path holds no ``.hoodie/hoodie.properties``."""


class UnsupportedTableError(ValueError):
    """A Hudi table this code will not read or write (other versions, or a table type a writer lacks)."""


def render(props: Mapping[str, str]) -> bytes:
    lines = ["#Properties saved by layoutbench", "#Hudi table version 6, timeline layout 1"]
    lines += [f"{k}={v}" for k, v in sorted(props.items())]
    return ("\n".join(lines) + "\n").encode()


def parse(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep < 0:
            out[line] = ""
            continue
        key, value = line[:sep].strip(), line[sep + 1 :].strip()
        out[key] = value.replace("\\:", ":").replace("\\=", "=")
    return out


COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
TABLE_TYPES = {"COPY_ON_WRITE": COPY_ON_WRITE, "COW": COPY_ON_WRITE, "MERGE_ON_READ": MERGE_ON_READ, "MOR": MERGE_ON_READ}
# a MERGE_ON_READ table merges a key's writes by its ordering field, the later write winning ties
# (Hudi's EVENT_TIME_ORDERING, which Hudi infers from this payload class for table version 6)
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"


def table_type(props: Mapping[str, str]) -> str:
    """``hoodie.table.type`` normalised (Hudi also accepts ``cow``/``mor``); unknown ones unchanged."""
    raw = props.get("hoodie.table.type", COPY_ON_WRITE).upper()
    return TABLE_TYPES.get(raw, raw)


def default_properties(
    table_name: str, partition_fields: list[str], record_key: str, hive_style: bool = True,
    table_type: str = COPY_ON_WRITE, ordering_field: str | None = None,
) -> dict[str, str]:
    """A version-6 table's properties; a MERGE_ON_READ table also names its ordering field."""
    if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
        raise UnsupportedTableError(f"hoodie.table.type {table_type!r}: expected COPY_ON_WRITE or MERGE_ON_READ")
    if table_type == MERGE_ON_READ and not ordering_field:
        raise UnsupportedTableError("a MERGE_ON_READ table needs an ordering (precombine) field to merge its logs")
    database = "default"
    extra = {} if table_type == COPY_ON_WRITE else {
        "hoodie.table.precombine.field": str(ordering_field),
        "hoodie.compaction.payload.class": EVENT_TIME_PAYLOAD,
        "hoodie.table.log.file.format": "HOODIE_LOG",
    }
    return {
        **extra,
        "hoodie.table.name": table_name,
        "hoodie.database.name": database,
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.partition.fields": ",".join(partition_fields),
        "hoodie.table.recordkey.fields": record_key,
        "hoodie.datasource.write.hive_style_partitioning": "true" if hive_style else "false",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.checksum": str(zlib.crc32(f"{database}.{table_name}".encode())),
    }


def write_properties(storage: Storage, props: Mapping[str, str]) -> None:
    storage.write_atomic(PROPERTIES_FILE, render(props))


def read_properties(storage: Storage) -> dict[str, str]:
    if not storage.exists(PROPERTIES_FILE):
        raise NotAHudiTableError(f"{storage.uri} is not a Hudi table: {PROPERTIES_FILE} not found")
    return parse(storage.read_bytes(PROPERTIES_FILE).decode("utf-8", "replace"))
