"""The query suite: each query runs on Spark over an engine's snapshot and is verified against
ground truth computed from the generated rows with pyarrow (an independent implementation).

Every query declares the simple predicates used to prune files by min/max, a Spark
implementation and a reference implementation; both return a canonical, comparable value.
Parameters (which service, which hours, which key) are derived from the ground-truth table so
they are deterministic for a seed and always select existing data.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from bench.query_suite import DESCRIPTIONS, PREDICATES, TOP_N, QueryParams, choose_params
from engines.spark.mor_reader import MergedScan, read_merged_snapshot
from engines.spark.reader import count_row_groups, read_snapshot
from engines.table.model import FileSlice
from engines.table.mor import LogOverlay
from engines.table.pruning import Predicate
from engines.table.storage import Storage


@dataclass
class Query:
    """One suite query: its pruning predicates, its Spark plan (``frame``: the DataFrame whose rows
    answer it, so that planning can be timed apart from execution), ``canon`` (those rows as the
    canonical, comparable value) and its pyarrow ``reference``."""

    name: str
    predicates: Callable[[QueryParams], list[Predicate]]
    frame: Callable[[DataFrame, QueryParams], DataFrame]
    canon: Callable[[list[Any]], Any]
    reference: Callable[[pa.Table, QueryParams], Any]
    description: str = ""

    def spark(self, df: DataFrame, params: QueryParams) -> Any:
        """The query's canonical answer on ``df`` (planned and executed in one go)."""
        return self.canon(self.frame(df, params).collect())


@dataclass
class QueryRun:
    name: str
    latency_s: float
    files_total: int
    files_scanned: int
    files_pruned: int
    row_groups_total: int = 0
    row_groups_scanned: int = 0
    rows_scanned: int = 0
    result: Any = None
    result_rows: int = 0
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # latency_s split as LHBench does: planning (our file pruning, Spark's file index over the kept
    # files, analysis, optimisation and the physical plan) and execution (the jobs, the rows collected)
    planning_s: float | None = None
    execution_s: float | None = None
    # read amplification on a MERGE_ON_READ snapshot (None on a table without log files): the log files
    # and bytes merged into the query's slices, and the same query's seconds over the base files alone
    # (the read-optimized view: stale by design, so not verified)
    log_files_merged: int | None = None
    log_bytes_merged: int | None = None
    ro_latency_s: float | None = None


