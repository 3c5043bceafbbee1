"""Seeded generator of log-ingestion micro-batches.

Every value of row ``i`` of batch ``b`` comes from a counter-based hash of ``(seed, b, i,
stream)`` (splitmix64), so a row does not depend on which task or executor produced it: the
pyarrow path (:func:`batch_table`) and the Spark path (:func:`batch_df`, generated inside tasks
by ``mapInArrow`` over ``spark.range``) yield identical rows whatever the number of slices.
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
    fmt = "%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H"
    part = pc.strftime(ts, format=fmt)
    svc_idx = np.searchsorted(_service_cdf(spec.num_services, spec.service_skew), uniform(seed, b, rows, S_SERVICE))
    svc_idx = np.minimum(svc_idx, spec.num_services - 1)
    services = np.array([f"svc-{i:03d}" for i in range(spec.num_services)], dtype=object)[svc_idx]
    host_idx = (hash64(seed, b, rows, S_HOST) % np.uint64(spec.num_hosts)).astype(np.int64)
    hosts = np.array([f"host-{i:04d}" for i in range(spec.num_hosts)], dtype=object)[host_idx]
    lvl_idx = np.searchsorted(np.cumsum(LEVEL_SHARES), uniform(seed, b, rows, S_LEVEL))
    levels = np.array(LEVELS, dtype=object)[np.minimum(lvl_idx, len(LEVELS) - 1)]
    u1 = np.maximum(uniform(seed, b, rows, S_LAT1), 1e-12)
    u2 = uniform(seed, b, rows, S_LAT2)
    normal = np.sqrt(-2.0 * np.log(u1)) * np.cos(2 * np.pi * u2)
    latency = np.round(np.exp(3.5 + 0.9 * normal), 3)
    key_hash = hash64(seed, b, rows, S_KEY)
    keys = [f"{h:016x}-{b:06d}-{r:08d}" for h, r in zip(key_hash.tolist(), rows.tolist(), strict=True)]
    msg_hash = hash64(seed, b, rows, S_MSG).tolist()
    messages = [_message(h, lv, sv) for h, lv, sv in zip(msg_hash, levels.tolist(), services.tolist(), strict=True)]
    return pa.Table.from_arrays(
        [ts, part, pa.array(services, pa.string()), pa.array(hosts, pa.string()), pa.array(levels, pa.string()),
         pa.array(keys, pa.string()), pa.array(latency, pa.float64()), pa.array(messages, pa.string())],
        schema=arrow_schema(spec))


def _message(h: int, level: str, service: str) -> str:
    words = [_WORDS[(h >> (5 * i)) % len(_WORDS)] for i in range(12)]
    path = _PATHS[h % len(_PATHS)]
    status = (200, 201, 204, 400, 404, 409, 500, 503)[(h >> 7) % 8]
    text = (f"{level} [{service}] {path} status={status} user=u{(h >> 17) % 100000:05d} "
            f"bytes={(h >> 33) % 65536} {' '.join(words)}")
    target = 150 + (h >> 50) % 51
    while len(text) < target:
        text += " " + _WORDS[(h >> (len(text) % 60)) % len(_WORDS)]
    return text[:target]


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
    """Batch ``b`` generated inside Spark tasks; identical rows to :func:`batch_table`."""
    n = batch_num_records(spec, b)
    slices = num_slices or max(1, min(8, n // 50_000 + 1))
    schema = arrow_schema(spec)

    def gen(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for rb in batches:
            ids = rb.column(0).to_numpy()
            if len(ids):
                yield from _rows(spec, b, ids.astype(np.int64), n).to_batches()

    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.range(0, n, numPartitions=slices).mapInArrow(gen, from_arrow_schema(schema))


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
