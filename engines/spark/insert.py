"""Commit helpers shared by every engine, and the minimal insert commit (new file groups).

A write runs as: lock → ``<t>.commit.requested`` → ``<t>.inflight`` → files written by Spark
tasks → files of ``t`` not in the write stats removed (a retried task's leftovers; Hudi does the
same from its markers) → ``<t>.commit`` written atomically. Nothing is visible before the last
step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from engines.spark.arrow_compat import arrow_schema_of
from engines.spark.writer import WriteSpec, write_dataframe
from engines.table import faults
from engines.table.metadata import CommitMetadata
from engines.table.model import WriteStat, parse_base_file_name
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT, REPLACE, Instant


class EmptyBatchError(ValueError):
    """A batch with no rows."""


@dataclass
class CommitResult:
    instant: str
    action: str
    operation: str
    stats: list[WriteStat]
    replaced: dict[str, list[str]]

    @property
    def bytes_written(self) -> int:
        return sum(s.file_size for s in self.stats)

    @property
    def records_written(self) -> int:
        return sum(s.num_writes for s in self.stats)




def remove_uncommitted_leftovers(table: HudiTable, instant: str, stats: list[WriteStat]) -> int:
    """Delete files named with ``instant`` in the touched partitions that the stats do not list,
    and the instant's temporary directory (sorted runs of a rewrite)."""
    table.storage.delete_dir(f".hoodie/.temp/{instant}")
    keep = {s.path for s in stats}
    removed = 0
    for partition in sorted({s.partition for s in stats}):
        for entry in table.storage.list(partition, sizes=False):  # names only
            parsed = parse_base_file_name(entry.path.rsplit("/", 1)[-1])
            if parsed and parsed[2] == instant and entry.path not in keep:
                table.storage.delete(entry.path, missing_ok=True)
                removed += 1
    return removed


def write_spec_for(table: HudiTable, instant: str, **overrides: object) -> WriteSpec:
    spec = WriteSpec(
        base_uri=table.base_uri,
        instant=instant,
        partition_column=table.partition_fields[0],
        record_key=table.record_key,
        hive_style=table.hive_style,
    )
    for key, value in overrides.items():
        setattr(spec, key, value)
    return spec


def commit_write(table: HudiTable, instant: Instant, stats: list[WriteStat], operation: str,
                 schema: str | None, replaced: dict[str, list[str]] | None = None,
                 extra: dict[str, str] | None = None) -> CommitResult:
    """Reconcile leftovers and write the completed instant (the commit point)."""
    remove_uncommitted_leftovers(table, instant.timestamp, stats)
    meta = CommitMetadata(operation_type=operation, write_stats=stats, schema=schema,
                          replaced_file_ids=replaced or {}, extra=extra or {})
    table.complete(instant, meta, replace=instant.action == REPLACE or bool(replaced))
    return CommitResult(instant.timestamp, instant.action, operation, stats, replaced or {})


def fire(step: str, on_step: Callable[[str], None] | None) -> None:
    """A step boundary: the engine's hook (which raises the fault point) or the fault point itself."""
    if on_step is not None:
        on_step(step)
    else:
        faults.point(step)


def insert_new_file_groups(
    table: HudiTable,
    df: DataFrame,
    operation: str = "INSERT",
    target_file_bytes: int = 120 * 1024 * 1024,
    row_group_rows: int = 65_536,
    sort_columns: list[str] | None = None,
    stats_columns: list[str] | None = None,
    num_tasks: int | None = None,
    extra: dict[str, str] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> CommitResult:
    """Write ``df`` as new file groups (one per partition value per task, rolled at target size)."""
    table.check_writable()
    schema = arrow_schema_of(df)
    check_compatible(table.latest_schema(), schema, "the batch")
    partition_col = table.partition_fields[0]
    n = num_tasks or max(1, df.select(partition_col).distinct().count())
    spread = df.coalesce(1) if n == 1 else df.repartition(n, F.col(partition_col))
    ordered = spread.sortWithinPartitions(partition_col, *(sort_columns or [table.record_key]))
    with table.lock:
        instant = table.start(COMMIT)
        spec = write_spec_for(
            table, instant.timestamp, target_file_bytes=target_file_bytes, row_group_rows=row_group_rows,
            stats_columns=list(stats_columns if stats_columns is not None else [c.name for c in schema]),
        )
        stats = write_dataframe(ordered, spec, fault_point="ingest.mid_write")
        if not stats:
            table.refresh().delete_pending(instant)
            raise EmptyBatchError("the batch is empty: nothing to insert (the started instant was removed)")
        fire("ingest.after_files_written", on_step)
        fire("ingest.before_complete", on_step)
        return commit_write(table, instant, stats, operation, avro_schema_string(schema), extra=extra)
