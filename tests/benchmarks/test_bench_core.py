"""Micro-benchmarks of the hot paths (``make bench-micro``; reported, never asserted):
planners on 100,000 slices, the file-system view over 100,000 base files, and replace metadata
with 300,000 replaced file ids, serialise and parse timed apart and reported against the RFC's Java
figures (103 ms + 130 ms) in ``extra_info`` (``vs_rfc`` = our median / the RFC's)."""

from __future__ import annotations

import pytest

from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.planner import plan_base_file_compaction
from engines.clustering.config import ClusteringConfig
from engines.clustering.planner import plan_clustering
from engines.cow_baseline.assign import assign_inserts
from engines.cow_baseline.config import CowConfig
from engines.table.metadata import CommitMetadata, WriteStat
from engines.table.model import FileSlice, base_file_name
from engines.table.storage import Storage
from engines.table.timeline import Timeline
from engines.table.view import FileSystemView

MB = 1 << 20
N = 100_000


def slices(n: int = N) -> list[FileSlice]:
    return [FileSlice(f"dt=p{i % 1000:04d}", f"f{i:08d}-0", "20260101000000000",
                      f"dt=p{i % 1000:04d}/f{i:08d}-0_0-0-0_20260101000000000.parquet", (i % 97 + 1) * MB // 4, 1000,
                      {"ts": (i, i + 50)}) for i in range(n)]


@pytest.mark.benchmark(group="planners")
def test_plan_clustering_100k(benchmark) -> None:
    data = slices()
    plan = benchmark(plan_clustering, data, ClusteringConfig(small_file_limit=20 * MB, target_file_size=30 * MB,
                                                             max_num_groups=100_000))
    assert plan is not None


@pytest.mark.benchmark(group="planners")
def test_plan_sort_overlap_100k(benchmark) -> None:
    data = slices()
    benchmark(plan_clustering, data, ClusteringConfig(small_file_limit=20 * MB, target_file_size=30 * MB,
                                                      sort_columns=("ts",), max_num_groups=100_000))


@pytest.mark.benchmark(group="planners")
def test_plan_compaction_100k(benchmark) -> None:
    data = slices()
    assert benchmark(plan_base_file_compaction, data, CompactionConfig(small_file_limit=20 * MB)) is not None


@pytest.mark.benchmark(group="planners")
def test_assign_inserts_100k(benchmark) -> None:
    by_part: dict[str, list[FileSlice]] = {}
    for s in slices():
        by_part.setdefault(s.partition, []).append(s)
    benchmark(assign_inserts, by_part, {p: 5000 for p in by_part}, 100, CowConfig())


@pytest.fixture(scope="module")
def big_table(tmp_path_factory):
    """100,000 empty base files in 100 partitions under one completed commit."""
    root = tmp_path_factory.mktemp("view100k")
    storage = Storage(str(root))
    ts = "20260101000000000"
    stats = []
    for p in range(100):
        part = f"dt=p{p:03d}"
        (root / part).mkdir()
        for i in range(1000):
            name = base_file_name(f"f{p:03d}{i:05d}-0", "0-0-0", ts)
            (root / part / name).touch()
            stats.append(WriteStat(f"f{p:03d}{i:05d}-0", part, f"{part}/{name}", 10, 0))
    (root / ".hoodie").mkdir()
    (root / ".hoodie" / f"{ts}.commit").write_bytes(CommitMetadata("INSERT", stats).to_json())
    return storage


@pytest.mark.benchmark(group="view")
def test_view_over_100k_files(benchmark, big_table) -> None:
    def build() -> int:
        return len(FileSystemView(big_table, Timeline.load(big_table), read_footers=False).snapshot())

    assert benchmark.pedantic(build, rounds=3, iterations=1) == 100_000


RFC_JAVA_MS = {"serialise": 103, "deserialise": 130}  # RFC-19: 300k replaced file ids, Java


def _replace_300k() -> CommitMetadata:
    return CommitMetadata("CLUSTER", [], replaced_file_ids={"dt=a": [f"{i:036d}-0" for i in range(300_000)]})


@pytest.mark.benchmark(group="metadata")
def test_replace_metadata_300k_serialise(benchmark) -> None:
    meta = _replace_300k()
    data = benchmark.pedantic(meta.to_json, kwargs={"replace": True}, rounds=5, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(rfc_java_ms=RFC_JAVA_MS["serialise"], bytes=len(data),
                                vs_rfc=benchmark.stats.stats.median * 1000 / RFC_JAVA_MS["serialise"])


@pytest.mark.benchmark(group="metadata")
def test_replace_metadata_300k_deserialise(benchmark) -> None:
    data = _replace_300k().to_json(replace=True)
    meta = benchmark.pedantic(CommitMetadata.from_json, args=(data,), rounds=5, iterations=1, warmup_rounds=1)
    assert sum(len(v) for v in meta.replaced_file_ids.values()) == 300_000
    benchmark.extra_info.update(rfc_java_ms=RFC_JAVA_MS["deserialise"],
                                vs_rfc=benchmark.stats.stats.median * 1000 / RFC_JAVA_MS["deserialise"])
