"""Many file groups in one Spark job, each written exactly as a one-task job of its rows alone would.

The COW baseline rewrites every small file it tops up as a new slice, plus new file groups: one
Spark job each used to cost a job's fixed cost per touched file group. Here rows carry their group
number (``group_column``); one job spreads the groups over the tasks, orders each task's rows by
(group, ``order``), and every task writes each of its groups with that group's :class:`WriteSpec`:
as task 0 (the index a one-partition job has), in Arrow batches of Spark's
``spark.sql.execution.arrow.maxRecordsPerBatch`` rows cut from the group's first row (the batches
``mapInArrow`` hands a one-partition job, which decide the row groups), and in the group's own Arrow
schema (column order, types and nullability of the DataFrame it used to be written from). So the
files, names and bytes are those of one job per group.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from engines.files.inputs import rebatch
from engines.files.writer import WriteSpec, write_partition_rows
from engines.spark.arrow_compat import arrow_batch_rows, to_arrow
from engines.spark.writer import STATS_SCHEMA, run_write_job
from engines.table.metadata import write_stat_from_json, write_stat_to_json
from engines.table.model import WriteStat


def _pieces(batches: Iterator[pa.RecordBatch], group_column: str) -> Iterator[tuple[int, pa.Table]]:
    """(group, rows) runs of a stream ordered by group."""
    for rb in batches:
        if rb.num_rows == 0:
            continue
        table = pa.Table.from_batches([rb])
        groups = table.column(group_column).combine_chunks()
        start = 0
        while start < table.num_rows:
            g = groups[start].as_py()
            # the run of g ends at the first row of a later group (rows are ordered by group)
            later = pc.greater(groups.slice(start), g)
            end = start + (pc.index(later, True).as_py() if pc.any(later).as_py() else table.num_rows - start)
            yield g, table.slice(start, end - start).drop_columns([group_column])
            start = end


def write_groups(df: DataFrame, group_column: str, specs: Sequence[WriteSpec], schemas: Sequence[pa.Schema],
                 order: Sequence[str], fault_point: str | None = None, local: bool = False) -> list[list[WriteStat]]:
    """Write group ``g`` of ``df`` (rows whose integer ``group_column`` is ``g``), ordered by ``order``,
    with ``specs[g]`` in the Arrow schema ``schemas[g]``; the write stats of each group, sorted by path.

    ``local``: a small input, written in the driver (:mod:`engines.spark.local_write`): its rows,
    ordered in one partition, fetched as Arrow in a job without a Python worker, then each group
    written exactly as a task writes it (a group's batches are cut from its first row whatever
    batches arrive, and every group is written as task 0), so the files and bytes are the same.
    ``fault_point``: the crash point inside the job (:func:`engines.spark.writer.run_write_job`)."""
    from pyspark import TaskContext

    if not specs:
        return []
    spark = df.sparkSession
    batch_rows = arrow_batch_rows(spark)
    tasks = 1 if local else max(1, min(len(specs), spark.sparkContext.defaultParallelism))
    spread = df.coalesce(1) if local else df.repartition(tasks, group_column)
    ordered = spread.sortWithinPartitions(group_column, *order)
    specs, schemas = list(specs), list(schemas)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx else 0
        payload = []
        for g, runs in itertools.groupby(_pieces(batches, group_column), key=lambda p: p[0]):
            schema = schemas[g]
            tables = (t.select(schema.names).cast(schema) for _, t in runs)
            # one chunk per batch, as Spark hands it: chunk boundaries move Parquet page boundaries
            for s in write_partition_rows(specs[g], (t.combine_chunks() for t in rebatch(tables, batch_rows)),
                                          0, attempt):
                payload.append(json.dumps({"group": g, "stat": write_stat_to_json(s)}))
        yield pa.RecordBatch.from_arrays([pa.array(payload, pa.string())], names=["stat"])

    def job() -> list[str]:
        if local:  # run's attempt is 0 outside a task
            return [p for b in run(iter(to_arrow(ordered).to_batches())) for p in b.column(0).to_pylist()]
        return [row["stat"] for row in ordered.mapInArrow(run, STATS_SCHEMA).collect()]

    out: list[list[WriteStat]] = [[] for _ in specs]
    for payload in run_write_job(specs[0], fault_point, job):
        d = json.loads(payload)
        out[d["group"]].append(write_stat_from_json(d["stat"], d["stat"].get("partitionPath", "")))
    return [sorted(stats, key=lambda s: s.path) for stats in out]
