"""The simulator's columnar commits table (bench/simulate/commit_log.py) against the row path it
replaces: ``commit_row`` dicts with ``derive_cumulative`` applied, for a replay in estimated mode
(three designs, a horizon past the exact-mode limit) and one in exact mode."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from bench.scenario import load_scenario
from bench.simulate.costmodel import CostModel
from bench.simulate.simulator import RowSink, run_simulation
from runresults import TABLES, derive_cumulative

SCENARIOS = Path(__file__).resolve().parents[1] / "bench" / "scenarios"


@pytest.mark.parametrize(("name", "batches"), [("small.yaml", None), ("sim_year_hourly.yaml", 2400)])
def test_commit_table_is_the_rows_with_cumulative_columns(name: str, batches: int | None) -> None:
    done = run_simulation(load_scenario(SCENARIOS / name), CostModel(), horizon_batches=batches, sink=RowSink())
    rows = done.sink.rows["commits"]
    assert len(rows) == len(done.sim.commits) > 0
    derive_cumulative(done.sink, done.sim.commits.batch_bytes())
    expected = pa.table({c: [r.get(c, 0 if c == "repeat" else None) for r in rows] for c in TABLES["commits"].names},
                        schema=TABLES["commits"])
    got = done.sim.commits.table()
    assert got.schema.equals(TABLES["commits"])
    pd.testing.assert_frame_equal(got.to_pandas(), expected.to_pandas(), check_exact=True)
    assert (got.column("batch_bytes").to_pandas() > 0).any()  # the cumulative columns are exercised
