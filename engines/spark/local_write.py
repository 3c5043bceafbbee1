"""A small batch written in this process exactly as the Spark tasks of its write job would write it.

An ingest of a batch of a few MB spends most of its time on fixed costs of the write job, not on
writing: the task's Python worker round trip alone costs more than writing 1 MB of Parquet. So a
small batch (:func:`engines.files.gate.choose_route`) is ordered by Spark as the job would order it
(one partition, sorted within it), fetched to the driver as Arrow in one job without a Python worker,
and written here as the job's tasks would write it (:func:`engines.files.as_tasks.write_as_tasks`).
Same files, names and bytes as :func:`engines.spark.writer.write_dataframe` over
``repartition(num_tasks, col).sortWithinPartitions`` (or ``coalesce(1)`` for one task). The same
reasoning as the local rewrites of :mod:`engines.spark.arrow_rewrite`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from pyspark.sql import DataFrame

from engines.files.as_tasks import write_as_tasks
from engines.files.inputs import sortable
from engines.files.job import run_write_job
from engines.files.splits import sort_indices
from engines.files.writer import WriteSpec
from engines.spark.arrow_compat import arrow_batch_rows, to_arrow
from engines.spark.batch_stats import known_rows
from engines.table.model import WriteStat


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
        return write_as_tasks(ordered_rows(), spec, num_tasks, batch_rows)

    return sorted(run_write_job(spec, fault_point, job), key=lambda s: s.path)
