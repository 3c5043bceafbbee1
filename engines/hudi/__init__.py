"""Apache Hudi itself through its Spark datasource: the real COW baseline and the real clustering."""
