"""Seeded generator of log-ingestion micro-batches.

Every value of row ``i`` of batch ``b`` comes from a counter-based hash of ``(seed, b, i,
stream)`` (splitmix64), so a row does not depend on which task or executor produced it: the
pyarrow path (:func:`batch_table`) and the Spark path (:func:`batch_df`, generated inside tasks
by ``mapInArrow`` over a range of chunk ids) yield identical rows whatever the number of slices.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.spec import WorkloadSpec

LEVELS = ("INFO", "DEBUG", "WARN", "ERROR")
LEVEL_SHARES = (0.80, 0.10, 0.07, 0.03)
_WORDS = ("request", "handled", "upstream", "cache", "miss", "hit", "retry", "timeout", "queue", "shard",
          "token", "session", "payload", "latency", "budget", "exceeded", "accepted", "rejected", "commit",
          "replica", "leader", "lease", "renewed", "snapshot", "compaction", "flush", "segment", "index")
_PATHS = ("/api/v1/orders", "/api/v1/users", "/api/v2/search", "/healthz", "/api/v1/payments", "/internal/sync")
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)

# Streams: independent hash sequences per attribute.
S_JITTER, S_LATE, S_LATE_K, S_SERVICE, S_HOST, S_LEVEL, S_LAT1, S_LAT2, S_MSG, S_KEY, S_SIZE = range(11)
S_UPD_PICK, S_UPD_VAL, S_DEL_PICK = 20, 21, 22


def _splitmix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def hash64(seed: int, batch: int, rows: np.ndarray, stream: int) -> np.ndarray:
    """A 64-bit hash per row: a pure function of (seed, batch, row, stream)."""
    with np.errstate(over="ignore"):
        base = _splitmix(np.array([seed * 1_000_003 + stream * 7_919], dtype=np.uint64))[0]
        base = _splitmix(np.array([base ^ np.uint64(batch)], dtype=np.uint64))[0]
        return _splitmix(rows.astype(np.uint64) ^ base)


def uniform(seed: int, batch: int, rows: np.ndarray, stream: int) -> np.ndarray:
    return (hash64(seed, batch, rows, stream) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def arrow_schema(spec: WorkloadSpec) -> pa.Schema:
    return pa.schema([
        ("ts", pa.timestamp("us", tz="UTC")), (spec.partition_column, pa.string()), ("service", pa.string()),
        ("host", pa.string()), ("level", pa.string()), ("trace_id", pa.string()), ("latency_ms", pa.float64()),
        ("message", pa.string()),
    ])


ARROW_SCHEMA = arrow_schema(WorkloadSpec())


def partition_unit(spec: WorkloadSpec) -> timedelta:
    return timedelta(days=1) if spec.partition_granularity == "day" else timedelta(hours=1)


def partition_value(spec: WorkloadSpec, moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H")


def batch_span(spec: WorkloadSpec) -> timedelta:
    return partition_unit(spec) * spec.num_partitions / spec.num_batches


def batch_ts_range(spec: WorkloadSpec, b: int) -> tuple[datetime, datetime]:
    """[start, end) of the on-time rows of batch ``b`` (late rows fall before it)."""
    span = batch_span(spec)
    return spec.start + span * b, spec.start + span * (b + 1)


@lru_cache(maxsize=64)
def bytes_per_record(spec: WorkloadSpec) -> float:
    """Written Parquet bytes per record (snappy), measured once on a sample batch."""
    sample = spec.model_copy(update={"batch_records": 5000, "batch_mb": None, "arrival": "steady"})
    tbl = _rows(sample, 0, np.arange(5000, dtype=np.int64), 5000)
    buf = io.BytesIO()
    pq.write_table(tbl, buf, compression="snappy")
    return buf.tell() / tbl.num_rows


def records_for_mb(spec: WorkloadSpec, mb: float) -> int:
    return max(1, int(round(mb * (1 << 20) / bytes_per_record(spec))))


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


@lru_cache(maxsize=64)
def _service_cdf(num: int, skew: float) -> np.ndarray:
    w = 1.0 / np.power(np.arange(1, num + 1, dtype=np.float64), skew)
    return np.cumsum(w / w.sum())


def _rows(spec: WorkloadSpec, b: int, rows: np.ndarray, n: int) -> pa.Table:
    """Rows ``rows`` of batch ``b`` (of ``n`` rows), vectorised: no per-row Python."""
    seed = spec.seed
    start, end = batch_ts_range(spec, b)
    span_us = (end - start) / timedelta(microseconds=1)
    epoch = datetime(1970, 1, 1, tzinfo=start.tzinfo)
    start_us = int((start - epoch) / timedelta(microseconds=1))
    run_start_us = int((spec.start - epoch) / timedelta(microseconds=1))
    jitter = uniform(seed, b, rows, S_JITTER)
    ts_us = start_us + ((rows + jitter) / n * span_us).astype(np.int64)
    unit_us = int(partition_unit(spec) / timedelta(microseconds=1))
    late = uniform(seed, b, rows, S_LATE) < spec.late_fraction
    k = 1 + (hash64(seed, b, rows, S_LATE_K) % np.uint64(spec.max_lateness_partitions)).astype(np.int64)
    shifted = ts_us - k * unit_us
    ts_us = np.where(late & (shifted >= run_start_us), shifted, ts_us)  # never before the run's start
    ts = pa.array(ts_us, pa.timestamp("us", tz="UTC"))
    svc_idx = np.searchsorted(_service_cdf(spec.num_services, spec.service_skew), uniform(seed, b, rows, S_SERVICE))
    svc_idx = np.minimum(svc_idx, spec.num_services - 1)
    host_idx = (hash64(seed, b, rows, S_HOST) % np.uint64(spec.num_hosts)).astype(np.int64)
    lvl_idx = np.searchsorted(np.cumsum(LEVEL_SHARES), uniform(seed, b, rows, S_LEVEL))
    lvl_idx = np.minimum(lvl_idx, len(LEVELS) - 1)
    u1 = np.maximum(uniform(seed, b, rows, S_LAT1), 1e-12)
    u2 = uniform(seed, b, rows, S_LAT2)
    normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
    latency = np.round(np.exp(3.5 + 0.9 * normal), 3)
    return pa.Table.from_arrays(
        [ts, _partition_values(spec, ts_us, unit_us), _labels("svc-{:03d}", spec.num_services).take(svc_idx),
         _labels("host-{:04d}", spec.num_hosts).take(host_idx), _labels("{}", LEVELS).take(lvl_idx),
         _trace_ids(hash64(seed, b, rows, S_KEY), b, rows), pa.array(latency, pa.float64()),
         _messages(hash64(seed, b, rows, S_MSG), lvl_idx, svc_idx, spec.num_services)],
        schema=arrow_schema(spec))


@lru_cache(maxsize=64)
def _labels(fmt: str, values: int | tuple[str, ...]) -> pa.Array:
    """``fmt`` applied to ``range(values)`` (or to each of ``values``): the strings a column takes from."""
    return pa.array([fmt.format(v) for v in (range(values) if isinstance(values, int) else values)], pa.string())


def _partition_values(spec: WorkloadSpec, ts_us: np.ndarray, unit_us: int) -> pa.Array:
    """The partition string of each timestamp: Arrow's strftime of each distinct (day or hour) unit, taken."""
    if not len(ts_us):
        return pa.array([], pa.string())
    unit = ts_us // unit_us  # floor: the UTC day (hour) each row falls in
    first = int(unit.min())
    starts = pa.array(np.arange(first, int(unit.max()) + 1, dtype=np.int64) * unit_us, pa.timestamp("us", tz="UTC"))
    fmt = "%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H"
    return pc.strftime(starts, format=fmt).take(unit - first)


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
    """``f"{h:016x}-{b:06d}-{row:08d}"`` per row, built as one fixed-width byte matrix."""
    n = len(rows)
    if n and int(rows.max()) >= 10**8:  # a wider row number: rare, format per row
        return pa.array([f"{k:016x}-{b:06d}-{r:08d}" for k, r in zip(h.tolist(), rows.tolist(), strict=True)],
                        pa.string())
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
_STATUSES = (200, 201, 204, 400, 404, 409, 500, 503)
_MSG_CHUNK = 65_536  # rows whose messages are assembled at once


