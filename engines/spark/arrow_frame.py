"""A Spark DataFrame of one partition over an Arrow table the driver already holds.

The runner generates every batch on the driver for its ground truth. Generating it a second time
inside Spark tasks (:func:`workloads.generator.batch_df`) costs a Python-worker job per batch
(about 0.1 s, more than the rows' generation). Handed over as Arrow instead, the rows become a
``LocalRelation``: no Python worker, and the cache fill is a JVM-only job. One partition, rows in
table order: the same partitioning and order as ``batch_df`` for a batch that fits one generating
task, so every engine's plan and output are those of the Spark-generated batch.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema


def frame_from_arrow(spark: SparkSession, table: pa.Table) -> DataFrame:
    """``table`` as a DataFrame of one partition in row order (Arrow-enabled ``createDataFrame``,
    then ``coalesce(1)``: Spark spreads a local relation over the default parallelism)."""
    return spark.createDataFrame(table.to_pandas(), schema=from_arrow_schema(table.schema)).coalesce(1)
