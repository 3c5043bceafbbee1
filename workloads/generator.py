"""Seeded generator of log-ingestion micro-batches.

Row ``i`` of batch ``b`` is a pure function of ``(seed, b, i)`` defined in
:mod:`workloads.rowdef`, built with numpy/pyarrow and no per-row Python. :func:`batch_table`
builds a batch on the driver; :func:`batch_df` builds it inside Spark tasks (``mapInArrow`` over a
range of chunk ids), with identical rows in row-index order whatever the number of slices.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engines.config.registry import MB
from workloads.rowdef import (
    CORPUS,
    CORPUS_STARTS,
    LATENCY_QUANTILES,
    LEVEL_CDF,
    LEVEL_SHARES,
    LEVELS,
    PATHS,
    S_DEL_PICK,
    S_HOST,
    S_JITTER,
    S_KEY,
    S_LAT1,
    S_LATE,
    S_LATE_K,
    S_LEVEL,
    S_MSG,
    S_SERVICE,
    S_SERVICE_ALIAS,
    S_SIZE,
    S_UPD_PICK,
    S_UPD_VAL,
    STATUSES,
    RowPlan,
    arrow_schema,
    batch_span,
    batch_ts_range,
    hash64,
    latency_table,
    partition_unit,
    partition_value,
    row_plan,
    service_alias,
    trace_id,
    uniform,
)
from workloads.spec import WorkloadSpec

__all__ = [
    "LEVELS", "LEVEL_SHARES", "S_KEY", "S_MSG", "arrow_schema", "batch_deletes_table",
    "batch_df", "batch_num_records", "batch_partition_counts", "batch_span", "batch_table", "batch_ts_range",
    "batch_updates_df", "batch_updates_table", "bytes_per_record", "hash64", "partition_unit", "partition_value",
    "records_for_mb", "uniform",
]


@lru_cache(maxsize=64)
def bytes_per_record(spec: WorkloadSpec) -> float:
    """Written Parquet bytes per record (snappy), measured once on a sample batch."""
    sample = spec.model_copy(update={"batch_records": 5000, "batch_mb": None, "arrival": "steady"})
    tbl = _rows(sample, 0, np.arange(5000, dtype=np.int64), 5000)
    buf = io.BytesIO()
    pq.write_table(tbl, buf, compression="snappy")
    return buf.tell() / tbl.num_rows


def records_for_mb(spec: WorkloadSpec, mb: float) -> int:
    return max(1, int(round(mb * MB / bytes_per_record(spec))))


def base_records(spec: WorkloadSpec) -> int:
    if spec.batch_records is not None:
        return spec.batch_records
    return records_for_mb(spec, float(spec.batch_mb or 1.0))


def batch_num_records(spec: WorkloadSpec, b: int) -> int:
    """Rows of batch ``b`` (before corrections): the base size shaped by the arrival pattern."""
    n = base_records(spec)
    if spec.arrival == "steady":
        return n
    u = float(uniform(spec.seed, b, np.array([0]), S_SIZE)[0])
    if spec.arrival == "bursty":
        # one batch in ten is a 3-5x burst; the others shrink so the mean stays n
        burst = 3.0 + 2.0 * float(uniform(spec.seed, b, np.array([1]), S_SIZE)[0])
        factor = burst if u < 0.1 else (1.0 - 0.1 * 4.0) / 0.9
        return max(1, int(round(n * factor)))
    start, _ = batch_ts_range(spec, b)
    hour = start.hour + start.minute / 60
    return max(1, int(round(n * (1.0 + 0.6 * np.sin(2 * np.pi * (hour - 9) / 24)))))


@lru_cache(maxsize=256)
def _plan(spec: WorkloadSpec, b: int, n: int) -> tuple[RowPlan, np.ndarray, np.ndarray, np.ndarray, pa.Array]:
    """Batch ``b``'s row plan with its tables as arrays (prob, alias, latency quantiles, partition labels)."""
    p = row_plan(spec, b, n)
    prob, alias = service_alias(spec.num_services, spec.service_skew)
    return p, prob, alias, np.array(latency_table()), pa.array(p.partition_labels, pa.string())


