"""The readers the history gates put questions to: ours (our file-system view), hudi-rs, Apache
Hudi's Spark datasource and delta-rs. Each answers with the record keys it returns (as a
:class:`~bench.gates.truth.KeySum`, or the keys themselves when a gate needs them), and raises
:class:`ReadError` with the reader's own message when the read fails.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.gates.truth import CORRECTED, VERSION_MIX, KeySum
from engines.table.mor import snapshot_read
from engines.table.storage import hadoop_uri
from engines.table.table import HudiTable

KEY = "_hoodie_record_key"
MESSAGE = "message"  # the data column a correction rewrites (workloads.generator.batch_updates_table)
COMMIT_TIME = "_hoodie_commit_time"
OURS, HUDI_RS, APACHE_HUDI, DELTA_RS = "ours", "hudi_rs", "apache_hudi", "delta_rs"


def columns(versions: bool) -> list[str]:
    """The columns a key checksum reads: the key, and the message when it names versions."""
    return [KEY, MESSAGE] if versions else [KEY]


class ReadError(RuntimeError):
    """A reader failed (or hudi-rs panicked) on a read; the message is the reader's."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():  # a Java exception: its class and message, not the Py4J preamble
        if "Exception" in line or "Error" in line:
            return line.strip()[:300]
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _key_sum(rows: pa.Table, versions: bool) -> KeySum:
    """The key checksum of ``rows`` (a key column, and the message column when ``versions``)."""
    return KeySum.of_keys(rows.column(KEY), rows.column(MESSAGE) if versions else None)


class FileKeySums:
    """Each base file's key checksum, read once: base files never change once committed, so as-of
    reads at many instants read each file once. ``versions``: each key at the version its message names
    (a run with corrections: :func:`bench.gates.truth.versioned_hashes`)."""

    def __init__(self, table: HudiTable, versions: bool = False) -> None:
        self.table = table
        self.versions = versions
        self._sums: dict[str, KeySum] = {}

    def total(self, paths: list[str]) -> KeySum:
        """The key checksum of the files at ``paths`` (relative to the table's base)."""
        out = KeySum(0, 0, 0)
        for path in paths:
            if path not in self._sums:
                rows = pq.read_table(self.table.storage.abs(path), columns=columns(self.versions),
                                     filesystem=self.table.storage.fs)
                self._sums[path] = _key_sum(rows, self.versions)
            out = out + self._sums[path]
        return out


class OurReader:
    """Our file-system view's snapshot as of an instant (``view.snapshot(as_of)``), its files' keys; on a
    MERGE_ON_READ table the table core's merged read as of the instant (:func:`engines.table.mor.snapshot_read`)."""

    def __init__(self, table: HudiTable, files: FileKeySums | None = None) -> None:
        self.table = table
        self.files = files or FileKeySums(table)

    def key_sum(self, as_of: str | None = None) -> KeySum:
        try:
            if self.table.merge_on_read:  # log files insert, update and delete rows: only the merge counts them
                return _key_sum(snapshot_read(self.table, as_of).rows, self.files.versions)
            return self.files.total([s.path for s in self.table.view().snapshot(as_of=as_of)])
        except Exception as exc:  # noqa: BLE001 - a failed read is the reader's answer
            raise ReadError(f"ours: {type(exc).__name__}: {_first_line(exc)}") from exc


class HudiRsSlices:
    """hudi-rs's file slices as of an instant (``get_file_slices``: its time-travel resolution of
    which file group versions are visible), their files' keys; slices with log files (MERGE_ON_READ):
    hudi-rs's own merged read as of the instant."""

    def __init__(self, table: HudiTable, files: FileKeySums | None = None) -> None:
        self.table = table
        self.files = files or FileKeySums(table)

    def key_sum(self, as_of: str | None = None) -> KeySum:
        import hudi

        try:
            opts = hudi.HudiReadOptions()
            if as_of is not None:
                opts = opts.with_as_of_timestamp(as_of)
            slices = hudi.HudiTableBuilder.from_base_uri(self.table.base_uri).build().get_file_slices(opts)
            if any(s.has_log_files() for s in slices):  # MERGE_ON_READ: hudi-rs merges the slices itself
                versions = self.files.versions
                return _key_sum(hudi_rs_read(self.table.base_uri, columns(versions), as_of=as_of), versions)
            paths = [s.base_file_relative_path() for s in slices]
        except ReadError:
            raise
        except BaseException as exc:  # noqa: BLE001 - hudi-rs panics are BaseException
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise ReadError(f"hudi-rs: {type(exc).__name__}: {_first_line(exc)}") from exc
        return self.files.total(paths)


