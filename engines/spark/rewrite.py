"""Rewrite a set of base files into N evenly sized new files (compaction, clustering, COW merge).

Rows are read from the files (meta columns dropped unless commit metadata is preserved), ordered
as asked and spread over exactly ``num_outputs`` Spark tasks of near-equal row counts, each
writing one file: 489 MB at a 300 MB target -> two ~245 MB files. Orderings:

- ``none``: no sort. Files written by pyarrow (ours) take the shuffle-free path
  (:mod:`engines.spark.arrow_rewrite`, when :func:`engines.files.gate.choose_route` lets them): the input files, by path, are concatenated and cut into
  ``num_outputs`` contiguous runs (row counts differ by at most one), rows in input order. Other
  inputs go through Spark: round-robin spread, each output sorted
  by record key. Split ``hudi`` (clustering only): whole input files per output, in the order
  given, as Apache Hudi's coalesce groups them (:func:`engines.files.splits.split_files`); outputs
  are then as uneven as the files.
- ``linear``: rows sorted by (sort columns, record key), nulls first; outputs cover disjoint,
  ascending key ranges (pyarrow runs merged by sampled key ranges, or Spark's range partitioning).
- ``zorder`` / ``hilbert``: Spark range-partitions and sorts on the curve key, then record key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pyspark.sql import DataFrame, SparkSession

from engines.files.gate import record_route, rewrite_route
from engines.files.inputs import inspect_inputs, sortable
from engines.files.ordering import Ordering
from engines.files.writer import NO_ROLL, WriteSpec
from engines.spark.reader import file_uri, read_parquet
from engines.spark.writer import write_dataframe
from engines.table.model import META_COLUMNS, FileSlice, WriteStat
from engines.table.storage import Storage

Split = Literal["even", "hudi"]
SPLITS: tuple[str, ...] = ("even", "hudi")


def read_files(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], keep_meta: bool = False) -> DataFrame:
    ordered = sorted(slices, key=lambda s: s.path)
    # the schema Spark inferred before from an equal footer: no inference job per read
    df = read_parquet(spark, storage, [file_uri(storage, s.path) for s in ordered], ordered[0], None)
    if keep_meta:
        return df
    return df.drop(*[c for c in META_COLUMNS if c in df.columns])


def order_rows(df: DataFrame, num_outputs: int, ordering: Ordering, sort_columns: Sequence[str],
               record_key: str) -> DataFrame:
    """Spread rows over ``num_outputs`` tasks and order them within each task."""
    cols = list(sort_columns)
    if ordering == "none" or not cols:
        return df.repartition(num_outputs).sortWithinPartitions(record_key)
    if ordering == "linear":
        return df.repartitionByRange(num_outputs, *cols, record_key).sortWithinPartitions(*cols, record_key)
    from engines.spark.ordering import with_curve_key

    keyed = with_curve_key(df, cols, ordering)
    return (keyed.repartitionByRange(num_outputs, "_curve_key", record_key)
            .sortWithinPartitions("_curve_key", record_key).drop("_curve_key"))


def _coalesced_files(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], num_outputs: int,
                     keep_meta: bool) -> DataFrame:
    """Split ``hudi`` on the Spark path: one partition per output, holding its whole files."""
    from functools import reduce

    from engines.files.splits import split_files

    runs = split_files([s.num_rows for s in slices], num_outputs)
    parts = [read_files(spark, storage, [slices[f] for f, _, _ in run], keep_meta).coalesce(1) for run in runs]
    return reduce(DataFrame.union, parts)


def rewrite_files(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], spec: WriteSpec,
                  num_outputs: int, ordering: Ordering = "none", sort_columns: Sequence[str] = (),
                  fault_point: str | None = None, split: Split = "even") -> list[WriteStat]:
    """Rewrite exactly ``slices`` into ``num_outputs`` files as ``spec`` says (module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    cols = list(sort_columns)
    if ordering == "none" or not cols:
        ordering, cols = "none", []
    if ordering in ("none", "linear"):
        from engines.spark import arrow_rewrite

        hudi = split == "hudi" and ordering == "none"
        inputs = inspect_inputs(storage, slices, spec.preserve_commit_metadata, keep_order=hudi)
        route = record_route("rewrite", rewrite_route(inputs, ordering, cols + [spec.record_key]), spec.base_uri)
        if inputs is not None and ordering == "none":
            return arrow_rewrite.rewrite_unsorted(spark, inputs, spec, num_outputs, fault_point, split,
                                                  local=route.in_driver)
        if hudi:
            df = _coalesced_files(spark, storage, slices, num_outputs, spec.preserve_commit_metadata)
            return write_dataframe(df, spec, fault_point)
        if inputs is not None and sortable(inputs.schema, cols + [spec.record_key]):
            return arrow_rewrite.rewrite_sorted(spark, inputs, spec, num_outputs, cols, fault_point,
                                                local=route.in_driver)
    else:
        record_route("rewrite", rewrite_route(None, ordering, cols), spec.base_uri)
    df = read_files(spark, storage, slices, keep_meta=spec.preserve_commit_metadata)
    return write_dataframe(order_rows(df, num_outputs, ordering, cols, spec.record_key), spec, fault_point)


def rewrite(spark: SparkSession, storage: Storage, slices: Sequence[FileSlice], spec: WriteSpec, num_outputs: int,
            ordering: Ordering = "none", sort_columns: Sequence[str] = (),
            fault_point: str | None = None) -> list[WriteStat]:
    """Rewrite ``slices`` into exactly ``num_outputs`` new files, none rolled over; returns their stats.

    ``fault_point``: the crash point inside the write job (see :func:`write_dataframe`)."""
    spec.target_file_bytes = NO_ROLL
    spec.max_rows_per_file = None
    if not slices:
        return []
    return rewrite_files(spark, storage, slices, spec, num_outputs, ordering, sort_columns, fault_point)
