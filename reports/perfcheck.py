"""The CI performance-regression gate on a results folder (``layoutbench perf-check`` runs the CI
scenario, :mod:`bench.perfcheck` measures the same-run calibration, this module judges):

- deterministic figures per engine (live/physical files, bytes and files written, WA to 6
  decimals, maintenance runs = plans executed, verified queries, files scanned) must match exactly,
  better or worse — a change needs the baseline regenerated in the same commit with
  ``layoutbench perf-check --update-baseline --reason "..."``;
- timings are compared as ratios to calibrations measured in the same run (ingest p50 / a plain
  Spark append of batch 0; maintenance per run / a pyarrow rewrite of the final live files) and fail
  when a ratio exceeds ``RATIO_TOLERANCE`` = 3x the baseline's, because CI machines are shared
  and noisy; when only ratios fail, the CLI runs the scenario once more and each ratio keeps its
  better value (DuckDB's re-run, :func:`best_of`).

API: ``extract_figures(results)``, ``write_baseline(results, path, reason)``,
``check(baseline, results) -> CompareResult``, ``perf_check(baseline_path, run_dir)``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reports.compare import CompareResult, exact_verdict, timing_verdict
from reports.summary import summarize
from runresults import Results

RATIO_TOLERANCE = 3.0


# Figures where a higher value is better (for the change text only: any difference fails the gate).
HIGHER_IS_BETTER = {"queries_verified", "queries_total"}


def scenario_fingerprint(results: Results) -> str:
    """The run's scenario fingerprint (recorded in ``run.json`` from :func:`bench.scenario.fingerprint`):
    a baseline from another scenario is not comparable. A folder written before runs recorded it:
    a hash of the scenario as recorded."""
    recorded = results.run.get("scenario_fingerprint")
    if recorded:
        return str(recorded)
    blob = json.dumps(results.run.get("scenario", {}), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def extract_figures(results: Results, calibration: dict[str, float] | None = None) -> dict[str, Any]:
    """The gate's figures: exact per-engine figures and timing ratios to the same-run calibration.

    ``calibration`` defaults to run.json's ``calibration`` (seconds; ``spark_plain_append_s``,
    ``pyarrow_rewrite_s``); ratios whose calibration is missing are left out.
    """
    cal = dict(calibration if calibration is not None else results.run.get("calibration") or {})
    det: dict[str, Any] = {}
    ratios: dict[str, float] = {}
    for s in summarize(results):
        det[s.engine] = {"live_files": s.live_files, "physical_files": s.physical_files,
                         "physical_files_peak": s.physical_files_peak, "bytes_written": s.bytes_written,
                         "files_written": s.files_written, "wa": None if s.wa is None else round(s.wa, 6),
                         "maintenance_runs": s.maintenance_runs, "maintenance_bytes_written": s.maintenance_bytes_written,
                         "queries_verified": s.queries_verified, "queries_total": s.queries_total,
                         "files_scanned": sum(s.queries_files_scanned.values())}
        append, rewrite = cal.get("spark_plain_append_s"), cal.get("pyarrow_rewrite_s")
        if s.ingest_p50_s and append:
            ratios[f"{s.engine}.ingest_p50/spark_plain_append"] = s.ingest_p50_s / append
        if s.maintenance_runs and rewrite:
            ratios[f"{s.engine}.maintenance_per_run/pyarrow_rewrite"] = s.maintenance_s / s.maintenance_runs / rewrite
    return {"deterministic": det, "ratios": ratios, "calibration": cal,
            "scenario_fingerprint": scenario_fingerprint(results)}


def write_baseline(results: Results | dict[str, Any], path: str | Path, reason: str = "",
                   calibration: dict[str, float] | None = None) -> Path:
    """Write the gate's baseline from a run (or from figures already extracted); a reason is required."""
    if not reason.strip():
        raise ValueError("updating the CI baseline needs a reason (--reason)")
    figures = dict(results) if isinstance(results, dict) else extract_figures(results, calibration)
    figures["reason"] = reason
    figures["updated"] = datetime.now(UTC).isoformat()
    if isinstance(results, Results):
        figures["git_sha"] = results.run.get("git", {}).get("sha")
    path = Path(path)
    path.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    return path


def _load(baseline: str | Path | dict[str, Any]) -> dict[str, Any]:
    if isinstance(baseline, dict):
        return baseline
    path = Path(baseline)
    if not path.is_file():
        raise FileNotFoundError(f"no CI baseline at {path}; create it with --update-baseline --reason")
    return json.loads(path.read_text())


def check(baseline: str | Path | dict[str, Any], current: Results | str | Path | dict[str, Any],
          tolerance: float = RATIO_TOLERANCE) -> CompareResult:
    """Compare a run's figures with the baseline: exact for deterministic figures, ``tolerance`` for ratios.

    Any deterministic difference fails (verdict ``regressed``), better or worse: the baseline must be
    updated in the same commit. A ratio fails when it is more than ``tolerance``x the baseline's.
    """
    base = _load(baseline)
    if not isinstance(current, dict):
        current = extract_figures(current if isinstance(current, Results) else Results(current))
    res = CompareResult(title="perf-check: run vs bench/baselines/ci.json",
                        notes=[f"deterministic figures exact; timing ratios fail beyond {tolerance}x the baseline",
                               f"baseline reason: {base.get('reason', 'n/a')}"])
    fp_a, fp_b = base.get("scenario_fingerprint"), current.get("scenario_fingerprint")
    if fp_a and fp_b and fp_a != fp_b:
        res.add("*", "(scenario)", fp_a, fp_b, "scenario changed: update the baseline", "regressed")
    for engine in sorted(set(current["deterministic"]) - set(base["deterministic"])):
        res.add(engine, "(engine)", "absent", "present", "not in baseline: update it", "regressed")
    for engine, figs in base["deterministic"].items():
        cur = current["deterministic"].get(engine)
        if cur is None:
            res.add(engine, "(engine)", "present", "absent", "missing in run", "regressed")
            continue
        for key in sorted(set(figs) | set(cur)):
            a, b = figs.get(key), cur.get(key)
            if key not in figs:
                res.add(engine, key, None, b, "new figure (not in baseline yet)", "same")
                continue
            change, verdict = exact_verdict(a, b, key not in HIGHER_IS_BETTER)
            if verdict == "improved":
                change, verdict = f"{change} (better: update the baseline)", "regressed"
            res.add(engine, key, a, b, change, verdict)
    for key, val in base.get("ratios", {}).items():
        got = current["ratios"].get(key)
        change, verdict = timing_verdict(val, got, tolerance)
        res.add(key.split(".")[0], key, val, got, change, verdict)
    for key in sorted(set(current["ratios"]) - set(base.get("ratios", {}))):
        res.add(key.split(".")[0], key, None, current["ratios"][key], "new ratio (not in baseline yet)", "same")
    return res


def perf_check(baseline_path: str | Path, run_dir: str | Path, tolerance: float = RATIO_TOLERANCE) -> CompareResult:
    """Check an existing results folder against a baseline file (run.json must hold ``calibration``)."""
    return check(baseline_path, Results(run_dir), tolerance)


def only_timing_regressed(res: CompareResult) -> bool:
    """True when every regressed row is a timing ratio (deterministic figures never get a re-run)."""
    bad = [r for r in res.rows if r["verdict"] == "regressed"]
    return bool(bad) and all("/" in r["metric"] for r in bad)


def best_of(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """``a`` with each timing ratio replaced by the lower of the two runs' values."""
    ratios = {k: min(v, b["ratios"].get(k, v)) for k, v in a["ratios"].items()}
    return {**a, "ratios": ratios}
