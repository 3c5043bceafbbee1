"""Hudi's insert path: the UpsertPartitioner's buckets
(:func:`engines.cow_baseline.assign.assign_inserts`, pure) written as Hudi's handles write them.

Per batch: count inserts per partition; estimate the average record size from the newest completed
commit that wrote more than the threshold × small-file limit (commits only, as Hudi: a
replacecommit's clustering output would skew it), else the configured estimate; assign inserts
(small-file top-ups first, then new buckets of ``max_file_size // avg`` records); rewrite every
chosen small file in full, old rows plus its share of the inserts, as a new slice of the same file
group (HoodieMergeHandle / ConcatHandle for inserts: the old rows keep their ``_hoodie_commit_time`` and
``_hoodie_commit_seqno``, so an incremental pull sees only the new ones); write the rest as new file groups; commit
once. Rows are routed to buckets by record-key order within the partition (Hudi hashes keys; the
bucket sizes are the same, the choice of rows is deterministic here). The COW baseline uses it with
its small-file limit, Option 2's insert with limit 0 (new buckets only).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from engines.cow_baseline.assign import InsertBucket, assign_inserts, average_record_size, rank_ranges
from engines.cow_baseline.bucket_write import write_bucket
from engines.cow_baseline.config import CowConfig
from engines.cow_baseline.driver_merge import base_inputs, merge_in_driver
from engines.files.gate import record_route
from engines.files.inputs import Inputs, inspect_inputs
from engines.files.writer import KEPT_META, NO_ROLL, WriteSpec
from engines.spark.arrow_compat import arrow_batch_rows, arrow_schema_of
from engines.spark.batch_stats import partition_counts
from engines.spark.group_write import write_groups
from engines.spark.rewrite import read_files
from engines.spark.session import get_spark
from engines.table import faults
from engines.table.model import META_COLUMNS, FileSlice, WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write


def table_average_record_size(table: HudiTable, cfg: CowConfig) -> int:
    """Hudi's average record size for ``table``'s next insert: from its completed commits, newest first
    (UpsertPartitioner.averageBytesPerRecord reads the commit action only, never replacecommits)."""
    timeline = table.refresh()
    history = []
    for inst in reversed(timeline.completed([COMMIT])):
        meta = table.commit_metadata(inst)
        history.append((meta.bytes_written, meta.records_written))
    return average_record_size(history, cfg)


def insert_with_buckets(table: HudiTable, df: DataFrame, cfg: CowConfig, row_group_rows: int,
                        on_step: faults.StepHook = None) -> CommitResult:
    """One INSERT commit of ``df`` through Hudi's UpsertPartitioner (see the module docstring)."""
    table.check_writable()
    schema = arrow_schema_of(df)
    check_compatible(table.latest_schema(), schema, "the batch")
    part_col = table.partition_fields[0]
    counts = {table.partition_path(v): n for v, n in partition_counts(df, part_col).items()}
    if not counts:
        raise EmptyBatchError("the batch is empty: nothing to insert (no instant was created)")
    spark = get_spark()
    stats_columns = [f.name for f in schema]
    with table.lock:
        view = table.view()
        by_partition: dict[str, list[FileSlice]] = {}
        if cfg.small_file_limit > 0:
            for s in view.snapshot():
                by_partition.setdefault(s.partition, []).append(s)
        buckets = assign_inserts(by_partition, counts, table_average_record_size(table, cfg), cfg,
                                 set(view.pending_clustering_file_groups()))
        instant = table.start(COMMIT)
        stats = write_buckets(spark, table, buckets, df, instant.timestamp, stats_columns, row_group_rows)
        faults.step("ingest.after_files_written", on_step)
        faults.step("ingest.before_complete", on_step)
        return commit_write(table, instant, stats, "INSERT", avro_schema_string(schema))


