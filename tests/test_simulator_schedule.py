"""The estimated mode's batch schedule (bench.simulate.batch_schedule) against the generator's
batch ranges and exact counts, and against itself one batch at a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.simulate.batch_schedule import batch_bounds_us, build_schedule, partition_label, utc_moment
from workloads.generator import batch_num_records, batch_partition_counts, batch_ts_range
from workloads.spec import WorkloadSpec

YEAR = WorkloadSpec(seed=1, num_batches=105120, batch_records=20000, partition_granularity="hour",
                    num_partitions=8760, late_fraction=0.05, max_lateness_partitions=2)
# a run start off the partitions' grid: two pieces of a batch can fall in one partition
OFF_GRID = WorkloadSpec(seed=3, num_batches=600, batch_records=3000, partition_granularity="hour",
                        num_partitions=20, late_fraction=0.2, max_lateness_partitions=2,
                        start=datetime(2026, 1, 1, 0, 37, tzinfo=UTC))
DIURNAL_DAYS = WorkloadSpec(seed=5, num_batches=400, batch_records=2000, partition_granularity="day",
                            num_partitions=9, late_fraction=0.1, max_lateness_partitions=3, arrival="diurnal",
                            start=datetime(2026, 3, 1, 5, 0, tzinfo=UTC) + timedelta(minutes=11))


def _counts(spec: WorkloadSpec, sched, i: int) -> dict[str, int]:
    lo, hi = sched.offsets[i], sched.offsets[i + 1]
    return {partition_label(spec, k): c for k, c in zip(sched.keys[lo:hi], sched.counts[lo:hi], strict=True)}


@pytest.mark.parametrize("spec", [YEAR, OFF_GRID, DIURNAL_DAYS], ids=["year", "off_grid", "diurnal_days"])
def test_bounds_are_the_generators_batch_ranges(spec: WorkloadSpec) -> None:
    picks = [0, 1, 7, spec.num_batches // 2, spec.num_batches - 1]
    for b in picks:
        start, end = batch_bounds_us(spec, b, 1)
        assert (utc_moment(int(start[0])), utc_moment(int(end[0]))) == batch_ts_range(spec, b)


@pytest.mark.parametrize("spec", [OFF_GRID, DIURNAL_DAYS], ids=["off_grid", "diurnal_days"])
def test_horizon_schedule_is_each_batchs_own(spec: WorkloadSpec) -> None:
    """The whole horizon at once gives every batch what it gets alone, and every row is placed."""
    whole = build_schedule(spec, 0, spec.num_batches)
    assert len(whole) == spec.num_batches
    for b in range(spec.num_batches):
        one = build_schedule(spec, b, 1)
        assert _counts(spec, whole, b) == _counts(spec, one, 0), b
        assert sum(_counts(spec, whole, b).values()) == batch_num_records(spec, b)
        assert min(_counts(spec, whole, b).values()) > 0


@pytest.mark.parametrize("spec", [OFF_GRID, DIURNAL_DAYS], ids=["off_grid", "diurnal_days"])
def test_counts_close_to_the_generated_rows(spec: WorkloadSpec) -> None:
    sched = build_schedule(spec, 0, spec.num_batches)
    for b in (0, 3, 50, spec.num_batches - 1):
        exact, approx = batch_partition_counts(spec, b), _counts(spec, sched, b)
        assert set(approx) == set(exact), (b, exact, approx)
        for k in exact:
            assert abs(approx[k] - exact[k]) <= max(30, 0.02 * sum(exact.values())), (b, k, exact, approx)


def test_ts_ranges_lie_in_their_partition() -> None:
    sched = build_schedule(OFF_GRID, 0, OFF_GRID.num_batches)
    hour = 3600 * 10**6
    for i, key in enumerate(sched.keys):
        lo, hi = sched.ts_lo[i], sched.ts_hi[i]
        assert 0 <= lo < hi and key * hour <= lo and hi <= (key + 1) * hour, (i, key, lo, hi)
