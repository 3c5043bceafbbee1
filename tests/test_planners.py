"""Pure planners: unit tests (baseline assignment, the seed's sort-overlap example) and
hypothesis properties (each eligible file in at most one group, caps hold, records conserved)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.plan import BaseFileCompactionPlan
from engines.append_compaction.planner import plan_base_file_compaction
from engines.clustering.config import ClusteringConfig
from engines.clustering.plan import ClusteringPlan, RequestedReplace
from engines.clustering.planner import plan_clustering
from engines.config.registry import MB
from engines.cow_baseline.assign import assign_inserts, average_record_size
from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice
from engines.table.sizing import output_file_count, split_evenly


def fs(i: int, size: int, partition: str = "dt=a", rows: int = 10, lo: int | None = None, hi: int | None = None,
       instant: str = "20260101000000000") -> FileSlice:
    stats = {"ts": (lo, hi)} if lo is not None else {}
    return FileSlice(partition, f"f{i:05d}-0", instant, f"{partition}/f{i:05d}-0_0-0-0_{instant}.parquet",
                     size, rows, stats)


def test_even_sizing() -> None:
    assert output_file_count(489, 300) == 2 and split_evenly(489, 2) == [245, 244]
    assert output_file_count(0, 300) == 1


def test_baseline_tops_up_small_file_then_new_groups() -> None:
    cfg = CowConfig(small_file_limit=100 * MB, max_file_size=120 * MB, record_size_estimate=1024)
    small = fs(1, 30 * MB)
    buckets = assign_inserts({"dt=a": [small]}, {"dt=a": 200_000}, 1024, cfg)
    assert buckets[0].file_id == small.file_id and buckets[0].num_records == (90 * MB) // 1024
    rest = 200_000 - buckets[0].num_records
    assert [b.num_records for b in buckets[1:]] == [rest]
    assert all(b.is_new for b in buckets[1:])
    # a file at/over the limit is not topped up; pending clustering excludes a file group
    assert assign_inserts({"dt=a": [fs(2, 100 * MB)]}, {"dt=a": 5}, 1024, cfg)[0].is_new
    assert assign_inserts({"dt=a": [small]}, {"dt=a": 5}, 1024, cfg, {small.file_group})[0].is_new


def test_average_record_size_rule() -> None:
    cfg = CowConfig(small_file_limit=100)
    assert average_record_size([(50, 10)], cfg) == 1024
    assert average_record_size([(50, 10), (1000, 3)], cfg) == 334


def test_option2_ingest_splits_a_batch_as_hudis_upsert_partitioner() -> None:
    """Small-file limit 0: no top-ups; new buckets of max size / estimated record size records, the
    estimate 1024 until a commit wrote any bytes (threshold x 0), that commit's average after."""
    from engines.clustering.config import IngestSizing, ingest_sizing

    cfg = IngestSizing().cow_config(10 * MB)
    assert cfg is not None and cfg.small_file_limit == 0
    first = assign_inserts({}, {"dt=a": 10_652, "dt=b": 300}, average_record_size([], cfg), cfg)
    assert [(b.partition, b.num_records) for b in first] == [("dt=a", 10_240), ("dt=a", 412), ("dt=b", 300)]
    assert all(b.is_new for b in first)
    assert average_record_size([(1, 1)], cfg) == 1  # any commit above 0 bytes sets the estimate
    assert len(assign_inserts({}, {"dt=a": 10_652}, 200, cfg)) == 1
    assert IngestSizing(insert_split="bytes").cow_config(10 * MB) is None  # bytes written, not an estimate
    assert ingest_sizing({"record_size_estimate": 99, "mode": "inline"}).record_size_estimate == 99
    with pytest.raises(ValueError, match="insert_split"):
        IngestSizing(insert_split="rows")


def test_option1_plan_and_roundtrip() -> None:
    cfg = CompactionConfig(small_file_limit=10 * MB, target_file_size=12 * MB, min_files_per_partition=2)
    slices = [fs(i, 3 * MB, "dt=a") for i in range(5)] + [fs(10, 3 * MB, "dt=b"), fs(11, 50 * MB, "dt=b")]
    plan = plan_base_file_compaction(slices, cfg)
    assert plan is not None and len(plan.operations) == 1  # dt=b has one small file only: skipped
    op = plan.operations[0]
    assert op.partition_path == "dt=a" and op.metrics["estimatedOutputFiles"] == 2.0
    assert BaseFileCompactionPlan.decode(plan.encode(), "p") == plan
    again = plan_base_file_compaction(slices, cfg, pending_paths=plan.file_paths)
    assert again is None


def test_seed_example_sort_overlap() -> None:
    """Target 1 GB, 8 x 512 MB files: 2 overlapping -> one group, 1 output; 4 overlapping -> 2 outputs."""
    cfg = ClusteringConfig(small_file_limit=1024 * MB, target_file_size=1024 * MB, max_bytes_per_group=8192 * MB,
                           sort_columns=("ts",))
    two = [fs(0, 512 * MB, lo=0, hi=10), fs(1, 512 * MB, lo=5, hi=15)] + [
        fs(i, 512 * MB, lo=100 * i, hi=100 * i + 10) for i in range(2, 8)]
    plan = plan_clustering(two, cfg)
    assert plan is not None and len(plan.groups) == 1
    assert sorted(plan.groups[0].file_ids) == ["f00000-0", "f00001-0"] and plan.groups[0].num_output_files == 1
    four = [fs(i, 512 * MB, lo=i, hi=i + 10) for i in range(4)] + [
        fs(i, 512 * MB, lo=100 * i, hi=100 * i + 10) for i in range(4, 8)]
    plan = plan_clustering(four, cfg)
    assert len(plan.groups) == 1 and len(plan.groups[0].file_ids) == 4 and plan.groups[0].num_output_files == 2


