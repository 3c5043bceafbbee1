"""The copy-on-write upsert and delete: a simple (non-global) index and Hudi's merge handle.

Incoming ``(partition, key)`` pairs are joined with the record keys of the live slices of their
partitions. A touched file group is rewritten as a new slice of the same file group, whose kept rows
carry their own commit time and sequence number; keys not found become new file groups. A file group
whose rows are all deleted gets an empty new slice, so the old slice stops being the latest.

Update strategy (``hoodie.clustering.updates.strategy``): ``reject`` (Hudi's
``SparkRejectUpdateStrategy``, the default) raises :class:`ClusteringUpdateConflictError` naming the
plans and file groups *before* any instant or file is created; ``allow`` (``SparkAllowUpdateStrategy``)
writes the update into the old file group — the completing clustering then replaces that group with
its pre-update rows (the data-loss hazard Hudi documents, HUDI-3846); the commit records
``conflictingFileGroups``.

Every copy-on-write design upserts through it: the baseline, Option 1 (its pending base-file
compaction holds its groups) and Option 2 (its pending clustering does).
"""

from __future__ import annotations

from typing import Literal

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engines.config.registry import PARQUET_MAX_FILE_SIZE, ROW_GROUP_ROWS
from engines.files.gate import record_route, upsert_inserts_route, upsert_merge_route
from engines.files.writer import KEPT_META, NO_ROLL, WriteSpec, write_empty_file
from engines.spark.arrow_compat import arrow_schema_of
from engines.spark.rewrite import read_files
from engines.spark.session import get_spark
from engines.spark.writer import write_dataframe
from engines.table import faults, plans
from engines.table.model import META_COLUMNS, FileSlice, WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, COMPACTION, REPLACE
from engines.table.transaction import CommitResult, commit_write

UpdateStrategy = Literal["reject", "allow"]
_SERVICES = {REPLACE: "clustering", COMPACTION: "base-file compaction"}  # what holds a file group, by plan action


class ClusteringUpdateConflictError(RuntimeError):
    """An upsert/delete touching file groups of a pending clustering plan (reject strategy)."""

    def __init__(self, operation: str, conflicts: dict[tuple[str, str], str], service: str = "clustering") -> None:
        self.operation = operation
        self.conflicts = dict(conflicts)
        self.plans = sorted(set(conflicts.values()))
        groups = ", ".join(f"{p}/{f} (plan {i})" for (p, f), i in sorted(conflicts.items()))
        if service == "clustering":
            rule = ("Updates to file groups in pending clustering are not supported "
                    "(hoodie.clustering.updates.strategy=reject); nothing was written. Execute or roll back the "
                    "plan first, or use the allow strategy.")
        else:  # a plan that would replace the group with its rows as planned, losing the update
            rule = (f"The {service} would replace them with their rows as planned; nothing was written. "
                    "Execute or roll back the plan first.")
        super().__init__(
            f"{operation} rejected: it updates {len(conflicts)} file group(s) under pending {service} "
            f"plan(s) {', '.join(self.plans)}: {groups}. {rule}")


def _partition_path_col(table: HudiTable, column: str) -> object:
    col = F.col(column).cast("string")
    return F.concat(F.lit(f"{column}="), col) if table.hive_style else col


def locate(table: HudiTable, live: list[FileSlice], incoming: DataFrame) -> dict[str, FileSlice]:
    """Simple index: file name -> live slice, for every live slice holding an incoming (partition, key)."""
    if not live:
        return {}
    spark = get_spark()
    part_col = table.partition_fields[0]
    located = read_files(spark, table.storage, live, keep_meta=True).select(
        F.col("_hoodie_record_key").alias("_k"), F.col("_hoodie_partition_path").alias("_p"),
        F.col("_hoodie_file_name").alias("_f"))
    keys = incoming.select(F.col(table.record_key).cast("string").alias("_k"),
                           _partition_path_col(table, part_col).alias("_p")).distinct()
    names = {r["_f"] for r in keys.join(located, ["_k", "_p"]).select("_f").distinct().collect()}
    return {s.file_name: s for s in live if s.file_name in names}


