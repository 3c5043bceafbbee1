"""The CI performance-regression gate (``make perf-check``).

Runs ``bench/scenarios/ci.yaml`` and compares it with the committed ``bench/baselines/ci.json``:
deterministic figures (per engine: files, bytes written, WA, plans, verified queries) must match
exactly — a change needs the baseline regenerated in the same commit with ``--update-baseline
--reason "..."``; timings are compared as ratios to calibrations measured in the same run (a plain
Spark append of batch 0, a pyarrow rewrite of the final live files), failing beyond 3x because
CI machines are shared and noisy.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from bench.results import Results
from reports.compare import CompareResult, _exact_row
from reports.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
CI_SCENARIO = ROOT / "bench" / "scenarios" / "ci.yaml"
BASELINE = ROOT / "bench" / "baselines" / "ci.json"
RATIO_TOLERANCE = 3.0


def calibrate_same_run(results: Results) -> dict[str, float]:
    """Reference timings measured now, on this machine: what the engine timings are divided by."""
    from engines.spark.session import get_spark
    from workloads.generator import batch_df
    from workloads.spec import WorkloadSpec

    spark = get_spark()
    spec = WorkloadSpec.model_validate(results.run["scenario"]["workload"])
    df = batch_df(spark, spec, 0).cache()
    df.count()
    plain = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):
            t0 = time.perf_counter()
            df.coalesce(1).write.parquet(f"{tmp}/p{i}")
            plain.append(time.perf_counter() - t0)
    df.unpersist()
    files = results.table("files")
    last = files[files.checkpoint == files.checkpoint.max()]
    paths = []
    for engine, info in results.run["engines"].items():
        live = last[(last.engine == engine) & last.live]
        paths += [str(Path(info["table_path"]) / p) for p in live.path]
        if paths:
            break
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, p in enumerate(paths):
            pq.write_table(pq.read_table(p), f"{tmp}/{i}.parquet", compression="snappy")
    return {"spark_plain_append_s": statistics.median(plain), "pyarrow_rewrite_s": time.perf_counter() - t0}


def extract_figures(results: Results, calibration: dict[str, float]) -> dict[str, Any]:
    det: dict[str, Any] = {}
    ratios: dict[str, float] = {}
    for s in summarize(results):
        det[s.engine] = {"live_files": s.live_files, "physical_files": s.physical_files,
                         "bytes_written": s.bytes_written, "wa": None if s.wa is None else round(s.wa, 6),
                         "maintenance_runs": s.maintenance_runs, "queries_verified": s.queries_verified,
                         "queries_total": s.queries_total}
        if s.ingest_p50_s:
            ratios[f"{s.engine}.ingest_p50/spark_plain_append"] = s.ingest_p50_s / calibration["spark_plain_append_s"]
        if s.maintenance_runs and calibration["pyarrow_rewrite_s"] > 0:
            ratios[f"{s.engine}.maintenance_per_run/pyarrow_rewrite"] = (
                s.maintenance_s / s.maintenance_runs / calibration["pyarrow_rewrite_s"])
    return {"deterministic": det, "ratios": ratios, "calibration": calibration}


def check(baseline: dict[str, Any], current: dict[str, Any]) -> CompareResult:
    res = CompareResult()
    for engine, figs in baseline["deterministic"].items():
        cur = current["deterministic"].get(engine)
        for key, val in figs.items():
            got = None if cur is None else cur.get(key)
            res.rows.append(_exact_row(engine, key, val, got, key not in ("queries_verified", "queries_total")))
    for key, val in baseline["ratios"].items():
        got = current["ratios"].get(key)
        if got is None:
            res.rows.append({"engine": key.split(".")[0], "metric": key, "A": f"{val:.3f}", "B": "missing",
                             "change": "missing", "verdict": "regressed"})
            continue
        ratio = got / val if val else float("inf")
        verdict = "regressed" if ratio > RATIO_TOLERANCE else "improved" if ratio < 1 / RATIO_TOLERANCE else "same"
        res.rows.append({"engine": key.split(".")[0], "metric": key, "A": f"{val:.3f}", "B": f"{got:.3f}",
                         "change": f"{ratio:.2f}x", "verdict": verdict})
    return res


def run_perf_check(update_baseline: bool = False, reason: str | None = None,
                   out: str | Path | None = None) -> tuple[CompareResult | None, Path]:
    from bench.runner import run_scenario
    from bench.scenario import load_scenario

    out_dir = Path(out) if out else Path(tempfile.mkdtemp(prefix="layoutbench-perf-"))
    run_dir = run_scenario(load_scenario(CI_SCENARIO), out=out_dir, progress=False, run_id="perf-check")
    results = Results(run_dir)
    if not results.run["verification"]["ok"]:
        raise RuntimeError("perf-check run failed verification: " + "; ".join(results.run["verification"]["failures"]))
    current = extract_figures(results, calibrate_same_run(results))
    (run_dir / "perf_figures.json").write_text(json.dumps(current, indent=2))
    if update_baseline:
        if not reason:
            raise ValueError("updating the CI baseline needs --reason")
        current["reason"] = reason
        current["updated"] = datetime.now(UTC).isoformat()
        current["git_sha"] = results.run["git"]["sha"]
        BASELINE.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
        return None, run_dir
    if not BASELINE.exists():
        raise FileNotFoundError(f"no CI baseline at {BASELINE}; create it with --update-baseline --reason")
    return check(json.loads(BASELINE.read_text()), current), run_dir
