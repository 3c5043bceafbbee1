"""The minimal insert commit on Spark (new file groups) and the write spec of a table; the
transaction itself (commit point, leftovers) is ``engines.table.transaction``."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engines.config.registry import PARQUET_MAX_FILE_SIZE, ROW_GROUP_ROWS
from engines.files.gate import insert_needs_count, insert_route, record_route
from engines.files.writer import WriteSpec
from engines.spark.arrow_compat import arrow_schema_of
from engines.spark.batch_stats import cached_row_count, known_partition_counts, partition_counts
from engines.spark.local_write import write_locally
from engines.spark.writer import write_dataframe
from engines.table import faults
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write


def write_spec_for(table: HudiTable, instant: str, **overrides: object) -> WriteSpec:
    spec = WriteSpec(
        base_uri=table.base_uri,
        instant=instant,
        partition_column=table.partition_fields[0],
        record_key=table.record_key,
        hive_style=table.hive_style,
        bloom=table.bloom,
    )
    for key, value in overrides.items():
        setattr(spec, key, value)
    return spec


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
    table.check_writable()
    schema = arrow_schema_of(df)
    check_compatible(table.latest_schema(), schema, "the batch")
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
    with table.lock:
        instant = table.start(COMMIT)
        spec = write_spec_for(
            table, instant.timestamp, target_file_bytes=target_file_bytes, row_group_rows=row_group_rows,
            stats_columns=list(stats_columns if stats_columns is not None else [c.name for c in schema]),
        )
        if route.in_driver:
            stats = write_locally(df, order, spec, "ingest.mid_write", num_tasks=n,
                                  unique_order=table.record_key in order)
        else:
            spread = df.coalesce(1) if n == 1 else df.repartition(n, F.col(partition_col))  # n is known here
            stats = write_dataframe(spread.sortWithinPartitions(*order), spec, fault_point="ingest.mid_write")
        if not stats:
            table.refresh().delete_pending(instant)
            raise EmptyBatchError("the batch is empty: nothing to insert (the started instant was removed)")
        faults.step("ingest.after_files_written", on_step)
        faults.step("ingest.before_complete", on_step)
        return commit_write(table, instant, stats, operation, avro_schema_string(schema), extra=extra)