def _canon_counts(pairs: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    return sorted((k, int(v)) for k, v in pairs)


# -- the five queries ---------------------------------------------------------------------------
def _full_scan_frame(df: DataFrame, p: QueryParams) -> DataFrame:
    return df.groupBy("level").agg(F.count("*").alias("n"))


def _full_scan_canon(rows: list[Any]) -> Any:
    return _canon_counts([(r["level"], r["n"]) for r in rows])


def _full_scan_ref(t: pa.Table, p: QueryParams) -> Any:
    return _canon_counts([(d["values"], d["counts"]) for d in pc.value_counts(t.column("level")).to_pylist()])


def _service_hours_frame(df: DataFrame, p: QueryParams) -> DataFrame:
    return df.where((F.col("service") == p.service) & (F.col("ts") >= F.lit(p.ts_from))
                    & (F.col("ts") <= F.lit(p.ts_to))).agg(
        F.count("*").alias("n"), F.round(F.sum("latency_ms"), 3).alias("s"))


def _service_hours_canon(rows: list[Any]) -> Any:
    return (int(rows[0]["n"]), float(rows[0]["s"] or 0.0))


def _service_hours_ref(t: pa.Table, p: QueryParams) -> Any:
    mask = pc.and_(pc.equal(t.column("service"), p.service),
                   pc.and_(pc.greater_equal(t.column("ts"), pa.scalar(p.ts_from, t.schema.field("ts").type)),
                           pc.less_equal(t.column("ts"), pa.scalar(p.ts_to, t.schema.field("ts").type))))
    sel = t.filter(mask)
    total = pc.sum(sel.column("latency_ms")).as_py() or 0.0
    return (sel.num_rows, round(float(total), 3))


def _point_frame(df: DataFrame, p: QueryParams) -> DataFrame:
    return df.where(F.col("trace_id") == p.trace_id).select("trace_id", "service", "latency_ms")


def _point_canon(rows: list[Any]) -> Any:
    return sorted((r["trace_id"], r["service"], float(r["latency_ms"])) for r in rows)


def _point_ref(t: pa.Table, p: QueryParams) -> Any:
    sel = t.filter(pc.equal(t.column("trace_id"), p.trace_id))
    return sorted(zip(sel.column("trace_id").to_pylist(), sel.column("service").to_pylist(),
                      [float(x) for x in sel.column("latency_ms").to_pylist()], strict=True))


def _recent_frame(df: DataFrame, p: QueryParams) -> DataFrame:
    return df.where(F.col("ts") >= F.lit(p.recent_from)).agg(F.count("*").alias("n"))


def _recent_canon(rows: list[Any]) -> Any:
    return int(rows[0]["n"])


def _recent_ref(t: pa.Table, p: QueryParams) -> Any:
    return t.filter(pc.greater_equal(t.column("ts"), pa.scalar(p.recent_from, t.schema.field("ts").type))).num_rows


def _topn_frame(df: DataFrame, p: QueryParams) -> DataFrame:
    w = Window.partitionBy("service").orderBy(F.col("latency_ms").desc(), F.col("trace_id"))
    return (df.where(F.col(p.partition_column) == p.day).withColumn("rk", F.row_number().over(w))
            .where(F.col("rk") <= TOP_N).select("service", "trace_id"))


def _topn_canon(rows: list[Any]) -> Any:
    return sorted((r["service"], r["trace_id"]) for r in rows)


def _topn_ref(t: pa.Table, p: QueryParams) -> Any:
    sel = t.filter(pc.equal(t.column(p.partition_column), p.day)).select(["service", "trace_id", "latency_ms"])
    order = sel.sort_by([("service", "ascending"), ("latency_ms", "descending"), ("trace_id", "ascending")])
    out, seen = [], {}
    for svc, key in zip(order.column("service").to_pylist(), order.column("trace_id").to_pylist(), strict=True):
        if seen.get(svc, 0) < TOP_N:
            seen[svc] = seen.get(svc, 0) + 1
            out.append((svc, key))
    return sorted(out)


SUITE: dict[str, Query] = {
    q.name: q for q in [
        Query("full_scan_by_level", PREDICATES["full_scan_by_level"], _full_scan_frame, _full_scan_canon,
              _full_scan_ref, DESCRIPTIONS["full_scan_by_level"]),
        Query("service_hours", PREDICATES["service_hours"], _service_hours_frame, _service_hours_canon,
              _service_hours_ref, DESCRIPTIONS["service_hours"]),
        Query("point_lookup", PREDICATES["point_lookup"], _point_frame, _point_canon, _point_ref,
              DESCRIPTIONS["point_lookup"]),
        Query("recent_hour", PREDICATES["recent_hour"], _recent_frame, _recent_canon, _recent_ref,
              DESCRIPTIONS["recent_hour"]),
        Query("topn_latency", PREDICATES["topn_latency"], _topn_frame, _topn_canon, _topn_ref,
              DESCRIPTIONS["topn_latency"]),
    ]
}


def result_size(value: Any) -> int:
    return len(value) if isinstance(value, list) else 1


def run_query(spark: Any, storage: Storage, slices: list[FileSlice], query: Query, params: QueryParams,
              count_row_groups_too: bool = True, overlay: LogOverlay | None = None) -> QueryRun:
    """Plan (prune, Spark's plan) and execute one query on a snapshot, timed apart; errors are
    captured, not raised. ``overlay``: a MERGE_ON_READ snapshot's slices with log files, merged over
    their bases (:mod:`engines.spark.mor_reader`); the run then also times the read-optimized view."""
    preds = query.predicates(params)
    t0 = time.perf_counter()
    try:
        scan = read_merged_snapshot(spark, storage, slices, overlay, preds)
        frame = query.frame(scan.df, params)
        frame._jdf.queryExecution().executedPlan()  # planned now; the collect below reuses this plan
        t1 = time.perf_counter()
        result = query.canon(frame.collect())
    except Exception as exc:  # a reader failing under concurrent maintenance is a measured outcome
        return QueryRun(query.name, time.perf_counter() - t0, len(slices), 0, 0,
                        error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
    t2 = time.perf_counter()
    run = QueryRun(query.name, t2 - t0, scan.files_total, scan.files_scanned, scan.files_pruned,
                   result=result, result_rows=result_size(result), extra={"scanned": scan.scanned},
                   planning_s=t1 - t0, execution_s=t2 - t1)
    if isinstance(scan, MergedScan):
        run.log_files_merged, run.log_bytes_merged = scan.log_files_merged, scan.log_bytes_merged
        run.ro_latency_s = read_optimized_seconds(spark, storage, slices, query, params)
    if count_row_groups_too:
        add_row_groups(run, storage, query, params)
    return run


def read_optimized_seconds(spark: Any, storage: Storage, slices: list[FileSlice], query: Query,
                           params: QueryParams) -> float | None:
    """Seconds of ``query`` over the base files of ``slices`` alone (Hudi's read-optimized view), as
    :func:`run_query` times a snapshot query; None when it fails."""
    t0 = time.perf_counter()
    try:
        query.canon(query.frame(read_snapshot(spark, storage, slices, query.predicates(params)).df, params).collect())
    except Exception:  # noqa: BLE001 - a figure beside the verified query, never a failure of it
        return None
    return time.perf_counter() - t0


def add_row_groups(run: QueryRun, storage: Storage, query: Query, params: QueryParams) -> None:
    """Count the row groups and rows a finished run's files hold (their footers, read after the timed
    query: on an object store the caller labels these reads as the harness's, not the query's)."""
    try:
        rg_total, rg_match, rows = count_row_groups(storage, run.extra.get("scanned", []), query.predicates(params))
        run.row_groups_total, run.row_groups_scanned, run.rows_scanned = rg_total, rg_match, rows
    except OSError:
        pass


__all__ = ["SUITE", "Query", "QueryParams", "QueryRun", "add_row_groups", "choose_params", "count_row_groups",
           "read_optimized_seconds", "run_query"]
