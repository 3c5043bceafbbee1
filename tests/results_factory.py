"""A plausible results folder built without Spark (seconds, deterministic), for report/compare/gate tests.

``make_results`` simulates a tiny table per engine (sizes only) so every figure is internally
consistent: cumulative bytes, WA, live/physical files, space amplification, maintenance rows,
queries (cold + warm) at checkpoints, isolation rows (option1_rfc gets ``failed`` and ``wrong``
outcomes), optional crash rows, and a run.json with the same-run ``calibration``.
``worsen`` copies any results folder (real or synthetic) with more files, more bytes and slower
timings, for the comparison tests.
"""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engines.config.registry import MB
from runresults import TABLES, ResultsWriter, commit_row, derive_cumulative

ENGINES: dict[str, dict[str, Any]] = {
    "baseline": {"kind": "cow_baseline", "config": {}},
    "option1_rfc": {"kind": "append_compaction", "config": {"order": "rfc"}},
    "option1_cbd": {"kind": "append_compaction", "config": {"order": "commit_before_delete"}},
    "option2": {"kind": "clustering", "config": {}},
    "option2_sorted": {"kind": "clustering", "config": {"sort_columns": ["service", "ts"]}},
}
# Reference engines a test may ask for by name (not in the default set): Apache Hudi's COW preset, which the
# fidelity section pairs with the baseline.
REFERENCE_ENGINES: dict[str, dict[str, Any]] = {
    "hudi_cow": {"kind": "hudi", "config": {"preset": "hudi_cow", "operation": "insert"}},
}
KNOWN = {**ENGINES, **REFERENCE_ENGINES}
QUERIES = ("full_scan_by_level", "service_hours", "point_lookup")
SMALL, TARGET = 3 * MB, 4 * MB


class _Table:
    """Sizes of live files and of replaced files awaiting the cleaner."""

    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.pending: list[tuple[int, str, int]] = []  # (replaced at batch, file id, size)
        self.n = 0

    def new_id(self) -> str:
        self.n += 1
        return f"fg{self.n:04d}-0"

    def state(self) -> dict[str, Any]:
        live_b = sum(self.live.values())
        phys_b = live_b + sum(s for _, _, s in self.pending)
        return {"live_files": len(self.live), "physical_files": len(self.live) + len(self.pending),
                "live_bytes": live_b, "physical_bytes": phys_b, "space_amp": phys_b / live_b if live_b else None,
                "small_files": sum(1 for s in self.live.values() if s < SMALL),
                "mean_file_bytes": live_b / len(self.live) if self.live else None}


