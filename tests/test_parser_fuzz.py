"""Property-based fuzzing of the plan and commit-metadata parsers: any byte string gives either a
valid object or the clear error naming the file — never another exception, never a hang."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from engines.table.avro import (
    BASE_FILE_COMPACTION_PLAN,
    CLUSTERING_PLAN,
    REQUESTED_REPLACE,
    PlanFileError,
    decode_plan,
    encode_plan,
)
from engines.table.metadata import CommitMetadata, MetadataError

VALID_PLAN = encode_plan(BASE_FILE_COMPACTION_PLAN, {
    "operations": [{"baseFilePaths": ["dt=a/f1-0_0-0-0_20260101000000000.parquet"], "partitionPath": "dt=a",
                    "metrics": {"fileCount": 1.0}}], "extraMetadata": None, "version": 1})


@settings(deadline=2000)
@given(st.binary(max_size=2048))
def test_plan_decoder_on_random_bytes(data: bytes) -> None:
    for name in (BASE_FILE_COMPACTION_PLAN, CLUSTERING_PLAN, REQUESTED_REPLACE):
        try:
            record = decode_plan(name, data, "fuzz.plan")
        except PlanFileError as exc:
            assert "fuzz.plan" in str(exc)
        else:
            assert isinstance(record, dict)


@settings(deadline=2000)
@given(st.integers(min_value=0, max_value=len(VALID_PLAN) - 1), st.integers(min_value=0, max_value=255))
def test_plan_decoder_on_mutated_plans(pos: int, byte: int) -> None:
    data = bytearray(VALID_PLAN)
    data[pos] = byte
    try:
        decode_plan(BASE_FILE_COMPACTION_PLAN, bytes(data), "mutated.plan")
    except PlanFileError as exc:
        assert "mutated.plan" in str(exc)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=20), children, max_size=4),
    max_leaves=20,
)


@settings(deadline=2000)
@given(st.one_of(st.binary(max_size=1024), json_values.map(lambda v: json.dumps(v).encode()),
                 st.dictionaries(st.sampled_from(["partitionToWriteStats", "partitionToReplaceFileIds",
                                                  "extraMetadata", "operationType", "compacted"]),
                                 json_values, max_size=5).map(lambda v: json.dumps(v).encode())))
def test_commit_metadata_parser(data: bytes) -> None:
    try:
        meta = CommitMetadata.from_json(data, source="fuzz.commit")
    except MetadataError as exc:
        assert "fuzz.commit" in str(exc)
    else:
        assert isinstance(meta, CommitMetadata)
