"""Snapshot read: a view's file slices as a Spark DataFrame, pruned by per-file min/max
(:mod:`engines.table.pruning`, shared with the simulator).

Simple predicates ``(column, op, value)`` with op in ``= == < <= > >= in`` prune whole files
whose recorded range cannot match; the result reports how many files were pruned. Row-group
pruning inside the kept files is Spark's own (Parquet filter push-down); its effect is counted
by :func:`engines.table.pruning.count_row_groups` from the footers.

Without an explicit schema Spark infers one on every read by running a Spark job over a footer
(~0.1 s of a ~0.5 s selective query on a 2-core machine, whatever the layout). The schema Spark
infers is a function of the footer it reads (the first file's Parquet schema and the Spark schema
Spark writes into its key-value metadata) and the session, so it is inferred once per distinct
footer schema and session, with Spark's own inference, and passed to later reads.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, DataFrameReader, SparkSession
from pyspark.sql.types import StructType

from engines.table.model import FileSlice
from engines.table.pruning import (
    Predicate,
    PredicateError,
    count_row_groups,
    may_match,
    prune,
    slice_may_match,
)
from engines.table.storage import Storage


@dataclass
class SnapshotScan:
    df: DataFrame
    files_total: int
    files_scanned: int
    files_pruned: int
    scanned: list[FileSlice]


def file_uri(storage: Storage, rel: str) -> str:
    """The URI Spark reads ``rel`` by: ``file://`` locally; an ``s3://`` table through Hadoop's
    ``s3a://`` connector (configured by the session, ``bench/store/uri.py``)."""
    path = storage.abs(rel)
    if "://" in storage.uri:
        scheme = storage.uri.split("://", 1)[0]
        return f"{'s3a' if scheme == 's3' else scheme}://{path}"
    return f"file://{path}"


# Spark's own inference, remembered per session: (inference settings, footer schema) -> StructType.
_INFERRED: weakref.WeakKeyDictionary[SparkSession, dict[tuple, StructType]] = weakref.WeakKeyDictionary()
_INFERRED_LOCK = threading.Lock()
_SPARK_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
# Session settings that change what Spark infers from one footer (the last one: from the paths).
_INFERENCE_CONF = ("spark.sql.parquet.binaryAsString", "spark.sql.parquet.int96AsTimestamp",
                   "spark.sql.parquet.inferTimestampNTZ.enabled", "spark.sql.caseSensitive",
                   "spark.sql.sources.partitionColumnTypeInference.enabled")


def _inference_key(spark: SparkSession, storage: Storage, first: FileSlice, base_path: str | None) -> tuple | None:
    """What Spark's schema inference depends on for a read whose first file is ``first``; None when
    the cache must not be used (schema merging reads every footer; an unreadable footer is left to
    Spark, which then fails or succeeds exactly as without the cache)."""
    conf = spark.conf
    if str(conf.get("spark.sql.parquet.mergeSchema", "false")).lower() == "true":
        return None
    if base_path is not None and str(conf.get(_INFERENCE_CONF[-1], "true")).lower() != "false":
        return None  # partition column types inferred from the values of every path
    footer = _footer_schema(storage, first)
    if footer is None:
        return None
    partition = first.partition if base_path is not None else None
    hive_columns = tuple(p.split("=", 1)[0] for p in (partition or "").split("/") if "=" in p)
    return (tuple(conf.get(k, None) for k in _INFERENCE_CONF), *footer, hive_columns)


# A base file is written once under its name (file group, instant) and never changed, so what its
# footer says about the schema is read once per process: on an object store each read is a HEAD and
# two ranged GETs (~0.07 s at 20 ms per request) that a warm query of any layout would otherwise pay
# before Spark starts (a table reader knows its schema from the table's metadata, not a footer).
_FOOTERS: dict[tuple[str, str, str, int], tuple[str, bytes | None]] = {}
_FOOTERS_MAX = 4096