def _rows(spec: WorkloadSpec, b: int, rows: np.ndarray, n: int, columns: tuple[str, ...] | None = None) -> pa.Table:
    """Rows ``rows`` of batch ``b`` (of ``n`` rows), vectorised: no per-row Python.

    ``columns``: only these (in schema order), the rest not computed; every column's values are
    the same as in the full table. Only the exact operations :mod:`workloads.rowdef` allows touch
    per-row values."""
    p, prob, alias, lat_q, labels = _plan(spec, b, n)
    schema = arrow_schema(spec)
    want = set(schema.names if columns is None else columns)
    unknown = want - set(schema.names)
    if unknown:
        raise ValueError(f"unknown column(s) {sorted(unknown)}; the generator's are {schema.names}")
    seed, one = spec.seed, np.uint64(1)
    out: dict[str, pa.Array] = {}
    if want & {"ts", spec.partition_column}:
        jitter = uniform(seed, b, rows, S_JITTER)
        ts_us = p.start_us + ((rows + jitter) / p.n * p.span_us).astype(np.int64)
        late = uniform(seed, b, rows, S_LATE) < p.late_fraction
        k = 1 + ((hash64(seed, b, rows, S_LATE_K) >> one) % np.uint64(p.max_lateness)).astype(np.int64)
        shifted = ts_us - k * p.unit_us
        ts_us = np.where(late & (shifted >= p.run_start_us), shifted, ts_us)  # never before the run's start
        out["ts"] = pa.array(ts_us, pa.timestamp("us", tz="UTC"))
        out[spec.partition_column] = labels.take(ts_us // p.unit_us - p.first_unit)
    if want & {"service", "message"}:
        svc_idx = np.minimum((uniform(seed, b, rows, S_SERVICE) * p.num_services).astype(np.int64), p.num_services - 1)
        svc_idx = np.where(uniform(seed, b, rows, S_SERVICE_ALIAS) < prob[svc_idx], svc_idx, alias[svc_idx])
        out["service"] = _padded("svc-", svc_idx, 3)
    if "host" in want:
        host_idx = ((hash64(seed, b, rows, S_HOST) >> one) % np.uint64(p.num_hosts)).astype(np.int64)
        out["host"] = _padded("host-", host_idx, 4)
    if want & {"level", "message"}:
        u_level = uniform(seed, b, rows, S_LEVEL)
        lvl_idx = sum((u_level > c).astype(np.int64) for c in LEVEL_CDF)
        out["level"] = pa.array(LEVELS).take(lvl_idx)
    if "trace_id" in want:
        out["trace_id"] = _trace_ids(hash64(seed, b, rows, S_KEY), b, rows)
    if "latency_ms" in want:
        q = uniform(seed, b, rows, S_LAT1) * float(LATENCY_QUANTILES)
        i = np.minimum(q.astype(np.int64), LATENCY_QUANTILES - 1)
        latency = np.rint((lat_q[i] + (lat_q[i + 1] - lat_q[i]) * (q - i)) * 1000.0) / 1000.0
        out["latency_ms"] = pa.array(latency, pa.float64())
    if "message" in want:
        out["message"] = _messages(hash64(seed, b, rows, S_MSG), lvl_idx, svc_idx, spec.num_services)
    names = [f.name for f in schema if f.name in want]
    return pa.Table.from_arrays([out[c] for c in names], schema=pa.schema([schema.field(c) for c in names]))


@lru_cache(maxsize=64)
def _labels(prefix: str, count: int, width: int) -> pa.Array:
    """``prefix`` + each of ``range(count)`` zero-padded to ``width`` digits (wider numbers in full)."""
    return pa.array([f"{prefix}{v:0{width}d}" for v in range(count)], pa.string())


def _padded(prefix: str, idx: np.ndarray, width: int) -> pa.Array:
    """The label of each index; labels are built for the indexes present only (hosts are unbounded)."""
    if not len(idx):
        return pa.array([], pa.string())
    return _labels(prefix, int(idx.max()) + 1, width).take(idx)


def _string_array(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """A string array over UTF-8 bytes ``data`` (uint8) and ``offsets`` (n + 1, int32)."""
    return pa.Array.from_buffers(pa.string(), len(offsets) - 1,
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_DIGIT0 = ord("0")


def _digits(values: np.ndarray, width: int) -> np.ndarray:
    """``width`` zero-padded decimal digits (ASCII) of each non-negative value below ``10**width``."""
    out = np.empty((len(values), width), dtype=np.uint8)
    rest = values.astype(np.int64)
    for col in range(width - 1, -1, -1):
        out[:, col] = rest % 10 + _DIGIT0
        rest //= 10
    return out


def _trace_ids(h: np.ndarray, b: int, rows: np.ndarray) -> pa.Array:
    """:func:`workloads.rowdef.trace_id` of every row, built as one fixed-width byte matrix."""
    n = len(rows)
    if n and int(rows.max()) >= 10**8:  # a wider row number: rare, format per row
        return pa.array([trace_id(k, b, r) for k, r in zip(h.tolist(), rows.tolist(), strict=True)], pa.string())
    mid = np.frombuffer(f"-{b:06d}-".encode(), dtype=np.uint8)
    width = 16 + len(mid) + 8
    mat = np.empty((n, width), dtype=np.uint8)
    be = h.astype(">u8").view(np.uint8).reshape(n, 8)  # big-endian bytes: two hex digits each
    mat[:, 0:16:2] = _HEX[be >> 4]
    mat[:, 1:16:2] = _HEX[be & 15]
    mat[:, 16:16 + len(mid)] = mid
    mat[:, 16 + len(mid):] = _digits(rows, 8)
    return _string_array(mat.reshape(-1), np.arange(n + 1, dtype=np.int64) * width)


# -- messages ---------------------------------------------------------------------------------
_MSG_CHUNK = 65_536  # rows whose messages are assembled at once


class _Pieces:
    """Every piece a message head is made of, and the corpus, in one Arrow string array; with the
    Arrow string view of each piece. Each piece carries the separators around it, so a message is
    its head pieces then a slice of the corpus, concatenated."""

    def __init__(self, num_services: int) -> None:
        def ints(k: int) -> pa.Array:
            return pc.cast(pa.array(np.arange(k)), pa.string())

        kinds: dict[str, pa.Array] = {
            "level": pa.array([f"{lv} [" for lv in LEVELS]),
            "service": pc.binary_join_element_wise("svc-", pc.utf8_lpad(ints(num_services), width=3, padding="0"),
                                                   "] ", ""),
            "path_status": pa.array([f"{p} status={s} user=u" for p in PATHS for s in STATUSES]),
            "user": pc.binary_join_element_wise(pc.utf8_lpad(ints(100000), width=5, padding="0"), " bytes=", ""),
            "bytes": pc.binary_join_element_wise(ints(65536), " ", ""),
            "corpus": pa.array([CORPUS]),
        }
        #: id of a kind's first piece, and every piece's length, by kind
        self.start = dict(zip(kinds, np.cumsum([0] + [len(v) for v in kinds.values()]).tolist(), strict=False))
        self.lengths = {k: pc.binary_length(v).to_numpy().astype(np.int64) for k, v in kinds.items()}
        strings = pa.concat_arrays(list(kinds.values()))
        self.data = strings.buffers()[2]
        self.views = _string_views(strings)
        offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)
        self.corpus_at = int(offsets[self.start["corpus"]])  # where the corpus starts in ``data``
        self.corpus = np.frombuffer(CORPUS.encode(), dtype=np.uint8)

    def corpus_views(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """String views of corpus slices ``[start, start + length)``; every slice is over 12 bytes."""
        views = np.zeros((len(start), 16), dtype=np.uint8)
        views[:, :4] = length.astype("<i4").view(np.uint8).reshape(-1, 4)
        views[:, 4:8] = self.corpus[start[:, None] + np.arange(4)]
        views[:, 12:] = (start + self.corpus_at).astype("<i4").view(np.uint8).reshape(-1, 4)
        return views.view("V16").ravel()

    def concat(self, views: np.ndarray) -> pa.Array:
        """A string array whose row ``i`` is the concatenation of the strings of views ``views[i, :]``.

        Arrow's cast from string views to strings copies the pieces one after another: the data
        buffer then holds the rows back to back, and every ``views.shape[1]``-th offset starts a row."""
        n, k = views.shape
        arr = pa.Array.from_buffers(pa.string_view(), n * k, [None, pa.py_buffer(views.ravel()), self.data])
        flat = arr.cast(pa.string())
        offsets = np.frombuffer(flat.buffers()[1], dtype=np.int32)[::k]
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(np.ascontiguousarray(offsets)),
                                                      flat.buffers()[2]])


def _string_views(strings: pa.Array) -> np.ndarray:
    """The Arrow string view of each string: 16 bytes, its length then its bytes inline (up to 12)
    or its 4-byte prefix, data buffer 0 and its offset there."""
    offsets = np.frombuffer(strings.buffers()[1], dtype=np.int32)[strings.offset:strings.offset + len(strings) + 1]
    data = np.frombuffer(strings.buffers()[2], dtype=np.uint8)
    lengths = np.diff(offsets)
    views = np.zeros((len(strings), 16), dtype=np.uint8)
    views[:, :4] = lengths.astype("<i4").view(np.uint8).reshape(-1, 4)
    first12 = np.minimum(offsets[:-1, None] + np.arange(12), len(data) - 1)
    views[:, 4:] = np.where(np.arange(12) < lengths[:, None], data[first12], 0)
    long = lengths > 12
    views[long, 8:12] = 0  # data buffer 0
    views[long, 12:] = offsets[:-1][long].astype("<i4").view(np.uint8).reshape(-1, 4)
    return views.view("V16").ravel()


_pieces = lru_cache(maxsize=8)(_Pieces)
_CORPUS_STARTS = np.array(CORPUS_STARTS, dtype=np.int64)


def _messages(h: np.ndarray, lvl_idx: np.ndarray, svc_idx: np.ndarray, num_services: int) -> pa.Array:
    """:func:`workloads.rowdef.message` of every row, in chunks of :data:`_MSG_CHUNK` rows."""
    chunks = [_message_chunk(h[lo:lo + _MSG_CHUNK], lvl_idx[lo:lo + _MSG_CHUNK], svc_idx[lo:lo + _MSG_CHUNK],
                             num_services) for lo in range(0, len(h), _MSG_CHUNK)]
    if not chunks:
        return pa.array([], pa.string())
    return chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)