def hudi_rs_read(base_uri: str, columns: list[str], as_of: str | None = None,
                 incremental: tuple[str, str] | None = None) -> pa.Table:
    """hudi-rs (PyPI ``hudi``): the snapshot (as of ``as_of``) or the incremental query over
    ``(start, end]``, projected to ``columns``."""
    import hudi

    try:
        table = hudi.HudiTableBuilder.from_base_uri(base_uri).build()
        opts = hudi.HudiReadOptions(projection=columns)
        if incremental is not None:
            opts = (opts.with_query_type(hudi.HudiQueryType.Incremental)
                    .with_start_timestamp(incremental[0]).with_end_timestamp(incremental[1]))
        elif as_of is not None:
            opts = opts.with_as_of_timestamp(as_of)
        batches = table.read(opts)
    except BaseException as exc:  # noqa: BLE001 - hudi-rs panics are BaseException; the failure is the answer
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ReadError(f"hudi-rs: {type(exc).__name__}: {_first_line(exc)}") from exc
    if not batches:
        return pa.table({c: pa.array([], pa.string()) for c in columns})
    return pa.Table.from_batches(batches).select(columns)


def apache_hudi_frame(spark: Any, base_uri: str, as_of: str | None = None,
                      incremental: tuple[str, str] | None = None) -> Any:
    """Apache Hudi's Spark datasource: the snapshot (``as.of.instant``) or its incremental query."""
    reader = spark.read.format("hudi")
    if incremental is not None:
        reader = (reader.option("hoodie.datasource.query.type", "incremental")
                  .option("hoodie.datasource.read.begin.instanttime", incremental[0])
                  .option("hoodie.datasource.read.end.instanttime", incremental[1]))
    elif as_of is not None:
        reader = reader.option("as.of.instant", as_of)
    return reader.load(hadoop_uri(base_uri))


def apache_hudi_key_sum(spark: Any, base_uri: str, as_of: str | None = None,
                        incremental: tuple[str, str] | None = None, versions: bool = False) -> KeySum:
    """Rows and key checksum of an Apache Hudi read: its key column (and message column, ``versions``:
    each key at the version its message names, :func:`bench.gates.truth.versioned_hashes`) collected as
    Arrow and summed as hudi-rs's reads are, a quarter less CPU than the same sums computed in Spark
    (its hex parsing and decimal sum per row); when a key is not 16 hex digits, or the read fails:
    :func:`spark_key_sum`."""
    from engines.spark.arrow_compat import to_arrow

    try:
        return _key_sum(to_arrow(apache_hudi_frame(spark, base_uri, as_of, incremental).select(*columns(versions))),
                        versions)
    except Exception:  # noqa: BLE001 - KeyFormatError included
        # a key Spark's sums count without its hash, or a failed read: the sums in Spark give that figure, or
        # the reader's error as an aggregation's job states it (the Arrow collect's names only its await)
        return spark_key_sum(spark, base_uri, as_of, incremental, versions)


