"""The definition of a generated row: what every value of row ``i`` of batch ``b`` is.

Every value of row ``i`` of batch ``b`` is a function of hashes ``xxhash64(seed, b, stream, i)``
(Spark's ``xxhash64``: XXH64 over 64-bit integers, seed 42, each argument hashed with the previous
hash as seed) and of per-batch constants computed once on the driver (:class:`RowPlan`). Only
operations that are exact and identical in numpy and on the JVM are used on per-row values, so
the definition is reproducible outside numpy (Spark SQL's own ``xxhash64`` gives these hashes):
64-bit integer hashing, shifts and remainders of non-negative integers, IEEE-754 ``+ - * /``,
truncating casts, ``rint`` and table lookups. Transcendental functions (``log``, ``exp``,
``pow``) only ever build the driver's tables, so both paths read the same doubles.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from statistics import NormalDist

import numpy as np
import pyarrow as pa

from workloads.spec import WorkloadSpec

LEVELS = ("INFO", "DEBUG", "WARN", "ERROR")
LEVEL_SHARES = (0.80, 0.10, 0.07, 0.03)
WORDS = ("request", "handled", "upstream", "cache", "miss", "hit", "retry", "timeout", "queue", "shard",
         "token", "session", "payload", "latency", "budget", "exceeded", "accepted", "rejected", "commit",
         "replica", "leader", "lease", "renewed", "snapshot", "compaction", "flush", "segment", "index")
PATHS = ("/api/v1/orders", "/api/v1/users", "/api/v2/search", "/healthz", "/api/v1/payments", "/internal/sync")
STATUSES = (200, 201, 204, 400, 404, 409, 500, 503)
LATENCY_QUANTILES = 1024  # latency is interpolated between this many + 1 log-normal quantiles

# Streams: independent hash sequences per attribute.
S_JITTER, S_LATE, S_LATE_K, S_SERVICE, S_HOST, S_LEVEL, S_LAT1, S_LAT2, S_MSG, S_KEY, S_SIZE = range(11)
# S_LAT2 is unused since latency takes one uniform; kept so the other streams keep their numbers.
S_SERVICE_ALIAS = 11
S_UPD_PICK, S_UPD_VAL, S_DEL_PICK = 20, 21, 22

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
SPARK_HASH_SEED = 42  # the seed of Spark SQL's xxhash64


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def hash_long(values: np.ndarray, seed: np.uint64 | int) -> np.ndarray:
    """XXH64 of each 64-bit integer with ``seed``: Spark's ``XXH64.hashLong`` (unsigned result)."""
    with np.errstate(over="ignore"):
        x = np.asarray(values).astype(np.int64).view(np.uint64)
        h = np.uint64(seed) + _P5 + np.uint64(8)
        h = h ^ (_rotl(x * _P2, 31) * _P1)
        h = _rotl(h, 27) * _P1 + _P4
        h = (h ^ (h >> np.uint64(33))) * _P2
        h = (h ^ (h >> np.uint64(29))) * _P3
        return h ^ (h >> np.uint64(32))


CORPUS_WORDS = 2048
MESSAGE_TAIL_MAX = 200  # no message tail is longer (targets are 150..200 characters)


def _corpus() -> tuple[str, tuple[int, ...]]:
    """Log text a message's tail is cut from, and the offsets of its words that start a tail."""
    picks = hash_long(np.arange(CORPUS_WORDS, dtype=np.int64), 7) % np.uint64(len(WORDS))
    text = " ".join(WORDS[int(k)] for k in picks)
    starts, pos = [], 0
    for k in picks:
        if pos + MESSAGE_TAIL_MAX <= len(text):
            starts.append(pos)
        pos += len(WORDS[int(k)]) + 1
    return text, tuple(starts)


CORPUS, CORPUS_STARTS = _corpus()


@lru_cache(maxsize=4096)
def stream_seed(seed: int, batch: int, stream: int) -> np.uint64:
    """Spark's ``xxhash64(seed, batch, stream)`` (as longs): the seed that hashes the row index."""
    h = np.uint64(SPARK_HASH_SEED)
    for v in (seed, batch, stream):
        h = hash_long(np.array([v], dtype=np.int64), h)[0]
    return h


def hash64(seed: int, batch: int, rows: np.ndarray, stream: int) -> np.ndarray:
    """A 64-bit hash per row, ``xxhash64(seed, batch, stream, row)``: a pure function of its arguments."""
    return hash_long(rows, stream_seed(seed, batch, stream))


