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

import gc
import json
import math
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.batch_loop import SCHEDULE, MaintenanceSchedule, checkpoints_of, run_batches
from bench.engine_factory import LOGICAL_START, engine_bloom, resolve_planner
from bench.progress import ProgressBar
from bench.query_suite import PREDICATES, QueryParams, choose_params
from bench.scenario import EngineSpec, Scenario
from bench.simulate import corrections as simcorr
from bench.simulate import forked_replay, logsize
from bench.simulate import requests as reqmodel
from bench.simulate import rows as simrows
from bench.simulate.batch_schedule import build_schedule, partition_label, ts_range_in_partition, utc_moment
from bench.simulate.behaviour import SimBehaviour, behaviour_class, behaviour_of
from bench.simulate.commit_log import CommitLog
from bench.simulate.costmodel import CostModel
from bench.simulate.rows import merge_stats, merge_two
from engines.config.registry import MB
from engines.cow_baseline.assign import assign_inserts, rank_ranges
from engines.cow_baseline.config import CowConfig
from engines.files.hash_partitioning import hash_partition
from engines.kinds import kind_of
from engines.table.bloom import BloomConfig, bloom_of, footer_bytes
from engines.table.cleaner import doomed_in_group, earliest_to_retain
from engines.table.instants import InstantClock
from engines.table.model import FileSlice, commit_order, file_slice, new_file_id
from engines.table.pruning import prune
from engines.table.sizing import split_evenly
from runresults import TABLES, ResultsWriter
from runresults.query_runs import query_runs
from workloads.generator import batch_num_records, batch_table, batch_ts_range, bytes_per_record
from workloads.rowdef import trace_id
from workloads.spec import WorkloadSpec

KEY_LENGTH = len(trace_id(0, 0, 0))  # characters of a record key (the footer's min/max keys)
EXACT_BATCHES = 2000
# Simulated files keep their rows' query columns (exact pruning) up to this many generated rows.
ROWS_LIMIT = 4_000_000
RECORD_KEY = "trace_id"
PROGRESS_AFTER_S = 3.0  # `layoutbench simulate` shows a bar only for replays longer than this
# the write task of a partition value among a batch's values (a partition takes a batch's rows some
# 36 times, so each is hashed once, not on every batch: Spark's Murmur3 in Python cost 5% of a year)
_task_of = lru_cache(maxsize=1 << 16)(hash_partition)


def analytic_partition_counts(spec: WorkloadSpec, b: int) -> dict[str, int]:
    """Rows per partition of batch ``b`` without generating rows (on-time split by time overlap,
    late rows spread evenly over the partitions up to ``max_lateness_partitions`` back): batch
    ``b``'s entries of :func:`bench.simulate.batch_schedule.build_schedule`, which has the rule."""
    one = build_schedule(spec, b, 1)
    return {partition_label(spec, k): c for k, c in zip(one.keys, one.counts, strict=True)}


# Generated rows depend on the workload only: grid points of a sweep that share it share these.
@lru_cache(maxsize=8192)
def _generated_batch(spec: WorkloadSpec, b: int, with_rows: bool
                     ) -> tuple[dict[str, int], dict[str, pa.Table], pa.Table]:
    """Batch ``b``'s rows per partition path and, with rows, its query columns per partition path
    and as one table (with the partition column)."""
    pcol = spec.partition_column
    table = batch_table(spec, b, (pcol, *simrows.COLUMNS) if with_rows else (pcol,))
    vc = pc.value_counts(table.column(pcol)).to_pylist()
    counts = {f"{pcol}={d['values']}": d["counts"] for d in sorted(vc, key=lambda d: d["values"])}
    rows = {f"{pcol}={k}": v for k, v in simrows.partition_rows(table, pcol).items()} if with_rows else {}
    return counts, rows, table


@lru_cache(maxsize=8192)
def _sorted_batch_rows(spec: WorkloadSpec, b: int, partition: str, order: tuple[str, ...]) -> pa.Table:
    return simrows.sort_rows(_generated_batch(spec, b, True)[1][partition], order)


@lru_cache(maxsize=8192)
def _ingest_pieces(spec: WorkloadSpec, b: int, partition: str, order: tuple[str, ...],
                   parts: tuple[int, ...], skip: int = 0) -> list[tuple[pa.Table, dict]]:
    """The files an APPEND ingest writes for one partition of batch ``b``: rows and their ranges
    (``skip``: the partition's first rows, in batch order, went to small file groups' logs)."""
    rows = _sorted_batch_rows(spec, b, partition, order) if not skip else \
        simrows.sort_rows(_generated_batch(spec, b, True)[1][partition].slice(skip), order)
    pieces = simrows.cut(rows, parts)
    value = partition.split("=", 1)[1]
    return [(t, simrows.stats_of(t, spec.partition_column, value)) for t in pieces]


@lru_cache(maxsize=256)
def _params_so_far(spec: WorkloadSpec, b: int, window_hours: float) -> QueryParams:
    """The runner's query parameters after batch ``b``: chosen from every row so far."""
    truth = pa.concat_tables([_generated_batch(spec, k, True)[2] for k in range(b + 1)])
    return choose_params(truth, spec.partition_column, window_hours)


LOGICAL_CLOCK = InstantClock(logical_start=LOGICAL_START)  # the runner's deterministic instants
_FIRST_INSTANT = LOGICAL_CLOCK.next(None)


def next_logical_instant(last: str | None) -> str:
    """``LOGICAL_CLOCK.next(last)`` for a simulated table's own instants: after the first, each is the
    last + 1 ms, done on the digits unless the milliseconds carry (a replay ticks ~10^5 times)."""
    if last is not None and len(last) == 17 and last >= _FIRST_INSTANT:
        ms = _NEXT_MS.get(last[14:])
        if ms is not None:
            return last[:14] + ms
    return LOGICAL_CLOCK.next(last)


_NEXT_MS = {f"{i:03d}": f"{i + 1:03d}" for i in range(999)}  # the milliseconds' digits, and the next ones'


_INSTANT = attrgetter("instant")
_SLICE = attrgetter("slice")
# the figures of each event the replay records (bench.simulate.requests.FEATURES), in the order it gives them
_COMMITS = ("commits",)
_INGEST_FEATURES = ("commits", "files_written", "files_merged", "row_groups_merged", "partitions_new")
_CLEAN_FEATURES = ("commits", "files_deleted")
_PLANNING_FEATURES = ("commits", "live_files")
_EXECUTION_FEATURES = ("commits", "files_in", "files_out", "row_groups_in")
_SCAN_FEATURES = ("files_scanned", "row_groups_scanned")


class DeadFile(NamedTuple):
    """A physical file no longer live, waiting for the cleaner."""

    slice: FileSlice
    dead_at: str  # the instant at which it left the snapshot
    replaced: bool  # its whole file group was replaced (vs a superseded slice)


