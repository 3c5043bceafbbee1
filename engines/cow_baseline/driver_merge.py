"""The insert buckets of a small batch written in this process, exactly as their Spark job writes them.

:func:`engines.cow_baseline.insert.write_buckets` ranks the batch's rows by record key within their
partition, gives bucket ``i`` its range of ranks plus the rows of its small file (HoodieMergeHandle's
top-up, the old rows with their commit time and seqno), and writes every bucket as one group of
:func:`engines.spark.group_write.write_groups`. Its
Spark job reads the small files, ranks, unions and sorts: at 1-10 MB per commit that job's fixed cost
(plan building over Py4J, the Parquet scan and the Arrow collect) is most of the COW baseline's
ingest. Here the batch's rows are taken as Arrow (the driver's own, or fetched in one job without a
Python worker: :func:`engines.spark.batch_stats.batch_rows`), the small files are
read with pyarrow (they were written by pyarrow: their footers hold the Arrow schema), and ranks and
sorts are pyarrow's stable sorts, which order strings by their UTF-8 bytes, as Spark does. Every
bucket is then cut and written as the job's task writes its group, so the files, names and bytes
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
from engines.files.gate import Route, choose_route
from engines.files.inputs import Inputs, inspect_inputs, read_run, rebatch, sortable
from engines.files.splits import sort_indices
from engines.files.writer import WriteSpec, filesystem_for, write_partition_rows
from engines.spark.arrow_compat import arrow_batch_rows
from engines.spark.batch_stats import batch_rows
from engines.spark.writer import run_write_job
from engines.table.model import FileSlice, WriteStat
from engines.table.storage import Storage

# what a top-up keeps of a small file's own metadata columns (HoodieMergeHandle copies old records as they are)
KEPT_META = ("_hoodie_commit_time", "_hoodie_commit_seqno")


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_nullable(True) for f in schema])


def base_inputs(storage: Storage, bases: Mapping[int, FileSlice], batch_schema: pa.Schema, record_key: str,
                partition_column: str, num_rows: int) -> tuple[Route, dict[int, Inputs]]:
    """Whether the driver can merge this batch exactly as the Spark job would (the gate's route), and then
    each small file's footer: a batch of at most :data:`engines.files.gate.LOCAL_ROWS` rows, small files of
    at most :data:`engines.files.gate.LOCAL_BYTES` uncompressed in all, written by pyarrow with the batch's
    columns and types (so Spark's union schema is the batch's, every column nullable), a record key
    pyarrow sorts as Spark does, and a string partition column (the job matches partitions by their
    text). No footers when the route is Spark's."""
    blocker = ("a record key pyarrow does not order as Spark does" if not sortable(batch_schema, [record_key])
               else "a partition column that is not a string"
               if not pa.types.is_string(batch_schema.field(partition_column).type) else None)
    route = choose_route(rows=num_rows, blocker=blocker)
    if not route.in_driver:  # decided before any footer is read
        return route, {}
    inputs: dict[int, Inputs] = {}
    for i, base in bases.items():
        found = inspect_inputs(storage, [base], keep_meta=False)
        if found is None or not _nullable(found.schema).equals(_nullable(batch_schema)):
            return choose_route(blocker="a small file pyarrow cannot read in the batch's schema"), {}
        inputs[i] = found
    route = choose_route(rows=num_rows, input_bytes=sum(x.total_bytes for x in inputs.values()))
    return route, inputs if route.in_driver else {}


def merge_in_driver(df: DataFrame, buckets: Sequence[InsertBucket], inputs: Mapping[int, Inputs],
                    specs: Sequence[WriteSpec], partition_column: str, partition_prefix: str, record_key: str,
                    fault_point: str | None = None) -> list[list[WriteStat]]:
    """Write bucket ``i`` with ``specs[i]``: the batch rows of its rank range by record key within its
    partition (:func:`engines.cow_baseline.assign.rank_ranges`), plus the rows
    of its small file ``inputs[i]`` when it has one, sorted by record key; the write stats per bucket,
    sorted by path. ``inputs``: from :func:`base_inputs`, when its route is the driver's."""
    rows_per_batch = arrow_batch_rows(df.sparkSession)

    def job() -> list[list[WriteStat]]:
        batch = batch_rows(df)
        new_schema = batch.schema
        base_schema = _nullable(new_schema)
        ranked: dict[str, pa.Table] = {}
        out: list[list[WriteStat]] = []
        for i, (b, (lo, n)) in enumerate(zip(buckets, rank_ranges(buckets), strict=True)):
            if b.partition not in ranked:
                value = b.partition[len(partition_prefix):]
                rows = batch.filter(pc.equal(batch.column(partition_column), value))
                ranked[b.partition] = rows.take(sort_indices(rows, [record_key]))
            rows = ranked[b.partition].slice(lo, n)
            if i in inputs:
                fs, root = filesystem_for(specs[i].base_uri)
                with_meta = replace(inputs[i], columns=[*KEPT_META, *inputs[i].columns])
                old = pa.concat_tables(list(read_run(fs, root, with_meta, [(0, 0, inputs[i].row_counts[0])])))
                schema = pa.schema([pa.field(c, pa.string()) for c in KEPT_META] + list(base_schema))
                new = rows.cast(base_schema)
                for c in KEPT_META:  # the new rows get this instant's (the writer's coalesce)
                    new = new.append_column(c, pa.nulls(new.num_rows, pa.string()))
                merged = pa.concat_tables([old.select(schema.names).cast(schema), new.select(schema.names)])
                rows = merged.take(sort_indices(merged, [record_key]))
            else:  # the job casts a bucket without a small file to the batch's own schema
                rows = rows.cast(new_schema)
            chunks = (t.combine_chunks() for t in rebatch([rows], rows_per_batch))
            out.append(sorted(write_partition_rows(specs[i], chunks, 0, 0), key=lambda s: s.path))
        return out

    return run_write_job(specs[0], fault_point, job)
