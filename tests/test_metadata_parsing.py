"""Commit metadata parsing: the typed pass (msgspec) gives what the field-by-field pass gives, and
column statistics decoded on first read behave as the dicts they stand for."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.table.metadata import _TYPED_DECODER, CommitMetadata, LazyColumnStats, MetadataError

_COLUMN_STATS = "layoutbench.columnStats"


def _outcome(read: Any) -> Any:
    """What ``read()`` returns, column statistics as plain dicts; or the error it raises."""
    try:
        value = read()
        if isinstance(value, tuple):  # written_columns
            paths, rows, stats, sizes = value
            return paths, rows, [dict(s.items()) for s in stats], sizes
        return [(s.file_id, s.partition, s.path, s.num_writes, s.file_size, s.total_write_bytes, s.prev_commit,
                 s.num_inserts, s.num_update_writes, s.num_deletes, s.min_record_key, s.max_record_key,
                 dict(s.column_stats.items())) for s in value]
    except MetadataError as exc:
        return ("error", str(exc))


def _summary(parse: Any) -> Any:
    try:
        meta = parse()
    except MetadataError as exc:
        return ("error", str(exc))
    # written_columns read first on one parse, write_stats first on the other: order must not matter
    return (meta.operation_type, meta.schema, meta.replaced_file_ids, meta.extra, meta.compacted,
            _outcome(meta.written_columns), _outcome(lambda: meta.write_stats))


def _both_passes(data: bytes) -> tuple[Any, Any]:
    typed = _summary(lambda: CommitMetadata.from_json(data, source="s.commit"))
    checked = _summary(lambda: CommitMetadata._from_document(json.loads(data), source="s.commit"))
    return typed, checked


scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) \
    | st.text(max_size=6)
bound = scalars | st.fixed_dictionaries({"ts_us": st.integers(-(2**50), 2**50) | st.just(10**30) | st.just(1.5)}) \
    | st.fixed_dictionaries({"ts_us": st.integers(0, 9), "x": scalars}) | st.fixed_dictionaries({"x": scalars})
good_stats = st.dictionaries(st.text(max_size=4), st.lists(bound, min_size=2, max_size=2), max_size=3)
odd_stats = scalars | st.lists(scalars, max_size=3) | st.dictionaries(st.text(max_size=3), scalars | st.lists(bound, max_size=3),
                                                                      max_size=2)
counts = st.integers(0, 10**6)


def _stat(values: Any, stats: Any, with_file_id: Any) -> Any:
    keys = ["path", "numWrites", "fileSizeInBytes", "totalWriteBytes", "prevCommit", "numInserts",
            "numUpdateWrites", "numDeletes", "partitionPath", "minRecordKey", "maxRecordKey"]
    d = {k: v for k, v in zip(keys, values, strict=False) if v is not ...}
    d.update({"fileId": "f"} if with_file_id is True else {})
    if stats is not ...:
        d[_COLUMN_STATS] = stats
    return d


loose = counts | st.none() | st.sampled_from(["7", "x", "", "-1"]) | st.booleans()
# Shapes the typed pass accepts, with values of every kind inside them
well_formed_stat = st.builds(
    _stat,
    st.tuples(st.text(min_size=1, max_size=8) | st.sampled_from(["", None]), loose, loose, loose,
              st.sampled_from(["null", None, 3]), loose, loose, loose, st.sampled_from(["dt=a", "dt=b", None]),
              st.text(max_size=4) | st.none(), st.text(max_size=4)),
    good_stats | odd_stats | st.just(...),
    st.just(True),
)
any_stat = st.builds(
    _stat,
    st.lists(scalars | st.just(...), max_size=11),
    good_stats | odd_stats | st.just(...),
    st.booleans(),
) | scalars

well_formed = st.fixed_dictionaries(
    {"partitionToWriteStats": st.dictionaries(st.sampled_from(["dt=a", "dt=b", ""]),
                                              st.lists(well_formed_stat, max_size=4) | st.none(), max_size=3) | st.none(),
     "operationType": st.sampled_from(["INSERT", "CLUSTER", "", None, 7]),
     "compacted": scalars,
     "extraMetadata": st.dictionaries(st.sampled_from(["schema", "k"]), st.text(max_size=5), max_size=2) | st.none()},
    optional={"partitionToReplaceFileIds": st.dictionaries(
        st.text(max_size=3), st.lists(st.text(max_size=5), max_size=3) | st.none(), max_size=2) | st.none()},
)
any_document = st.dictionaries(
    st.sampled_from(["partitionToWriteStats", "partitionToReplaceFileIds", "extraMetadata", "operationType",
                     "compacted", "other"]),
    scalars | st.dictionaries(st.text(max_size=3), scalars | st.lists(any_stat | scalars, max_size=3), max_size=3),
    max_size=6,
) | scalars | st.lists(scalars, max_size=2)


@settings(deadline=None)
@given(well_formed)
def test_typed_pass_reads_well_formed_metadata_as_the_checked_pass_does(doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode()
    _TYPED_DECODER.decode(data)  # the typed pass is the one taken: else this compares a pass with itself
    typed, checked = _both_passes(data)
    assert typed == checked


@settings(deadline=None)
@given(any_document)
def test_typed_pass_and_checked_pass_agree_on_any_document(doc: Any) -> None:
    typed, checked = _both_passes(json.dumps(doc).encode())
    assert typed == checked


def _one_stat(column_stats: Any) -> bytes:
    stat = {"fileId": "f", "path": "dt=a/f_0-0-0_1.parquet", "numWrites": 3, "fileSizeInBytes": 10,
            _COLUMN_STATS: column_stats}
    return json.dumps({"partitionToWriteStats": {"dt=a": [stat]}}).encode()


def test_column_stats_are_decoded_when_first_read_and_name_commit_and_file_when_malformed() -> None:
    meta = CommitMetadata.from_json(_one_stat({"x": [1, 2, 3]}), source="y.commit")
    _, rows, stats, _ = meta.written_columns()  # reading paths and row counts does not decode them
    assert rows == [3]
    with pytest.raises(MetadataError, match=r"y\.commit: malformed column statistics of dt=a/f_0-0-0_1\.parquet"):
        stats[0].get("x")
    with pytest.raises(MetadataError, match="y.commit"):
        CommitMetadata.from_json(_one_stat([1, 2]), source="y.commit").write_stats[0].column_stats["x"]


def test_lazy_column_stats_behave_as_a_read_only_dict() -> None:
    ts = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1_000_000)
    meta = CommitMetadata.from_json(_one_stat({"ts": [{"ts_us": ts}, {"ts_us": ts + 1}], "s": ["a", "b"]}))
    stats = meta.written_columns()[2][0]
    assert isinstance(stats, LazyColumnStats)
    expected = {"ts": (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 0, 0, 1, tzinfo=UTC)), "s": ("a", "b")}
    assert stats == expected and expected == stats and stats != {"s": ("a", "b")}
    assert dict(stats) == expected and list(stats) == ["ts", "s"] and len(stats) == 2 and "s" in stats
    assert stats.get("nope", 7) == 7 and set(stats.keys()) == {"ts", "s"} and list(stats.values())[1] == ("a", "b")
    with pytest.raises(TypeError):
        stats["s"] = ("c", "d")  # type: ignore[index]
    back = pickle.loads(pickle.dumps(stats))
    assert type(back) is dict and back == expected
    assert CommitMetadata.from_json(CommitMetadata("INSERT", meta.write_stats).to_json()).write_stats[0].column_stats == expected


@pytest.mark.parametrize("data", [
    b'{"partitionToWriteStats": {"p": [{"fileId": "f", "path": "p/f", "numWrites": Infinity}]}}',  # json module reads it
    _one_stat({"ts": [{"ts_us": 10**30}, {"ts_us": 0}]}),
])
def test_out_of_range_values_are_malformed_metadata_naming_the_source(data: bytes) -> None:
    meta = CommitMetadata.from_json(data, source="z.commit")
    with pytest.raises(MetadataError, match="z.commit"):
        [dict(stats) for stats in meta.written_columns()[2]]
    with pytest.raises(MetadataError, match="z.commit"):
        [dict(s.column_stats) for s in meta.write_stats]
