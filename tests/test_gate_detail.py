"""A gate's detail, which the answer quotes, is kept short by whole clauses, never cut inside one."""

from __future__ import annotations

import pandas as pd

from runresults.review.gates import DETAIL_CHARS, _from_rows, whole_clauses


def test_details_are_kept_by_whole_clauses_and_the_dropped_ones_counted() -> None:
    pulls = "; ".join(f"from 2026010100000000{i}: {1500 * i} re-emitted, 0 missing" for i in range(1, 9))
    detail = f"every instant from the hudi_rs snapshot: 7 of 8 pulls wrong; its own incremental query {pulls}"
    text = whole_clauses([detail], DETAIL_CHARS)
    shown, more = text.rsplit(" (", 1)
    assert more.endswith("more clauses not shown)")
    kept = shown.split("; ")
    assert all(c in detail.split("; ") for c in kept), "a clause was cut"
    assert len(kept) + int(more.split(" ")[0]) == len(detail.split("; "))
    assert len(shown) <= DETAIL_CHARS


def test_a_short_detail_is_whole_and_a_long_first_clause_is_not_cut() -> None:
    assert whole_clauses(["a; b", "a; b", "c"], 300) == "a; b; c"
    long = "x" * 400
    assert whole_clauses([long, "y"], 300) == long + " (1 more clause not shown)"


def test_the_gate_result_carries_whole_clauses() -> None:
    rows = pd.DataFrame({"reader": ["hudi_rs"], "passed": [False], "checked": [9], "failures": [8],
                         "figure": [9000.0], "figure_unit": ["rows"],
                         "detail": ["; ".join(f"from {i:017d}: {i} re-emitted, 0 missing" for i in range(40))]})
    got = _from_rows("incremental", rows).detail
    assert got.endswith("more clauses not shown)") and "from 00000000000000000: 0 re-emitted, 0 missing" in got
    assert all(c.startswith("from ") and c.endswith("missing") for c in got.rsplit(" (", 1)[0].split("; "))
