"""Pure planning of the pyarrow rewrite paths: contiguous row runs, sort keys, sampled key ranges."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.files.inputs import rebatch
from engines.files.splits import plan_cuts, search, sort_key, split_files, split_rows
from engines.files.writer import WriteSpec, _with_meta_columns


@given(st.lists(st.integers(0, 50), max_size=12), st.integers(1, 9))
def test_split_rows_contiguous_near_equal(counts: list[int], n: int) -> None:
    runs = split_rows(counts, n)
    assert len(runs) == n
    flat = [(f, s, k) for run in runs for f, s, k in run]
    # in order, contiguous, covering every row exactly once
    expected = [(f, r) for f, c in enumerate(counts) for r in range(c)]
    assert [(f, s + i) for f, s, k in flat for i in range(k)] == expected
    sizes = [sum(k for _, _, k in run) for run in runs]
    assert max(sizes) - min(sizes) <= 1
    assert all(k > 0 for _, _, k in flat)


@given(st.lists(st.integers(0, 50), max_size=12), st.integers(1, 9))
def test_split_files_whole_files_in_order(counts: list[int], n: int) -> None:
    """Spark's coalesce of one partition per file: whole files, in order, output i = [i*k//m, (i+1)*k//m)."""
    runs = split_files(counts, n)
    m = min(n, len(counts))
    assert len(runs) == m
    assert [f for run in runs for f, _, _ in run] == list(range(len(counts)))
    assert all(start == 0 and rows == counts[f] for run in runs for f, start, rows in run)
    assert [len(run) for run in runs] == [(i + 1) * len(counts) // m - i * len(counts) // m for i in range(m)]


def test_split_files_example() -> None:
    # Apache Hudi 1.2 clustering six slices into four output groups: 1, 2, 1, 2 files
    assert [[f for f, _, _ in run] for run in split_files([9, 8, 7, 3, 2, 1], 4)] == [[0], [1, 2], [3], [4, 5]]
    assert split_files([5], 3) == [[(0, 0, 5)]]
    with pytest.raises(ValueError):
        split_files([1], 0)


def test_split_rows_example_and_errors() -> None:
    assert split_rows([3, 3, 4], 2) == [[(0, 0, 3), (1, 0, 2)], [(1, 2, 1), (2, 0, 4)]]
    assert split_rows([2], 3) == [[], [(0, 0, 1)], [(0, 1, 1)]]
    with pytest.raises(ValueError):
        split_rows([1], 0)


def test_sort_key_nulls_first_and_search() -> None:
    rows = sorted([("b", 2), (None, 5), ("a", None), ("a", 1), ("b", 1)], key=sort_key)
    assert rows == [(None, 5), ("a", None), ("a", 1), ("b", 1), ("b", 2)]

    def key_at(i: int):
        return sort_key(rows[i])

    assert search(key_at, len(rows), sort_key(("a", 1))) == 2
    assert search(key_at, len(rows), sort_key(("a", 0))) == 2
    assert search(key_at, len(rows), sort_key((None, 0))) == 0
    assert search(key_at, len(rows), sort_key(("c", 0))) == 5


def _route(runs: list[list[tuple]], cuts: list) -> list[list[tuple]]:
    """Rows per output and chunk as the merge task would read them."""
    out = []
    for keys in cuts:
        rows = []
        for run in runs:
            pos = [0 if k is None and j == 0 else len(run) if k is None else
                   search(lambda i, run=run: sort_key(run[i]), len(run), k) for j, k in enumerate(keys)]
            for j in range(len(keys) - 1):
                rows += run[pos[j]:pos[j + 1]]
        out.append(sorted(rows, key=sort_key))
    return out


@pytest.mark.parametrize("n_out", [1, 2, 4, 7])
def test_plan_cuts_even_disjoint_ranges(n_out: int) -> None:
    rng = random.Random(n_out)
    runs = [sorted(((rng.choice("abcdefgh"), rng.randrange(10_000), f"k{r}-{i}") for i in range(rng.randrange(800, 2000))),
                   key=sort_key) for r in range(3)]
    samples = []
    for run in runs:
        stride = -(-len(run) // 100)
        samples += [(sort_key(run[i]), min(stride, len(run) - i)) for i in range(0, len(run), stride)]
    cuts = plan_cuts(samples, n_out, chunk_rows=300)
    outputs = _route(runs, cuts)
    everything = sorted((r for run in runs for r in run), key=sort_key)
    assert [r for o in outputs for r in o] == everything  # disjoint, ascending, nothing lost
    sizes = [len(o) for o in outputs]
    assert max(sizes) <= 1.1 * min(sizes)
    assert all(len(c) >= 2 for c in cuts)
    assert max(len(c) for c in cuts) > 2 or n_out > 4  # chunked


def test_plan_cuts_degenerate() -> None:
    assert plan_cuts([], 3, 10) == [[None, None], [], []]
    cuts = plan_cuts([(sort_key(("a",)), 1)], 3, 10)
    assert cuts[0] == [None, None] or [r for c in _route([[("a",)]], cuts) for r in c] == [("a",)]
    assert [r for c in _route([[("a",)]], cuts) for r in c] == [("a",)]


def test_rebatch_exact_row_groups() -> None:
    parts = [pa.table({"x": list(range(a, b))}) for a, b in [(0, 3), (3, 4), (4, 11), (11, 12)]]
    out = list(rebatch(parts, 5))
    assert [t.num_rows for t in out] == [5, 5, 2]
    assert [v for t in out for v in t.column("x").to_pylist()] == list(range(12))


def test_meta_columns_vectorised_match_per_row_strings() -> None:
    spec = WriteSpec(base_uri="/x", instant="20260101000000000", partition_column="dt", record_key="k")
    batch = pa.table({"k": [3, 1, 2], "dt": ["d", "d", "d"]})
    out = _with_meta_columns(batch, spec, "dt=d", "f.parquet", 7, 41)
    assert out.column("_hoodie_commit_seqno").to_pylist() == [f"{spec.instant}_7_{41 + i}" for i in range(3)]
    assert out.column("_hoodie_commit_time").to_pylist() == [spec.instant] * 3
    assert out.column("_hoodie_partition_path").to_pylist() == ["dt=d"] * 3
    assert out.column("_hoodie_file_name").to_pylist() == ["f.parquet"] * 3
    assert out.column("_hoodie_record_key").to_pylist() == ["3", "1", "2"]
    assert all(out.schema.field(c).type == pa.string() for c in out.column_names[:5])
    assert _with_meta_columns(batch.slice(0, 0), spec, "", "", 0, 0).num_rows == 0
