"""Readers racing maintenance: threads run queries on one Spark session while a table service
executes, and every result is classified ok / failed (an error, e.g. a file vanished under the
scan) / wrong (rows missing or duplicated versus ground truth)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pyarrow as pa

from bench.queries import SUITE, choose_params, run_query
from engines.base import Engine


class IsolationProbe:
    """Start reader threads before ``execute`` and stop them after; rows go to the isolation table."""

    def __init__(self, spark: Any, engine: Engine, truth: pa.Table, queries: list[str], readers: int,
                 partition_column: str = "dt", min_queries_per_reader: int = 1, window_hours: float = 3.0) -> None:
        self.spark = spark
        self.engine = engine
        self.queries = [SUITE[q] for q in queries]
        self.readers = readers
        self.params = choose_params(truth, partition_column, window_hours)
        self.expected = {q.name: q.reference(truth, self.params) for q in self.queries}
        self.min_queries = min_queries_per_reader
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._t0 = 0.0

    def _reader(self, idx: int) -> None:
        seq = 0
        while not self._stop.is_set() or seq < self.min_queries:
            query = self.queries[seq % len(self.queries)]
            started = time.perf_counter() - self._t0
            try:
                probe = self.engine.probe()
                slices, overlay = probe.query_snapshot()
                res = run_query(self.spark, probe.storage, slices, query, self.params,
                                count_row_groups_too=False, overlay=overlay)
                error = res.error
                got = res.result
            except Exception as exc:  # the snapshot itself failed (e.g. a file vanished mid-listing)
                error, got = f"{type(exc).__name__}: {exc}", None
            ended = time.perf_counter() - self._t0
            expected = self.expected[query.name]
            outcome = "failed" if error else ("ok" if got == expected else "wrong")
            with self._lock:
                self._rows.append({"engine": self.engine.name, "reader": idx, "seq": seq, "query": query.name,
                                   "started_s": started, "ended_s": ended, "outcome": outcome,
                                   "expected": str(expected)[:500], "got": None if got is None else str(got)[:500],
                                   "error": error})
            seq += 1

    def start(self) -> None:
        self._t0 = time.perf_counter()
        for i in range(self.readers):
            t = threading.Thread(target=self._reader, args=(i,), daemon=True, name=f"reader-{self.engine.name}-{i}")
            t.start()
            self._threads.append(t)

    def stop(self, maintenance_instant: str) -> list[dict[str, Any]]:
        self._stop.set()
        for t in self._threads:
            t.join()
        for row in self._rows:
            row["maintenance_instant"] = maintenance_instant
        return list(self._rows)
