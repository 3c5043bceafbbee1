"""Orderings (pure): z-order bit interleave, Hilbert (Skilling) locality and bijection, scaling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.files.ordering import (
    bits_per_dimension,
    curve_key,
    effective_ordering,
    hilbert_key,
    interleave,
    scale_to_bits,
)


def grid(d: int, bits: int) -> np.ndarray:
    return np.array(np.meshgrid(*[np.arange(1 << bits)] * d, indexing="ij")).reshape(d, -1).astype(np.uint64)


def test_zorder_interleaves_bits_first_column_most_significant() -> None:
    x, y = np.array([0b11, 0b01, 0b10], np.uint64), np.array([0b00, 0b10, 0b01], np.uint64)
    # bits (x1 y1 x0 y0)
    assert interleave([x, y], 2).tolist() == [0b1010, 0b0110, 0b1001]


@pytest.mark.parametrize("d,bits", [(2, 1), (2, 3), (2, 5), (3, 3), (4, 2)])
def test_hilbert_is_a_bijection_with_unit_steps(d: int, bits: int) -> None:
    g = grid(d, bits)
    h = hilbert_key(list(g), bits)
    assert sorted(h.tolist()) == list(range((1 << bits) ** d))
    path = g[:, np.argsort(h)].astype(np.int64)
    assert set(np.abs(np.diff(path, axis=1)).sum(axis=0).tolist()) == {1}  # every step moves to a neighbour


def test_hilbert_2d_order_2_known_sequence() -> None:
    g = grid(2, 1)
    assert [tuple(p) for p in g[:, np.argsort(hilbert_key(list(g), 1))].T.tolist()] == [(0, 0), (0, 1), (1, 1), (1, 0)]


def test_keys_fit_63_bits() -> None:
    for d in (2, 3, 5):
        bits = bits_per_dimension(d)
        top = [np.array([(1 << bits) - 1], np.uint64)] * d
        for curve in ("zorder", "hilbert"):
            assert int(curve_key(top, curve, bits)[0]) < 1 << 63


@given(st.lists(st.floats(-1e9, 1e9, allow_nan=False), min_size=2, max_size=50))
def test_scaling_preserves_order(values: list[float]) -> None:
    v = np.array(values)
    s = scale_to_bits(v, float(v.min()), float(v.max()), 20)
    order = np.argsort(v, kind="stable")
    assert np.all(np.diff(s[order].astype(np.int64)) >= 0)


def test_effective_ordering() -> None:
    assert effective_ordering(None, ()) == "none"
    assert effective_ordering(None, ("a",)) == "linear"
    assert effective_ordering("zorder", ("a",)) == "linear"  # one column: a curve is a linear sort
    assert effective_ordering("hilbert", ("a", "b")) == "hilbert"
    with pytest.raises(ValueError, match="unknown ordering"):
        effective_ordering("zz", ("a",))
