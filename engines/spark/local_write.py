"""A small batch written in this process exactly as the Spark tasks of its write job would write it.

An ingest of a batch of a few MB spends most of its time on fixed costs of the write job, not on
writing: the task's Python worker round trip alone costs more than writing 1 MB of Parquet. So a
small batch is ordered by Spark as the job would order it (one partition, sorted within it), fetched
to the driver as Arrow in one job without a Python worker, and written here: each row goes to the
task ``repartition(num_tasks, partition column)`` sends it to (:mod:`engines.spark.hash_partitioning`),
each task's rows are cut into the Arrow batches ``mapInArrow`` would hand it (which decide the row
groups), and each task writes with its index and attempt 0. Same files, names and bytes as
:func:`engines.spark.writer.write_dataframe` over ``repartition(num_tasks, col).sortWithinPartitions``
(or ``coalesce(1)`` for one task). The same reasoning as the local rewrites of
:mod:`engines.spark.arrow_rewrite`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from engines.spark.arrow_compat import arrow_batch_rows, to_arrow
from engines.spark.arrow_rewrite import rebatch, sortable
from engines.spark.batch_stats import known_rows
from engines.spark.hash_partitioning import hash_partition
from engines.spark.splits import sort_indices
from engines.spark.writer import WriteSpec, run_write_job, write_partition_rows
from engines.table.model import WriteStat

# At most this many rows a batch is written in the driver. Sized like arrow_rewrite.LOCAL_BYTES: the
# driver then holds no more than a sorting task would (the benchmark's log rows take ~280 bytes in
# Arrow: 100k rows ~ 28 MB, ~10 MB of Parquet).
LOCAL_ROWS = 100_000


def is_small(rows: int) -> bool:
    """Whether a write of ``rows`` rows is small enough to run in the driver."""
    return rows <= LOCAL_ROWS


def _task_of_rows(parts: pa.ChunkedArray, num_tasks: int) -> pa.Array:
    """The task index of every row (hash partitioning of its partition value)."""
    values = pc.unique(parts)
    tasks = pa.array([hash_partition(v, num_tasks) for v in values.to_pylist()], pa.int32())
    return pc.take(tasks, pc.index_in(parts, value_set=values))


def write_locally(df: DataFrame, order: Sequence[str], spec: WriteSpec, fault_point: str | None = None,
                  num_tasks: int | None = 1, unique_order: bool = False) -> list[WriteStat]:
    """Write the rows of ``df`` as the ``num_tasks`` tasks of ``repartition(num_tasks, partition column)
    .sortWithinPartitions(*order)`` would (module docstring; ``order`` starts with the partition column;
    None: one task per partition value, nulls included, as the insert spreads a batch); the write
    stats, sorted by path. The rows ordered by Spark and fetched as Arrow in one job; or, when the
    driver holds ``df``'s rows (:func:`engines.spark.batch_stats.known_rows`) and ``unique_order``
    says no two rows tie on ``order`` (so any correct sort gives Spark's order), sorted here with no job."""
    batch_rows = arrow_batch_rows(df.sparkSession)

    def ordered_rows() -> pa.Table:
        known = known_rows(df)
        if known is not None and unique_order and sortable(known.schema, order):
            return known.take(sort_indices(known, order))
        return to_arrow(df.coalesce(1).sortWithinPartitions(*order))

    def job() -> list[WriteStat]:
        table = ordered_rows()
        if table.num_rows == 0:
            return []
        stats: list[WriteStat] = []
        parts = table.column(spec.partition_column)
        n = num_tasks or max(1, len(pc.unique(parts)))
        if n == 1:
            per_task = [(0, table)]
        else:
            tasks = _task_of_rows(parts, n)
            per_task = [(t, table.filter(pc.equal(tasks, t))) for t in sorted(set(tasks.to_pylist()))]
        for task, rows in per_task:
            chunks = (t.combine_chunks() for t in rebatch([rows], batch_rows))
            stats += write_partition_rows(spec, chunks, task, 0)
        return stats

    return sorted(run_write_job(spec, fault_point, job), key=lambda s: s.path)