def _message(h: int, level: str, service: str) -> str:
    """The message of one row (reference definition; :func:`_messages` builds the same bytes vectorised)."""
    words = [_WORDS[(h >> (5 * i)) % len(_WORDS)] for i in range(12)]
    path = _PATHS[h % len(_PATHS)]
    status = _STATUSES[(h >> 7) % 8]
    text = (f"{level} [{service}] {path} status={status} user=u{(h >> 17) % 100000:05d} "
            f"bytes={(h >> 33) % 65536} {' '.join(words)}")
    target = 150 + (h >> 50) % 51
    while len(text) < target:
        text += " " + _WORDS[(h >> (len(text) % 60)) % len(_WORDS)]
    return text[:target]


_PAIR_SPAN = 23  # prefixes of " " + word + " " + word kept per pair: lengths 0..22 (words have up to 10 letters)


class _Pieces:
    """Every piece a message is cut from, as one Arrow string array and as Arrow string views of it.

    Each piece carries the separators around it, so a message is its pieces concatenated."""

    def __init__(self, num_services: int) -> None:
        def ints(k: int) -> pa.Array:
            return pc.cast(pa.array(np.arange(k)), pa.string())

        kinds: dict[str, pa.Array] = {
            "level": pa.array([f"{lv} [" for lv in LEVELS]),
            "service": pc.binary_join_element_wise("svc-", pc.utf8_lpad(ints(num_services), width=3, padding="0"),
                                                   "] ", ""),
            "path_status": pa.array([f"{p} status={s} user=u" for p in _PATHS for s in _STATUSES]),
            "user": pc.binary_join_element_wise(pc.utf8_lpad(ints(100000), width=5, padding="0"), " bytes=", ""),
            "bytes": pc.binary_join_element_wise(ints(65536), " ", ""),
            "word": pa.array(_WORDS),
            "word_pair": pa.array([(f" {a} {b}")[:e] for a in _WORDS for b in _WORDS for e in range(_PAIR_SPAN)]),
        }
        #: id of a kind's first piece, and every piece's length, by kind
        self.start = dict(zip(kinds, np.cumsum([0] + [len(v) for v in kinds.values()]).tolist(), strict=False))
        self.lengths = {k: pc.binary_length(v).to_numpy().astype(np.int64) for k, v in kinds.items()}
        strings = pa.concat_arrays(list(kinds.values()))
        self.data = strings.buffers()[2]
        self.views = _string_views(strings)

    def concat(self, ids: np.ndarray) -> pa.Array:
        """A string array whose row ``i`` is the concatenation of pieces ``ids[i, :]``.

        Arrow's cast from string views to strings copies the pieces one after another: the data
        buffer then holds the rows back to back, and every ``ids.shape[1]``-th offset starts a row."""
        n, k = ids.shape
        views = pa.Array.from_buffers(pa.string_view(), n * k, [None, pa.py_buffer(self.views[ids.ravel()]), self.data])
        flat = views.cast(pa.string())
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


