"""The insert buckets of a small batch written in this process, exactly as their Spark job writes them.

:func:`engines.cow_baseline.insert.write_buckets` ranks the batch's rows by record key within their
partition, gives bucket ``i`` its range of ranks plus the rows of its small file (HoodieMergeHandle's
top-up, the old rows with their commit time and seqno), and writes every bucket with the one bucket
writer :func:`engines.cow_baseline.bucket_write.write_bucket`, in a Spark task or here. The
Spark job reads the small files, ranks, unions and sorts: at 1-10 MB per commit that job's fixed cost
(plan building over Py4J, the Parquet scan and the Arrow collect) is most of the COW baseline's
ingest. Here the batch's rows are taken as Arrow (the driver's own, or fetched in one job without a
Python worker: :func:`engines.spark.batch_stats.batch_rows`), the small files are
read with pyarrow (they were written by pyarrow: their footers hold the Arrow schema), and ranks and
sorts are pyarrow's stable sorts, which order strings by their UTF-8 bytes, as Spark does. Every
bucket is then handed to the same writer the job's tasks call, so the files, names and bytes
are the same. It stands in only where that holds (:func:`base_inputs`, through the one gate
:func:`engines.files.gate.choose_route`); anything else goes to the Spark job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

from engines.cow_baseline.assign import InsertBucket, rank_ranges
from engines.cow_baseline.bucket_write import write_bucket
from engines.files.gate import Route, bucket_inputs_route, bucket_route
from engines.files.inputs import Inputs, inspect_inputs, read_run
from engines.files.job import run_write_job
from engines.files.splits import sort_indices
from engines.files.writer import KEPT_META, WriteSpec, filesystem_for
from engines.spark.arrow_compat import arrow_batch_rows
from engines.spark.batch_stats import batch_rows
from engines.table.model import FileSlice, WriteStat
from engines.table.storage import Storage


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def base_inputs(storage: Storage, bases: Mapping[int, FileSlice], batch_schema: pa.Schema, record_key: str,
                partition_column: str, num_rows: int) -> tuple[Route, dict[int, Inputs | None]]:
    """The gate's route for this batch's buckets (:func:`engines.files.gate.bucket_route`, then
    :func:`engines.files.gate.bucket_inputs_route`) and each small file's footer as read for it (None: one
    pyarrow cannot read as Spark does). No footers when the batch alone sends the job to Spark."""
    route = bucket_route(batch_schema, record_key, partition_column, num_rows)
    if not route.in_driver:  # decided before any footer is read
        return route, {}
    footers = {i: inspect_inputs(storage, [base], keep_meta=False) for i, base in bases.items()}
    return bucket_inputs_route(num_rows, list(footers.values()), batch_schema), footers


def merge_in_driver(df: DataFrame, buckets: Sequence[InsertBucket], inputs: Mapping[int, Inputs | None],
                    specs: Sequence[WriteSpec], partition_column: str, partition_prefix: str, record_key: str,
                    fault_point: str | None = None) -> list[list[WriteStat]]:
    """Write bucket ``i`` with ``specs[i]``: the batch rows of its rank range by record key within its
    partition (:func:`engines.cow_baseline.assign.rank_ranges`), plus the rows
    of its small file ``inputs[i]`` when it has one, sorted by record key; the write stats per bucket,
    sorted by path. ``inputs``: from :func:`base_inputs`, when its route is the driver's."""
    rows_per_batch = arrow_batch_rows(df.sparkSession)

    def job() -> list[list[WriteStat]]:
        batch = batch_rows(df)
        base_schema = _nullable(batch.schema)
        # a topped-up bucket's target schema: the kept meta columns, then the batch's columns, nullable (the
        # Spark job's union of the small files and the batch); a new file group's: the batch's own
        topped_up = pa.schema([pa.field(c, pa.string()) for c in KEPT_META] + list(base_schema))
        ranked: dict[str, pa.Table] = {}
        out: list[list[WriteStat]] = []
        for i, (b, (lo, n)) in enumerate(zip(buckets, rank_ranges(buckets), strict=True)):
            if b.partition not in ranked:
                value = b.partition[len(partition_prefix):]
                rows = batch.filter(pc.equal(batch.column(partition_column), value))
                ranked[b.partition] = rows.take(sort_indices(rows, [record_key]))
            old = None
            small = inputs.get(i)
            if small is not None:
                fs, root = filesystem_for(specs[i].base_uri)
                with_meta = replace(small, columns=[*KEPT_META, *small.columns])
                old = pa.concat_tables(list(read_run(fs, root, with_meta, [(0, 0, small.row_counts[0])])))
            out.append(write_bucket(specs[i], ranked[b.partition].slice(lo, n), old,
                                    topped_up if old is not None else batch.schema, rows_per_batch))
        return out

    return run_write_job(specs[0], fault_point, job)
