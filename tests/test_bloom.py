"""Hudi's footer bloom filter (engines/table/bloom.py): its sizes, membership, the footer our writer
puts in every base file, and its config keys. Byte equality with Apache Hudi's own
BloomFilterFactory is tested against the real JVM classes in tests/test_hudi_engine.py."""

from __future__ import annotations

import base64
import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engines.table.bloom import (
    BLOOM_FILTER_KEY,
    MAX_KEY,
    MIN_KEY,
    TYPE_CODE_KEY,
    BloomConfig,
    BloomFields,
    _rows_of,
    bloom_of,
    dynamic_rows,
    footer_bytes,
    footer_metadata,
    might_contain,
    serialize,
    serialized_length,
)

KEYS = [f"{i * 7919:016x}-000001-{i:08d}" for i in range(3000)]


def test_hudis_defaults_make_a_431_kb_filter() -> None:
    cfg = BloomConfig()
    assert (cfg.vector_size, cfg.num_hashes) == (2_587_966, 30)
    assert len(serialize(KEYS, cfg)) == serialized_length(len(KEYS), cfg) == 431_380
    assert serialized_length(70_000, cfg) == 862_724  # a second row above num_entries keys


def _near_row_boundaries(draw: st.DrawFn) -> tuple[int, int, int]:
    """(keys, num_entries, dynamic_max_entries), the key count often within 2 of a row boundary
    (a multiple of num_entries) or of the last row (ceil(max / num_entries) rows)."""
    nr = draw(st.integers(1, 70_000))
    max_nr = draw(st.integers(1, 400_000))
    cap = -(-max_nr // nr)
    edge = draw(st.sampled_from([nr, cap * nr, max_nr, nr * draw(st.integers(0, cap + 3))]))
    n = draw(st.one_of(st.integers(0, 3_000_000), st.integers(max(0, edge - 2), edge + 2)))
    return n, nr, max_nr


@settings(deadline=None)
@given(st.composite(_near_row_boundaries)())
@example((0, 60_000, 100_000))
@example((60_000, 60_000, 100_000))
@example((60_001, 60_000, 100_000))
@example((120_000, 60_000, 100_000))
@example((120_001, 60_000, 100_000))  # Hudi's defaults: two rows at most, then round robin
@example((1, 1, 1))
@example((2, 1, 1))
@example((5, 3, 3))
@example((7, 3, 7))  # max_nr not a multiple of nr: a third row for the seventh key
def test_dynamic_rows_in_closed_form_equal_the_per_key_walk(case: tuple[int, int, int]) -> None:
    """The simulator's footer sizes (closed form) count the rows and currentNbRecord the writer's
    per-key walk does, so a simulated file's footer has the bytes of a written one."""
    n, nr, max_nr = case
    _, count, cur = _rows_of(n, nr, max_nr)
    assert dynamic_rows(n, nr, max_nr) == (count, cur)
    cfg = BloomConfig(num_entries=nr, dynamic_max_entries=max_nr)
    if n:
        assert serialized_length(n, cfg) == 4 * -(-(25 + count * (13 + (cfg.vector_size + 7) // 8)) // 3)


def test_footer_length_of_a_written_dynamic_filter_across_its_rows() -> None:
    """Written filters (real hashing) whose key counts straddle each row boundary have the length the
    closed form gives: one row, two, three (the cap), then round robin with no new row."""
    cfg = BloomConfig(num_entries=1000, dynamic_max_entries=2500)
    for n in (999, 1000, 1001, 2000, 2001, 2999, 3000, 3001):
        assert len(serialize(KEYS[:n], cfg)) == serialized_length(n, cfg), n
        assert dynamic_rows(n, 1000, 2500)[0] == min(-(-n // 1000), 3)


@pytest.mark.parametrize("cfg", [BloomConfig(), BloomConfig(filter_type="SIMPLE"),
                                 BloomConfig(num_entries=500, dynamic_max_entries=1200)])
def test_every_key_is_found_and_few_others(cfg: BloomConfig) -> None:
    ser = serialize(KEYS, cfg)
    assert len(ser) == serialized_length(len(KEYS), cfg)
    assert all(might_contain(ser, k) for k in KEYS[::37])
    others = [f"absent-{i}" for i in range(200)]
    assert sum(might_contain(ser, k) for k in others) <= 2


def test_keys_of_one_length_set_the_bits_the_general_path_sets() -> None:
    """Keys of one length are hashed from the Arrow bytes in place (any slice offset, any chunking);
    a SIMPLE filter is the OR of its keys' bits, so adding a key of another length (the general path)
    must OR in exactly that key's bits."""
    cfg = BloomConfig(filter_type="SIMPLE")
    arr = pa.array(["short"] + KEYS)
    sliced = arr.slice(1)
    chunked = pa.chunked_array([sliced.slice(0, 1000), sliced.slice(1000)])
    one = serialize(KEYS, cfg)
    assert serialize(sliced, cfg) == serialize(chunked, cfg) == one

    def vector(ser: str) -> np.ndarray:
        return np.frombuffer(base64.b64decode(ser)[13:], dtype=np.uint8)

    both = vector(one) | vector(serialize(["short"], cfg))
    assert np.array_equal(vector(serialize(KEYS + ["short"], cfg)), both)
    assert np.array_equal(vector(serialize(arr, cfg)), both)


def test_footer_entries_and_their_bytes_in_a_parquet_file() -> None:
    meta = footer_metadata(KEYS, BloomConfig())
    assert set(meta) == {BLOOM_FILTER_KEY, MIN_KEY, MAX_KEY, TYPE_CODE_KEY}
    assert (meta[MIN_KEY], meta[MAX_KEY], meta[TYPE_CODE_KEY]) == (min(KEYS), max(KEYS), "DYNAMIC_V0")
    assert TYPE_CODE_KEY not in footer_metadata(KEYS, BloomConfig(filter_type="SIMPLE"))  # as Hudi
    assert footer_metadata(KEYS, BloomConfig(enabled=False)) == {}

    table = pa.table({"_hoodie_record_key": KEYS})

    def size(extra: dict[str, str]) -> int:
        out = io.BytesIO()
        w = pq.ParquetWriter(out, table.schema)
        w.write_table(table)
        if extra:
            w.add_key_value_metadata(extra)
        w.close()
        return len(out.getvalue())

    assert size(meta) - size({}) == footer_bytes(len(KEYS), BloomConfig(), len(KEYS[0]))


def test_bloom_config_is_validated_and_read_from_engine_keys() -> None:
    with pytest.raises(ValueError, match="unknown bloom filter type"):
        BloomConfig(filter_type="CUCKOO")
    with pytest.raises(ValueError, match="fpp"):
        BloomFields(bloom_fpp=2.0)
    assert bloom_of({"bloom_filter": False, "mode": "inline"}) == BloomConfig(enabled=False)
    assert bloom_of({"bloom_filter_type": "simple"}).filter_type == "SIMPLE"
    with pytest.raises(ValueError, match="empty"):
        serialize(["a", ""], BloomConfig())


def test_a_negative_key_count_is_refused() -> None:
    """The per-key walk failed on a negative count (an array of negative length); the closed form
    refuses it too, naming it, rather than sizing a footer for it."""
    with pytest.raises(ValueError, match="-1 keys"):
        footer_bytes(-1, BloomConfig(), 32)
    with pytest.raises(ValueError, match="must not be negative"):
        dynamic_rows(-5, 60_000, 100_000)
