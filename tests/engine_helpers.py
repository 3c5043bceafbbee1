"""Shared helpers for engine tests: tables, workloads, key reads, hudi-rs reads."""

from __future__ import annotations

from datetime import UTC, datetime

import hudi
import pyarrow as pa
import pyarrow.parquet as pq

from engines.table.table import HudiTable, TableConfig, logical_clock
from workloads.generator import batch_df, batch_table
from workloads.spec import WorkloadSpec


def new_table(path) -> HudiTable:
    return HudiTable.create(str(path), TableConfig("t", "dt", "trace_id"),
                            clock=logical_clock(datetime(2026, 1, 1, tzinfo=UTC)))


def spec(**kw) -> WorkloadSpec:
    base = {"seed": 5, "num_batches": 8, "batch_records": 2000, "num_partitions": 2}
    base.update(kw)
    return WorkloadSpec(**base)


def keys(table: HudiTable, slices=None) -> list[str]:
    out: list[str] = []
    for s in slices if slices is not None else table.view().snapshot():
        out += pq.read_table(table.storage.abs(s.path), columns=["_hoodie_record_key"]).column(0).to_pylist()
    return sorted(out)


def truth_keys(ws: WorkloadSpec, upto: int) -> list[str]:
    return sorted(k for b in range(upto + 1) for k in batch_table(ws, b).column("trace_id").to_pylist())


def hudi_keys(table: HudiTable, as_of: str | None = None) -> list[str]:
    t = hudi.HudiTableBuilder.from_base_uri(table.base_uri).build()
    opts = hudi.HudiReadOptions()
    if as_of:
        opts = opts.with_as_of_timestamp(as_of)
    batches = t.read(opts)
    return sorted(pa.Table.from_batches(batches).column("_hoodie_record_key").to_pylist()) if batches else []


def ingest(spark, engine, ws: WorkloadSpec, batches: range) -> None:
    for b in batches:
        engine.ingest(batch_df(spark, ws, b))
