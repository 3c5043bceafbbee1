"""The Spark job wrapper of an insert into new file groups: the gate's route (the driver or Spark tasks) and
the write job; the commit around it is :mod:`engines.files.insert_commit`."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engines.config.registry import PARQUET_MAX_FILE_SIZE, ROW_GROUP_ROWS
from engines.files.gate import insert_needs_count, insert_route, record_route
from engines.files.insert_commit import check_batch, commit_new_file_groups
from engines.files.writer import WriteSpec
from engines.spark.arrow_compat import arrow_schema_of
from engines.spark.batch_stats import cached_row_count, known_partition_counts, partition_counts
from engines.spark.local_write import write_locally
from engines.spark.writer import write_dataframe
from engines.table import faults
from engines.table.model import WriteStat
from engines.table.table import HudiTable
from engines.table.transaction import CommitResult


def insert_new_file_groups(
    table: HudiTable,
    df: DataFrame,
    operation: str = "INSERT",
    target_file_bytes: int = PARQUET_MAX_FILE_SIZE,
    row_group_rows: int = ROW_GROUP_ROWS,
    sort_columns: list[str] | None = None,
    stats_columns: list[str] | None = None,
    num_tasks: int | None = None,
    extra: dict[str, str] | None = None,
    on_step: faults.StepHook = None,
) -> CommitResult:
    """Write ``df`` as new file groups (one per partition value per task, rolled at target size).

    ``num_tasks`` defaults to the number of partition values (:func:`partition_counts`: one Spark job
    unless the runner counted the cached batch already, or the batch is small and cached: then they
    are counted in the rows the write fetches)."""
    schema = arrow_schema_of(df)
    check_batch(table, schema)
    partition_col = table.partition_fields[0]
    # a small batch is written in the driver, as the job's tasks would write it (engines.spark.local_write,
    # engines.files.gate);
    # its size from the runner's counts or the cache's own, its tasks then from the rows it fetches
    string_parts = partition_col in schema.names and pa.types.is_string(schema.field(partition_col).type)
    counts = known_partition_counts(df, partition_col)
    rows = sum(counts.values()) if counts is not None else cached_row_count(df) if string_parts else None
    if counts is None and insert_needs_count(rows, num_tasks):
        counts = partition_counts(df, partition_col)  # one Spark job
        rows = sum(counts.values())
    n = num_tasks or (max(1, len(counts)) if counts is not None else None)
    route = record_route("insert", insert_route(rows, n, string_parts), table.base_uri)
    order = [partition_col, *(sort_columns or [table.record_key])]

    def write(spec: WriteSpec) -> list[WriteStat]:
        if route.in_driver:
            return write_locally(df, order, spec, "ingest.mid_write", num_tasks=n,
                                 unique_order=table.record_key in order)
        spread = df.coalesce(1) if n == 1 else df.repartition(n, F.col(partition_col))  # n is known here
        return write_dataframe(spread.sortWithinPartitions(*order), spec, fault_point="ingest.mid_write")

    return commit_new_file_groups(
        table, schema, write, operation, extra, on_step, target_file_bytes=target_file_bytes,
        row_group_rows=row_group_rows,
        stats_columns=list(stats_columns if stats_columns is not None else [c.name for c in schema]))
