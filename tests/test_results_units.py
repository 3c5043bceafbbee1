"""Every results column has a unit, and docs/results.md is generated from them."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_every_sweep_axis_and_criterion_has_a_unit() -> None:
    from bench.simulate.production_map import PARAMETERS as FAST_PARAMETERS
    from bench.simulate.sweep import PARAMETERS
    from runresults import SWEEP_CRITERIA
    from runresults.units import SWEEP_UNITS

    missing = sorted({*PARAMETERS, *FAST_PARAMETERS, *SWEEP_CRITERIA} - set(SWEEP_UNITS))
    assert not missing, f"sweep columns without a unit (runresults/units.py SWEEP_UNITS): {missing}"
    assert "## `sweep.parquet`" in DOC.read_text()


@pytest.mark.parametrize("fast", [False, True])
def test_every_column_a_real_sweep_writes_has_a_unit(tmp_path: Path, fast: bool) -> None:
    """A real sweep through the CLI, the full simulator's and the fast path's: every column of its
    sweep.parquet is documented with a unit."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from bench.cli import app
    from runresults import SWEEP_TABLE
    from runresults.units import SWEEP_UNITS

    repo, sweeps = DOC.parents[1], DOC.parents[1] / "bench" / "sweeps"
    path = tmp_path / "s.yaml"
    if fast:
        path.write_text(f"name: units_fast\nbase: {repo / 'bench' / 'scenarios' / 'production_base.yaml'}\n"
                        f"method: fast\ncalibration: {sweeps / 'sweep_base_calibration.json'}\n"
                        f"store_calibration: {sweeps / 's3_calibration.json'}\nreplay_cap: 48\nparameters:\n"
                        "  small_file_limit_mb: [32, 100]\n  store: [local, s3]\naxes: [small_file_limit_mb, store]\n")
    else:
        path.write_text((sweeps / "tiny.yaml").read_text().replace("../scenarios/", f"{repo / 'bench' / 'scenarios'}/")
                        .replace("sweep_tiny_calibration.json", str(sweeps / "sweep_tiny_calibration.json")))
    res = CliRunner().invoke(app, ["sweep", str(path), "--out", str(tmp_path), "--workers", "1"])
    assert res.exit_code == 0, res.output
    folder = Path(res.output.strip().splitlines()[-1])
    columns = pq.read_schema(folder / SWEEP_TABLE).names
    assert not [c for c in columns if c not in SWEEP_UNITS], columns
