"""Every results column has a unit, and docs/results.md is generated from them."""

from __future__ import annotations

from pathlib import Path

from runresults import TABLES
from runresults.units import results_doc, unit_of

DOC = Path(__file__).resolve().parents[1] / "docs" / "results.md"


def test_every_column_of_every_table_has_a_unit() -> None:
    missing = []
    for table, schema in TABLES.items():
        for name in schema.names:
            try:
                assert unit_of(table, name)
            except KeyError:
                missing.append(f"{table}.{name}")
    assert not missing, f"columns without a unit (runresults/units.py): {missing}"


def test_docs_results_md_is_current() -> None:
    text = DOC.read_text()
    assert text == results_doc(), "regenerate: python -m runresults.units > docs/results.md"
    assert all(f"## `{t}`" in text for t in TABLES)