def _message_chunk(h: np.ndarray, lvl_idx: np.ndarray, svc_idx: np.ndarray, num_services: int) -> pa.Array:
    """Each row's message as five head pieces and a corpus slice that ends at the row's target length."""
    pieces = _pieces(num_services)
    start, plen = pieces.start, pieces.lengths

    def bits(shift: int, mod: int) -> np.ndarray:
        return ((h >> np.uint64(shift)) % np.uint64(mod)).astype(np.int64)

    head = [("level", lvl_idx), ("service", svc_idx), ("path_status", bits(1, len(PATHS)) * 8 + bits(7, 8)),
            ("user", bits(17, 100000)), ("bytes", bits(33, 65536))]
    views = np.empty((len(h), len(head) + 1), dtype="V16")
    head_len = np.zeros(len(h), dtype=np.int64)
    for j, (kind, idx) in enumerate(head):
        idx = idx.astype(np.int64)
        views[:, j] = pieces.views[start[kind] + idx]
        head_len += plen[kind][idx]
    tail_len = 150 + bits(50, 51) - head_len
    views[:, -1] = pieces.corpus_views(_CORPUS_STARTS[bits(20, len(CORPUS_STARTS))], tail_len)
    return pieces.concat(views)


def batch_table(spec: WorkloadSpec, b: int, columns: tuple[str, ...] | None = None) -> pa.Table:
    """Batch ``b``'s inserted rows, generated on the driver (row-index order); ``columns``: only these."""
    n = batch_num_records(spec, b)
    return _rows(spec, b, np.arange(n, dtype=np.int64), n, columns)


