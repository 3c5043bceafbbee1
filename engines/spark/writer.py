"""The Spark write job: tasks (``mapInArrow``) write Hudi base files with pyarrow.

Each task runs :func:`engines.files.writer.write_partition_rows` on the rows it receives and returns
their write stats as JSON rows; the driver collects them. :func:`engines.files.job.run_write_job`
runs it under a crash point.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql import DataFrame

from engines.files.job import run_write_job
from engines.files.writer import WriteSpec, write_partition_rows
from engines.table.metadata import write_stat_from_json, write_stat_to_json
from engines.table.model import WriteStat

STATS_SCHEMA = "stat string"


def write_dataframe(df: DataFrame, spec: WriteSpec, fault_point: str | None = None) -> list[WriteStat]:
    """Write ``df`` as it is partitioned and ordered; return the write stats of every file.

    ``fault_point`` names the crash point inside the running job (killed once its first output
    file is on storage; :func:`engines.table.faults.killed_mid_action`)."""
    from pyspark import TaskContext

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        ctx = TaskContext.get()
        task = ctx.partitionId() if ctx else 0
        attempt = ctx.attemptNumber() if ctx else 0
        stats = write_partition_rows(spec, batches, task, attempt)
        payload = [json.dumps(write_stat_to_json(s)) for s in stats]
        yield pa.RecordBatch.from_arrays([pa.array(payload, pa.string())], names=["stat"])

    rows = run_write_job(spec, fault_point, lambda: df.mapInArrow(run, STATS_SCHEMA).collect())
    out = []
    for row in rows:
        d = json.loads(row["stat"])
        out.append(write_stat_from_json(d, d.get("partitionPath", "")))
    return sorted(out, key=lambda s: s.path)
