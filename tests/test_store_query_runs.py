"""A query run's requests on the S3 store, real and simulated (T18's s3_scale.yaml):

- how many runs a checkpoint makes of each query (the interleaved rounds at the final one), which
  the simulator counts its request events by and a simulated row stands for;
- the simulator's queries rows carry one run's predicted requests, and its request events count
  every run the runner makes (s3_scale.yaml, cut to 10 batches, with the shipped store calibration);
- the report's per-run table (seconds and requests with intervals and n) and the validation's
  per-run request checks, on a synthetic results folder.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bench.scenario import load_scenario
from bench.simulate.results_folder import simulate
from bench.simulate.validate import query_request_checks
from reports.store_requests import query_runs_table, requests_section
from runresults import Results, ResultsWriter
from runresults.query_runs import query_runs, runs_per_row

ROOT = Path(__file__).resolve().parents[1]
S3_SCALE = ROOT / "bench" / "scenarios" / "s3_scale.yaml"
S3_CALIBRATION = ROOT / "bench" / "sweeps" / "s3_calibration.json"


def test_query_runs_counts_the_interleaved_rounds() -> None:
    interleaved = {"queries": {"warm_runs": 1, "rounds": 10, "interleaved": True}, "review": {"measure": False}}
    assert query_runs(interleaved, "append_only", final=True) == 11  # cold run + 10 rounds
    assert query_runs(interleaved, "append_only", final=False) == 2  # cold run + 1 warm run
    review = {"queries": {"warm_runs": 3, "rounds": 12}, "review": {"measure": True}}
    assert query_runs(review, "clustering", final=True) == 13  # a design candidate: in the rounds
    assert query_runs(review, "append_only", final=True) == 4  # the control is not
    plain = {"queries": {"warm_runs": 3, "rounds": 10}}
    assert query_runs(plain, "clustering", final=True) == 4
    earlier = {"queries": {"warm_runs": 1, "rounds": 10, "checkpoint_rounds": 3}, "review": {"measure": True}}
    assert query_runs(earlier, "clustering", final=False) == 4  # cold run + the checkpoint's 3 rounds
    assert query_runs(earlier, "append_only", final=False) == 2  # the control keeps its warm run
    q = pd.DataFrame({"engine": ["a", "a", "b"], "checkpoint": [4, 9, 9]})
    run = {"simulated": True, "scenario": interleaved, "engines": {"a": {"kind": "append_only"},
                                                                    "b": {"kind": "clustering"}}}
    assert runs_per_row(run, q).tolist() == [2, 11, 11]
    # an engine's prefix ends before the replay's last batch: its last checkpoint is not the final one
    prefix = {**run, "simulation": {"batches_per_engine": {"a": 5, "b": 10}}}
    assert runs_per_row(prefix, q[q.engine == "a"].iloc[:1]).tolist() == [2]
    assert runs_per_row(prefix, q[q.engine == "b"]).tolist() == [11]
    assert runs_per_row({**run, "simulated": False}, q).tolist() == [1, 1, 1]


def test_simulator_counts_every_run_and_records_one_runs_requests(tmp_path: Path) -> None:
    sc = load_scenario(S3_SCALE)
    sc = sc.model_copy(update={"workload": sc.workload.model_copy(update={"num_batches": 10}),
                               "queries": sc.queries.model_copy(update={"checkpoint_every": 5})})
    res = Results(simulate(sc, tmp_path, calibration_path=S3_CALIBRATION))
    q, req = res.table("queries"), res.table("requests")
    assert sorted(set(q.checkpoint)) == [4, 9]
    assert q.store_requests.notna().all() and (q.store_requests > 0).all()
    assert (q.store_get + q.store_head + q.store_list <= q.store_requests + 2).all()  # each rounded on its own
    scan = req[req.phase == "query_scan"].groupby(["engine", "context"])["count"].sum()
    for row in q.itertuples():
        runs = 11 if row.checkpoint == 9 else 2  # the final checkpoint: its cold run and the 10 rounds
        total = scan[(row.engine, f"{row.query}@{row.checkpoint}")]
        assert abs(total / runs - row.store_requests) <= 1, (row.engine, row.query, row.checkpoint, total)


def _store_run(folder: Path, per_run: dict[str, list[int]], seconds: dict[str, list[float]],
               run_columns: bool = True) -> Results:
    """A real-looking store run: one final checkpoint (batch 9), each engine's service_hours and
    full scan, a cold run and ten warm ones with their own request counts (``run_columns``; without,
    a folder written before them), and the requests table."""
    w = ResultsWriter(folder)
    for engine, counts in per_run.items():
        for query, scale in (("service_hours", 1), ("full_scan_by_level", 3)):
            for run, (n, s) in enumerate(zip(counts, seconds[engine], strict=True)):
                own = {"store_requests": n * scale, "store_get": (n // 2) * scale, "store_head": (n // 4) * scale,
                       "store_list": (n // 8) * scale} if run_columns else {}
                w.add("queries", engine=engine, checkpoint=9, query=query, run=run, latency_s=s * scale,
                      files_total=40, files_scanned=10 * scale, files_pruned=0, verified=True, error=None, **own)
                for op, c in (("GET", n // 2), ("HEAD", n // 4), ("LIST", n // 8)):
                    w.add("requests", engine=engine, phase="query_scan", context=f"{query}@9", op=op,
                          object="data", count=c * scale, request_bytes=0, response_bytes=1000, throttled=0)
    w.write_run({"run_id": "synthetic-s3", "simulated": False, "store": {"kind": "s3", "first_byte_ms": 20},
                 "engines": {e: {"kind": "append_only"} for e in per_run},
                 "scenario": {"queries": {"warm_runs": 1, "rounds": 10, "interleaved": True}}})
    return Results(folder)


def test_report_gives_each_queries_seconds_and_requests_per_run_with_intervals(tmp_path: Path) -> None:
    res = _store_run(tmp_path, {"small": [140] + [120] * 9 + [128], "big": [40] * 11},
                     {"small": [3.0] + [2.0 + 0.01 * i for i in range(10)], "big": [1.0] + [0.5] * 10})
    table = query_runs_table(res)
    assert list(table["query"]) == ["service_hours", "service_hours", "full_scan_by_level", "full_scan_by_level"]
    small = table[(table.engine == "small") & (table["query"] == "service_hours")].iloc[0]
    assert small["n (warm runs)"] == 10 and small["files scanned"] == 10 and small["cold run requests"] == 140
    assert small["requests / run"].startswith("120 [120, ")  # median of the warm runs with its 95% interval
    assert small["seconds"].startswith("2.0") and " [" in small["seconds"] and small["GET / run"].startswith("60 [")
    big = table[(table.engine == "big") & (table["query"] == "full_scan_by_level")].iloc[0]
    assert big["requests / run"] == "120 [120, 120]" and big["seconds"] == "1.5 [1.5, 1.5]"
    section = requests_section(res)
    assert section is not None and "The selective query and the full scan per run" in section
    assert "n (warm runs)" in section


def test_report_without_per_run_counts_divides_the_contexts_requests(tmp_path: Path) -> None:
    res = _store_run(tmp_path, {"small": [120] * 11}, {"small": [2.0] * 11}, run_columns=False)
    row = query_runs_table(res).iloc[0]  # GET 60, HEAD 30 and LIST 15 per run in the requests table
    assert row["requests / run"] == "105" and row["GET / run"] == "60" and row["cold run requests"] is None


@pytest.mark.parametrize("per_run_columns", [True, False])
def test_validation_holds_one_runs_requests_to_the_real_median(per_run_columns: bool) -> None:
    runs = pd.DataFrame({"run": range(11), "files_scanned": [10] * 11, "latency_s": [1.0] * 11,
                         "store_requests": [130] + [100] * 10, "store_get": [50] * 11, "store_head": [25] * 11,
                         "store_list": [12] * 11})
    if not per_run_columns:
        runs = runs.drop(columns=["store_requests", "store_get", "store_head", "store_list"])
    rr = pd.DataFrame({"engine": "e", "context": "service_hours@9", "op": ["GET", "HEAD", "LIST", "PUT"],
                       "count": [550, 275, 132, 143]})
    sel = pd.DataFrame({"files_scanned": [10], "store_requests": [112], "store_get": [50], "store_head": [40],
                        "store_list": [12]})
    checks = {c.figure.split(":")[0]: c for c in query_request_checks("e", "service_hours", 9, runs, sel, rr)}
    assert set(checks) == {"requests per run", "GET per run", "HEAD per run", "LIST per run"}
    # the median of the runs' own counts, or the context's 1,100 requests over its 11 runs
    assert checks["requests per run"].real == 100.0 and checks["requests per run"].simulated == 112
    assert checks["requests per run"].ok  # +12% within the 15% tolerance
    assert checks["GET per run"].ok and checks["LIST per run"].ok
    assert not checks["HEAD per run"].ok and checks["HEAD per run"].error == "+60.0%"
    assert "files scanned real 10, simulated 10" in checks["HEAD per run"].note
    assert ("median of 11 runs" in checks["requests per run"].figure) == per_run_columns
