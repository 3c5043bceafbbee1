"""The commit of an insert into new file groups: the table's side, whichever job writes the files.

:func:`check_batch` refuses a batch the table cannot take before any job runs; :func:`commit_new_file_groups`
starts the instant, has ``write`` write the files with the table's :class:`engines.files.writer.WriteSpec`
(a Spark job or its tasks in the driver: :func:`engines.spark.insert.insert_new_file_groups` chooses, through
the gate) and commits them, with the ingest fault points. The transaction itself (commit point, leftovers) is
:mod:`engines.table.transaction`.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from engines.files.writer import WriteSpec
from engines.table import faults
from engines.table.model import WriteStat
from engines.table.schema import avro_schema_string, check_compatible
from engines.table.table import HudiTable
from engines.table.timeline import COMMIT
from engines.table.transaction import CommitResult, EmptyBatchError, commit_write


def check_batch(table: HudiTable, schema: pa.Schema) -> None:
    """Refuse a batch of ``schema`` when ``table`` cannot take it (read-only table, incompatible schema)."""
    table.check_writable()
    check_compatible(table.latest_schema(), schema, "the batch")


def commit_new_file_groups(table: HudiTable, schema: pa.Schema, write: Callable[[WriteSpec], list[WriteStat]],
                           operation: str = "INSERT", extra: dict[str, str] | None = None,
                           on_step: faults.StepHook = None, **spec_fields: object) -> CommitResult:
    """One commit of new file groups: ``write(spec)`` writes them (``spec``: the table's, with ``spec_fields``);
    :class:`engines.table.transaction.EmptyBatchError` when it wrote none (the started instant removed)."""
    with table.lock:
        instant = table.start(COMMIT)
        stats = write(WriteSpec.for_table(table, instant.timestamp, **spec_fields))
        if not stats:
            table.refresh().delete_pending(instant)
            raise EmptyBatchError("the batch is empty: nothing to insert (the started instant was removed)")
        faults.step("ingest.after_files_written", on_step)
        faults.step("ingest.before_complete", on_step)
        return commit_write(table, instant, stats, operation, avro_schema_string(schema), extra=extra)
