"""Ground truth: what the table must contain after each batch, to verify every query result and
detect lost or duplicated rows.

The key checksum is order-independent: the sum (mod 2**64) and the xor of the 64-bit hash that
prefixes every ``trace_id``, plus the row count — a lost row changes all three, a duplicated row
changes the sum and the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc

from workloads.generator import batch_deletes_table, batch_table, batch_updates_table
from workloads.spec import WorkloadSpec

_MASK = (1 << 64) - 1


def key_hashes(keys: pa.ChunkedArray | pa.Array) -> list[int]:
    return [int(k[:16], 16) for k in keys.to_pylist()]


def _counts(col: pa.ChunkedArray) -> dict[str, int]:
    return {d["values"]: d["counts"] for d in pc.value_counts(col).to_pylist()}


@dataclass
class GroundTruth:
    rows: int = 0
    by_partition: dict[str, int] = field(default_factory=dict)
    by_service: dict[str, int] = field(default_factory=dict)
    by_level: dict[str, int] = field(default_factory=dict)
    key_sum: int = 0
    key_xor: int = 0
    ts_range_by_partition: dict[str, tuple[datetime, datetime]] = field(default_factory=dict)

    @property
    def key_checksum(self) -> tuple[int, int, int]:
        return (self.rows, self.key_sum, self.key_xor)

    @classmethod
    def of_table(cls, tbl: pa.Table, partition_column: str = "dt") -> GroundTruth:
        hashes = key_hashes(tbl.column("trace_id"))
        xor = 0
        for h in hashes:
            xor ^= h
        ranges: dict[str, tuple[datetime, datetime]] = {}
        if tbl.num_rows:
            grouped = tbl.group_by(partition_column).aggregate([("ts", "min"), ("ts", "max")])
            for p, lo, hi in zip(grouped.column(partition_column).to_pylist(), grouped.column("ts_min").to_pylist(),
                                 grouped.column("ts_max").to_pylist(), strict=True):
                ranges[p] = (lo, hi)
        return cls(tbl.num_rows, _counts(tbl.column(partition_column)), _counts(tbl.column("service")),
                   _counts(tbl.column("level")), sum(hashes) & _MASK, xor, ranges)

    @classmethod
    def of_df(cls, df, partition_column: str = "dt") -> GroundTruth:  # noqa: ANN001
        """The same figures computed in Spark (for verifying a table read through Spark)."""
        from engines.spark.arrow_compat import to_arrow

        return cls.of_table(to_arrow(df.select("ts", partition_column, "service", "level", "trace_id")),
                            partition_column)

    def merge(self, other: GroundTruth) -> GroundTruth:
        def add(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
            return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(a.keys() | b.keys())}

        ranges = dict(self.ts_range_by_partition)
        for p, (lo, hi) in other.ts_range_by_partition.items():
            cur = ranges.get(p)
            ranges[p] = (lo, hi) if cur is None else (min(cur[0], lo), max(cur[1], hi))
        return GroundTruth(self.rows + other.rows, add(self.by_partition, other.by_partition),
                           add(self.by_service, other.by_service), add(self.by_level, other.by_level),
                           (self.key_sum + other.key_sum) & _MASK, self.key_xor ^ other.key_xor, ranges)


def corrections_of(spec: WorkloadSpec, b: int) -> pa.Table:
    """The updates batch ``b`` carries (earlier keys with corrected values), the one definition the
    runner's upsert commit, the stream's update files and the ground truth share; empty without
    ``update_fraction``."""
    return batch_updates_table(spec, b)


def apply_corrections(current: pa.Table, spec: WorkloadSpec, b: int) -> pa.Table:
    """``current`` (the rows after batch ``b``'s inserts) with batch ``b``'s updates and deletes applied:
    an updated key's row is replaced by its corrected row, a deleted key's row dropped."""
    if b == 0 or (spec.corrections_fraction <= 0 and spec.delete_fraction <= 0):
        return current
    upd, dele = corrections_of(spec, b), batch_deletes_table(spec, b)
    drop = pa.concat_arrays([upd.column("trace_id").combine_chunks(), dele.column("trace_id").combine_chunks()])
    if len(drop):
        current = current.filter(pc.invert(pc.is_in(current.column("trace_id"), value_set=drop)))
    if upd.num_rows:
        current = pa.concat_tables([current, upd.select(current.schema.names).cast(current.schema)])
    return current


def expected_table(spec: WorkloadSpec, upto_batch: int) -> pa.Table:
    """Rows the table must hold after batches ``0..upto_batch``, updates and deletes applied."""
    current = batch_table(spec, 0)
    for b in range(1, upto_batch + 1):
        current = apply_corrections(pa.concat_tables([current, batch_table(spec, b)]), spec, b)
    return current


def cumulative_truth(spec: WorkloadSpec, upto_batch: int) -> GroundTruth:
    return GroundTruth.of_table(expected_table(spec, upto_batch), spec.partition_column)
