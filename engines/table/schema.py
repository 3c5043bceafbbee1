"""Arrow schema -> the Avro schema string Hudi keeps in ``extraMetadata.schema``.

Timestamps map to ``timestamp-micros`` (never ``local-timestamp-micros``, which makes hudi-rs
panic; hudi-reader-contract.md §4). Every field is a nullable union, as Hudi writes them.
"""

from __future__ import annotations

import json

import pyarrow as pa

from engines.table.model import META_COLUMNS


class SchemaMismatchError(ValueError):
    """A batch whose schema does not match the table's."""


def _avro_type(t: pa.DataType) -> object:
    if pa.types.is_timestamp(t):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_integer(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_floating(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    raise SchemaMismatchError(f"column type {t} is not supported by the layoutbench writer")


def avro_schema_string(schema: pa.Schema, record_name: str = "layoutbench_record") -> str:
    """Avro record schema (JSON string) for the meta columns followed by ``schema``'s fields."""
    fields = [{"name": c, "type": ["null", "string"], "default": None} for c in META_COLUMNS]
    for f in schema:
        if f.name in META_COLUMNS:
            continue
        fields.append({"name": f.name, "type": ["null", _avro_type(f.type)], "default": None})
    doc = {"type": "record", "name": record_name, "namespace": "hoodie.layoutbench", "fields": fields}
    return json.dumps(doc, separators=(",", ":"))


def data_fields(avro_schema: str) -> dict[str, str]:
    """Column name -> Avro type description of the non-meta fields of an Avro schema string."""
    doc = json.loads(avro_schema)
    out = {}
    for f in doc.get("fields", []):
        if f["name"] in META_COLUMNS:
            continue
        out[f["name"]] = json.dumps(f["type"], sort_keys=True)
    return out


def check_compatible(table_schema: str | None, batch_schema: pa.Schema, source: str) -> None:
    """Raise :class:`SchemaMismatchError` naming every differing column."""
    if table_schema is None:
        return
    expected = data_fields(table_schema)
    actual = data_fields(avro_schema_string(batch_schema))
    problems = []
    for name in expected.keys() - actual.keys():
        problems.append(f"missing column {name!r}")
    for name in actual.keys() - expected.keys():
        problems.append(f"unexpected column {name!r}")
    for name in expected.keys() & actual.keys():
        if expected[name] != actual[name]:
            problems.append(f"column {name!r} is {actual[name]}, table has {expected[name]}")
    if problems:
        raise SchemaMismatchError(f"{source} does not match the table schema: " + "; ".join(sorted(problems)))