def batch_partition_counts(spec: WorkloadSpec, b: int) -> dict[str, int]:
    """Rows per partition value of batch ``b`` (exact)."""
    return table_partition_counts(batch_table(spec, b, (spec.partition_column,)), spec.partition_column)


def table_partition_counts(tbl: pa.Table, column: str) -> dict[str, int]:
    """Rows of ``tbl`` per value of ``column``, in value order."""
    counts = pc.value_counts(tbl.column(column)).to_pylist()
    return {d["values"]: d["counts"] for d in sorted(counts, key=lambda d: d["values"])}


def batch_tasks(parallelism: int, spec: WorkloadSpec, b: int) -> int:
    """The Spark tasks (partitions) :func:`batch_df` generates batch ``b`` in by default: one per core
    (``parallelism``), fewer for a batch of fewer chunks."""
    return max(1, min(parallelism, -(-batch_num_records(spec, b) // _TASK_CHUNK)))


def batch_df(spark, spec: WorkloadSpec, b: int, num_slices: int | None = None):  # noqa: ANN001, ANN201
    """Batch ``b`` generated inside Spark tasks; identical rows (and row order) to :func:`batch_table`.

    Tasks take consecutive chunks of rows (of at most :data:`_TASK_CHUNK`); by default one task
    per core, fewer for a batch of fewer chunks. The input is one id per chunk, not per row."""
    n = batch_num_records(spec, b)
    slices = num_slices or batch_tasks(spark.sparkContext.defaultParallelism, spec, b)
    chunk = min(_TASK_CHUNK, -(-n // slices))
    schema = arrow_schema(spec)

    def gen(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rb in batches:
            for c in rb.column(0).to_pylist():
                rows = np.arange(c * chunk, min((c + 1) * chunk, n), dtype=np.int64)
                yield from _rows(spec, b, rows, n).to_batches(max_chunksize=_SEND_ROWS)

    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.range(0, -(-n // chunk), numPartitions=slices).mapInArrow(gen, from_arrow_schema(schema))


_TASK_CHUNK = 65_536  # rows a Spark task generates at once
_SEND_ROWS = 8_192  # rows per Arrow batch sent to the JVM (smaller batches convert faster there)


# -- corrections ------------------------------------------------------------------------------
def _picks(spec: WorkloadSpec, b: int, fraction: float, stream: int) -> list[tuple[int, int]]:
    """Distinct (earlier batch, row) pairs chosen for corrections in batch ``b``."""
    if b == 0 or fraction <= 0:
        return []
    count = int(round(batch_num_records(spec, b) * fraction))
    idx = np.arange(count, dtype=np.int64)
    hb = hash64(spec.seed, b, idx, stream)
    batches = (hb % np.uint64(b)).astype(np.int64)
    hr = hash64(spec.seed, b, idx, stream + 100)
    out = []
    seen = set()
    for pb, h in zip(batches.tolist(), hr.tolist(), strict=True):
        row = h % batch_num_records(spec, pb)
        if (pb, row) not in seen:
            seen.add((pb, row))
            out.append((pb, row))
    return out


def _original_rows(spec: WorkloadSpec, picks: list[tuple[int, int]]) -> pa.Table:
    if not picks:
        return arrow_schema(spec).empty_table()
    parts = []
    by_batch: dict[int, list[int]] = {}
    for pb, row in picks:
        by_batch.setdefault(pb, []).append(row)
    for pb in sorted(by_batch):
        rows = np.array(sorted(by_batch[pb]), dtype=np.int64)
        parts.append(_rows(spec, pb, rows, batch_num_records(spec, pb)))
    return pa.concat_tables(parts)


def batch_updates_table(spec: WorkloadSpec, b: int) -> pa.Table:
    """Updates carried by batch ``b``: earlier keys (same ts and partition) with a new latency and message.

    Keys also picked for deletion in the same batch are not updated."""
    deleted = set(_picks(spec, b, spec.delete_fraction, S_DEL_PICK))
    picks = [p for p in _picks(spec, b, spec.corrections_fraction, S_UPD_PICK) if p not in deleted]
    orig = _original_rows(spec, picks)
    if orig.num_rows == 0:
        return orig
    idx = np.arange(orig.num_rows, dtype=np.int64)
    lat = np.round(1000.0 + 1000.0 * uniform(spec.seed, b, idx, S_UPD_VAL), 3)
    msg = [f"CORRECTED in batch {b}: " + m for m in orig.column("message").to_pylist()]
    orig = orig.set_column(orig.schema.get_field_index("latency_ms"), "latency_ms", pa.array(lat, pa.float64()))
    return orig.set_column(orig.schema.get_field_index("message"), "message", pa.array(msg, pa.string()))


def batch_deletes_table(spec: WorkloadSpec, b: int) -> pa.Table:
    """Keys (with their partition) deleted by batch ``b``."""
    orig = _original_rows(spec, _picks(spec, b, spec.delete_fraction, S_DEL_PICK))
    return orig.select(["trace_id", spec.partition_column])


def batch_updates_df(spark, spec: WorkloadSpec, b: int):  # noqa: ANN001, ANN201
    from pyspark.sql.pandas.types import from_arrow_schema

    tbl = batch_updates_table(spec, b)
    return spark.createDataFrame(tbl.to_pandas(), schema=from_arrow_schema(tbl.schema))