def make_results(folder: str | Path, *, engines: list[str] | None = None, batches: int = 12,
                 maintain_every: int = 4, checkpoints: tuple[int, ...] = (5, 11), seed: int = 7,
                 crash: bool = False, calibration: bool = True) -> Path:
    """Write a synthetic results folder into ``folder`` and return it."""
    folder = Path(folder)
    names = engines or list(ENGINES)
    rng = random.Random(seed)
    w = ResultsWriter(folder)
    batch_bytes = {b: 1_000_000 + 1_000 * b for b in range(batches)}
    for engine in names:
        kind, cfg = KNOWN[engine]["kind"], KNOWN[engine]["config"]
        t, seq, cum_w, cum_b = _Table(), 0, 0, 0

        def commit(batch: int, ckind: str, duration: float, written: int, files_w: int, files_r: int,
                   bb: int, *, _t: _Table = t, _engine: str = engine) -> None:
            nonlocal seq, cum_w, cum_b
            seq += 1
            cum_w += written
            cum_b += bb
            action = "commit" if ckind == "ingest" else "replacecommit"
            w.add("commits", engine=_engine, seq=seq, batch=batch, instant=f"2026010100{seq:07d}", action=action,
                  operation="INSERT" if ckind == "ingest" else "CLUSTER", kind=ckind, duration_s=duration,
                  records_written=written // 130, bytes_written=written, files_written=files_w,
                  files_replaced=files_r, batch_bytes=bb, cum_bytes_written=cum_w, cum_batch_bytes=cum_b,
                  wa=cum_w / cum_b, metadata_bytes=2_000 * seq, **_t.state())

        for b in range(batches):
            bb = batch_bytes[b]
            # the cleaner: replaced files two batches old go away
            due = [p for p in t.pending if p[0] <= b - 2]
            if due:
                t.pending = [p for p in t.pending if p[0] > b - 2]
                w.add("maintenance", engine=engine, batch=b, kind="clean", instant=f"c{engine}{b}", mode="engine",
                      duration_s=0.005, files_in=0, files_out=0, bytes_read=0, bytes_written=0, records=0,
                      files_deleted=len(due), details=json.dumps({"bytes_freed": sum(p[2] for p in due)}))
            if kind == "cow_baseline":
                small = [f for f, s in t.live.items() if s < SMALL]
                if small:
                    old = small[0]
                    written = t.live.pop(old) + bb
                    t.pending.append((b, old, written - bb))
                    t.live[t.new_id()] = written
                else:
                    written = bb
                    t.live[t.new_id()] = bb
                commit(b, "ingest", 0.5 + written / (4 * MB) + rng.uniform(0, 0.1), written, 1, 1 if small else 0, bb)
            else:
                t.live[t.new_id()] = bb
                commit(b, "ingest", 0.2 + rng.uniform(0, 0.05), bb, 1, 0, bb)
            if kind != "cow_baseline" and (b + 1) % maintain_every == 0:
                small = {f: s for f, s in t.live.items() if s < SMALL}
                total = sum(small.values())
                n_out = max(1, math.ceil(total / TARGET))
                for f, s in small.items():
                    del t.live[f]
                    if cfg.get("order") != "rfc":
                        t.pending.append((b, f, s))
                for _ in range(n_out):
                    t.live[t.new_id()] = total // n_out
                mkind = "compaction" if kind == "append_compaction" else "clustering"
                duration = 0.8 + total / (8 * MB) + rng.uniform(0, 0.1)
                instant = f"2026010100{seq + 1:07d}"
                commit(b, mkind, duration, total, n_out, len(small), 0)
                w.add("maintenance", engine=engine, batch=b, kind=mkind, instant=instant, mode="inline",
                      duration_s=duration, files_in=len(small), files_out=n_out, bytes_read=total, bytes_written=total,
                      records=total // 130, files_deleted=len(small) if cfg.get("order") == "rfc" else 0,
                      details=json.dumps(cfg))
                for reader in range(3):
                    outcome, got, err = "ok", "22048", None
                    if engine == "option1_rfc" and reader == 0:
                        outcome, got, err = "failed", None, "FileNotFoundException: replaced file deleted"
                    elif engine == "option1_rfc" and reader == 1 and b + 1 == maintain_every:
                        outcome, got = "wrong", "19000"
                    w.add("isolation", engine=engine, maintenance_instant=instant, reader=reader, seq=reader,
                          query="recent_hour", started_s=0.1 * reader, ended_s=0.1 * reader + 0.3, outcome=outcome,
                          expected="22048", got=got, error=err)
            if b in checkpoints:
                for f, s in t.live.items():
                    w.add("files", engine=engine, checkpoint=b, partition="dt=2026-01-01", file_id=f,
                          path=f"dt=2026-01-01/{f}.parquet", size_bytes=s, rows=s // 130, live=True)
                for _, f, s in t.pending:
                    w.add("files", engine=engine, checkpoint=b, partition="dt=2026-01-01", file_id=f,
                          path=f"dt=2026-01-01/{f}.old.parquet", size_bytes=s, rows=s // 130, live=False)
                n = len(t.live)
                for q in QUERIES:
                    scanned = n if q != "service_hours" else max(1, n // (3 if "sort_columns" in cfg else 2))
                    for run in range(3):
                        lat = 0.05 + 0.01 * n + (0.05 if run == 0 else 0.0) + rng.uniform(0, 0.005)
                        w.add("queries", engine=engine, checkpoint=b, query=q, run=run, latency_s=lat, files_total=n,
                              files_scanned=scanned, files_pruned=n - scanned, row_groups_total=4 * n,
                              row_groups_scanned=4 * scanned, rows_scanned=scanned * 8000, result_rows=4,
                              verified=True, error=None)
        if crash:
            w.add("crash", engine=engine, point="after_data_before_commit", recovered=True,
                  rows_lost=0, rows_duplicated=0, query_failures=0, hudi_rs_agrees=True, details="{}")
            if engine == "option1_rfc":
                w.add("crash", engine=engine, point="after_delete_before_commit", recovered=True, rows_lost=10583,
                      rows_duplicated=0, query_failures=1, hudi_rs_agrees=True, details="{}")
    run: dict[str, Any] = {
        "run_id": folder.name, "created": "2026-11-22T12:00:00+00:00",
        "scenario": {"name": "factory", "description": "synthetic results folder for tests",
                     "workload": {"seed": seed, "num_batches": batches, "batch_mb": 1.0, "num_partitions": 1,
                                  "partition_granularity": "day", "late_fraction": 0.0},
                     "sizing": {"small_file_limit_mb": 3.0, "target_file_mb": 4.0, "cleaner_commits_retained": 2},
                     "maintenance": {"mode": "inline", "every_commits": maintain_every}},
        "scenario_path": "tests/results_factory.py", "seed": seed,
        "git": {"sha": "0" * 40, "dirty": False},
        "versions": {"python": "3.11", "pyspark": None, "pyarrow": pa.__version__},
        "machine": {"cores": 2, "memory_bytes": 8 << 30, "platform": "test"},
        "engines": {n: {"kind": KNOWN[n]["kind"], "table_path": str(folder / "tables" / n),
                        "config": KNOWN[n]["config"]} for n in names},
        "simulated": False, "wall_time_s": 12.5, "harness_overhead_s": 0.2, "harness_overhead_ratio": 0.016,
        "verification": {"ok": True, "failures": []},
    }
    if calibration:
        run["calibration"] = {"pyarrow_rewrite_s": 0.25, "spark_plain_append_s": 0.15}
    w.write_run(run)
    return folder


def worsen(src: str | Path, dst: str | Path, *, extra_files: int = 3, bytes_factor: float = 2.0,
           slower: float = 2.0) -> Path:
    """Copy a results folder with more files, more bytes written and every timing ``slower``× longer."""
    src, dst = Path(src), Path(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("tables", "plots", "report.*", "compare.md"))

    def rewrite(name: str, change: dict[str, Any]) -> None:
        t = pq.read_table(dst / f"{name}.parquet").to_pandas()
        for col, fn in change.items():
            t[col] = fn(t[col])
        pq.write_table(pa.Table.from_pandas(t, schema=TABLES[name], preserve_index=False), dst / f"{name}.parquet")

    rewrite("commits", {"live_files": lambda c: c + extra_files, "physical_files": lambda c: c + extra_files,
                        "bytes_written": lambda c: (c * bytes_factor).astype("int64"),
                        "cum_bytes_written": lambda c: (c * bytes_factor).astype("int64"),
                        "wa": lambda c: c * bytes_factor, "duration_s": lambda c: c * slower})
    rewrite("maintenance", {"duration_s": lambda c: c * slower,
                            "bytes_written": lambda c: (c * bytes_factor).astype("int64")})
    rewrite("queries", {"latency_s": lambda c: c * slower})
    return dst


DESIGN_ENGINES = {"baseline": "cow_baseline", "option1": "append_compaction", "option2": "clustering"}


def make_design_results(folder: str | Path, *, repeats: int = 10, batches: int = 20, rounds: int = 12,
                        checkpoint_rounds: int = 0, speed: dict[str, float] | None = None, final_files: dict[str, int] | None = None,
                        stored: dict[str, float] | None = None, failing: dict[str, dict[str, float]] | None = None,
                        review: dict[str, Any] | None = None, noise: float = 0.02, seed: int = 11,
                        phases: dict[str, tuple[float, float, float]] | None = None) -> Path:
    """A results folder for the review's rules, every figure set by the caller: ``speed`` scales an
    engine's every timing (ingest, maintenance, queries; 1.0 by default), ``final_files`` its live
    files at the end, ``stored`` its physical bytes over live bytes, ``failing`` gate -> the
    failing figure per engine (every other gate passes). The timing noise is shared by every engine
    (same batch, repetition and round: the same draw), so the paired ratios are exactly the speeds.
    Maintenance runs every 5 batches; checkpoints at batches 9 and ``batches - 1``; the interleaved
    rounds at the last, and ``checkpoint_rounds`` rounds at batch 9 (the first repetition's, in place of
    its warm run there, as the runner records them). ``phases``: an engine's ingest as (plan, write, commit) seconds per batch,
    replacing its 0.1 s (scaled by the same draw)."""
    folder = Path(folder)
    phases = phases or {}
    speed, final_files, stored, failing = speed or {}, final_files or {}, stored or {}, failing or {}
    rng = random.Random(seed)
    draw = {(r, b): 1 + noise * rng.uniform(-1, 1) for r in range(repeats)
            for b in range(batches + rounds + checkpoint_rounds)}
    w = ResultsWriter(folder)
    checkpoints = (9, batches - 1)
    batch_bytes = 1_000_000
    for engine in DESIGN_ENGINES:
        f, files_end = speed.get(engine, 1.0), final_files.get(engine, 71)
        amp = stored.get(engine, 1.0)
        for r in range(repeats):
            seq = 0
            for b in range(batches):
                seq += 1
                live = max(1, round(files_end * (b + 1) / batches))
                live_b = batch_bytes * (b + 1)
                split = [x * draw[(r, b)] for x in phases[engine]] if engine in phases else [None] * 3
                w.add("commits", **commit_row(
                    engine=engine, seq=seq, batch=b, instant=f"{r}{seq:08d}", action="commit", operation="insert",
                    kind="ingest", duration_s=sum(split) if engine in phases else 0.1 * f * draw[(r, b)],
                    plan_s=split[0], write_s=split[1], commit_s=split[2], records_written=1000, bytes_written=batch_bytes,
                    files_written=1, files_replaced=0, live_files=live, physical_files=live, live_bytes=live_b,
                    physical_bytes=int(live_b * amp), small_files=live, metadata_bytes=0, repeat=r,
                    batch_bytes=batch_bytes))
                if (b + 1) % 5 == 0:
                    w.add("maintenance", engine=engine, repeat=r, batch=b, kind="clustering", instant=f"m{b}",
                          mode="inline", duration_s=0.5 * f * draw[(r, b)], files_in=5, files_out=1, bytes_read=0,
                          bytes_written=0, records=0, files_deleted=0, details="{}")
                    w.add("maintenance", engine=engine, repeat=r, batch=b, kind="clean", instant=f"c{b}",
                          mode="inline", duration_s=0.01, files_in=0, files_out=0, bytes_read=0, bytes_written=0,
                          records=0, files_deleted=0, details="{}")
                if b in checkpoints:
                    for run in (0,) if (r, b) == (0, 9) and checkpoint_rounds else (0, 1):
                        lat = (0.4 if b == 9 else 1.0) * f * draw[(r, b)] * (1.5 if run == 0 else 1.0)
                        w.add("queries", engine=engine, repeat=r, checkpoint=b, query="full_scan_by_level", run=run,
                              latency_s=lat, files_total=live, files_scanned=live, files_pruned=0, row_groups_total=live,
                              row_groups_scanned=live, rows_scanned=1000, result_rows=4, verified=True, error=None)
        for k in range(checkpoint_rounds):
            lat = 0.4 * f * draw[(0, batches + rounds + k)]
            w.add("query_rounds", engine=engine, checkpoint=9, query="full_scan_by_level", round=k,
                  position=list(DESIGN_ENGINES).index(engine), latency_s=lat, result_rows=4, verified=True)
            w.add("queries", engine=engine, repeat=0, checkpoint=9, query="full_scan_by_level", run=k + 1,
                  latency_s=lat, files_total=1, files_scanned=1, files_pruned=0, row_groups_total=None,
                  row_groups_scanned=None, rows_scanned=None, result_rows=4, verified=True, error=None)
        for k in range(rounds):
            w.add("query_rounds", engine=engine, checkpoint=batches - 1, query="full_scan_by_level", round=k,
                  position=list(DESIGN_ENGINES).index(engine), latency_s=1.0 * f * draw[(0, batches + k)],
                  result_rows=4, verified=True)
        for gate in ("isolation", "no_loss", "incremental", "time_travel", "concurrent_update"):
            bad = failing.get(gate, {}).get(engine)
            w.add("gates", engine=engine, gate=gate, reader="apache_hudi", passed=bad is None, checked=10,
                  failures=0 if bad is None else 1, figure=0.0 if bad is None else bad, figure_unit="rows",
                  detail=None if bad is None else f"{gate} failed on {engine}")
    derive_cumulative(w, dict.fromkeys(range(batches), batch_bytes))
    scenario: dict[str, Any] = {"name": "design_factory", "workload": {"num_batches": batches, "num_partitions": 1,
                                                                       "partition_granularity": "day", "batch_mb": 1.0}}
    if review is not None:
        scenario["review"] = review
    w.write_run({"run_id": folder.name, "scenario": scenario, "spark_master": "local[2]", "repeat": repeats,
                 "machine": {"cores": 2}, "simulated": False,
                 "engines": {e: {"kind": k, "config": {}} for e, k in DESIGN_ENGINES.items()},
                 "verification": {"ok": True, "failures": []}})
    return folder