def _messages(h: np.ndarray, lvl_idx: np.ndarray, svc_idx: np.ndarray, num_services: int) -> pa.Array:
    """:func:`_message` of every row, in chunks of :data:`_MSG_CHUNK` rows."""
    chunks = [_message_chunk(h[lo:lo + _MSG_CHUNK], lvl_idx[lo:lo + _MSG_CHUNK], svc_idx[lo:lo + _MSG_CHUNK],
                             num_services) for lo in range(0, len(h), _MSG_CHUNK)]
    if not chunks:
        return pa.array([], pa.string())
    return chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)


def _message_chunk(h: np.ndarray, lvl_idx: np.ndarray, svc_idx: np.ndarray, num_services: int) -> pa.Array:
    """Each row's message as the pieces it is made of, cut at the row's target length.

    The head (level .. first word) is at most 80 bytes (services number at most 100,000), shorter than
    any target (150..200): never cut. The words after it (11, then padding) go two to a piece, the
    piece cut where the target falls."""
    pieces = _pieces(num_services)
    start, plen = pieces.start, pieces.lengths
    n = len(h)
    nw = np.uint64(len(_WORDS))
    target = (150 + (h >> np.uint64(50)) % np.uint64(51)).astype(np.int64)
    head = [("level", lvl_idx), ("service", svc_idx),
            ("path_status", (h % np.uint64(len(_PATHS))) * np.uint64(8) + (h >> np.uint64(7)) % np.uint64(8)),
            ("user", (h >> np.uint64(17)) % np.uint64(100000)), ("bytes", (h >> np.uint64(33)) % np.uint64(65536)),
            ("word", h % nw)]
    columns = [start[kind] + idx.astype(np.int64) for kind, idx in head]  # piece ids, one column per piece
    length = sum(plen[kind][col - start[kind]] for (kind, _), col in zip(head, columns, strict=True))
    pos = length.copy()  # where the words after the head start
    word_len = plen["word"] + 1  # with its leading space
    words = [((h >> np.uint64(5 * i)) % nw).astype(np.int64) for i in range(1, 12)]
    for w in words:
        length += word_len[w]
    rows = np.flatnonzero(length < target)
    while len(rows):  # pad with words chosen by the text's length so far; rows already done get word 0, cut off
        pad = np.zeros(n, dtype=np.int64)
        pad[rows] = ((h[rows] >> (length[rows] % 60).astype(np.uint64)) % nw).astype(np.int64)
        words.append(pad)
        length[rows] += word_len[pad[rows]]
        rows = rows[length[rows] < target[rows]]
    words += [np.zeros(n, dtype=np.int64)] * (len(words) % 2)
    for first, second in zip(words[0::2], words[1::2], strict=True):
        both = word_len[first] + word_len[second]
        keep = np.clip(target - pos, 0, both)
        columns.append(start["word_pair"] + (first * len(_WORDS) + second) * _PAIR_SPAN + keep)
        pos += both
    ids = np.empty((n, len(columns)), dtype=np.int32)
    for j, col in enumerate(columns):
        ids[:, j] = col
    return pieces.concat(ids)


