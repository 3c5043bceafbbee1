"""COW baseline: small-file top-ups rewrite the whole file; measured WA equals the analytical sum."""

from __future__ import annotations

from engine_helpers import hudi_keys, keys, new_table, spec, truth_keys

from engines.cow_baseline.config import CowConfig
from engines.cow_baseline.engine import CowBaselineEngine, CowEngineConfig
from engines.spark.insert import insert_new_file_groups
from engines.table.bloom import BloomConfig, footer_bytes
from workloads.generator import batch_df


def test_write_amplification_matches_closed_form(spark, tmp_path) -> None:
    """One partition, equal batches of B bytes, small-file limit 3.5 B, max file size 10 B.

    Batch k tops up the file while it is below the limit, so it rewrites a file of k·B:
    1, 2, 3, 4 (4 B >= 3.5 B: the file is no longer small), then a new file group: 1, 2.
    WA = (1+2+3+4+1+2) B / 6 B = 13/6 = 2.1667 (within 5%: compressed sizes are not exactly linear).
    Data bytes only: Hudi's fixed ~431 KB footer bloom filter per file is switched off (it is not linear in k).
    """
    ws = spec(num_partitions=1, num_batches=6, batch_records=2000)
    ref = new_table(tmp_path / "ref")
    ref.bloom = BloomConfig(enabled=False)
    batch_bytes = [insert_new_file_groups(ref, batch_df(spark, ws, b)).bytes_written for b in range(6)]
    b_mean = sum(batch_bytes) / len(batch_bytes)
    cfg = CowEngineConfig(planner=CowConfig(small_file_limit=int(3.5 * b_mean), max_file_size=int(10 * b_mean),
                                            record_size_estimate=int(b_mean / 2000) + 1), bloom_filter=False)
    e = CowBaselineEngine(new_table(tmp_path / "t"), cfg)
    written, files = [], []
    for b in range(6):
        res = e.ingest(batch_df(spark, ws, b))
        written.append(res.bytes_written)
        files.append(len(e.snapshot()))
    measured = sum(written) / sum(batch_bytes)
    assert abs(measured / (13 / 6) - 1) < 0.05, (measured, [round(w / b_mean, 2) for w in written])
    assert files == [1, 1, 1, 1, 2, 2]
    assert [round(w / b_mean) for w in written] == [1, 2, 3, 4, 1, 2]
    assert keys(e.table) == truth_keys(ws, 5) == hudi_keys(e.table)
    # every rewrite is a new slice of the same file group; older slices wait for the cleaner
    groups = e.table.view().file_groups()
    assert sorted(len(v) for v in groups.values()) == [2, 4]


def test_bulk_insert_reference_makes_new_files(spark, tmp_path) -> None:
    ws = spec(num_batches=3)
    e = CowBaselineEngine(new_table(tmp_path / "t"), CowEngineConfig(operation="bulk_insert"))
    for b in range(3):
        e.ingest(batch_df(spark, ws, b))
    assert keys(e.table) == truth_keys(ws, 2)
    assert len(e.snapshot()) >= 3


def test_one_read_of_the_small_files_writes_the_bytes_of_one_read_per_file(spark, tmp_path, monkeypatch) -> None:
    """The buckets' Spark job reading all small files at once (pyarrow wrote them, in one schema) and
    reading each on its own (what it does for small files pyarrow did not write or that differ in schema):
    the same files, bytes and commit metadata (small files topped up and new file groups, over several
    partitions, Arrow batches of 700 rows so that a file spans several batches, row groups of 500)."""
    import engines.cow_baseline.insert as cow
    from engines.files.gate import Route
    from engines.table import faults

    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "700")
    ws = spec(num_batches=4, batch_records=3000, num_partitions=3, late_fraction=0.2)
    footer = footer_bytes(1000, BloomConfig(), 32)  # each file's bloom filter (Hudi's), on top of its rows
    cfg = CowEngineConfig(planner=CowConfig(small_file_limit=160_000 + footer, max_file_size=240_000 + footer,
                                            record_size_estimate=100), row_group_rows=500, auto_clean=False)
    tables: list = []
    mid_write: list[str] = []
    stop = faults.observe(mid_write.append)
    try:
        monkeypatch.setattr(cow, "base_inputs", lambda *a: (Route(False, "the Spark job, for the test"), {}))
        for name in ("one_read", "per_file"):
            if name == "per_file":
                monkeypatch.setattr(cow, "inspect_inputs", lambda *a: None)
            e = CowBaselineEngine(new_table(tmp_path / name), cfg)
            for b in range(ws.num_batches):
                e.ingest(batch_df(spark, ws, b))
            tables.append(e.table)
            assert mid_write.count("ingest.mid_write") == ws.num_batches * len(tables)  # the crash point, per commit
    finally:
        stop()
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    merged = [s for inst in tables[0].refresh().completed(["commit"]) for s in tables[0].commit_metadata(inst).write_stats
              if s.prev_commit not in (None, "null")]
    assert merged, "no small file was topped up: the test does not cover the merge"

    def files(table):
        root = tmp_path / table.base_uri.rsplit("/", 1)[-1]
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                if p.is_file() and (p.suffix == ".parquet" or p.name.endswith(".commit"))}

    one, per = files(tables[0]), files(tables[1])
    assert sorted(one) == sorted(per)
    assert one == per
