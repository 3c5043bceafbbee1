"""Writing Parquet base files without Spark: the write spec and writer, input inspection and reading, the
rewrite tasks, splits, Spark's hash partitioning, the curve orderings, and the one gate that picks the
driver or Spark tasks for a job. Pure pyarrow: no module here imports pyspark or an engine package."""