def _footer_schema(storage: Storage, first: FileSlice) -> tuple[str, bytes | None] | None:
    """(Parquet schema text, Spark row metadata) of ``first``'s footer, remembered per file version."""
    key = (storage.uri, first.path, first.instant, first.size_bytes)
    with _INFERRED_LOCK:
        known = _FOOTERS.get(key)
    if known is not None:
        return known
    try:
        md = storage.parquet_metadata(first.path)
    except OSError:
        return None
    # the full schema text, after a line naming the object
    footer = (str(md.schema).partition("\n")[2], (md.metadata or {}).get(_SPARK_ROW_METADATA))
    with _INFERRED_LOCK:
        if len(_FOOTERS) >= _FOOTERS_MAX:
            _FOOTERS.clear()
        _FOOTERS[key] = footer
    return footer


def _reader(spark: SparkSession, schema: StructType | None, base_path: str | None):  # noqa: ANN202
    reader = spark.read.schema(schema) if schema is not None else spark.read
    return reader.option("basePath", base_path) if base_path is not None else reader


_SEP = "\u0000"  # in no path: the JVM splits the joined paths at it
# Per session: the JVM's splitter at _SEP (looking it up costs calls).
_SPLITTERS: weakref.WeakKeyDictionary[SparkSession, object] = weakref.WeakKeyDictionary()


def parquet_paths(reader: DataFrameReader, paths: Sequence[str]) -> DataFrame:
    """``reader.parquet(*paths)`` in a fixed number of Py4J calls: PySpark hands the JVM a list one
    Py4J call per element (a 450-file snapshot: 450 calls, ~0.5 s on a loaded 2-core machine);
    here the JVM splits one joined string into the array ``DataFrameReader.parquet(String...)`` takes."""
    if len(paths) < 4 or any(_SEP in p for p in paths):
        return reader.parquet(*paths)
    spark = reader._spark
    with _INFERRED_LOCK:
        splitter = _SPLITTERS.get(spark)
        if splitter is None:
            splitter = spark.sparkContext._jvm.java.util.regex.Pattern.compile(_SEP)
            _SPLITTERS[spark] = splitter
    # a Java String would come back as a Python str: the Pattern splits on the JVM, giving a Java array
    return DataFrame(reader._jreader.parquet(splitter.split(_SEP.join(paths), -1)), spark)


def read_parquet(spark: SparkSession, storage: Storage, paths: list[str], first: FileSlice,
                  base_path: str | None) -> DataFrame:
    """``spark.read.parquet(*paths)`` with the schema Spark inferred before from an equal footer, if any."""
    key = _inference_key(spark, storage, first, base_path)
    with _INFERRED_LOCK:
        known = _INFERRED.get(spark, {}).get(key) if key is not None else None
    df = parquet_paths(_reader(spark, known, base_path), paths)
    if known is not None and base_path is not None:
        # Given a schema, Spark puts the columns found in the paths last; inferring, it keeps a column
        # that is also in the files (Hudi's dt) at its place there. The inferred order is kept.
        # selectExpr with names: one Py4J call per name, where F.col costs about twelve.
        df = df.selectExpr(*("`" + name.replace("`", "``") + "`" for name in known.fieldNames()))
    if key is not None and known is None:
        inferred = df.schema
        with _INFERRED_LOCK:
            _INFERRED.setdefault(spark, {})[key] = inferred
    return df


def read_snapshot(
    spark: SparkSession,
    storage: Storage,
    slices: Sequence[FileSlice],
    predicates: Iterable[Predicate] = (),
    schema: StructType | None = None,
) -> SnapshotScan:
    """Read the snapshot ``slices`` (after pruning) as one DataFrame with explicit file paths."""
    kept, pruned = prune(slices, predicates)
    paths = [file_uri(storage, s.path) for s in kept]
    if paths:
        base_path = None
        if all("=" in s.partition.rsplit("/", 1)[-1] for s in kept):
            # Hive-style directories (Delta): the partition column lives only in the path.
            base_path = file_uri(storage, "")
        if schema is not None:
            df = parquet_paths(_reader(spark, schema, base_path), paths)
        else:
            df = read_parquet(spark, storage, paths, kept[0], base_path)
    else:
        if schema is None and slices:
            schema = read_parquet(spark, storage, [file_uri(storage, slices[0].path)], slices[0], None).schema
        df = spark.createDataFrame([], schema or StructType([]))
    return SnapshotScan(df, len(slices), len(kept), pruned, kept)


__all__ = ["Predicate", "PredicateError", "SnapshotScan", "count_row_groups", "file_uri", "may_match", "prune",
           "read_snapshot", "slice_may_match"]