_new_tuple = tuple.__new__


@dataclass
class SimEngine:
    spec: EngineSpec
    kind: str
    name: str
    behaviour: SimBehaviour  # what its kind does (engines/<kind>/sim.py)
    live: dict[tuple[str, str], FileSlice] = field(default_factory=dict)
    physical: int = 0  # physical files (live, or dead until the cleaner deletes them)
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
    # the cleaner's bookkeeping: the dead files (no longer live, waiting for the cleaner) of each group,
    # the dead files in the order they left the snapshot ((instant, path, group); a file leaves at the
    # timeline's newest instant, so the instants never go back), and the group of each that left
    # before the earliest retained instant
    dead_by_group: dict[tuple[str, str], dict[str, DeadFile]] = field(default_factory=dict)
    dying: deque[tuple[str, str, tuple[str, str]]] = field(default_factory=deque)
    expired: dict[str, tuple[str, str]] = field(default_factory=dict)
    footers: dict[int, int] = field(default_factory=dict)  # rows -> footer bytes of its bloom filter
    by_part: dict[str, dict[str, FileSlice]] = field(default_factory=lambda: defaultdict(dict))
    data_instants: list[str] = field(default_factory=list)  # completed commits and replacecommits
    last_instant: str | None = None  # the newest instant of its timeline, commits and cleans alike
    avg_record_size: int | None = None  # Hudi's estimate from the newest commit above the threshold
    inserts: CowConfig | None = None  # the UpsertPartitioner config of its ingest (None: rolled at bytes)
    bloom: BloomConfig = field(default_factory=BloomConfig)  # the footer bloom filter of its files
    planner: Any = None  # the planner config resolved once from the scenario (bench.engine_factory)
    options: dict[str, Any] = field(default_factory=dict)  # engine-level config keys (order, sort_columns)
    rows: dict[str, pa.Table] = field(default_factory=dict)  # path -> its rows' query columns (exact mode)
    log: reqmodel.EventLog = field(default_factory=reqmodel.EventLog)  # what each phase did, for the request model
    partitions: set[str] = field(default_factory=set)  # partition paths ever written (a new one is a new prefix)
    fresh: set[tuple[str, str]] = field(default_factory=set)  # file groups this batch's ingest created
    # log files, which a kind's hooks add (:meth:`Simulator.add_log`: a MERGE_ON_READ kind's, in its sim.py):
    # each slice's log files by its base file's path, (path, bytes, records), oldest first; the logs of
    # live slices and of every physical slice
    logs: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)
    live_logs: int = 0
    live_log_bytes: int = 0
    phys_logs: int = 0
    phys_log_bytes: int = 0
    # rows in each live slice's logs that are inserts (:meth:`Simulator.grow_slice`), by its base file's path
    inserted: dict[str, int] = field(default_factory=dict)

    @property
    def events(self) -> reqmodel.Events:
        """What each phase did, per (phase, context), for the request model."""
        return self.log.events

    def new_id(self) -> str:
        self.counter += 1
        return f"sim{self.counter:012d}-0"


