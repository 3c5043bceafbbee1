"""A plain cost ledger in dollars over a table's life, per candidate, from a results folder (real,
simulated or projected), and the cheapest design by it with an equivalence margin.

It is deliberately small: the projection (:mod:`bench.simulate.project`) and the sweep's decision map
(:mod:`bench.simulate.sweep`, :mod:`reports.map_winners`) price candidates with it, and the review's
ledger can take its place through their ``ledger``/``choose`` parameters. Terms:

- compute: seconds of ingest commits and of every maintenance run (cleans included), one core each;
- queries: ``queries_per_hour`` x the suite's seconds at each checkpoint (median over its runs per
  query, summed over the suite), integrated between checkpoints (trapezoids; the first checkpoint's
  value before it);
- storage: physical bytes after each batch x the hours until the next batch;
- requests: the ``requests`` table's counts (PUT/POST/COPY/LIST and multipart parts at the write
  price, DELETE free, the others at the read price), else the simulator's own counts in ``run.json``.

Time: a batch lasts ``1 / batches_per_hour`` hours, from ``run.json``'s ``projection`` when it has one,
else from the workload (its batches span ``num_partitions`` days or hours evenly).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from engines.config.registry import DECIMAL_TB as TB
from engines.config.registry import GB
from engines.kinds import KINDS, design_families
from runresults.review.prices import DEFAULT_PRICES, HOURS_PER_MONTH

DEFAULT_MARGIN = 0.05
DEFAULT_QUERIES_PER_HOUR = 1.0

# the one dated price table (runresults.review.prices), as the review's ledger prices
PRICES = DEFAULT_PRICES


class ResultsLike(Protocol):
    run: dict[str, Any]

    def table(self, name: str) -> pd.DataFrame: ...


@dataclass
class Ledger:
    """One candidate's dollars over the table's life, by part, and per TB ingested."""

    engine: str
    kind: str
    compute_usd: float
    queries_usd: float
    storage_usd: float
    requests_usd: float
    ingested_bytes: int
    parts: dict[str, float] = field(default_factory=dict)

    @property
    def total_usd(self) -> float:
        return self.compute_usd + self.queries_usd + self.storage_usd + self.requests_usd

    @property
    def usd_per_tb(self) -> float:
        return self.total_usd / (self.ingested_bytes / TB) if self.ingested_bytes else float("nan")


def hours_per_batch(run: dict[str, Any]) -> float:
    """Hours between two batches (see the module docstring)."""
    proj = run.get("projection") or {}
    if proj.get("batches_per_hour"):
        return 1.0 / float(proj["batches_per_hour"])
    wl = run["scenario"]["workload"]
    unit = 24.0 if wl.get("partition_granularity", "day") == "day" else 1.0
    return unit * float(wl["num_partitions"]) / float(wl["num_batches"])


def queries_per_hour(run: dict[str, Any]) -> float:
    """The query rate the ledger prices: the projection's, else the scenario's ``review`` block's."""
    proj = run.get("projection") or {}
    if proj.get("queries_per_hour") is not None:
        return float(proj["queries_per_hour"])
    review = run.get("scenario", {}).get("review") or {}
    return float(review.get("queries_per_hour", DEFAULT_QUERIES_PER_HOUR))


def _suite_seconds(q: pd.DataFrame) -> pd.Series:
    """Per checkpoint, the suite's seconds: per query the median over its runs, summed."""
    if q.empty:
        return pd.Series(dtype=float)
    ok = q[q["error"].isna()] if "error" in q else q
    return ok.groupby(["checkpoint", "query"])["latency_s"].median().groupby(level=0).sum().sort_index()


def _query_hours_seconds(suite: pd.Series, h: float, last_batch: int) -> float:
    """Query seconds x hours, integrated over the table's life (trapezoids between checkpoints)."""
    if suite.empty:
        return 0.0
    cps = suite.index.to_numpy(dtype=float)
    vals = suite.to_numpy(dtype=float)
    total = vals[0] * (cps[0] + 1) * h
    total += float(np.sum((vals[1:] + vals[:-1]) / 2 * np.diff(cps) * h))
    total += vals[-1] * max(0.0, last_batch - cps[-1]) * h
    return total


def _request_usd(res: ResultsLike, engine: str) -> float:
    req = res.table("requests")
    if not req.empty and engine in set(req["engine"].dropna()):
        r = req[req["engine"] == engine]
        return float(sum(PRICES.request_usd(op) * n for op, n in r.groupby("op")["count"].sum().items()))
    counted = ((res.run.get("simulation") or {}).get("requests") or {}).get(engine)
    if counted:
        return float(counted["put"] * PRICES.request_usd("PUT") + counted["list"] * PRICES.request_usd("LIST")
                     + counted["get"] * PRICES.request_usd("GET"))
    return 0.0