def find_conflicts(touched: list[FileSlice], pending: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """File groups of ``touched`` that a pending clustering plan holds: (partition, fileId) -> plan instant."""
    return {s.file_group: pending[s.file_group] for s in touched if s.file_group in pending}


def merge_write(table: HudiTable, updates: DataFrame | None, deletes: DataFrame | None, operation: str,
                update_strategy: UpdateStrategy = "reject", row_group_rows: int = ROW_GROUP_ROWS,
                max_file_size: int = PARQUET_MAX_FILE_SIZE, on_step: faults.StepHook = None,
                held_by: tuple[str, ...] = (REPLACE,)) -> CommitResult:
    """Upsert (``updates``) or delete (``deletes``: key + partition columns) through the simple index.

    The rows a touched file group keeps carry their own commit time and sequence number into its new
    slice (Hudi's merge handle copies an unchanged record as it is), so an incremental pull does not
    re-emit them; only the updated rows get this commit's time. ``held_by``: the plan actions whose
    pending file groups an update must not touch (the reject strategy refuses; clustering's
    replacecommit by default, Option 1's base-file compaction for its engine)."""
    if (updates is None) == (deletes is None):
        raise ValueError("merge_write takes either updates or deletes")
    spark = get_spark()
    key, part_col = table.record_key, table.partition_fields[0]
    incoming = updates if updates is not None else deletes
    assert incoming is not None
    missing = [c for c in (key, part_col) if c not in incoming.columns]
    if missing:
        raise ValueError(f"the {operation.lower()} batch lacks column(s) {missing}")
    table.check_writable()
    if updates is not None:
        check_compatible(table.latest_schema(), arrow_schema_of(updates), f"the {operation.lower()} batch")
    with table.lock:
        view = table.view()
        partitions = {table.partition_path(r[0]) for r in incoming.select(part_col).distinct().collect()}
        live = [s for s in view.snapshot() if s.partition in partitions]
        touched = sorted(locate(table, live, incoming).values(), key=lambda s: s.path)
        held: dict[tuple[str, str], str] = {}
        action_of: dict[str, str] = {}  # plan instant -> its action
        for action in held_by:
            for group, plan in plans.pending_file_groups(view.timeline, action).items():
                held[group], action_of[plan] = plan, action
        conflicts = find_conflicts(touched, held)
        if conflicts and update_strategy == "reject":
            services = " or ".join(sorted({_SERVICES[action_of[i]] for i in conflicts.values()}))
            raise ClusteringUpdateConflictError(operation, conflicts, services)
        instant = table.start(COMMIT)
        stats: list[WriteStat] = []
        in_keys = incoming.select(F.col(key).alias("_dk"), _partition_path_col(table, part_col).alias("_dp"))
        for s in touched:
            spec = WriteSpec.for_table(table, instant.timestamp, file_id_override=s.file_id, target_file_bytes=NO_ROLL,
                                  row_group_rows=row_group_rows, preserve_commit_metadata=True)
            old = read_files(spark, table.storage, [s], keep_meta=True)
            data_cols = [c for c in old.columns if c not in META_COLUMNS]
            spec.stats_columns = data_cols
            kept_cols = [*KEPT_META, *data_cols]  # a kept row's own commit time and sequence number
            remaining = old.join(in_keys, old[key] == F.col("_dk"), "left_anti").select(*kept_cols)
            if updates is not None:
                new_rows = updates.join(old.select(F.col(key).alias("_uk")), updates[key] == F.col("_uk"),
                                        "left_semi").select(*[F.lit(None).cast("string").alias(c) for c in KEPT_META],
                                                            *data_cols)
                remaining = remaining.unionByName(new_rows)
            record_route("upsert merge", upsert_merge_route(), table.base_uri)
            out = write_dataframe(remaining.coalesce(1).sortWithinPartitions(key), spec)
            if not out:  # every row of the file group was deleted: an empty slice supersedes the old one
                value = s.partition.split("=", 1)[1] if table.hive_style else s.partition
                out = [write_empty_file(spec, value, arrow_schema_of(old.select(*data_cols)))]
            for st in out:
                st.prev_commit = s.instant
                st.num_update_writes = st.num_writes if updates is not None else 0
            stats += out
        if updates is not None:
            data_cols = list(updates.columns)
            found = (read_files(spark, table.storage, touched, keep_meta=True)
                     .select(F.col("_hoodie_record_key").alias("_k"), F.col("_hoodie_partition_path").alias("_p"))
                     if touched else None)
            fresh = updates if found is None else updates.join(
                found, (updates[key].cast("string") == F.col("_k"))
                & (_partition_path_col(table, part_col) == F.col("_p")), "left_anti").select(*data_cols)
            spec = WriteSpec.for_table(table, instant.timestamp, row_group_rows=row_group_rows,
                                  stats_columns=data_cols, target_file_bytes=max_file_size,
                                  file_id_prefix="upsert-inserts")
            n = max(1, len(partitions))
            record_route("upsert inserts", upsert_inserts_route(), table.base_uri)
            stats += write_dataframe(fresh.repartition(n, F.col(part_col)).sortWithinPartitions(part_col, key), spec)
        faults.step("ingest.after_files_written", on_step)
        faults.step("ingest.before_complete", on_step)
        schema = avro_schema_string(arrow_schema_of(updates)) if updates is not None else table.latest_schema()
        extra = {"conflictingFileGroups": ",".join(f"{p}/{f}" for p, f in sorted(conflicts))} if conflicts else None
        return commit_write(table, instant, stats, operation, schema, extra=extra)
