"""Snapshot read of a MERGE_ON_READ table on Spark: slices without log files read as Parquet (pruned
by min/max, exactly as a COPY_ON_WRITE snapshot: :func:`engines.spark.reader.read_snapshot`), slices
with log files merged in the driver (:func:`engines.table.mor.merged_rows`: the logs over the base,
by record key and ordering field) and handed to Spark as Arrow, the two unioned by column name.

Why the merge runs in the driver: our Spark session has no Hudi reader of its own (the Apache Hudi
bundle is loaded only beside the ``hudi`` engine), and the table core's merge is the one hudi-rs and
Apache Hudi are checked against (tests/test_mor_core.py). Only slices with logs pay it; the merge is
inside the query's timed planning, because a reader of a MOR table pays it on every query.

A slice with logs is never pruned by its base file's min/max: a log update can move a row's value
outside the base file's range (Hudi prunes such slices only with column stats that cover the logs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from engines.spark.arrow_frame import frame_from_arrow
from engines.spark.reader import SnapshotScan, read_snapshot
from engines.table.logfile import CorruptBlock
from engines.table.model import FileSlice
from engines.table.mor import LogOverlay, merged_rows
from engines.table.pruning import Predicate
from engines.table.storage import Storage


@dataclass
class MergedScan(SnapshotScan):
    """A snapshot scan over a MOR table: the plain scan's figures plus the merged slices'."""

    log_files_merged: int = 0
    log_bytes_merged: int = 0
    corrupt: tuple[CorruptBlock, ...] = ()


def _base_schema(storage: Storage, slices: Sequence[FileSlice], overlay: LogOverlay) -> pa.Schema | None:
    """The Arrow schema of a base file of the snapshot (merged rows are cast to it), or None."""
    first = next((s for s in slices), None) or next((m.base for m in overlay.slices if m.base is not None), None)
    return storage.parquet_metadata(first.path).schema.to_arrow_schema() if first is not None else None


def read_merged_snapshot(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice],
                         overlay: LogOverlay | None, predicates: Iterable[Predicate] = ()) -> SnapshotScan:
    """The snapshot of ``slices`` with ``overlay``'s log files merged (module docstring); without an
    overlay (a COPY_ON_WRITE table, or no slice has logs) exactly :func:`read_snapshot`."""
    predicates = list(predicates)
    if overlay is None:
        return read_snapshot(spark, storage, slices, predicates)
    merged_groups = {s.file_group for s in overlay.slices}
    plain = [s for s in slices if s.file_group not in merged_groups]
    merged = merged_rows(overlay, _base_schema(storage, slices, overlay))
    frame = frame_from_arrow(spark, merged.rows)
    if plain:
        scan = read_snapshot(spark, storage, plain, predicates)
        if scan.files_scanned:
            # Parquet's Spark types win (the Arrow hand-over may type a column differently)
            fields = {f.name: f.dataType for f in frame.schema.fields}
            frame = frame.select(*[F.col(f.name).cast(f.dataType) if f.name in fields else
                                   F.lit(None).cast(f.dataType).alias(f.name) for f in scan.df.schema.fields])
            df: DataFrame = scan.df.unionByName(frame)
        else:
            df = frame
        kept, pruned = scan.scanned, scan.files_pruned
    else:
        df, kept, pruned = frame, [], 0
    with_base = [m.base for m in overlay.slices if m.base is not None]
    total = len(plain) + len(overlay.slices)
    return MergedScan(df, total, len(kept) + len(overlay.slices), pruned, [*kept, *with_base],
                      overlay.log_files, merged.log_bytes, tuple(merged.corrupt))


__all__ = ["MergedScan", "read_merged_snapshot"]