def batch_table(spec: WorkloadSpec, b: int) -> pa.Table:
    """Batch ``b``'s inserted rows, generated on the driver (row-index order)."""
    n = batch_num_records(spec, b)
    return _rows(spec, b, np.arange(n, dtype=np.int64), n)


def rows_range_table(spec: WorkloadSpec, b: int, lo: int, hi: int) -> pa.Table:
    """Rows ``lo..hi-1`` of batch ``b``: what one generator task produces."""
    return _rows(spec, b, np.arange(lo, hi, dtype=np.int64), batch_num_records(spec, b))


def batch_partition_counts(spec: WorkloadSpec, b: int) -> dict[str, int]:
    """Rows per partition value of batch ``b`` (exact; vectorised over row indexes, no strings)."""
    tbl = batch_table(spec, b).select([spec.partition_column])
    counts = pc.value_counts(tbl.column(0)).to_pylist()
    return {d["values"]: d["counts"] for d in sorted(counts, key=lambda d: d["values"])}


def batch_df(spark, spec: WorkloadSpec, b: int, num_slices: int | None = None):  # noqa: ANN001, ANN201
    """Batch ``b`` generated inside Spark tasks; identical rows (and row order) to :func:`batch_table`.

    Tasks take consecutive chunks of rows (of at most :data:`_TASK_CHUNK`); by default one task
    per core, fewer for a batch of fewer chunks. The input is one id per chunk, not per row."""
    n = batch_num_records(spec, b)
    slices = num_slices or max(1, min(spark.sparkContext.defaultParallelism, -(-n // _TASK_CHUNK)))
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


def batch_deletes_df(spark, spec: WorkloadSpec, b: int):  # noqa: ANN001, ANN201
    from pyspark.sql.pandas.types import from_arrow_schema

    tbl = batch_deletes_table(spec, b)
    return spark.createDataFrame(tbl.to_pandas(), schema=from_arrow_schema(tbl.schema))
