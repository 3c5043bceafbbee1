"""Avro plans: the seed's schemas (``avro/*.avsc``, verbatim) read and written with fastavro.

Plans are stored as Avro object container files (codec null), as Hudi stores requested
compaction and clustering plans; the same plan gives the same bytes. Every record is validated
against its schema before it is written; a truncated or corrupt file raises
:class:`PlanFileError` naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
from functools import cache
from importlib import resources
from typing import Any

import fastavro
import fastavro.validation

BASE_FILE_COMPACTION_PLAN = "HoodieBaseFileCompactionPlan"
CLUSTERING_PLAN = "HoodieClusteringPlan"
REQUESTED_REPLACE = "HoodieRequestedReplaceMetadata"
# Not from the seed: Hudi's own schema of a completed clean, which Hudi's readers decode (time travel).
CLEAN_METADATA = "HoodieCleanMetadata"
# Not from the seed: Apache Hudi 1.2.0's MERGE_ON_READ compaction plan, the schema its generated
# class ``org.apache.hudi.avro.model.HoodieCompactionPlan`` carries (``SCHEMA$`` of the 1.2.0 bundle,
# verbatim: hudi-common/src/main/avro/HoodieCompactionOperation.avsc with HoodieCompactionStrategy.avsc
# inlined, as compiled), which Hudi's file-system view decodes from every ``compaction.requested``.
COMPACTION_PLAN = "HoodieCompactionPlan"
SCHEMA_NAMES = (BASE_FILE_COMPACTION_PLAN, CLUSTERING_PLAN, REQUESTED_REPLACE, CLEAN_METADATA, COMPACTION_PLAN)


class PlanFileError(ValueError):
    """A plan file that is missing, truncated, corrupt or does not match its schema."""


def schema_json(name: str) -> dict[str, Any]:
    """The raw .avsc document of a schema, as shipped."""
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; expected one of {SCHEMA_NAMES}")
    text = resources.files("engines.table").joinpath(f"avro/{name}.avsc").read_text()
    return json.loads(text)


def _inline_references(doc: Any, defs: dict[str, Any]) -> Any:
    """Replace references to other shipped schemas by their definitions (container files must be self-contained)."""
    if isinstance(doc, str):
        return defs.get(doc, defs.get(doc.rsplit(".", 1)[-1], doc))
    if isinstance(doc, list):
        return [_inline_references(d, defs) for d in doc]
    if isinstance(doc, dict):
        return {k: _inline_references(v, defs) if k in ("type", "items", "values", "fields") else v
                for k, v in doc.items()}
    return doc


@cache
def parsed_schema(name: str) -> Any:
    doc = schema_json(name)
    if name == REQUESTED_REPLACE:
        doc = _inline_references(doc, {CLUSTERING_PLAN: schema_json(CLUSTERING_PLAN)})
    return fastavro.parse_schema(doc)


def encode_plan(name: str, record: dict[str, Any]) -> bytes:
    """Validate ``record`` against schema ``name`` and return an Avro container file's bytes."""
    schema = parsed_schema(name)
    try:
        fastavro.validation.validate(record, schema, raise_errors=True)
    except fastavro.validation.ValidationError as exc:
        raise PlanFileError(f"{name} record does not match its schema: {exc}") from None
    buf = io.BytesIO()
    # A sync marker of the schema rather than a random one: the same plan gives the same bytes
    # (readers only compare it with the file's own header).
    fastavro.writer(buf, schema, [record], codec="null", sync_marker=hashlib.md5(name.encode()).digest())
    return buf.getvalue()


def decode_plan(name: str, data: bytes, source: str) -> dict[str, Any]:
    """Read the single record of a plan file; ``source`` names the file in errors."""
    if not data:
        raise PlanFileError(f"plan file {source} is empty")
    try:
        reader = fastavro.reader(io.BytesIO(data), reader_schema=parsed_schema(name))
        records = list(reader)
    except Exception as exc:  # fastavro raises many types on corrupt input
        raise PlanFileError(f"plan file {source} is truncated or corrupt ({type(exc).__name__}: {exc})") from None
    if len(records) != 1:
        raise PlanFileError(f"plan file {source} holds {len(records)} records, expected exactly 1")
    record = records[0]
    if not isinstance(record, dict):
        raise PlanFileError(f"plan file {source} does not hold a {name} record")
    return record
