"""Many file groups in one Spark job: every task gathers each of its groups' rows and hands them to one
writer function.

The COW baseline rewrites every small file it tops up as a new slice, plus new file groups: one
Spark job each used to cost a job's fixed cost per touched file group. Here rows carry their group
number (``group_column``); one job spreads the groups over the tasks, orders each task's rows by
(group, ``order``), and every task calls ``write_group(g, rows, attempt)`` on each of its groups, with the
group's rows as one Arrow table: the same function the driver calls when the job runs there
(:func:`engines.cow_baseline.bucket_write.write_bucket`), so the files, names and bytes are the same.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from engines.files.job import run_write_job
from engines.files.writer import WriteSpec
from engines.spark.writer import STATS_SCHEMA
from engines.table.metadata import write_stat_from_json, write_stat_to_json
from engines.table.model import WriteStat

# (group, its rows, the task attempt) -> the write stats of its files
GroupWriter = Callable[[int, pa.Table, int], list[WriteStat]]


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


def write_groups(df: DataFrame, group_column: str, num_groups: int, write_group: GroupWriter,
                 order: list[str], spec: WriteSpec, fault_point: str | None = None) -> list[list[WriteStat]]:
    """Write groups ``0..num_groups-1`` of ``df`` (rows whose integer ``group_column`` is ``g``) in one Spark
    job: each task calls ``write_group(g, rows, attempt)`` on each of its groups, ``rows`` ordered by
    ``order``; the write stats of each group. ``spec``: one of the groups' specs (the crash point watches
    its table and instant); ``fault_point``: the crash point inside the job
    (:func:`engines.files.job.run_write_job`)."""
    from pyspark import TaskContext

    if num_groups == 0:
        return []
    tasks = max(1, min(num_groups, df.sparkSession.sparkContext.defaultParallelism))
    ordered = df.repartition(tasks, group_column).sortWithinPartitions(group_column, *order)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ctx = TaskContext.get()
        attempt = ctx.attemptNumber() if ctx else 0
        payload = []
        for g, runs in itertools.groupby(_pieces(batches, group_column), key=lambda p: p[0]):
            for s in write_group(g, pa.concat_tables([t for _, t in runs]), attempt):
                payload.append(json.dumps({"group": g, "stat": write_stat_to_json(s)}))
        yield pa.RecordBatch.from_arrays([pa.array(payload, pa.string())], names=["stat"])

    out: list[list[WriteStat]] = [[] for _ in range(num_groups)]
    for row in run_write_job(spec, fault_point, lambda: ordered.mapInArrow(run, STATS_SCHEMA).collect()):
        d = json.loads(row["stat"])
        out[d["group"]].append(write_stat_from_json(d["stat"], d["stat"].get("partitionPath", "")))
    return [sorted(stats, key=lambda s: s.path) for stats in out]
