"""Spark <-> Arrow helpers that work on PySpark 3.5 (the minor Apache Hudi's bundle supports here)
and on 4.x: ``DataFrame.toArrow`` and ``to_arrow_schema``'s keyword arguments arrived in 4.0."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession


def arrow_schema_of(df: DataFrame) -> pa.Schema:
    """The Arrow schema of ``df``: timestamps as microseconds in UTC, strings as ``string``."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(df.schema, timezone="UTC", prefers_large_types=False)
    except TypeError:  # PySpark 3.5: no keywords, and it already maps timestamps to us/UTC
        return to_arrow_schema(df.schema)


def to_arrow(df: DataFrame) -> pa.Table:
    """Collect ``df`` to the driver as one Arrow table."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    schema = arrow_schema_of(df)
    batches = df._collect_as_arrow()  # PySpark 3.5's Arrow collect (what toArrow wraps in 4.x)
    return pa.Table.from_batches(batches, schema=schema) if batches else schema.empty_table()


DEFAULT_BATCH_ROWS = 10_000  # Spark's default spark.sql.execution.arrow.maxRecordsPerBatch


def arrow_batch_rows(spark: SparkSession) -> int:
    """Rows per Arrow batch ``mapInArrow`` hands a task (``spark.sql.execution.arrow.maxRecordsPerBatch``;
    0 or less: all the task's rows in one batch)."""
    rows = int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", str(DEFAULT_BATCH_ROWS)))
    return rows if rows > 0 else 1 << 62
