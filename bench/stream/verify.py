"""The stream's ground truth and its key check: every landed key in the live snapshot exactly once.

Shared by the fixed-rate run (``bench.stream.run``) and the kill test (``bench.stream.killtest``);
a leaf of ``bench.stream``: it imports neither.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bench.scenario import Scenario
from bench.stream.landing import batch_rows, update_of


def truth_of(scenario: Scenario, names: list[str]) -> pa.Table:
    """Ground truth: the rows of every landed generator file, then the landed update files' rows
    in place of the rows they correct (same key), in landing order."""
    def rows(n: str) -> pa.Table:
        return batch_rows(scenario.workload, n, scenario.stream.retention_hours)

    table = pa.concat_tables([rows(n) for n in names if update_of(n) is None])
    for n in names:
        if update_of(n) is not None:
            upd = rows(n)
            kept = table.filter(pc.invert(pc.is_in(table.column("trace_id"), value_set=upd.column("trace_id"))))
            table = pa.concat_tables([kept, upd.select(kept.schema.names).cast(kept.schema)])
    return table


def key_check(engine: Any, truth: pa.Table) -> dict[str, int]:
    """Every ground-truth key in the live snapshot exactly once: rows lost and rows duplicated."""
    probe = engine.probe()
    keys: list[str] = []
    for s in probe.snapshot():
        keys += pq.read_table(probe.storage.abs(s.path), columns=["trace_id"]).column(0).to_pylist()
    want = set(truth.column("trace_id").to_pylist())
    got = set(keys)
    return {"rows": len(keys), "rows_lost": len(want - got), "rows_duplicated": len(keys) - len(got),
            "rows_unexpected": len(got - want)}
