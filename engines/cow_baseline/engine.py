"""The copy-on-write small-file baseline: Hudi's default insert path (hudi-semantics.md §7).

Per batch: count inserts per partition; estimate the average record size from the newest commit
that wrote more than the small-file limit (else ``record_size_estimate``); assign inserts with
:func:`engines.cow_baseline.assign.assign_inserts`; rewrite every chosen small file in full, old
rows plus its share of the inserts, as a new slice of the same file group (HoodieMergeHandle /
ConcatHandle for inserts); write the rest as new file groups; commit once. Rows are routed to
buckets by record-key order within the partition (Hudi hashes keys; the bucket sizes are the same,
the choice of rows is deterministic here). Older slices stay for the cleaner
(KEEP_LATEST_COMMITS). ``operation="bulk_insert"`` skips sizing entirely (reference point).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from engines.base import MaintenanceResult, TableEngine, clean_result
from engines.cow_baseline.assign import InsertBucket, assign_inserts, average_record_size
from engines.cow_baseline.config import CowConfig
from engines.spark.arrow_compat import arrow_schema_of
from engines.spark.arrow_rewrite import inspect_inputs
from engines.spark.batch_stats import partition_counts
from engines.spark.group_write import write_groups
from engines.spark.insert import insert_new_file_groups, write_spec_for
from engines.spark.rewrite import NO_ROLL, read_files, rewrite
from engines.spark.session import get_spark
from engines.table import faults
from engines.table.cleaner import run_clean
from engines.table.model import META_COLUMNS, FileSlice, WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.sizes import CLEANER_COMMITS_RETAINED, ROW_GROUP_ROWS
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, REPLACE
from engines.table.transaction import CommitResult, commit_write


@dataclass
class CowEngineConfig:
    planner: CowConfig = field(default_factory=CowConfig)
    operation: Literal["insert", "bulk_insert"] = "insert"
    row_group_rows: int = ROW_GROUP_ROWS
    cleaner_commits_retained: int = CLEANER_COMMITS_RETAINED
    auto_clean: bool = True
    mode: str = "manual"


class CowBaselineEngine(TableEngine):
    """Baseline engine; its "table service" is the cleaner (the merge happens at ingest)."""

    writes_batches_once = False

    def __init__(self, table: HudiTable, config: CowEngineConfig, name: str | None = None,
                 on_step: faults.StepHook = None) -> None:
        self.table = table
        self.config = config
        self.name = name or ("baseline" if config.operation == "insert" else "baseline_bulk_insert")
        self.on_step = on_step

    def _avg_record_size(self) -> int:
        timeline = self.table.refresh()
        history = []
        for inst in reversed(timeline.completed([COMMIT, REPLACE])):
            meta = self.table.commit_metadata(inst)
            history.append((meta.bytes_written, meta.records_written))
        return average_record_size(history, self.config.planner)

    def ingest(self, df: DataFrame) -> CommitResult:
        cfg = self.config.planner
        if self.config.operation == "bulk_insert":
            return insert_new_file_groups(self.table, df, operation="BULK_INSERT", target_file_bytes=cfg.max_file_size,
                                          row_group_rows=self.config.row_group_rows, on_step=self.on_step)
        table = self.table
        schema = arrow_schema_of(df)
        check_compatible(table.latest_schema(), schema, "the batch")
        part_col = table.partition_fields[0]
        counts = {table.partition_path(v): n for v, n in partition_counts(df, part_col).items()}
        if not counts:
            from engines.table.transaction import EmptyBatchError

            raise EmptyBatchError("the batch is empty: nothing to insert (no instant was created)")
        spark = get_spark()
        stats_columns = [f.name for f in schema]
        with table.lock:
            view = table.view()
            live = view.snapshot()
            by_partition: dict[str, list[FileSlice]] = {}
            for s in live:
                by_partition.setdefault(s.partition, []).append(s)
            buckets = assign_inserts(by_partition, counts, self._avg_record_size(), cfg,
                                     set(view.pending_clustering_file_groups()))
            instant = table.start(COMMIT)
            stats = self._write_buckets(spark, buckets, df, instant.timestamp, stats_columns)
            faults.step("ingest.after_files_written", self.on_step)
            faults.step("ingest.before_complete", self.on_step)
            return commit_write(table, instant, stats, "INSERT", avro_schema_string(schema))

    def _write_buckets(self, spark: SparkSession, buckets: list[InsertBucket], df: DataFrame, instant: str,
                       stats_columns: list[str]) -> list[WriteStat]:
        """Every bucket in one Spark job (:func:`engines.spark.group_write.write_groups`): bucket ``i`` gets
        the batch rows ranked ``[lo, lo + num_records)`` by record key in its partition, plus the rows of
        its small file; it is written as one file, sorted by record key, as a one-bucket job would."""
        table = self.table
        part_col, key = table.partition_fields[0], table.record_key
        bases = {i: b.base_slice for i, b in enumerate(buckets) if b.base_slice is not None}
        if bases and inspect_inputs(table.storage, list(bases.values()), True) is None:
            return self._write_buckets_one_by_one(spark, buckets, df, instant, stats_columns)
        prefix = f"{part_col}=" if table.hive_style else ""
        cases, offsets = [], {}
        for i, b in enumerate(buckets):
            lo = offsets.get(b.partition, 0)
            offsets[b.partition] = lo + b.num_records
            cases.append(f"WHEN {_sql_name(part_col)} = {_sql_string(b.partition[len(prefix):])} "
                         f"AND _rk >= {lo} AND _rk < {lo + b.num_records} THEN {i}")
        rows = (df.withColumn("_rk", F.row_number().over(Window.partitionBy(part_col).orderBy(key)) - 1)
                .withColumn("_b", F.expr(f"CASE {' '.join(cases)} END")).drop("_rk"))
        new_schema = arrow_schema_of(rows.drop("_b"))
        merged, base_schema = rows, new_schema
        if bases:
            files = " ".join(f"WHEN {_sql_string(s.file_name)} THEN {i}" for i, s in bases.items())
            old = read_files(spark, table.storage, list(bases.values()), keep_meta=True)
            old = old.withColumn("_b", F.expr(f"CASE _hoodie_file_name {files} END"))
            old = old.drop(*[c for c in META_COLUMNS if c in old.columns])
            merged = old.unionByName(rows, allowMissingColumns=True)
            base_schema = arrow_schema_of(merged.drop("_b"))
        specs = [write_spec_for(table, instant, row_group_rows=self.config.row_group_rows, stats_columns=stats_columns,
                                file_id_override=b.file_id, file_id_prefix=f"bucket-{i}", target_file_bytes=NO_ROLL)
                 for i, b in enumerate(buckets)]
        schemas = [base_schema if i in bases else new_schema for i in range(len(buckets))]
        written = write_groups(merged, "_b", specs, schemas, [key], fault_point="ingest.mid_write")
        return [s for b, out in zip(buckets, written, strict=True) for s in _bucket_stats(b, out)]

    def _write_buckets_one_by_one(self, spark: SparkSession, buckets: list[InsertBucket], df: DataFrame,
                                  instant: str, stats_columns: list[str]) -> list[WriteStat]:
        """One Spark job per bucket: small files whose schemas differ, or that pyarrow did not write."""
        table = self.table
        part_col, key = table.partition_fields[0], table.record_key
        ranked = df.withColumn("_rk", F.row_number().over(Window.partitionBy(part_col).orderBy(key)) - 1).cache()
        stats: list[WriteStat] = []
        offsets: dict[str, int] = {}
        prefix = f"{part_col}=" if table.hive_style else ""
        for i, b in enumerate(buckets):
            lo = offsets.get(b.partition, 0)
            offsets[b.partition] = lo + b.num_records
            value = b.partition[len(prefix):]
            rows = ranked.where((F.col(part_col) == value) & (F.col("_rk") >= lo)
                                & (F.col("_rk") < lo + b.num_records)).drop("_rk")
            spec = write_spec_for(table, instant, row_group_rows=self.config.row_group_rows,
                                  stats_columns=stats_columns, file_id_override=b.file_id, file_id_prefix=f"bucket-{i}")
            base = [b.base_slice] if b.base_slice is not None else []
            stats += _bucket_stats(b, rewrite(spark, table.storage, base, spec, 1, extra=rows,
                                              fault_point="ingest.mid_write"))
        ranked.unpersist()
        return stats

    def after_commit(self) -> list[MaintenanceResult]:
        if not self.config.auto_clean:
            return []
        res = self.clean()
        return [res] if res is not None else []

    def clean(self) -> MaintenanceResult | None:
        res = run_clean(self.table, self.config.cleaner_commits_retained)
        return clean_result(res)

def _bucket_stats(bucket: InsertBucket, out: list[WriteStat]) -> list[WriteStat]:
    """A bucket's write stats as Hudi records them: the previous slice, and inserts into a small file."""
    for s in out:
        s.prev_commit = bucket.base_slice.instant if bucket.base_slice else "null"
        if bucket.base_slice is not None:
            s.num_update_writes = 0
            s.num_inserts = bucket.num_records
    return out


def _sql_name(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
