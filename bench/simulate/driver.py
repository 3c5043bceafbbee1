"""``layoutbench simulate``: replay a scenario on metadata-only tables with the real planners.

No data is written. Each engine keeps its live FileSlices per partition and its physical files
(with the instant index at which they stopped being live, for the cleaner window). Every baseline
assignment, Option 1 plan and Option 2 plan comes from the same pure planners the engines call.
File sizes are rows x bytes-per-record (calibrated, or measured on the workload), merged files are
the sum of their inputs split evenly — so plans and file counts follow the real engines' rules,
while byte figures are estimates of what Parquet compression would give.

Bounded work at long horizons: with more than ``EXACT_BATCHES`` batches, partition counts per
batch are computed analytically (time overlap + late fraction) instead of generating rows, and
maintenance plans only partitions written since the previous run (a partition nobody wrote to
cannot gain small files). Both are stated in run.json's ``simulation`` block.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.engine_factory import MB
from bench.results import ResultsWriter, git_info, machine_info, new_run_id, package_versions
from bench.scenario import EngineSpec, Scenario
from bench.simulate.costmodel import CostModel
from engines.append_compaction.config import CompactionConfig
from engines.append_compaction.planner import plan_base_file_compaction
from engines.clustering.config import ClusteringConfig
from engines.clustering.planner import plan_clustering
from engines.cow_baseline.assign import assign_inserts
from engines.cow_baseline.config import CowConfig
from engines.table.model import FileSlice
from engines.table.sizing import split_evenly
from workloads.generator import batch_num_records, batch_partition_counts, batch_ts_range, bytes_per_record
from workloads.spec import WorkloadSpec

EXACT_BATCHES = 2000


def _merge_stats(members: list[FileSlice]) -> dict:
    cols = set.intersection(*(set(m.column_stats) for m in members)) if members else set()
    return {c: (min(m.column_stats[c][0] for m in members), max(m.column_stats[c][1] for m in members)) for c in cols}


def analytic_partition_counts(spec: WorkloadSpec, b: int) -> dict[str, int]:
    """Rows per partition of batch ``b`` without generating rows (on-time split by time overlap,
    late rows spread evenly over the partitions up to ``max_lateness_partitions`` back)."""
    from workloads.generator import partition_unit, partition_value

    n = batch_num_records(spec, b)
    start, end = batch_ts_range(spec, b)
    unit = partition_unit(spec)
    late = int(round(n * spec.late_fraction))
    ks = list(range(1, spec.max_lateness_partitions + 1))
    per_k = [late // len(ks) + (1 if i < late % len(ks) else 0) for i in range(len(ks))]
    # rows whose shift would land before the run's start stay on time (as the generator does)
    shifted = {k: c for k, c in zip(ks, per_k, strict=True) if start - unit * k >= spec.start}
    on_time = n - sum(shifted.values())
    out: dict[str, int] = defaultdict(int)
    span = (end - start).total_seconds()
    cursor = start
    assigned = 0
    while cursor < end:
        epoch = (cursor - spec.start) // unit
        boundary = min(end, spec.start + unit * (epoch + 1))
        share = int(round(on_time * (boundary - cursor).total_seconds() / span)) if span else on_time
        out[partition_value(spec, cursor)] += share
        assigned += share
        cursor = boundary
    out[partition_value(spec, start)] += on_time - assigned
    for k, count in shifted.items():
        out[partition_value(spec, start - unit * k)] += count
    return {k: v for k, v in sorted(out.items()) if v}


@dataclass
class SimFile:
    slice: FileSlice
    dead_at: int | None = None  # instant index at which it left the snapshot
    replaced: bool = False  # its whole file group was replaced (vs a superseded slice)


@dataclass
class SimEngine:
    spec: EngineSpec
    kind: str
    name: str
    live: dict[tuple[str, str], FileSlice] = field(default_factory=dict)
    physical: dict[str, SimFile] = field(default_factory=dict)
    instants: int = 0
    seq: int = 0
    dirty: set[str] = field(default_factory=set)
    counter: int = 0
    puts: int = 0
    gets: int = 0
    lists: int = 0
    live_bytes: int = 0
    phys_bytes: int = 0
    small: int = 0
    dead: set[str] = field(default_factory=set)  # physical files no longer live, waiting for the cleaner
    by_part: dict[str, dict[str, FileSlice]] = field(default_factory=lambda: defaultdict(dict))
    avg_record_size: int | None = None  # Hudi's estimate from the newest commit above the threshold

    def new_id(self) -> str:
        self.counter += 1
        return f"sim{self.counter:012d}-0"


class Simulator:
    def __init__(self, scenario: Scenario, model: CostModel, writer: ResultsWriter, horizon: int | None) -> None:
        self.sc = scenario
        self.model = model
        self.writer = writer
        self.spec = scenario.workload
        self.n = horizon or self.spec.num_batches
        self.exact = self.n <= EXACT_BATCHES
        self.bpr = model.bytes_per_record or bytes_per_record(self.spec)
        sz = scenario.sizing
        self.small = int(sz.small_file_limit_mb * MB)
        self.target = int(sz.target_file_mb * MB)
        self.max_file = int(sz.max_file_mb * MB)
        self.retained = sz.cleaner_commits_retained
        self.prefix = f"{self.spec.partition_column}="
        self.batch_bytes: dict[int, int] = {}

    # -- bookkeeping --------------------------------------------------------------------------
    def _instant(self, e: SimEngine) -> str:
        e.instants += 1
        return f"{20260101000000000 + e.instants}"

    def _add(self, e: SimEngine, partition: str, file_id: str, instant: str, rows: int, size: int,
             stats: dict | None = None) -> FileSlice:
        path = f"{partition}/{file_id}_0-0-0_{instant}.parquet"
        s = FileSlice(partition, file_id, instant, path, size, rows, stats or {})
        old = e.live.get((partition, file_id))
        if old is not None:
            e.physical[old.path].dead_at = e.instants
            e.dead.add(old.path)
            e.live_bytes -= old.size_bytes
            e.small -= old.size_bytes < self.small
        e.live[(partition, file_id)] = s
        e.by_part[partition][file_id] = s
        e.physical[path] = SimFile(s)
        e.live_bytes += size
        e.phys_bytes += size
        e.small += size < self.small
        e.dirty.add(partition)
        e.puts += 1
        return s

    def _retire(self, e: SimEngine, s: FileSlice, delete_now: bool) -> None:
        if e.live.pop(s.file_group, None) is not None:
            e.by_part[s.partition].pop(s.file_id, None)
            e.live_bytes -= s.size_bytes
            e.small -= s.size_bytes < self.small
        if delete_now:
            e.physical.pop(s.path, None)
            e.phys_bytes -= s.size_bytes
        else:
            f = e.physical[s.path]
            f.dead_at, f.replaced = e.instants, True
            e.dead.add(s.path)

    def _clean(self, e: SimEngine) -> int:
        if e.instants <= self.retained:
            return 0
        earliest = e.instants - self.retained + 1
        doomed = [p for p in e.dead if e.physical[p].dead_at < earliest]  # type: ignore[operator]
        for p in doomed:
            e.phys_bytes -= e.physical.pop(p).slice.size_bytes
            e.dead.discard(p)
        return len(doomed)

    def _record(self, e: SimEngine, batch: int, kind: str, instant: str, written: list[FileSlice], duration: float,
                replaced: int, batch_bytes: int) -> None:
        live_n, live_bytes, phys_bytes = len(e.live), e.live_bytes, e.phys_bytes
        wbytes, wrows = sum(s.size_bytes for s in written), sum(s.num_rows for s in written)
        if wbytes > self.small and wrows:
            e.avg_record_size = math.ceil(wbytes / wrows)
        e.seq += 1
        e.puts += 3  # requested, inflight, completed instant files
        self.writer.add("commits", engine=e.name, seq=e.seq, batch=batch, instant=instant,
                        action="replacecommit" if kind == "clustering" else "commit", operation=kind.upper(),
                        kind=kind, duration_s=duration, records_written=sum(s.num_rows for s in written),
                        bytes_written=sum(s.size_bytes for s in written), files_written=len(written),
                        files_replaced=replaced, batch_bytes=batch_bytes, live_files=live_n,
                        physical_files=len(e.physical), live_bytes=live_bytes, physical_bytes=phys_bytes,
                        space_amp=phys_bytes / live_bytes if live_bytes else None, small_files=e.small,
                        mean_file_bytes=live_bytes / live_n if live_n else 0.0, metadata_bytes=0)

    # -- engines ------------------------------------------------------------------------------
    def _stats(self, b: int) -> dict:
        lo, hi = batch_ts_range(self.spec, b)
        return {"ts": (lo, hi), "service": ("svc-000", f"svc-{self.spec.num_services - 1:03d}")}

    def ingest(self, e: SimEngine, b: int, counts: dict[str, int]) -> None:
        written: list[FileSlice] = []
        stats = self._stats(b)
        if e.kind == "cow_baseline":
            cfg = CowConfig(small_file_limit=self.small, max_file_size=self.max_file)
            by_part = {p: list(e.by_part[p].values()) for p in counts if e.by_part.get(p)}
            avg = e.avg_record_size or cfg.record_size_estimate  # Hudi's rule, as the engine applies it
            instant = self._instant(e)
            for bucket in assign_inserts(by_part, counts, avg, cfg):
                if bucket.base_slice is not None:
                    base = bucket.base_slice
                    e.gets += 1
                    written.append(self._add(e, bucket.partition, base.file_id, instant, base.num_rows + bucket.num_records,
                                             base.size_bytes + int(bucket.num_records * self.bpr)))
                else:
                    written.append(self._add(e, bucket.partition, e.new_id(), instant, bucket.num_records,
                                             int(bucket.num_records * self.bpr)))
        else:
            instant = self._instant(e)
            for partition, rows in counts.items():
                size = int(rows * self.bpr)
                parts = max(1, math.ceil(size / self.max_file))
                for r in split_evenly(rows, parts):
                    written.append(self._add(e, partition, e.new_id(), instant, r, int(r * self.bpr), stats))
        bb = sum(int(r * self.bpr) for r in counts.values())
        dur = self.model.ingest_s(sum(s.size_bytes for s in written), len(written))
        self._record(e, b, "ingest", instant, written, dur, 0, bb)
        if e.kind == "cow_baseline":  # the baseline cleans after every commit (auto clean)
            self._maybe_clean(e, b)

    def _maybe_clean(self, e: SimEngine, b: int) -> None:
        deleted = self._clean(e)
        if deleted:
            self.writer.add("maintenance", engine=e.name, batch=b, kind="clean", instant=f"{e.instants}",
                            mode="simulated", duration_s=self.model.file_create_s * deleted, files_in=0, files_out=0,
                            bytes_read=0, bytes_written=0, records=0, files_deleted=deleted, details="{}")

    def maintain(self, e: SimEngine, b: int) -> None:
        candidates = list(e.live.values()) if self.exact else [
            s for p in sorted(e.dirty) for s in e.by_part.get(p, {}).values()]
        e.lists += len({s.partition for s in candidates})
        groups: list[tuple[str, list[FileSlice], int]] = []
        conf = e.spec.config
        if e.kind == "append_compaction":
            plan = plan_base_file_compaction(candidates, CompactionConfig(small_file_limit=self.small,
                                                                          target_file_size=self.target))
            if plan:
                by_path = {s.path: s for s in candidates}
                groups = [(op.partition_path, [by_path[p] for p in op.base_file_paths],
                           int(op.metrics["estimatedOutputFiles"])) for op in plan.operations]
        elif e.kind == "clustering":
            plan = plan_clustering(candidates, ClusteringConfig(small_file_limit=self.small, target_file_size=self.target,
                                                                sort_columns=tuple(conf.get("sort_columns", ()))))
            if plan:
                groups = [(g.partition_path, g.slices, g.num_output_files) for g in plan.groups]
        e.dirty.clear()
        if not groups:
            if e.kind == "cow_baseline" or e.spec.config.get("order") == "commit_before_delete" or e.kind == "clustering":
                self._maybe_clean(e, b)
            return
        instant = self._instant(e)
        written: list[FileSlice] = []
        files_in = bytes_read = 0
        delete_now = e.kind == "append_compaction" and conf.get("order", "rfc") == "rfc"
        for partition, members, n_out in groups:
            rows = sum(s.num_rows for s in members)
            total = sum(s.size_bytes for s in members)
            files_in += len(members)
            bytes_read += total
            e.gets += len(members)
            for s in members:
                self._retire(e, s, delete_now)
            merged = _merge_stats(members)
            for r in split_evenly(rows, n_out):
                written.append(self._add(e, partition, e.new_id(), instant, r, int(total * r / rows) if rows else 0,
                                         merged))
        e.dirty.clear()
        kind = "clustering" if e.kind == "clustering" else "compaction"
        dur = self.model.maintenance_s(bytes_read, sum(s.size_bytes for s in written), files_in, len(written))
        self.writer.add("maintenance", engine=e.name, batch=b, kind=kind, instant=instant, mode="simulated",
                        duration_s=dur, files_in=files_in, files_out=len(written), bytes_read=bytes_read,
                        bytes_written=sum(s.size_bytes for s in written), records=sum(s.num_rows for s in written),
                        files_deleted=files_in if delete_now else 0, details=json.dumps({"groups": len(groups)}))
        self._record(e, b, kind, instant, written, dur, files_in, 0)
        if e.spec.config.get("order") == "commit_before_delete" or e.kind == "clustering":
            self._maybe_clean(e, b)

    def queries(self, e: SimEngine, b: int) -> None:
        live = list(e.live.values())
        total_bytes = sum(s.size_bytes for s in live)
        parts = {s.partition for s in live}
        last = max(parts) if parts else ""
        recent = [s for s in live if s.partition == last]
        plan = {"full_scan_by_level": (len(live), total_bytes),
                "recent_hour": (len(recent), sum(s.size_bytes for s in recent)),
                "point_lookup": (len(live), total_bytes // max(1, len(live))),
                "topn_latency": (len(recent), sum(s.size_bytes for s in recent)),
                "service_hours": (len(recent), sum(s.size_bytes for s in recent) // 4)}
        for name in self.sc.queries.suite:
            files, scanned = plan[name]
            e.gets += files
            self.writer.add("queries", engine=e.name, checkpoint=b, query=name, run=0,
                            latency_s=self.model.query_s(files, scanned), files_total=len(live), files_scanned=files,
                            files_pruned=len(live) - files, row_groups_total=None, row_groups_scanned=None,
                            rows_scanned=int(scanned / self.bpr), result_rows=None, verified=None, error=None)


def simulate(scenario: Scenario, out_dir: str | Path, calibration_path: str | Path | None = None,
             horizon_batches: int | None = None, run_id: str | None = None) -> Path:
    """Simulate ``scenario`` and write a results folder of the same shape as a real run."""
    t0 = time.perf_counter()
    model = CostModel.load(calibration_path) if calibration_path else CostModel()
    run_dir = Path(out_dir) / (run_id or new_run_id(f"sim-{scenario.name}"))
    writer = ResultsWriter(run_dir)
    sim = Simulator(scenario, model, writer, horizon_batches)
    engines = [SimEngine(e, e.kind, e.name) for e in scenario.engines if e.kind != "delta_peer"]
    every = scenario.maintenance.every_commits
    checkpoint_every = scenario.queries.checkpoint_every
    spec = scenario.workload.model_copy(update={"num_batches": sim.n})
    for b in range(sim.n):
        counts_raw = batch_partition_counts(spec, b) if sim.exact else analytic_partition_counts(spec, b)
        counts = {f"{sim.prefix}{k}": v for k, v in counts_raw.items()}
        for e in engines:
            sim.ingest(e, b, counts)
            if scenario.maintenance.mode != "none" and (b + 1) % every == 0:
                sim.maintain(e, b)
        if (b + 1) % checkpoint_every == 0 or b == sim.n - 1:
            for e in engines:
                if b == sim.n - 1 and scenario.maintenance.final and (b + 1) % every != 0:
                    sim.maintain(e, b)
                sim.queries(e, b)
    for e in engines:
        if len(e.live) <= 200_000:
            for s in e.live.values():
                writer.add("files", engine=e.name, checkpoint=sim.n - 1, partition=s.partition, file_id=s.file_id,
                           path=s.path, size_bytes=s.size_bytes, rows=s.num_rows, live=True)
    from bench.runner import _derive_cumulative

    batch_bytes: dict[int, int] = {}
    for row in writer.rows["commits"]:
        if row["kind"] == "ingest" and row["batch"] not in batch_bytes:
            batch_bytes[row["batch"]] = row["batch_bytes"]
    _derive_cumulative(writer, batch_bytes)
    wall = time.perf_counter() - t0
    requests = {e.name: {"put": e.puts, "get": e.gets, "list": e.lists,
                         "usd": round(model.request_cost_usd(e.puts, e.gets, e.lists), 4)} for e in engines}
    run: dict[str, Any] = {
        "run_id": run_dir.name, "created": None, "scenario": scenario.model_dump(mode="json"), "seed": spec.seed,
        "git": git_info(), "versions": package_versions(), "machine": machine_info(), "spark_master": None,
        "engines": {e.name: {"kind": e.kind, "table_path": None, "config": e.spec.config} for e in engines},
        "simulated": True, "wall_time_s": wall, "harness_overhead_s": 0.0, "harness_overhead_ratio": 0.0,
        "verification": {"ok": True, "failures": []},
        "simulation": {"horizon_batches": sim.n, "exact_partition_counts": sim.exact,
                       "planning": "all partitions" if sim.exact else "partitions written since the last run",
                       "bytes_per_record": sim.bpr, "cost_model": model.__dict__, "requests": requests,
                       "elapsed_s": wall},
    }
    from datetime import UTC, datetime

    run["created"] = datetime.now(UTC).isoformat()
    writer.write_run(run)
    return run_dir