class Simulator:
    def __init__(self, scenario: Scenario, model: CostModel, writer: RowSink | ResultsWriter, horizon: int | None,
                 stop_after: int | None = None, start_at: int = 0, as_run: bool = False) -> None:
        self.sc = scenario
        q = scenario.queries
        self.query_spec = {"review": {"measure": scenario.review.measure},  # for query_runs
                           "queries": {"interleaved": q.interleaved, "rounds": q.rounds, "warm_runs": q.warm_runs}}
        self.model = model
        self.writer = writer
        self.commits = CommitLog()  # the ``commits`` rows, handed to the writer as the replay ends
        full = horizon or scenario.workload.num_batches
        self.spec = scenario.workload.model_copy(update={"num_batches": full})
        # ``stop_after``: the first batches of the whole horizon, its times unchanged (a projection's
        # replay, in the estimated mode of long horizons: analytic partition counts, no rows)
        self.n = min(full - start_at, stop_after) if stop_after else full - start_at
        # ``start_at``: the replay's batch 0 is the horizon's batch ``start_at`` (on an empty table): a
        # replay shorter than a partition then still sees late rows land in the partition before
        self.start_at = start_at
        # ``as_run``: a run's own prefix (``run --batches``), replayed in the exact mode a run of the
        # whole horizon would get, since its batches are the same (the simulator held to that run)
        self.exact = full <= EXACT_BATCHES and (not stop_after or as_run) and not start_at
        total_rows = sum(batch_num_records(self.spec, b) for b in range(self.n)) if self.exact else None
        self.with_rows = total_rows is not None and total_rows <= ROWS_LIMIT
        self.bpr = model.bytes_per_record or bytes_per_record(self.spec)
        sz = scenario.sizing
        self.small = int(sz.small_file_limit_mb * MB)
        self.target = int(sz.target_file_mb * MB)
        self.max_file = int(sz.max_file_mb * MB)
        self.row_group_rows = sz.row_group_rows
        self.retained = sz.cleaner_commits_retained
        self.pcol = self.spec.partition_column
        self.prefix = f"{self.pcol}="
        self.batch_bytes: dict[int, int] = {}
        self.batch_rows: dict[str, pa.Table] = {}  # this batch's query columns per partition path (exact mode)
        self.batch_stats: dict[str, dict] = {}  # this batch's estimated ranges per partition path (estimated mode)
        self.batch_range: tuple[datetime, datetime] | None = None  # this batch's ts range, once asked for
        # estimated mode: every batch's partitions, rows and ts ranges, computed once for the horizon
        self.schedule = None if self.exact else build_schedule(self.spec, start_at, self.n)
        if self.schedule is not None:
            labels = {k: partition_label(self.spec, k) for k in set(self.schedule.keys)}
            self.schedule_paths = [f"{self.prefix}{labels[k]}" for k in self.schedule.keys]
        # a batch's range ends where a later batch's starts (late rows: a partition or two later), so
        # each moment of the schedule is built once (microseconds -> its datetime)
        self.moments: dict[int, datetime] = {}
        self.quantile_ranges: dict[int, list[tuple[str, str]]] = {}  # outputs -> service range of each
        self.sorted_rows: dict[tuple[str, tuple[str, ...]], pa.Table] = {}  # ... sorted, shared by the engines
        self.partition_rows: dict[str, int] = defaultdict(int)
        weights = 1.0 / (1 + np.arange(self.spec.num_services)) ** self.spec.service_skew
        self.service_weights = weights / weights.sum()
        self.services = [f"svc-{i:03d}" for i in range(self.spec.num_services)]
        # the estimated ranges' shared tuples: every batch's service range, each partition's value (a merge
        # of two files' ranges then keeps a range both share without comparing it)
        self.service_range = (self.services[0], self.services[-1])
        self.partition_values: dict[str, tuple[str, str]] = {}
        self.batch = 0
        # this batch's corrections (workload.update_fraction): updated keys per partition (with rows), else a count
        self.corrects = self.spec.corrections_fraction > 0
        self.batch_updates: dict[str, pa.Array] = {}
        self.update_count = 0
        self.first_byte_ms = scenario.store.first_byte_ms if scenario.store.kind == "s3" else 0.0
        # the footer bloom filter of the runner's reference write of each batch (a writes-once engine's,
        # else its scratch write's: the first engine's)
        self.batch_footers: dict[int, int] = {}  # rows -> footer bytes of the reference write's file
        self.reference_bytes = 0  # this batch's bytes written once (the runner's reference write)
        self.batch_bloom = engine_bloom(next((e for e in scenario.engines if kind_of(e.kind).simulated
                                              and behaviour_class(e.kind).writes_batches_once),
                                             scenario.engines[0]), scenario)

    # -- bookkeeping --------------------------------------------------------------------------
    def footer(self, e: SimEngine, rows: int) -> int:
        """Bytes of the footer bloom filter of a file of ``rows`` keys (each count computed once)."""
        got = e.footers.get(rows)
        if got is None:
            got = e.footers[rows] = footer_bytes(rows, e.bloom, KEY_LENGTH)
        return got

    def file_bytes(self, e: SimEngine, rows: int, data_bytes: int) -> int:
        """A file's bytes: its rows' data plus Hudi's footer bloom filter of their keys."""
        return data_bytes + self.footer(e, rows)

    def new_instant(self, e: SimEngine) -> str:
        """A new commit's instant: the table's logical clock, as the runner's tables use it."""
        e.instants += 1
        instant = e.last_instant = next_logical_instant(e.last_instant)
        e.data_instants.append(instant)
        return instant

    def _tick(self, e: SimEngine) -> str:
        e.last_instant = next_logical_instant(e.last_instant)
        return e.last_instant

    def add_file(self, e: SimEngine, partition: str, file_id: str, instant: str, rows: int, size: int,
             stats: dict | None = None, data: pa.Table | None = None, task: int = 0) -> FileSlice:
        path = f"{partition}/{file_id}_{task}-0-0_{instant}.parquet"
        if data is not None:
            if stats is None:
                stats = simrows.stats_of(data, self.pcol, partition[len(self.prefix):])
            e.rows[path] = data
        s = file_slice(partition, file_id, instant, path, size, rows, stats or {})
        key = (partition, file_id)
        live = e.live
        old = live.get(key)
        small = self.small
        if old is not None:
            self._bury(e, old, instant, False)
            if e.logs:
                self._logs_leave(e, old.path)
            if e.rows:
                e.rows.pop(old.path, None)
            e.live_bytes -= old.size_bytes
            e.small -= old.size_bytes < small
        live[key] = s
        e.by_part[partition][file_id] = s
        e.physical += 1
        e.live_bytes += size
        e.phys_bytes += size
        e.small += size < small
        e.dirty.add(partition)
        e.puts += 1
        return s

    @staticmethod
    def _bury(e: SimEngine, s: FileSlice, at: str, replaced: bool) -> None:
        """``s`` left the snapshot at instant ``at``: it waits for the cleaner."""
        path, key = s.path, (s.partition, s.file_id)
        group = e.dead_by_group.get(key)
        if group is None:
            group = e.dead_by_group[key] = {}
        elif not replaced:
            before = group.get(path)
            replaced = before is not None and before.replaced
        group[path] = _new_tuple(DeadFile, (s, at, replaced))  # DeadFile(...) without its Python-level __new__
        dying = e.dying
        if dying and at < dying[-1][0]:
            raise RuntimeError(f"simulator: {path} left the snapshot at {at}, before the newest dead file "
                               f"({dying[-1][0]}); the cleaner's queue needs the timeline's order")
        dying.append((at, path, key))

    def _retire(self, e: SimEngine, s: FileSlice, delete_now: bool) -> None:
        if e.rows:
            e.rows.pop(s.path, None)
        if e.live.pop((s.partition, s.file_id), None) is not None:
            e.by_part[s.partition].pop(s.file_id, None)
            e.live_bytes -= s.size_bytes
            e.small -= s.size_bytes < self.small
            if e.logs:
                self._logs_leave(e, s.path)
        if delete_now:
            e.physical -= 1
            e.phys_bytes -= s.size_bytes
            if e.logs:
                self._logs_delete(e, s.path)
        else:
            self._bury(e, s, e.last_instant, True)

    @staticmethod
    def _logs_leave(e: SimEngine, base_path: str) -> None:
        """The slice of ``base_path`` left the snapshot: its log files are no longer live."""
        logs = e.logs.get(base_path)
        if e.inserted:
            e.inserted.pop(base_path, None)
        if logs:
            e.live_logs -= len(logs)
            e.live_log_bytes -= sum([size for _, size, _ in logs])

    @staticmethod
    def _logs_delete(e: SimEngine, base_path: str) -> None:
        """The slice of ``base_path`` was deleted: its log files with it."""
        logs = e.logs.pop(base_path, None)
        if logs:
            e.phys_logs -= len(logs)
            e.phys_log_bytes -= sum([size for _, size, _ in logs])

    def clean(self, e: SimEngine) -> int:
        """The real cleaner's rule (:func:`engines.table.cleaner.doomed_in_group`) over the file
        groups that hold files no longer live; a simulated table has no pending instants."""
        instants = e.data_instants
        if len(instants) <= self.retained or not e.dead_by_group:  # earliest_to_retain gives None
            return 0
        earliest = earliest_to_retain(instants, self.retained)
        # a file that left the snapshot at or after ``earliest`` is the newest slice a reader of
        # ``earliest`` needs (its successor, or its replacement, is that new): the rule dooms nothing
        # in a group whose every dead file is such, so only the other groups are handed to it. Those
        # are the groups of the files that left before ``earliest`` (taken from the queue as
        # ``earliest`` passes them; it never moves back) and are still waiting.
        dying, expired = e.dying, e.expired
        while dying and dying[0][0] < earliest:
            _, path, key = dying.popleft()
            expired[path] = key
        if not expired:
            return 0
        dead_by_group, lives, logs = e.dead_by_group, e.live, e.logs
        deleted = freed = files = 0
        for key in set(expired.values()):
            group = dead_by_group[key]
            dead = group.values()
            live = lives.get(key)
            committed = list(map(_SLICE, dead))
            if live is not None:
                committed.append(live)
                replaced_at = None
            else:
                replaced_at = max([f.dead_at for f in dead if f.replaced], default=None)
            if len(committed) > 1:
                committed.sort(key=_INSTANT)
            for s in doomed_in_group(committed, earliest, replaced_at):
                p = s.path
                freed += s.size_bytes
                files += 1
                if logs:  # the cleaner deletes a file slice: its base file and its log files
                    deleted += len(logs.get(p, ()))
                    self._logs_delete(e, p)
                expired.pop(p, None)
                del group[p]
            if not group:
                del dead_by_group[key]
        e.phys_bytes -= freed
        e.physical -= files
        return deleted + files

    def record_commit(self, e: SimEngine, batch: int, kind: str, action: str, instant: str, written: list[FileSlice],
                duration: float, replaced: int, batch_bytes: int, wbytes: int | None = None) -> None:
        # a MERGE_ON_READ table's log files count as files, live those of the snapshot's slices (bench.runner.table_state)
        live_n, live_bytes, phys_bytes = len(e.live) + e.live_logs, e.live_bytes + e.live_log_bytes, \
            e.phys_bytes + e.phys_log_bytes
        if wbytes is None:
            wbytes = sum([s.size_bytes for s in written])
        wrows = sum([s.num_rows for s in written])
        e.behaviour.recorded(e, written)
        cfg = e.inserts
        # Hudi's estimate reads commits only, upserts' too (engines.cow_baseline.insert.table_average_record_size)
        if kind in ("ingest", "upsert") and cfg is not None and wrows and wbytes > (
                cfg.record_size_estimation_threshold * cfg.small_file_limit):
            e.avg_record_size = math.ceil(wbytes / wrows)
        e.seq += 1
        e.puts += 3  # requested, inflight, completed instant files
        self.commits.append((e.name, e.seq, batch, instant, action, kind.upper(), kind, duration, wrows, wbytes,
                             len(written), replaced, batch_bytes, live_n, e.physical + e.phys_logs, live_bytes,
                             phys_bytes, e.small))

    # -- what a file holds (bench.simulate.rows) ----------------------------------------------
    def begin_batch(self, b: int) -> dict[str, int]:
        """Rows per partition path of batch ``b``; in exact mode also its rows' query columns."""
        self.batch = b
        self.batch_stats = {}
        self.batch_range = None
        if self.schedule is not None:
            counts = self._scheduled_batch(b)
        else:
            counts, batch_rows, _ = _generated_batch(self.spec, b, self.with_rows)
            if self.with_rows:
                self.batch_rows = batch_rows
                self.sorted_rows = {}
        for k, v in counts.items():
            self.partition_rows[k] += v
        if self.corrects:
            if self.with_rows:
                self.batch_updates = simcorr.updated_keys(self.spec, b)
                self.update_count = sum([len(k) for k in self.batch_updates.values()])
            else:
                self.update_count = simcorr.correction_count(self.spec, b + self.start_at)
        # the batch written once, a file per partition (the runner's reference write), footers included
        footers = self.batch_footers
        for r in counts.values():
            if r not in footers:
                footers[r] = footer_bytes(r, self.batch_bloom, KEY_LENGTH)
        self.reference_bytes = sum([int(r * self.bpr) + footers[r] for r in counts.values()])
        return counts

    def _scheduled_batch(self, b: int) -> dict[str, int]:
        """Rows per partition path of batch ``b`` from the horizon's schedule, and the ranges of
        those rows (:meth:`estimated_stats`), one dict per partition shared by every engine's slices."""
        sched, paths = self.schedule, self.schedule_paths
        lo, hi = sched.offsets[b], sched.offsets[b + 1]
        services = self.service_range
        stats = self.batch_stats
        pcol, cut = self.pcol, len(self.prefix)
        moments, values = self.moments, self.partition_values
        for i in range(lo, hi):
            path = paths[i]
            value = values.get(path)
            if value is None:
                value = values[path] = (path[cut:], path[cut:])
            ts_hi = sched.ts_hi[i]
            out = {"service": services, pcol: value}
            if ts_hi >= 0:
                ts_lo = sched.ts_lo[i]
                start = moments.get(ts_lo)
                if start is None:
                    start = moments[ts_lo] = utc_moment(ts_lo)
                end = moments.get(ts_hi)
                if end is None:
                    end = moments[ts_hi] = utc_moment(ts_hi)
                out["ts"] = (start, end)
            stats[path] = out
        return dict(zip(paths[lo:hi], sched.counts[lo:hi], strict=True))

    def estimated_stats(self, partition: str) -> dict:
        """Ranges of a batch's rows in ``partition`` from the generator's distributions (estimated
        mode); one dict per batch and partition, shared by every engine's slices (never mutated)."""
        cached = self.batch_stats.get(partition)
        if cached is not None:
            return cached
        value = partition[len(self.prefix):]
        if self.batch_range is None:
            self.batch_range = batch_ts_range(self.spec, self.batch + self.start_at)
        ts = ts_range_in_partition(self.spec, self.batch_range, value)
        out = {"service": (self.services[0], self.services[-1]), self.pcol: (value, value)}
        self.batch_stats[partition] = out = {**out, "ts": ts} if ts is not None else out
        return out

    def _sorted_batch_rows(self, partition: str, order: tuple[str, ...]) -> pa.Table:
        return _sorted_batch_rows(self.spec, self.batch, partition, order)

    def _ingest_order(self, e: SimEngine) -> list[str]:
        return e.behaviour.ingest_order() or [RECORD_KEY]

    def _rewrite_rows(self, e: SimEngine, members: list[FileSlice], n_out: int,
                      parts: list[int] | None = None) -> list[pa.Table] | None:
        """A rewrite's output rows (exact mode): near-equal runs, or runs of ``parts`` rows in the plan's
        slice order (MERGE_ON_READ clustering)."""
        if not self.with_rows:
            return None
        data = pa.concat_tables([e.rows[s.path] for s in (members if parts is not None else commit_order(members))])
        cols = e.behaviour.rewrite_sort_columns()
        if cols:  # both table types order as engines.files.ordering.order_table: sort columns, record key
            data = simrows.sort_rows(data, [*cols, RECORD_KEY])
        if parts is not None:
            starts = np.cumsum([0, *parts])
            return [data.slice(int(starts[i]), n) for i, n in enumerate(parts)]
        return simrows.near_equal_runs(data, n_out)

    def _estimated_rewrite_stats(self, e: SimEngine, members: list[FileSlice], n_out: int) -> list[dict]:
        merged = merge_stats([s.column_stats for s in members])
        cols = e.behaviour.rewrite_sort_columns()
        if not cols or cols[0] != "service":
            return [merged] * n_out
        ranges = self.quantile_ranges.get(n_out)
        if ranges is None:
            ranges = self.quantile_ranges[n_out] = simrows.service_quantile_ranges(
                self.service_weights, self.services, n_out)
        return [{**merged, "service": r} for r in ranges]

    # -- engines ------------------------------------------------------------------------------
    def ingest(self, e: SimEngine, b: int, counts: dict[str, int]) -> None:
        written: list[FileSlice] = []
        merged: list[FileSlice] = []
        bpr = self.bpr
        if e.inserts is not None:  # the baseline, and Option 2 inserting with small-file limit 0
            cfg = e.inserts
            files = e.by_part
            by_part = {p: list(mine.values()) for p in counts if (mine := files.get(p))} \
                if cfg.small_file_limit > 0 else {}
            avg = e.avg_record_size or cfg.record_size_estimate  # Hudi's rule, as the engine applies it
            instant = self.new_instant(e)
            ranked = {p: self._sorted_batch_rows(p, (RECORD_KEY,)) for p in self.batch_rows} if self.with_rows else {}
            buckets = assign_inserts(by_part, counts, avg, cfg)
            cuts = rank_ranges(buckets) if self.with_rows else None
            footers, footer = e.footers, self.footer
            for i, (partition, _, n, base) in enumerate(buckets):
                new_rows = ranked[partition].slice(*cuts[i]) if cuts is not None else None
                if base is not None:
                    e.gets += 1
                    merged.append(base)
                    data = pa.concat_tables([e.rows[base.path], new_rows]) if new_rows is not None else None
                    rows = base.num_rows + n
                    old_footer = footers.get(base.num_rows) or footer(e, base.num_rows)
                    size = base.size_bytes - old_footer + int(n * bpr) + (footers.get(rows) or footer(e, rows))
                    written.append(self.add_file(e, partition, base.file_id, instant, rows, size, None if data is not None
                                             else merge_two(base.column_stats, self.estimated_stats(partition)), data))
                else:  # the engine writes every bucket as task 0 (engines.cow_baseline.bucket_write)
                    file_id = new_file_id(f"bucket-{i}", instant, partition, 0, 0, 0)
                    size = int(n * bpr) + (footers.get(n) or footer(e, n))
                    written.append(self.add_file(e, partition, file_id, instant, n, size,
                                             self.estimated_stats(partition) if new_rows is None else None, new_rows))
        else:
            instant = self.new_instant(e)
            order = self._ingest_order(e)
            max_file, footers = self.max_file, e.footers
            # inserts the kind writes into existing file groups' logs first, the rest to new base files
            to_logs = e.behaviour.inserts_to_logs(self, e, b, instant, counts, written)
            by_task = e.behaviour.task_file_ids  # one write task per partition value of the batch
            by_writer = by_task or e.behaviour.writer_file_ids
            for partition, rows in counts.items():
                taken = to_logs.get(partition, 0) if to_logs else 0
                if taken:
                    rows -= taken
                    if not rows:
                        continue
                size = int(rows * bpr)
                parts = split_evenly(rows, max(1, math.ceil(size / max_file))) if size > max_file else (rows,)
                # a deltacommit's new base files are named as the table core's writer names them, an APPEND
                # ingest's as its Spark tasks do
                task = _task_of(partition[len(self.prefix):], len(counts)) if by_task else 0
                ids = [new_file_id("", instant, partition, task, 0, k) if by_writer else e.new_id()
                       for k in range(len(parts))]
                if self.with_rows:
                    pieces = _ingest_pieces(self.spec, b, partition, tuple(order), tuple(parts), taken)
                    for fid, r, (data, stats) in zip(ids, parts, pieces, strict=True):
                        written.append(self.add_file(e, partition, fid, instant, r,
                                                 self.file_bytes(e, r, int(r * bpr)), stats, data, task))
                else:
                    stats = self.estimated_stats(partition)
                    for fid, r in zip(ids, parts, strict=True):
                        footer = footers.get(r)
                        size = int(r * bpr) + (footer if footer is not None else self.footer(e, r))
                        written.append(self.add_file(e, partition, fid, instant, r, size, stats, task=task))
        wbytes = sum([s.size_bytes for s in written])
        dur = self.model.ingest_s(wbytes, len(written))
        self.record_commit(e, b, "ingest", e.behaviour.ingest_action, instant, written, dur, 0,
                     self.reference_bytes, wbytes)
        if self.corrects:
            tops = {s.file_group for s in merged}
            # a group padded with inserts in its log holds earlier keys: not fresh
            e.fresh = {s.file_group for s in written if s.file_group not in tops and s.path.endswith(".parquet")}
        touched = {s.partition for s in written}
        new_partitions = len(touched - e.partitions)
        if new_partitions:
            e.partitions |= touched
        e.log.add("ingest", b, _INGEST_FEATURES, (e.seq, len(written), len(merged),
                                                  self.row_groups_of(merged) if merged else 0, new_partitions))
        e.behaviour.after_commit(self, e, b)  # the writer's after-commit (the cleaner, the MOR compaction)

    def upsert(self, e: SimEngine, b: int) -> None:
        """Batch ``b``'s corrections as the runner feeds them: one upsert commit after the insert commit,
        the copy-on-write merge rewriting every file group that holds an updated key as a new slice of
        the same rows (:mod:`bench.simulate.corrections` says how the groups are found), then the
        writer's after-commit clean. None when the batch has no corrections."""
        if not self.update_count:
            return
        if e.behaviour.write_corrections(self, e, b):  # the kind's own (MERGE_ON_READ: log files)
            return
        if not e.behaviour.upserts_by_merge():
            raise ValueError(f"engine {e.name} (kind {e.kind}): the simulator has no model of its upsert")
        if self.with_rows:
            touched = simcorr.touched_exact({p: e.by_part.get(p, {}).values() for p in self.batch_updates}, e.rows,
                                            self.batch_updates)
            old = [s for s, _ in touched]
        else:
            old = simcorr.touched_estimated(e.live.values(), e.fresh, self.update_count, self.spec.seed,
                                            b + self.start_at)
            touched = [(s, None) for s in old]
        partitions = {p for p in self.batch_updates} if self.with_rows else {s.partition for s in old}
        e.gets += sum([len(e.by_part.get(p, ())) for p in partitions])  # the simple index reads their keys
        instant = self.new_instant(e)
        written = []
        for s, data in touched:
            e.gets += 1
            written.append(self.add_file(e, s.partition, s.file_id, instant, s.num_rows, s.size_bytes,
                                     s.column_stats if data is None else None, data))
        wbytes = sum([s.size_bytes for s in written])
        dur = self.model.ingest_s(wbytes, len(written))
        self.record_commit(e, b, "upsert", "commit", instant, written, dur, 0, 0, wbytes)
        e.log.add("ingest", b, _INGEST_FEATURES, (e.seq, len(written), len(old),
                                                  self.row_groups_of(old) if old else 0, 0))
        e.behaviour.after_commit(self, e, b)

    @staticmethod
    def add_log(e: SimEngine, s: FileSlice, instant: str, records: int, size: int) -> FileSlice:
        """A new log file of ``s``'s slice written at ``instant`` (the next version), as a written file."""
        mine = e.logs.setdefault(s.path, [])
        path = f"{s.partition}/.{s.file_id}_{s.instant}.log.{len(mine) + 1}_0-0-0"
        mine.append((path, size, records))
        e.live_logs += 1
        e.live_log_bytes += size
        e.phys_logs += 1
        e.phys_log_bytes += size
        e.puts += 1
        return file_slice(s.partition, s.file_id, instant, path, size, records, {})

    # -- the table as a kind's hooks see it (engines.sim.SimTable) ---------------------------------
    def grow_slice(self, e: SimEngine, s: FileSlice, inserted: int, stats: dict, data: pa.Table | None) -> FileSlice:
        """``s`` grown by ``inserted`` rows its new log file inserts: it keeps its base file (path, bytes)
        while its rows (and ``data``, in exact mode) count the log's inserts."""
        grown = file_slice(s.partition, s.file_id, s.instant, s.path, s.size_bytes, s.num_rows + inserted, stats)
        e.live[s.file_group] = e.by_part[s.partition][s.file_id] = grown
        if data is not None:
            e.rows[s.path] = data
        e.inserted[s.path] = e.inserted.get(s.path, 0) + inserted
        return grown

    @staticmethod
    def inserted_rows(e: SimEngine, s: FileSlice) -> int:
        """The rows of ``s`` that sit in its log files as inserts (not in its base file)."""
        return e.inserted.get(s.path, 0) if e.inserted else 0

    @staticmethod
    def ingest_event(e: SimEngine, b: int, written: int, merged: int, row_groups_merged: int,
                     partitions_new: int) -> None:
        """The request model's event of an ingest or upsert commit just recorded."""
        e.log.add("ingest", b, _INGEST_FEATURES, (e.seq, written, merged, row_groups_merged, partitions_new))

    @staticmethod
    def execution_event(e: SimEngine, b: int, files_in: int, files_out: int, row_groups_in: int) -> None:
        """The request model's event of a maintenance execution just recorded."""
        e.log.add("maintenance_execution", b, _EXECUTION_FEATURES, (e.seq, files_in, files_out, row_groups_in))

    def stats_of(self, data: pa.Table, partition: str) -> dict:
        """The column ranges of rows ``data`` of ``partition`` (exact mode)."""
        return simrows.stats_of(data, self.pcol, partition[len(self.prefix):])

    merge_two = staticmethod(merge_two)

    def inserted_rows_of_batch(self, b: int, partition: str, start: int, n: int) -> pa.Table:
        """Rows ``start`` to ``start + n`` of batch ``b``'s inserts in ``partition``, every column (a log block's)."""
        return logsize.batch_by_partition(self.spec, b)[partition].slice(start, n)

    def query_rows_of_batch(self, partition: str, start: int, n: int) -> pa.Table:
        """The same rows of this batch, their query columns (what a simulated file keeps)."""
        return self.batch_rows[partition].slice(start, n)

    def corrections_by_partition(self, b: int) -> dict[str, pa.Table]:
        """Batch ``b``'s correction rows per partition path, in the upsert's order."""
        return logsize.corrections_by_partition(self.spec, b)

    def touched_estimated(self, e: SimEngine, b: int) -> list[FileSlice]:
        """The file groups batch ``b``'s corrections touch (estimated mode, :mod:`bench.simulate.corrections`)."""
        return simcorr.touched_estimated(e.live.values(), e.fresh, self.update_count, self.spec.seed,
                                         b + self.start_at)

    @staticmethod
    def log_block_bytes(rows: pa.Table, instant: str, partition: str, file_id: str) -> int:
        """The bytes of a log file of ``rows`` by the real log format."""
        return logsize.log_block_bytes(rows, instant, partition, file_id)

    def correction_log_bytes(self, records: int) -> int:
        """The estimated bytes of a log file of ``records`` corrections."""
        return logsize.log_size_model(self.spec).bytes_of(records)

    def insert_log_bytes(self, records: int) -> int:
        """The estimated bytes of a log file of ``records`` inserted rows."""
        return logsize.insert_log_size_model(self.spec).bytes_of(records)

    def row_groups_of(self, slices: list[FileSlice]) -> int:
        """Row groups of ``slices``: ``ceil(rows / row_group_rows)`` each, at least one."""
        per = self.row_group_rows
        return sum([-(-s.num_rows // per) or 1 for s in slices])

    def maybe_clean(self, e: SimEngine, b: int) -> None:
        deleted = self.clean(e)
        if deleted:
            self.log_clean(e, b, deleted)
        else:  # the cleaner's request event only (nothing deleted: no instant, no row)
            e.log.add("cleaner", b, _CLEAN_FEATURES, (e.seq, 0))

    def log_clean(self, e: SimEngine, b: int, deleted: int) -> None:
        """The cleaner's request event and, when it deleted files, its instant and maintenance row."""
        e.log.add("cleaner", b, _CLEAN_FEATURES, (e.seq, deleted))
        if deleted:  # a clean takes an instant only when it deletes something, as the real one
            self.writer.add("maintenance", engine=e.name, batch=b, kind="clean", instant=self._tick(e),
                            mode="simulated", duration_s=self.model.file_create_s * deleted, files_in=0, files_out=0,
                            bytes_read=0, bytes_written=0, records=0, files_deleted=deleted, details="{}")

    def maintain(self, e: SimEngine, b: int) -> None:
        e.log.add("maintenance_planning", b, _PLANNING_FEATURES, (e.seq, len(e.live)))
        if not e.behaviour.maintains():  # the control: nothing is ever maintained
            return
        candidates = list(e.live.values()) if self.exact else [
            s for p in sorted(e.dirty) for s in e.by_part.get(p, {}).values()]
        e.lists += len({s.partition for s in candidates})
        groups = e.behaviour.plan(candidates)
        e.dirty.clear()
        cleans_after = e.behaviour.cleans_after_maintenance()
        if not groups:
            if cleans_after:
                self.maybe_clean(e, b)
            else:  # the runner's cleaner runs after every maintenance step, here with nothing to clean
                e.log.add("cleaner", b, _COMMITS, (e.seq,))
            return
        instant = self.new_instant(e)
        written: list[FileSlice] = []
        files_in = bytes_read = row_groups_in = 0
        delete_now = e.behaviour.deletes_inputs_at_once()
        behaviour = e.behaviour
        for gi, (partition, members, n_out) in enumerate(groups):
            rows = sum([s.num_rows for s in members])
            total = sum([s.size_bytes for s in members])
            data = total - sum([self.footer(e, s.num_rows) for s in members])  # one footer per output file
            if e.inserted:  # the rows the slices' logs inserted are written too
                inserted = [self.inserted_rows(e, s) for s in members]
                data += sum([self.footer(e, s.num_rows) - self.footer(e, s.num_rows - n) + int(n * self.bpr)
                             for s, n in zip(members, inserted, strict=True)])
            files_in += len(members)
            bytes_read += total
            row_groups_in += self.row_groups_of(members)
            e.gets += len(members)
            runs = behaviour.rewrite_runs(rows, n_out)  # None: near-equal runs in commit order
            parts = runs if runs is not None else split_evenly(rows, n_out)
            outputs = self._rewrite_rows(e, members, n_out, runs)
            estimated = self._estimated_rewrite_stats(e, members, len(parts)) if outputs is None else None
            for s in members:
                self._retire(e, s, delete_now)
            for o, r in enumerate(parts):
                size = self.file_bytes(e, r, int(data * r / rows)) if rows else 0
                fid, task = behaviour.rewrite_file_id(gi, o, instant, partition)
                if fid is None:
                    fid = e.new_id()
                if outputs is not None:
                    written.append(self.add_file(e, partition, fid, instant, r, size, data=outputs[o], task=task))
                else:
                    written.append(self.add_file(e, partition, fid, instant, r, size, estimated[o], task=task))
        e.dirty.clear()
        kind = e.behaviour.maintenance_kind
        wbytes = sum([s.size_bytes for s in written])
        dur = self.model.maintenance_s(bytes_read, wbytes, files_in, len(written))
        self.writer.add("maintenance", engine=e.name, batch=b, kind=kind, instant=instant, mode="simulated",
                        duration_s=dur, files_in=files_in, files_out=len(written), bytes_read=bytes_read,
                        bytes_written=wbytes, records=sum([s.num_rows for s in written]),
                        files_deleted=files_in if delete_now else 0, details=json.dumps({"groups": len(groups)}))
        self.record_commit(e, b, kind, e.behaviour.maintenance_action, instant, written, dur, files_in, 0, wbytes)
        e.log.add("maintenance_execution", b, _EXECUTION_FEATURES, (e.seq, files_in, len(written), row_groups_in))
        if cleans_after:
            self.maybe_clean(e, b)
        else:
            e.log.add("cleaner", b, _COMMITS, (e.seq,))

    # -- queries --------------------------------------------------------------------------------
    def query_params(self) -> QueryParams:
        """The suite's parameters at this checkpoint: chosen from the rows so far as the runner does
        (exact mode), or from the generator's distributions (estimated mode)."""
        if self.with_rows:
            return _params_so_far(self.spec, self.batch, self.sc.queries.service_window_hours)
        lo = batch_ts_range(self.spec, self.start_at)[0] if self.start_at else self.spec.start
        hi = batch_ts_range(self.spec, self.batch + self.start_at)[1]
        mid = lo + (hi - lo) / 2
        busiest = max(sorted(self.partition_rows), key=lambda k: self.partition_rows[k])
        window = timedelta(hours=self.sc.queries.service_window_hours)
        return QueryParams(self.services[min(1, len(self.services) - 1)], mid, mid + window, "",
                           hi - timedelta(hours=1), busiest[len(self.prefix):], self.pcol)

    def _row_groups(self, e: SimEngine, kept: list[FileSlice], preds: list) -> tuple[int, int, int]:
        """(row groups, row groups that may match, rows in those) of ``kept``: row groups of
        ``row_group_rows`` rows cut from each file's rows (exact mode), else whole files."""
        from engines.table.pruning import may_match

        total = matching = rows = 0
        for s in kept:
            data = e.rows.get(s.path)
            n = max(1, math.ceil(s.num_rows / self.row_group_rows))
            total += n
            if data is None:
                matching += n
                rows += s.num_rows
                continue
            for g in range(n):
                chunk = data.slice(g * self.row_group_rows, self.row_group_rows)
                ok = True
                for column, op, value in preds:
                    if column not in simrows.COLUMNS or chunk.num_rows == 0:
                        continue
                    mm = pc.min_max(chunk.column(column))
                    if mm["min"].as_py() is not None and not may_match(mm["min"].as_py(), mm["max"].as_py(), op, value):
                        ok = False
                        break
                if ok:
                    matching += 1
                    rows += chunk.num_rows
        return total, matching, rows

    def queries(self, e: SimEngine, b: int, params: QueryParams, final: bool = False) -> None:
        """The suite at checkpoint ``b`` (``final``: the replay's last batch): one row per query, the
        cold run's figures, with request events for every run the runner makes there
        (:func:`runresults.query_runs.query_runs`: at the final checkpoint the interleaved rounds')
        and one run's predicted requests in the store columns."""
        live = sorted(e.live.values(), key=lambda s: s.path)
        # a slice with log files is merged, never pruned (engines.spark.mor_reader); a kind whose writes record
        # no column ranges in their commit metadata (the table core's MOR writes: engines.files.writer's
        # WriteSpec.stats_columns) has every file kept by the snapshot's min/max pruning (row groups are still
        # pruned by the footers)
        logged = [s for s in live if e.logs.get(s.path)] if e.logs else []
        logs: dict[str, Any] = {}
        if logged:
            logs = {"log_files_merged": sum([len(e.logs[s.path]) for s in logged]),
                    "log_bytes_merged": sum([size for s in logged for _, size, _ in e.logs[s.path]])}
        plain, merged = (live, logged) if e.behaviour.prunes_by_column_stats else ([], live)
        runs = query_runs(self.query_spec, e.kind, final)
        e.log.add("query_planning", f"checkpoint {b}", _COMMITS, (e.seq,))
        for name in self.sc.queries.suite:
            preds = PREDICATES[name](params)
            kept, pruned = prune(plain, preds)
            kept = kept + merged if merged else kept
            scanned = sum(s.size_bytes for s in kept)
            rg_total, rg_match, rows = self._row_groups(e, kept, preds)
            e.gets += len(kept)
            one_run = {"files_scanned": len(kept), "row_groups_scanned": rg_match}
            for _ in range(runs):  # the runner's cold run and its warm runs (or rounds)
                e.log.add("query_scan", f"{name}@{b}", _SCAN_FEATURES, (len(kept), rg_match))
            ops = reqmodel.per_run_ops(self.model.requests, e.kind, "query_scan", one_run)
            requests = sum(ops.values())
            store = {"store_requests": round(requests), "store_get": round(ops.get("GET", 0.0)),
                     "store_head": round(ops.get("HEAD", 0.0)), "store_list": round(ops.get("LIST", 0.0))} \
                if self.model.requests else {}
            self.writer.add("queries", engine=e.name, checkpoint=b, query=name, run=0,
                            latency_s=self.model.query_s(len(kept), scanned, requests, self.first_byte_ms),
                            files_total=len(live),
                            files_scanned=len(kept), files_pruned=pruned, row_groups_total=rg_total,
                            row_groups_scanned=rg_match, rows_scanned=rows, result_rows=None, verified=None, error=None,
                            **store, **logs)


class _SimSteps:
    """The simulator's part of the one batch loop (:func:`bench.batch_loop.run_batches`). A simulated
    engine keeps no pending plans: a semi-async schedule plans when its execution is due."""

    def __init__(self, sim: Simulator, engines: list[SimEngine], advance: Callable[[], None],
                 marks: dict[str, set[int]]) -> None:
        self.sim = sim
        self.engines = engines
        self.advance = advance
        self.marks = marks  # each engine's checkpoints
        self.counts: dict[str, int] = {}

    def begin_batch(self, b: int) -> None:
        self.counts = self.sim.begin_batch(b)

    def ingest(self, e: SimEngine, b: int) -> None:
        self.sim.ingest(e, b, self.counts)
        self.sim.upsert(e, b)  # the runner's upsert commit of the batch's corrections, if any

    def maintain(self, e: SimEngine, b: int, step: str) -> None:
        if step != SCHEDULE:
            self.sim.maintain(e, b)

    def end_batch(self, b: int) -> None:
        self.advance()

    def before_final(self, b: int) -> None:
        return None

    def checkpoint(self, b: int) -> None:
        params = self.sim.query_params()
        for e in self.engines:
            if b in self.marks[e.name]:
                self.sim.queries(e, b, params, final=b == self.sim.n - 1)


@contextmanager
def without_cycle_collector() -> Iterator[None]:
    """The cyclic garbage collector paused: a replay allocates millions of small objects that form
    no cycles (slices, result rows), and each full collection walked every one of them again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class RowSink:
    """Result rows kept in memory (a sweep's grid points write no folder)."""

    def __init__(self) -> None:
        self.rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}

    def add(self, table: str, **row: Any) -> None:
        self.rows[table].append(row)


@dataclass
class Simulation:
    """One simulated scenario: its result rows, the simulator and its engines."""

    sink: RowSink | ResultsWriter
    sim: Simulator
    engines: list[SimEngine]
    not_simulated: list[str]
    elapsed_s: float
    takes: dict[str, int] = field(default_factory=dict)  # batches each engine took
    processes: int = 1  # processes the replay ran in (bench.simulate.forked_replay)


def run_simulation(scenario: Scenario, model: CostModel, horizon_batches: int | None = None,
                   sink: RowSink | ResultsWriter | None = None, progress: bool = False,
                   stop_after: int | None = None, start_at: int = 0,
                   as_run: bool = False, commit_rows: bool = True, parallel: bool = False,
                   events: bool = True) -> Simulation:
    """Replay ``scenario`` batch by batch through the simulated engines (the runner's schedule:
    ingest, maintenance every ``every_commits``, queries at checkpoints, a final maintenance).
    With ``progress``, a bar on an interactive terminal once the replay has run ``PROGRESS_AFTER_S``.
    With ``stop_after``, only the horizon's first batches are replayed (times as in the whole horizon);
    with ``start_at``, from that batch of the horizon on, on an empty table (estimated mode).
    With ``as_run``, the batches a real run of ``scenario`` takes: the loop stops after
    ``scenario.batches_run`` (``run --batches``) and each engine takes its own prefix
    (``engines.<name>.num_batches``), with its final maintenance and checkpoints where the runner
    puts them (:func:`bench.batch_loop.checkpoints_of`); otherwise every engine takes every batch.
    The ``commits`` rows go into ``sink.rows`` at the end, unless ``commit_rows`` is False: then the
    caller takes them as a table from ``sim.commits`` (:class:`bench.simulate.commit_log.CommitLog`).
    With ``parallel`` (a :class:`runresults.ResultsWriter` sink, not ``commit_rows``), a long replay of
    the estimated mode runs its engines in forked processes (:mod:`bench.simulate.forked_replay`: the
    writer's tables and the engines' live files, counters and, with a request model, events are the
    serial replay's; the rest of an engine's state is not taken back). Without ``events``, the
    engines' request events are not kept (their logs stay empty: for a caller with no request model)."""
    t0 = time.perf_counter()
    sink = sink if sink is not None else RowSink()
    if as_run and scenario.batches_run < (horizon_batches or scenario.workload.num_batches):
        stop_after = scenario.batches_run
    sim = Simulator(scenario, model, sink, horizon_batches, stop_after, start_at, as_run=as_run)
    engines = []
    for es in scenario.engines:
        if kind_of(es.kind).simulated:
            planner, options = resolve_planner(es, scenario)
            behaviour = behaviour_of(es.kind, planner, options)
            engines.append(SimEngine(es, es.kind, es.name, behaviour, planner=planner, options=options,
                                     inserts=behaviour.inserts(sim.max_file), bloom=bloom_of(options),
                                     log=reqmodel.EventLog() if events else reqmodel.UnreadEventLog()))
    not_simulated = [e.name for e in scenario.engines if not kind_of(e.kind).simulated]
    every = scenario.queries.checkpoint_every
    takes = {e.name: min(sim.n, scenario.batches_of(e.name)) if as_run else sim.n for e in engines}
    marks = {e.name: checkpoints_of(takes[e.name], every) for e in engines}
    checkpoints = sorted(set().union(*marks.values())) if engines else []
    processes = forked_replay.processes_for(len(engines), sim.n, sim.exact) \
        if parallel and not as_run and not commit_rows and isinstance(sink, ResultsWriter) else 1  # merged as tables
    schedule = MaintenanceSchedule.of(scenario, threads=False)
    with ProgressBar(f"simulate {scenario.name}", total=sim.n, unit="batches", delay_s=PROGRESS_AFTER_S,
                     enabled=None if progress else False) as bar, without_cycle_collector():
        if processes > 1:
            forked_replay.replay(sim, engines, lambda mine, advance: _SimSteps(sim, mine, advance, marks), bar.advance,
                                 schedule, checkpoints, lambda e: takes[e.name], processes, events)
        else:
            run_batches(_SimSteps(sim, engines, bar.advance, marks), engines, schedule, sim.n,
                        checkpoints=checkpoints, prefix=lambda e: takes[e.name])
        if commit_rows:
            sink.rows["commits"].extend(sim.commits.rows())
    return Simulation(sink, sim, engines, not_simulated, time.perf_counter() - t0, takes, processes)