def uniform(seed: int, batch: int, rows: np.ndarray, stream: int) -> np.ndarray:
    """A double in [0, 1) per row: the hash's top 53 bits over 2**53."""
    return (hash64(seed, batch, rows, stream) >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table (Vose's construction) of ``weights``: ``(prob, alias)``.

    Index ``j = floor(u1 * k)`` is kept when ``u2 < prob[j]`` and replaced by ``alias[j]``
    otherwise: an exact draw from the weights in O(1) with two uniforms."""
    k = len(weights)
    scaled = np.asarray(weights, dtype=np.float64) * k / float(np.sum(weights))
    prob, alias = np.ones(k, dtype=np.float64), np.arange(k, dtype=np.int64)
    small = [i for i in range(k) if scaled[i] < 1.0]
    large = [i for i in range(k) if scaled[i] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        prob[s], alias[s] = scaled[s], g
        scaled[g] = scaled[g] + scaled[s] - 1.0
        (small if scaled[g] < 1.0 else large).append(g)
    return prob, alias


@lru_cache(maxsize=64)
def service_alias(num: int, skew: float) -> tuple[np.ndarray, np.ndarray]:
    """The alias table of the zipf(``skew``) weights of ``num`` services."""
    return alias_table(1.0 / np.power(np.arange(1, num + 1, dtype=np.float64), skew))


LEVEL_CDF = tuple(np.cumsum(LEVEL_SHARES)[:-1].tolist())  # a level is the number of thresholds below u


@lru_cache(maxsize=1)
def latency_table() -> tuple[float, ...]:
    """Log-normal (mu 3.5, sigma 0.9) latency quantiles at i / 1024, tails clipped to 1e-6."""
    normal = NormalDist()
    out = []
    for i in range(LATENCY_QUANTILES + 1):
        p = min(max(i / LATENCY_QUANTILES, 1e-6), 1.0 - 1e-6)
        out.append(float(np.exp(3.5 + 0.9 * normal.inv_cdf(p))))
    return tuple(out)


def arrow_schema(spec: WorkloadSpec) -> pa.Schema:
    """The columns of a generated row (every path yields exactly this schema)."""
    return pa.schema([
        ("ts", pa.timestamp("us", tz="UTC")), (spec.partition_column, pa.string()), ("service", pa.string()),
        ("host", pa.string()), ("level", pa.string()), ("trace_id", pa.string()), ("latency_ms", pa.float64()),
        ("message", pa.string()),
    ])


_UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1)}


def partition_unit(spec: WorkloadSpec) -> timedelta:
    """A partition's span of time (a simulated year asks for it several times per batch)."""
    return _UNITS[spec.partition_granularity]


def partition_value(spec: WorkloadSpec, moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H")


def batch_span(spec: WorkloadSpec) -> timedelta:
    return partition_unit(spec) * spec.num_partitions / spec.num_batches


def batch_ts_range(spec: WorkloadSpec, b: int) -> tuple[datetime, datetime]:
    """[start, end) of the on-time rows of batch ``b`` (late rows fall before it)."""
    span = batch_span(spec)
    return spec.start + span * b, spec.start + span * (b + 1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


@dataclass(frozen=True)
class RowPlan:
    """The driver-side constants of batch ``b``'s ``n`` rows; both paths compute rows from these."""

    seed: int
    batch: int
    n: int
    start_us: int  # on-time rows: start_us + trunc((i + jitter) / n * span_us)
    span_us: float
    run_start_us: int  # a late row never moves before the run's start
    unit_us: int  # one partition (day or hour)
    late_fraction: float
    max_lateness: int
    first_unit: int  # partition labels[k] is unit first_unit + k
    partition_labels: tuple[str, ...]
    num_services: int
    num_hosts: int


def row_plan(spec: WorkloadSpec, b: int, n: int) -> RowPlan:
    """The constants of batch ``b`` of ``n`` rows."""
    start, end = batch_ts_range(spec, b)
    unit_us = int(partition_unit(spec) / _US)
    start_us = int((start - _EPOCH) / _US)
    run_start_us = int((spec.start - _EPOCH) / _US)
    span_us = (end - start) / _US
    lo = max(run_start_us // unit_us, start_us // unit_us - spec.max_lateness_partitions)
    hi = (start_us + int(span_us) + 1) // unit_us
    fmt = "%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H"
    labels = tuple((_EPOCH + _US * (u * unit_us)).strftime(fmt) for u in range(lo, hi + 1))
    return RowPlan(spec.seed, b, n, start_us, span_us, run_start_us, unit_us, spec.late_fraction,
                   spec.max_lateness_partitions, lo, labels, spec.num_services, spec.num_hosts)


def message_head(h: int, level: str, service: str) -> str:
    """The fields a message starts with (at most 80 characters, so never cut)."""
    return (f"{level} [{service}] {PATHS[(h >> 1) % len(PATHS)]} status={STATUSES[(h >> 7) % 8]} "
            f"user=u{(h >> 17) % 100000:05d} bytes={(h >> 33) % 65536} ")


def message(h: int, level: str, service: str) -> str:
    """The message of one row with message hash ``h`` (the reference definition, one row at a time):
    its head, then corpus text from a word start chosen by ``h`` up to the target length (150..200)."""
    head = message_head(h, level, service)
    start = CORPUS_STARTS[(h >> 20) % len(CORPUS_STARTS)]
    return head + CORPUS[start:start + 150 + (h >> 50) % 51 - len(head)]


def trace_id(h: int, b: int, row: int) -> str:
    """The record key of one row with key hash ``h`` (reference definition)."""
    return f"{h:016x}-{b:06d}-{row:08d}"
