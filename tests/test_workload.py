"""Workload generator: determinism across paths and parallelism, distributions, sizing, ground truth."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engines.spark.arrow_compat import to_arrow
from engines.spark.arrow_frame import frame_from_arrow
from engines.spark.batch_stats import partition_counts, remember_partition_counts
from workloads.generator import (
    LEVEL_SHARES,
    LEVELS,
    S_KEY,
    S_MSG,
    batch_deletes_table,
    batch_df,
    batch_num_records,
    batch_table,
    batch_tasks,
    batch_updates_table,
    hash64,
    table_partition_counts,
)
from workloads.rowdef import message, trace_id
from workloads.spec import WorkloadSpec, WorkloadSpecError
from workloads.truth import GroundTruth, cumulative_truth, expected_table

SPEC = WorkloadSpec(seed=11, num_batches=6, batch_records=4000, num_partitions=3, late_fraction=0.2,
                    max_lateness_partitions=2)


def sorted_rows(tbl: pa.Table) -> list[dict]:
    return tbl.sort_by("trace_id").to_pylist()


def test_spark_path_equals_pyarrow_path_for_any_slicing(spark) -> None:
    expected = sorted_rows(batch_table(SPEC, 3))
    for slices in (1, 3, 7):
        got = to_arrow(batch_df(spark, SPEC, 3, num_slices=slices))
        assert sorted_rows(got) == expected
    repart = to_arrow(batch_df(spark, SPEC, 3).repartition(5))
    assert GroundTruth.of_table(repart).key_checksum == GroundTruth.of_table(batch_table(SPEC, 3)).key_checksum


def test_frame_from_driver_rows_equals_the_spark_generated_batch(spark) -> None:
    """The runner hands a one-task batch to Spark from its ground-truth rows: same rows, same order,
    same single partition, same types as the batch generated in Spark tasks; its remembered rows per
    partition value are the counting job's."""
    for b in (0, 3):
        assert batch_tasks(spark.sparkContext.defaultParallelism, SPEC, b) == 1
        tbl = batch_table(SPEC, b)
        ours, theirs = frame_from_arrow(spark, tbl).cache(), batch_df(spark, SPEC, b).cache()
        assert ours.rdd.getNumPartitions() == theirs.rdd.getNumPartitions() == 1
        assert ours.schema == theirs.schema
        assert to_arrow(ours).equals(to_arrow(theirs))
        remember_partition_counts(ours, "dt", table_partition_counts(tbl, "dt"))
        assert partition_counts(ours, "dt") == partition_counts(theirs, "dt")
    big = SPEC.model_copy(update={"batch_records": 70_000})
    assert batch_tasks(2, big, 0) == 2 and batch_tasks(1, big, 0) == 1
    with pytest.raises(ValueError, match="cached"):
        remember_partition_counts(frame_from_arrow(spark, batch_table(SPEC, 0)), "dt", {})


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
def test_local1_and_local2_generate_identical_batches(spark) -> None:
    code = ("from engines.spark.session import get_spark; from workloads.spec import WorkloadSpec;"
            "from workloads.generator import batch_df; from workloads.truth import GroundTruth;"
            "from engines.spark.arrow_compat import to_arrow;"
            f"spec = WorkloadSpec.model_validate({SPEC.model_dump(mode='json')!r});"
            "print(GroundTruth.of_table(to_arrow(batch_df(get_spark('local[1]'), spec, 2))).key_checksum)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    local2 = GroundTruth.of_table(to_arrow(batch_df(spark, SPEC, 2, num_slices=2))).key_checksum
    assert out.stdout.strip().splitlines()[-1] == str(local2)


def test_same_seed_same_bytes_other_seed_differs() -> None:
    def parquet_bytes(spec: WorkloadSpec) -> bytes:
        buf = io.BytesIO()
        pq.write_table(batch_table(spec, 1), buf)
        return buf.getvalue()

    assert parquet_bytes(SPEC) == parquet_bytes(SPEC)
    assert parquet_bytes(SPEC) != parquet_bytes(SPEC.model_copy(update={"seed": 12}))


def test_vectorised_columns_equal_their_per_row_definitions() -> None:
    """Messages and trace ids are built with numpy/Arrow; they must equal the per-row formulas exactly."""
    spec = SPEC.model_copy(update={"num_services": 1500, "service_skew": 0.0, "batch_records": 20_000})
    tbl = batch_table(spec, 2)
    rows = np.arange(tbl.num_rows, dtype=np.int64)
    msg_hash = hash64(spec.seed, 2, rows, S_MSG).tolist()
    expected = [message(h, lv, sv) for h, lv, sv in
                zip(msg_hash, tbl.column("level").to_pylist(), tbl.column("service").to_pylist(), strict=True)]
    assert tbl.column("message").to_pylist() == expected
    assert any(len(s) > 7 for s in tbl.column("service").to_pylist())  # svc-1000 and up: wider than 3 digits
    keys = [trace_id(h, 2, r) for h, r in zip(hash64(spec.seed, 2, rows, S_KEY).tolist(), rows, strict=True)]
    assert tbl.column("trace_id").to_pylist() == keys


def test_hashes_equal_spark_xxhash64(spark) -> None:
    """The row hash is Spark SQL's xxhash64(seed, batch, stream, row) over longs, bit for bit."""
    from pyspark.sql import functions as F

    rows = spark.range(0, 2000).select(F.xxhash64(*(F.lit(v).cast("long") for v in (11, 3, S_KEY)), F.col("id")))
    spark_hashes = np.array([r[0] for r in rows.collect()], dtype=np.int64).view(np.uint64)
    assert (spark_hashes == hash64(11, 3, np.arange(2000), S_KEY)).all()


def test_distributions_roughly_as_configured() -> None:
    spec = SPEC.model_copy(update={"batch_records": 50_000, "service_skew": 1.1, "num_services": 20})
    tbl = batch_table(spec, 4)
    n = tbl.num_rows
    levels = {d["values"]: d["counts"] / n for d in pc.value_counts(tbl.column("level")).to_pylist()}
    for level, share in zip(LEVELS, LEVEL_SHARES, strict=True):
        assert abs(levels[level] - share) < 0.01
    weights = [1 / k ** 1.1 for k in range(1, 21)]
    head = pc.sum(pc.equal(tbl.column("service"), "svc-000")).as_py() / n
    assert abs(head - weights[0] / sum(weights)) < 0.01
    # late rows land in an older partition than the batch's own window
    start = spec.start + (spec.num_partitions * (24 * 3600) / spec.num_batches) * 4 * __import__("datetime").timedelta(seconds=1)
    late = pc.sum(pc.less(tbl.column("ts"), pa.scalar(start, pa.timestamp("us", tz="UTC")))).as_py() / n
    assert abs(late - 0.2) < 0.02
    assert len(set(tbl.column("trace_id").to_pylist())) == n
    lengths = pc.utf8_length(tbl.column("message"))
    assert pc.min(lengths).as_py() >= 150 and pc.max(lengths).as_py() <= 200


def test_target_mb_lands_within_15_percent(tmp_path) -> None:
    spec = WorkloadSpec(seed=3, num_batches=4, batch_mb=2.0, num_partitions=1)
    path = tmp_path / "b.parquet"
    pq.write_table(batch_table(spec, 1), path, compression="snappy")
    assert abs(path.stat().st_size / (2 << 20) - 1) < 0.15


def test_arrival_patterns_keep_the_mean() -> None:
    for arrival in ("bursty", "diurnal"):
        spec = WorkloadSpec(num_batches=240, batch_records=1000, arrival=arrival, num_partitions=10)
        sizes = [batch_num_records(spec, b) for b in range(240)]
        assert abs(sum(sizes) / len(sizes) / 1000 - 1) < 0.15
        assert max(sizes) > 1.4 * min(sizes)


def test_ground_truth_equals_recount() -> None:
    tbl = pa.concat_tables([batch_table(SPEC, b) for b in range(SPEC.num_batches)])
    truth = cumulative_truth(SPEC, SPEC.num_batches - 1)
    assert truth.rows == tbl.num_rows
    assert truth.by_partition == {d["values"]: d["counts"] for d in pc.value_counts(tbl.column("dt")).to_pylist()}
    merged = GroundTruth()
    for b in range(SPEC.num_batches):
        merged = merged.merge(GroundTruth.of_table(batch_table(SPEC, b)))
    assert merged.key_checksum == truth.key_checksum and merged.by_level == truth.by_level
    dup = GroundTruth.of_table(pa.concat_tables([tbl, tbl.slice(0, 1)]))
    assert dup.key_checksum != truth.key_checksum


def test_ground_truth_in_spark_equals_pyarrow(spark) -> None:
    assert GroundTruth.of_df(batch_df(spark, SPEC, 0)).key_checksum == GroundTruth.of_table(
        batch_table(SPEC, 0)).key_checksum


def test_corrections_reference_earlier_keys_and_apply_to_truth() -> None:
    spec = SPEC.model_copy(update={"corrections_fraction": 0.05, "delete_fraction": 0.02})
    assert batch_updates_table(spec, 0).num_rows == 0
    upd, dele = batch_updates_table(spec, 3), batch_deletes_table(spec, 3)
    earlier = set(pa.concat_tables([batch_table(spec, b) for b in range(3)]).column("trace_id").to_pylist())
    assert upd.num_rows > 0 and set(upd.column("trace_id").to_pylist()) <= earlier
    assert set(dele.column("trace_id").to_pylist()) <= earlier
    final = expected_table(spec, 3)
    keys = final.column("trace_id").to_pylist()
    assert len(keys) == len(set(keys))  # an upsert replaces, never duplicates
    assert not set(dele.column("trace_id").to_pylist()) & set(keys)  # deleted by the last batch: gone
    updated = final.filter(pc.is_in(final.column("trace_id"), value_set=upd.column("trace_id").combine_chunks()))
    assert updated.num_rows == upd.num_rows and all(m.startswith("CORRECTED") for m in updated.column("message").to_pylist())


@pytest.mark.parametrize("bad,field", [
    ({"num_batches": 0}, "num_batches"), ({"batch_mb": -1}, "batch_mb"), ({"service_skew": 9}, "service_skew"),
    ({"arrival": "chaotic"}, "arrival"), ({"late_fraction": 1.5}, "late_fraction"), ({"colour": 1}, "colour"),
])
def test_spec_errors_name_the_field(bad: dict, field: str) -> None:
    with pytest.raises(WorkloadSpecError, match=field):
        WorkloadSpec.parse(bad)


def test_column_subsets_equal_the_full_rows() -> None:
    """The simulator generates only the columns it prunes on; each is the full table's column."""
    from workloads.generator import batch_table

    spec = WorkloadSpec(seed=5, num_batches=10, batch_records=3000, late_fraction=0.2, num_partitions=2)
    full = batch_table(spec, 3)
    for cols in [("ts", "dt", "service", "trace_id"), ("message",), ("latency_ms", "host"), ("dt",)]:
        assert batch_table(spec, 3, cols).equals(full.select([c for c in full.schema.names if c in cols])), cols
    with pytest.raises(ValueError, match="unknown column"):
        batch_table(spec, 3, ("nope",))