def test_clustering_plan_roundtrip_and_filters() -> None:
    slices = [fs(i, MB, p, lo=i, hi=i + 1) for i, p in enumerate(["dt=2026-01-01", "dt=2026-01-02", "dt=2026-01-03"] * 2)]
    cfg = ClusteringConfig(small_file_limit=10 * MB, target_file_size=10 * MB, partition_filter_mode="RECENT_DAYS",
                           lookback_partitions=1, skip_from_latest_partitions=1)
    plan = plan_clustering(slices, cfg)
    assert {g.partition_path for g in plan.groups} == {"dt=2026-01-02"}
    back = RequestedReplace.decode(RequestedReplace(plan).encode(), "r").plan
    assert isinstance(back, ClusteringPlan) and back.file_groups == plan.file_groups
    assert [s.path for s in back.groups[0].slices] == [s.path for s in plan.groups[0].slices]
    assert plan.groups[0].metrics["min.ts"] == 1.0
    sel = ClusteringConfig(small_file_limit=10 * MB, target_file_size=10 * MB, partition_filter_mode="SELECTED_PARTITIONS",
                           begin_partition="dt=2026-01-02", end_partition="dt=2026-01-03")
    assert {g.partition_path for g in plan_clustering(slices, sel).groups} == {"dt=2026-01-02", "dt=2026-01-03"}


slice_lists = st.lists(st.tuples(st.integers(1, 400), st.integers(0, 3), st.integers(0, 1000), st.integers(0, 200),
                                 st.integers(1, 1000)), min_size=1, max_size=60)


def build(items) -> list[FileSlice]:
    return [fs(i, size * MB // 4, f"dt=p{p}", rows=rows, lo=lo, hi=lo + w, instant=f"2026010100000{i % 10:04d}")
            for i, (size, p, lo, w, rows) in enumerate(items)]


@settings(deadline=None)
@given(slice_lists, st.sampled_from(["size", "sort_overlap", "key_range", "commit_time"]), st.integers(1, 8),
       st.integers(5, 100), st.integers(1, 5))
# A fresh clone's failure: ts [0, 5] (41.5 MB) and [1, 1] exceed the 42 MB cap together, so the range-
# ordered packing closed a group after the first and put [1, 1] with [2, 2], which meet only through it
# (the odd slices are pending, not eligible)
@example(items=[(166, 0, 0, 5, 10), (4, 0, 0, 9, 10), (10, 0, 1, 0, 10), (4, 0, 0, 9, 10), (10, 0, 2, 0, 10),
                (4, 0, 0, 9, 10), (4, 1, 0, 0, 10)], grouping="sort_overlap", max_groups=2, cap_mb=42, pending_every=1)
def test_clustering_plan_properties(items, grouping, max_groups, cap_mb, pending_every) -> None:
    slices = build(items)
    pending = {s.file_group for i, s in enumerate(slices) if i % (pending_every + 1) == pending_every}
    cfg = ClusteringConfig(small_file_limit=60 * MB, target_file_size=80 * MB, max_bytes_per_group=cap_mb * MB,
                           max_num_groups=max_groups, grouping=grouping,
                           sort_columns=("ts",) if grouping == "sort_overlap" else ())
    plan = plan_clustering(slices, cfg, pending)
    if plan is None:
        return
    members = [s for g in plan.groups for s in g.slices]
    assert len(members) == len({s.file_group for s in members})  # at most one group each
    assert all(s.size_bytes < cfg.small_file_limit and s.file_group not in pending for s in members)
    assert len(plan.groups) <= max_groups
    for g in plan.groups:
        assert len(g.slices) == 1 or g.total_bytes <= cfg.max_bytes_per_group
        assert g.metrics["totalRecords"] == sum(s.num_rows for s in g.slices)
        assert g.num_output_files == max(1, math.ceil(g.total_bytes / cfg.target_file_size))
        assert len({s.partition for s in g.slices}) == 1
        if grouping == "sort_overlap":
            rs = sorted(s.column_stats["ts"] for s in g.slices)
            hi = rs[0][1]
            for lo2, hi2 in rs[1:]:
                assert lo2 <= hi  # connected: each file overlaps the union so far
                hi = max(hi, hi2)


@settings(deadline=None)
@given(slice_lists, st.integers(1, 4))
def test_compaction_plan_properties(items, min_files) -> None:
    slices = build(items)
    cfg = CompactionConfig(small_file_limit=40 * MB, target_file_size=50 * MB, min_files_per_partition=min_files)
    plan = plan_base_file_compaction(slices, cfg)
    small = [s for s in slices if s.size_bytes < cfg.small_file_limit]
    per_part = {p: [s for s in small if s.partition == p] for p in {s.partition for s in small}}
    expected = {s.path for p, files in per_part.items() if len(files) >= min_files for s in files}
    got = plan.file_paths if plan else []
    assert len(got) == len(set(got)) and set(got) == expected
