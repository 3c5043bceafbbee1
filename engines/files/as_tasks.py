"""Rows written as the tasks of ``repartition(n, partition column)`` would write them, without Spark.

Each row goes to the task Spark's hash partitioning sends it to (:mod:`engines.files.hash_partitioning`),
each task's rows are cut into the Arrow batches ``mapInArrow`` would hand it (which decide the row groups),
and each task writes with its index and attempt 0: the files, names and bytes of the Spark job.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from engines.files.hash_partitioning import hash_partition
from engines.files.inputs import rebatch
from engines.files.writer import WriteSpec, write_partition_rows
from engines.table.model import WriteStat


def task_of_rows(parts: pa.ChunkedArray, num_tasks: int) -> pa.Array:
    """The task index of every row (hash partitioning of its partition value)."""
    values = pc.unique(parts)
    tasks = pa.array([hash_partition(v, num_tasks) for v in values.to_pylist()], pa.int32())
    return pc.take(tasks, pc.index_in(parts, value_set=values))


def write_as_tasks(table: pa.Table, spec: WriteSpec, num_tasks: int | None, batch_rows: int) -> list[WriteStat]:
    """Write ``table`` (its rows in each task's order) as ``num_tasks`` hash-partitioned tasks would (None:
    one task per partition value, nulls included), in Arrow batches of ``batch_rows`` rows."""
    if table.num_rows == 0:
        return []
    stats: list[WriteStat] = []
    parts = table.column(spec.partition_column)
    n = num_tasks or max(1, len(pc.unique(parts)))
    if n == 1:
        per_task = [(0, table)]
    else:
        tasks = task_of_rows(parts, n)
        per_task = [(t, table.filter(pc.equal(tasks, t))) for t in sorted(set(tasks.to_pylist()))]
    for task, rows in per_task:
        chunks = (t.combine_chunks() for t in rebatch([rows], batch_rows))
        stats += write_partition_rows(spec, chunks, task, 0)
    return stats