def ledger(res: ResultsLike, engines: list[str] | None = None) -> dict[str, Ledger]:
    """Per candidate (engine), its :class:`Ledger` over the folder's table life."""
    run = res.run
    h = hours_per_batch(run)
    qph = queries_per_hour(run)
    commits = res.table("commits")
    maint = res.table("maintenance")
    queries = res.table("queries")
    kinds = {n: (e or {}).get("kind") for n, e in (run.get("engines") or {}).items()}
    out = {}
    for engine in engines or sorted(set(commits["engine"])):
        c = commits[commits["engine"] == engine]
        if c.empty:
            continue
        ingest = c[c["kind"] == "ingest"]
        writes = c[c["kind"].isin(("ingest", "upsert"))]  # the corrections' upserts are ingest compute too
        compute_s = float(writes["duration_s"].sum() + maint.loc[maint["engine"] == engine, "duration_s"].sum())
        last_batch = int(c["batch"].max())
        # storage: the physical bytes after each batch's last commit, held until the next batch
        per_batch = c.groupby("batch")["physical_bytes"].last()
        full = per_batch.reindex(range(last_batch + 1)).ffill().fillna(0)
        gb_hours = float(full.sum()) * h / GB  # GB: one GiB, S3's GB-month (as the review's ledger)
        suite = _suite_seconds(queries[queries["engine"] == engine])
        q_seconds = qph * _query_hours_seconds(suite, h, last_batch)
        out[engine] = Ledger(
            engine=engine, kind=kinds.get(engine) or "",
            compute_usd=compute_s / 3600 * PRICES.core_hour.usd,
            queries_usd=q_seconds / 3600 * PRICES.core_hour.usd,
            storage_usd=gb_hours / HOURS_PER_MONTH * PRICES.storage_gb_month.usd,
            requests_usd=_request_usd(res, engine),
            ingested_bytes=int(ingest["batch_bytes"].sum()),
            parts={"compute_s": compute_s, "query_s_x_hours": q_seconds, "gb_hours": gb_hours,
                   "hours": (last_batch + 1) * h, "queries_per_hour": qph})
    return out


def equivalent(a: float, b: float, margin: float) -> bool:
    """Whether two costs are within ``margin`` of the lower one (a difference inside it does not decide)."""
    lo = min(a, b)
    return abs(a - b) <= margin * abs(lo) if lo else a == b


def design_choice(costs: dict[str, tuple[str, float]], margin: float) -> str:
    """The design choice from each candidate's (kind, cost): every design is represented by its
    cheapest candidate; the cheapest design wins unless another is within ``margin`` of it, then
    the label joins the equivalent ones ("Option 1 = Option 2", in design order)."""
    best: dict[str, float] = {}
    for kind, cost in costs.values():
        entry = KINDS.get(kind)
        fam = entry.family if entry is not None and entry.in_verdict else None
        if fam is None or cost != cost:
            continue
        best[fam] = min(cost, best.get(fam, float("inf")))
    if not best:
        return "none"
    low = min(best.values())
    tied = [f for f in design_families() if f in best and equivalent(best[f], low, margin)]
    return " = ".join(tied)


def cheapest(res: ResultsLike, engines: list[str] | None = None, margin: float = DEFAULT_MARGIN,
             price: Callable[[ResultsLike, list[str] | None], dict[str, Ledger]] = ledger) -> str:
    """The design choice by $ per TB ingested (:func:`design_choice`) over ``engines`` (default all)."""
    books = price(res, engines)
    return design_choice({e: (b.kind, b.usd_per_tb) for e, b in books.items()}, margin)


GATES = ("isolation", "no_loss", "incremental", "time_travel", "concurrent_update")


def required_gates(run: dict[str, Any]) -> list[str]:
    """The gates the run's scenario requires (``review.requires``; default all)."""
    review = (run.get("scenario") or {}).get("review") or {}
    req = review.get("requires")
    return list(req) if req is not None else list(GATES)


def failed_gates(res: ResultsLike, requires: list[str] | None = None) -> dict[str, str]:
    """Per candidate that failed a required gate at the run: which, with its deciding figure
    (a candidate that fails one stays out of every choice and map)."""
    gates = res.table("gates")
    req = requires if requires is not None else required_gates(res.run)
    out: dict[str, list[str]] = {}
    if gates.empty:
        return {}
    bad = gates[(gates["passed"] == False) & gates["gate"].isin(req)]  # noqa: E712 - None: does not apply
    for r in bad.itertuples():
        figure = f" ({r.figure:g} {r.figure_unit})" if r.figure == r.figure and r.figure is not None else ""
        out.setdefault(r.engine, []).append(f"{r.gate}{figure}, read by {r.reader}")
    return {e: "fails " + "; ".join(v) for e, v in out.items()}
