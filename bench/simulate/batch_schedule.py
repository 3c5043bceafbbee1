"""Where a long replay's batches land, for the whole horizon at once (the simulator's estimated mode).

Each batch's rows per partition (on-time rows split by time overlap, late rows spread evenly over
the partitions up to ``max_lateness_partitions`` back) and the ``ts`` range of its rows in each of
those partitions, computed with numpy on integer microseconds before the replay loop, instead of
datetime arithmetic per batch. A batch's time range is :func:`workloads.rowdef.batch_ts_range`'s
(``start + batch_span * b``, both exact in microseconds), so the schedule and the generator cut
time the same way.

The rule for the counts: the on-time rows of each partition the batch's time range overlaps are
its share rounded; the rounding's difference goes to the first one. When the others rounded up
past what the first holds (a batch that starts just before a partition boundary), the first keeps
none and the rest is taken back, one row each, from the shares rounded up most: no count is
negative. Rows whose late shift would land before the run's start stay on time (as the generator
does). The rare batches where that take-back happens, or where two pieces of a batch fall in one
partition (a run start off the partitions' grid), go through :func:`_settle` one by one; every
other batch is settled by array arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np

from workloads.generator import batch_num_records
from workloads.rowdef import batch_span, partition_unit, partition_value
from workloads.spec import WorkloadSpec

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def _us(moment: datetime) -> int:
    """``moment`` in microseconds since the epoch (exact)."""
    return (moment - _EPOCH) // _US


def utc_moment(us: int) -> datetime:
    """The UTC instant ``us`` microseconds after the epoch (exact)."""
    return _EPOCH + timedelta(0, 0, us)  # positional: timedelta's keyword parsing costs twice the sum


@dataclass(frozen=True)
class _Grid:
    """A workload's time constants in microseconds."""

    start: int  # the run's first instant
    span: int  # one batch
    unit: int  # one partition (hour or day)
    offset: int  # the run's UTC offset: partition values are its local hours or days

    @classmethod
    def of(cls, spec: WorkloadSpec) -> _Grid:
        offset = spec.start.utcoffset() or timedelta(0)
        return cls(_us(spec.start), batch_span(spec) // _US, partition_unit(spec) // _US, offset // _US)

    def key(self, us: np.ndarray) -> np.ndarray:
        """The partition (its index on the local grid of ``unit``) of each instant."""
        return (us + self.offset) // self.unit


@lru_cache(maxsize=1 << 16)
def partition_label(spec: WorkloadSpec, key: int) -> str:
    """The partition value of partition ``key`` (:meth:`_Grid.key`), formatted once per partition."""
    g = _Grid.of(spec)
    return partition_value(spec, spec.start + timedelta(microseconds=key * g.unit - g.offset - g.start))


@dataclass(frozen=True)
class BatchSchedule:
    """Batches ``first`` .. ``first + len - 1`` of a horizon: each one's partitions (its entries
    ``offsets[i]:offsets[i+1]``, in partition order), rows, and ``ts`` range of those rows."""

    first: int
    offsets: list[int]
    keys: list[int]  # partition of each entry (:meth:`_Grid.key`)
    counts: list[int]
    ts_lo: list[int]  # the entry's rows' ts range, microseconds since the epoch (-1: none overlaps)
    ts_hi: list[int]

    def __len__(self) -> int:
        return len(self.offsets) - 1


def batch_bounds_us(spec: WorkloadSpec, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``[start, end)`` of batches ``first`` .. ``first + count - 1`` in microseconds since the epoch:
    :func:`workloads.rowdef.batch_ts_range` of each, as integers."""
    g = _Grid.of(spec)
    start = g.start + g.span * np.arange(first, first + count, dtype=np.int64)
    return start, start + g.span


def build_schedule(spec: WorkloadSpec, first: int, count: int) -> BatchSchedule:
    """The schedule of batches ``first`` .. ``first + count - 1`` of ``spec``'s horizon."""
    g = _Grid.of(spec)
    b = np.arange(first, first + count, dtype=np.int64)
    start, end = batch_bounds_us(spec, first, count)
    n = np.array([batch_num_records(spec, int(i)) for i in b], dtype=np.int64) if spec.arrival != "steady" \
        else np.full(count, batch_num_records(spec, first) if count else 0, dtype=np.int64)
    # late rows: an even spread over 1..K partitions back, unless the shift lands before the run's start
    lateness = spec.max_lateness_partitions
    late = np.rint(n * spec.late_fraction).astype(np.int64)
    shift_keys, shift_counts = [], []
    for i, k in enumerate(range(1, lateness + 1)):
        share = late // lateness + (i < late % lateness)
        share = np.where(start - g.unit * k >= g.start, share, 0)
        shift_keys.append(g.key(start - g.unit * k))
        shift_counts.append(share)
    on_time = n - sum(shift_counts, np.zeros(count, dtype=np.int64))
    # on-time pieces: from the batch's start to each boundary of the run's partition grid it crosses
    epoch = (start - g.start) // g.unit
    pieces = max(1, -(-g.span // g.unit) + 1)
    j = np.arange(pieces, dtype=np.int64)
    cursor = np.where(j == 0, start[:, None], g.start + g.unit * (epoch[:, None] + j))
    boundary = np.minimum(end[:, None], g.start + g.unit * (epoch[:, None] + j + 1))
    valid = cursor < end[:, None]
    single = end <= g.start + g.unit * (epoch + 1)  # the whole batch in one partition: no rounding
    exact = on_time[:, None] * ((boundary - cursor) / 1e6) / (g.span / 1e6)
    share = np.where(valid, np.rint(exact), 0).astype(np.int64)
    share[single, 0] = on_time[single]
    share[single, 1:] = 0
    keys = g.key(cursor)
    surplus = share.sum(axis=1) - on_time
    same_key = ((keys[:, 1:] == keys[:, :1]) & valid[:, 1:]).any(axis=1)
    rare = ~single & ((share[:, 0] < surplus) | same_key)
    easy = ~single & ~rare
    share[easy, 0] -= surplus[easy]
    all_keys = np.concatenate([keys, *[k[:, None] for k in shift_keys]], axis=1)
    all_counts = np.concatenate([np.where(valid, share, 0), *[c[:, None] for c in shift_counts]], axis=1)
    for r in np.flatnonzero(rare):
        all_counts[r] = 0
        settled = _settle(spec, exact[r], share[r], keys[r], valid[r], int(on_time[r]))
        settled.update({int(shift_keys[i][r]): settled.get(int(shift_keys[i][r]), 0) + int(shift_counts[i][r])
                        for i in range(lateness)})
        for col, (key, value) in enumerate(settled.items()):
            all_keys[r, col], all_counts[r, col] = key, value
    row = np.broadcast_to(np.arange(count)[:, None], all_keys.shape)
    keep = all_counts != 0
    bat, key, cnt = row[keep], all_keys[keep], all_counts[keep]
    order = np.lexsort((key, bat))
    bat, key, cnt = bat[order], key[order], cnt[order]
    offsets = np.searchsorted(bat, np.arange(count + 1)).tolist()
    lo, hi = ts_ranges(g, lateness, start[bat], end[bat], key)
    return BatchSchedule(first, offsets, key.tolist(), cnt.tolist(), lo.tolist(), hi.tolist())


def _settle(spec: WorkloadSpec, exact: np.ndarray, share: np.ndarray, keys: np.ndarray, valid: np.ndarray,
            on_time: int) -> dict[int, int]:
    """One batch's on-time rows per partition, the rule of the module docstring applied piece by
    piece (a take-back, or pieces sharing a partition)."""
    out: dict[int, int] = {}
    pieces = []
    for x, s, k in zip(exact[valid].tolist(), share[valid].tolist(), keys[valid].tolist(), strict=True):
        out[k] = out.get(k, 0) + s
        pieces.append((x - s, partition_label(spec, k), s, k))
    first = int(keys[0])
    surplus = sum(share[valid].tolist()) - on_time
    if out[first] >= surplus:
        out[first] -= surplus
    else:
        surplus -= out[first]
        out[first] = 0
        for _, _, s, k in sorted(pieces):
            if surplus == 0:
                break
            if k != first and s > 0:
                out[k] -= 1
                surplus -= 1
    return out


def ts_ranges(g: _Grid, lateness: int, start: np.ndarray, end: np.ndarray,
              keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``ts`` range of a batch's rows that land in partition ``keys`` (per entry): the batch's
    time range ``[start, end)`` and its copies moved back 1..``lateness`` partitions for late rows,
    each clipped to the partition (its value read as a UTC time, as the ranges always were); -1
    where none overlaps."""
    p_lo = keys * g.unit
    p_hi = p_lo + g.unit
    lo = np.full(len(keys), np.iinfo(np.int64).max)
    hi = np.full(len(keys), -1)
    for k in range(lateness + 1):
        a = np.maximum(start - g.unit * k, p_lo)
        b = np.minimum(end - g.unit * k, p_hi)
        hit = a < b
        lo = np.where(hit, np.minimum(lo, a), lo)
        hi = np.where(hit, np.maximum(hi, b), hi)
    lo = np.where(hi < 0, -1, lo)
    return lo, hi


def ts_range_in_partition(spec: WorkloadSpec, batch_range: tuple[datetime, datetime],
                          partition: str) -> tuple[datetime, datetime] | None:
    """:func:`ts_ranges` of one batch range and one partition value (``2024-01-01`` or ``2024-01-01-05``)."""
    g = _Grid.of(spec)
    fmt = "%Y-%m-%d" if spec.partition_granularity == "day" else "%Y-%m-%d-%H"
    key = _us(datetime.strptime(partition, fmt).replace(tzinfo=UTC)) // g.unit
    lo, hi = ts_ranges(g, spec.max_lateness_partitions, np.array([_us(batch_range[0])]),
                       np.array([_us(batch_range[1])]), np.array([key]))
    return None if hi[0] < 0 else (utc_moment(int(lo[0])), utc_moment(int(hi[0])))