def spark_key_sum(spark: Any, base_uri: str, as_of: str | None = None,
                  incremental: tuple[str, str] | None = None, versions: bool = False) -> KeySum:
    """:func:`apache_hudi_key_sum` aggregated in Spark (no keys collected): a key whose first 16
    characters are not hex digits (or a null key) counts as a row and adds nothing to the sums."""
    from pyspark.sql import functions as F

    try:
        df = apache_hudi_frame(spark, base_uri, as_of, incremental)
        # conv(…, 16, -10): the 64-bit hash as a signed decimal, so it casts to a long without overflow
        h = F.conv(F.substring(F.col(KEY), 1, 16), 16, -10).cast("long")
        if versions:  # the mix as a two's-complement long: Spark's long product wraps like numpy's uint64
            batch = F.regexp_extract(F.col(MESSAGE), CORRECTED.replace("?P<b>", ""), 1)
            version = F.when(batch == "", F.lit(-1)).otherwise(batch.cast("long"))
            h = h.bitwiseXOR((version + 1) * F.lit(_signed(int(VERSION_MIX))).cast("long"))
        row = df.select(h.alias("h")).agg(F.count(F.lit(1)).alias("n"),
                                         F.sum(F.col("h").cast("decimal(38,0)")).alias("s"),
                                         F.expr("bit_xor(h)").alias("x")).collect()[0]
    except Exception as exc:  # noqa: BLE001 - a failed query is the reader's answer
        raise ReadError(f"apache_hudi: {type(exc).__name__}: {_first_line(exc)}") from exc
    mask = (1 << 64) - 1
    return KeySum(int(row["n"]), int(row["s"] or 0) & mask, int(row["x"] or 0) & mask)


def apache_hudi_keys(spark: Any, base_uri: str, incremental: tuple[str, str]) -> pa.Array:
    """The record keys an Apache Hudi incremental query returns, collected to the driver (the gate then
    judges them key by key: a run with corrections, whose keys do not name the batch that last wrote them)."""
    from engines.spark.arrow_compat import to_arrow

    try:
        return to_arrow(apache_hudi_frame(spark, base_uri, incremental=incremental).select(KEY)).column(0)
    except Exception as exc:  # noqa: BLE001
        raise ReadError(f"apache_hudi: {type(exc).__name__}: {_first_line(exc)}") from exc


def apache_hudi_wrong_rows(spark: Any, base_uri: str, first_new_batch: int, expected_rows: int,
                           incremental: tuple[str, str]) -> tuple[int, int]:
    """(re-emitted, missing) of an Apache Hudi incremental query that should return exactly the rows of
    batches ``first_new_batch`` onwards (``expected_rows`` of them), counted in Spark: a generated key
    names its batch (``<hash>-<batch>-<row>``, :func:`workloads.rowdef.trace_id`), so a row of an
    earlier batch is re-emitted, a second copy of a key too, and an expected key not returned is missing."""
    from pyspark.sql import functions as F

    try:
        df = apache_hudi_frame(spark, base_uri, incremental=incremental)
        batch = F.split(F.col(KEY), "-").getItem(1).cast("int")
        row = df.select(KEY, batch.alias("b")).agg(
            F.sum(F.when(F.col("b") < first_new_batch, 1).otherwise(0)).alias("old"),
            F.sum(F.when(F.col("b") >= first_new_batch, 1).otherwise(0)).alias("new"),
            F.countDistinct(F.when(F.col("b") >= first_new_batch, F.col(KEY))).alias("distinct_new")).collect()[0]
    except Exception as exc:  # noqa: BLE001
        raise ReadError(f"apache_hudi: {type(exc).__name__}: {_first_line(exc)}") from exc
    old, new, distinct_new = int(row["old"] or 0), int(row["new"] or 0), int(row["distinct_new"] or 0)
    return old + new - distinct_new, expected_rows - distinct_new


def delta_rs_key_sum(path: str, version: int, key: str, storage_options: dict[str, str] | None = None,
                     versions: bool = False) -> KeySum:
    """delta-rs's read of ``version`` (Delta time travel), as a key checksum (``versions``: each key at
    the version its message names)."""
    from deltalake import DeltaTable

    try:
        rows = DeltaTable(path, version=version, storage_options=storage_options).to_pyarrow_table(
            columns=[key, MESSAGE] if versions else [key])
    except Exception as exc:  # noqa: BLE001
        raise ReadError(f"delta-rs: {type(exc).__name__}: {_first_line(exc)}") from exc
    return KeySum.of_keys(rows.column(0), rows.column(1) if versions else None)


def _signed(word: int) -> int:
    """A 64-bit word as the signed long Spark holds it."""
    return word - (1 << 64) if word >= 1 << 63 else word