def write_buckets(spark: SparkSession, table: HudiTable, buckets: list[InsertBucket], df: DataFrame, instant: str,
                  stats_columns: list[str], row_group_rows: int) -> list[WriteStat]:
    """Write every bucket: bucket ``i`` gets the batch rows of its rank range by record key in its partition
    (:func:`engines.cow_baseline.assign.rank_ranges`), plus the rows of its small file; one function writes
    it (:func:`engines.cow_baseline.bucket_write.write_bucket`: merged, sorted by record key, one file). One
    gate (:func:`engines.files.gate.choose_route`) decides where that function runs: in the driver for a
    small batch whose small files pyarrow reads as Spark does (:mod:`engines.cow_baseline.driver_merge`),
    else inside the tasks of one Spark job. Both write the same bytes."""
    part_col, key = table.partition_fields[0], table.record_key
    bases = {i: b.base_slice for i, b in enumerate(buckets) if b.base_slice is not None}
    prefix = f"{part_col}=" if table.hive_style else ""
    # a topped-up file's old rows keep their commit time and seqno, as HoodieMergeHandle copies them
    specs = [WriteSpec.for_table(table, instant, row_group_rows=row_group_rows, stats_columns=stats_columns,
                            file_id_override=b.file_id, file_id_prefix=f"bucket-{i}", target_file_bytes=NO_ROLL,
                            preserve_commit_metadata=b.base_slice is not None)
             for i, b in enumerate(buckets)]
    route, footers = base_inputs(table.storage, bases, arrow_schema_of(df), key, part_col,
                                 sum(b.num_records for b in buckets))
    record_route("bucket insert", route, table.base_uri)
    if route.in_driver:
        written = merge_in_driver(df, buckets, footers, specs, part_col, prefix, key, fault_point="ingest.mid_write")
    else:
        written = _write_buckets_as_tasks(spark, table, buckets, bases, df, specs, footers)
    return [s for b, out in zip(buckets, written, strict=True) for s in _bucket_stats(b, out)]


def _write_buckets_as_tasks(spark: SparkSession, table: HudiTable, buckets: list[InsertBucket],
                            bases: dict[int, FileSlice], df: DataFrame, specs: list[WriteSpec],
                            footers: dict[int, Inputs | None]) -> list[list[WriteStat]]:
    """Every bucket in one Spark job whose tasks call :func:`engines.cow_baseline.bucket_write.write_bucket`.

    Spark ranks the batch's rows, tags each with its bucket (``_b``) and unions in the small files' rows
    (``_old``), read with their kept meta columns: all in one read when pyarrow wrote them all in one schema,
    else each file on its own, so each bucket's target schema is Spark's union of its own small file and the
    batch. ``footers``: the small files' footers the gate read already (none when it decided on the batch
    alone): then they are not read again."""
    part_col, key = table.partition_fields[0], table.record_key
    prefix = f"{part_col}=" if table.hive_style else ""
    cases = [f"WHEN {_sql_name(part_col)} = {_sql_string(b.partition[len(prefix):])} "
             f"AND _rk >= {lo} AND _rk < {lo + n} THEN {i}"
             for i, (b, (lo, n)) in enumerate(zip(buckets, rank_ranges(buckets), strict=True))]
    rows = (df.withColumn("_rk", F.row_number().over(Window.partitionBy(part_col).orderBy(key)) - 1)
            .withColumn("_b", F.expr(f"CASE {' '.join(cases)} END")).drop("_rk"))
    new_schema = arrow_schema_of(rows.drop("_b"))
    schemas = [new_schema] * len(buckets)
    merged = rows.withColumn("_old", F.lit(False))
    one_read = _one_schema(footers) if footers else inspect_inputs(table.storage, list(bases.values()), True) is not None
    for read in ([list(bases)] if one_read else [[i] for i in bases]) if bases else []:
        files = " ".join(f"WHEN {_sql_string(bases[i].file_name)} THEN {i}" for i in read)
        old = read_files(spark, table.storage, [bases[i] for i in read], keep_meta=True)
        old = old.withColumn("_b", F.expr(f"CASE _hoodie_file_name {files} END"))
        old = old.drop(*[c for c in META_COLUMNS if c in old.columns and c not in KEPT_META])
        target = arrow_schema_of(old.drop("_b").unionByName(rows.drop("_b"), allowMissingColumns=True))
        for i in read:
            schemas[i] = target
        merged = old.withColumn("_old", F.lit(True)).unionByName(merged, allowMissingColumns=True)
    batch_rows = arrow_batch_rows(spark)

    def write_group(i: int, group: pa.Table, attempt: int) -> list[WriteStat]:
        old = group.column("_old")
        return write_bucket(specs[i], group.filter(pc.invert(old)), group.filter(old) if i in bases else None,
                            schemas[i], batch_rows, attempt)

    return write_groups(merged, "_b", len(buckets), write_group, [key], specs[0], fault_point="ingest.mid_write")


def _one_schema(footers: dict[int, Inputs | None]) -> bool:
    """Whether pyarrow wrote every small file (``footers``, one per file) in one schema, meta columns
    included: what :func:`engines.files.inputs.inspect_inputs` of them all together checks."""
    found = [f for f in footers.values() if f is not None]
    if len(found) < len(footers):
        return False
    schemas = [f.footers[0].schema.to_arrow_schema().remove_metadata() for f in found]
    return all(s.equals(schemas[0]) for s in schemas[1:])


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
