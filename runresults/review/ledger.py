"""One cost ledger per candidate, in dollars, over the table's life in the run.

Rules (the report prints them, :data:`RULES`):
- **compute**: the wall seconds of ingest (``commits``, kind ingest), maintenance and cleaning
  (``maintenance``: the clean rows are cleaning, the others maintenance) times the cores the run's
  Spark used (``local[N]``: N; otherwise the machine's cores): a job holds its cores while it runs.
- **queries**: each query of the suite runs ``queries_per_hour`` times an hour over the table's
  life. Its latency is measured at each checkpoint (warm runs' median; the final checkpoint's from
  the interleaved ``query_rounds`` when present); between checkpoints it moves linearly, before the
  first it is the first's. The life is the batches' event-time span (a batch covers
  partition unit × partitions / batches of event time, :func:`workloads.rowdef.batch_span`), so the
  integral is query-seconds the small files cost until maintenance fixed them. Times the cores.
- **storage**: physical bytes after each batch's last instant held for the batch's event-time span,
  as GiB-months (730 hours).
- **requests** (runs on an object store): ingest, maintenance and cleaner requests as counted; the
  query requests per run at each checkpoint integrated like the latencies.

Samples: the ledger is computed once per independent re-measurement of the run, and the figure is
their mean, its interval over them (:func:`runresults.uncertainty.mean_interval`: a range below 10).
- **repetitions** (``--repeat`` above 1): each repetition's own timings (bytes are the same in every
  repetition); a checkpoint a later repetition did not query is priced with the first's;
- **round groups** (one repetition, and interleaved rounds at every checkpoint the candidate was
  queried: ``queries.checkpoint_rounds`` and the final ``queries.rounds``): with n the fewest rounds at
  any of its checkpoints, sample k takes at each checkpoint the median of the rounds r with r mod n = k,
  so the samples share no query run and pair across candidates by round. The compute, storage and
  request parts, measured once, are the same in every sample: the interval is the queries';
- otherwise one sample, with no interval.

$ per TB ingested divides by the batches' bytes (TB = 10^12 bytes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from engines.config.registry import DECIMAL_TB as TB
from engines.config.registry import GB
from runresults import Results
from runresults.query_runs import runs_per_row
from runresults.review.prices import HOURS_PER_MONTH, Prices
from runresults.uncertainty import Interval, mean_interval

PARTS = ("compute: ingest", "compute: maintenance", "compute: cleaning", "queries", "storage", "requests")
QUERY_PHASES = ("query_planning", "query_scan")
INGEST_KINDS = ("ingest", "upsert")  # the commit kinds the ledger prices as ingest compute
WRITE_PHASES = ("ingest", "maintenance_planning", "maintenance_execution", "cleaner")
RULES = ("compute = seconds of ingest, maintenance and cleaning × the cores Spark used; queries = queries_per_hour × "
         "each query's latency integrated over the table's event-time life (linear between checkpoints, the first "
         "checkpoint's before it) × cores; storage = physical bytes after each batch × the batch's event-time span, "
         "as GiB-months; requests = the object store's counted requests, the queries' per run integrated like their "
         "latency. One ledger per repetition, or with one repetition per group of interleaved query rounds (the "
         "compute, storage and request parts then measured once); the figure is their mean, the interval over them.")
_UNIT_S = {"day": 86400.0, "hour": 3600.0}


REPETITION, ROUND = "repetition", "round"  # what a ledger's samples are (module docstring)


@dataclass
class Ledger:
    """A candidate's ledger: per part, the dollars of each sample (``basis``: each repetition, or each
    group of interleaved query rounds); the TB it ingested."""

    engine: str
    tb_ingested: float
    cores: int
    parts_usd: dict[str, list[float]] = field(default_factory=dict)  # part -> one value per sample
    samples: list[int] = field(default_factory=list)
    basis: str = REPETITION
    core_seconds: dict[str, list[float]] = field(default_factory=dict)

    def totals(self) -> list[float]:
        """Total dollars per sample."""
        return [sum(self.parts_usd[p][i] for p in PARTS) for i in range(len(self.samples))]

    def per_tb(self) -> list[float]:
        return [t / self.tb_ingested for t in self.totals()] if self.tb_ingested else []

    def per_tb_by_sample(self) -> dict[tuple[str, int], float]:
        """(basis, sample) -> $ per TB (empty when nothing was ingested): two ledgers pair on these keys,
        a repetition with the same repetition, a round group with the same group."""
        keys = [(self.basis, s) for s in self.samples]
        return dict(zip(keys, self.per_tb(), strict=True)) if self.tb_ingested else {}

    def deterministic(self) -> bool:
        """Whether every priced dollar is storage, which follows from the seed (the same files, the same
        bytes): no compute or query seconds and no requests are priced. Such a ledger is an exact figure."""
        return all(v == 0 for p in PARTS if p != "storage" for v in self.parts_usd.get(p, []))

    def usd_per_tb(self) -> Interval | None:
        return mean_interval(self.per_tb())

    def part_per_tb(self, part: str) -> Interval | None:
        return mean_interval([v / self.tb_ingested for v in self.parts_usd[part]]) if self.tb_ingested else None

    def as_dict(self) -> dict[str, Any]:
        total = self.usd_per_tb()
        return {"tb_ingested": self.tb_ingested, "cores": self.cores, "samples": self.samples,
                "sample_basis": self.basis, "usd_per_tb": total.as_dict() if total else None,
                "usd_per_tb_by_sample": self.per_tb(),
                "parts_usd_per_tb": {p: (iv.as_dict() if (iv := self.part_per_tb(p)) else None) for p in PARTS},
                "parts_usd": self.parts_usd, "core_seconds": self.core_seconds}


def run_cores(run: dict[str, Any]) -> int:
    """The cores the run's Spark used: N of ``local[N]``, else the machine's."""
    machine = int((run.get("machine") or {}).get("cores") or 1)
    m = re.fullmatch(r"local\[(\d+)(?:,\s*\d+)?\]", str(run.get("spark_master") or ""))
    return int(m.group(1)) if m else machine


def batch_span_s(run: dict[str, Any]) -> float:
    """Event-time seconds one batch covers (as :func:`workloads.rowdef.batch_span`); a projection to
    the user's scale states its own (``projection.batch_span_s``: its batches' rate, where the
    workload's event time is stretched to make a partition span neither a day nor an hour)."""
    span = (run.get("projection") or {}).get("batch_span_s")
    if span:
        return float(span)
    wl = (run.get("scenario") or {}).get("workload") or {}
    unit = _UNIT_S.get(str(wl.get("partition_granularity", "day")), 86400.0)
    return unit * float(wl.get("num_partitions", 3)) / max(1, int(wl.get("num_batches", 10)))


def integrate(points: dict[int, float], span_s: float, batches: int) -> float:
    """∫ f dt over the life (``batches`` × ``span_s``) of a figure measured at checkpoint batches
    (``points``: batch -> value; a checkpoint is at the end of its batch): linear between
    checkpoints, constant before the first and after the last."""
    if not points:
        return 0.0
    life = batches * span_s
    ts = [(b + 1) * span_s for b in sorted(points)]
    vs = [points[b] for b in sorted(points)]
    xs = [0.0, *ts, max(life, ts[-1])]
    ys = [vs[0], *vs, vs[-1]]
    return float(np.trapezoid(ys, xs))


def _latencies(q: pd.DataFrame, rounds: pd.DataFrame) -> dict[str, dict[int, float]]:
    """query -> checkpoint -> latency (warm median; the interleaved rounds' at their checkpoints)."""
    out: dict[str, dict[int, float]] = {}
    ok = q[q.error.isna()] if "error" in q else q
    for (name, cp), g in ok.groupby(["query", "checkpoint"]):
        warm = g[g.run > 0].latency_s
        out.setdefault(str(name), {})[int(cp)] = float(warm.median() if len(warm) else g.latency_s.median())
    for (name, cp), g in rounds.groupby(["query", "checkpoint"]):
        out.setdefault(str(name), {})[int(cp)] = float(g.latency_s.median())
    return out


def round_groups(queries: pd.DataFrame, rounds: pd.DataFrame) -> int:
    """How many round groups a one-repetition candidate's ledger has: the fewest interleaved rounds at
    any checkpoint it was queried at (0 when one of them has none)."""
    cps = set(queries.checkpoint.astype(int)) if len(queries) else set()
    if not cps or rounds.empty:
        return 0
    per_cp = rounds.groupby("checkpoint")["round"].nunique()
    return int(min(int(per_cp.get(cp, 0)) for cp in cps))


def _round_latencies(q: pd.DataFrame, rounds: pd.DataFrame, groups: int, k: int) -> dict[str, dict[int, float]]:
    """Sample ``k``'s query -> checkpoint -> latency: the median of the rounds r with r mod ``groups`` = k
    at each checkpoint (a query with no round there: as :func:`_latencies`)."""
    out = _latencies(q, rounds.iloc[0:0])
    for (name, cp), g in rounds[rounds["round"] % groups == k].groupby(["query", "checkpoint"]):
        out.setdefault(str(name), {})[int(cp)] = float(g.latency_s.median())
    return out


def _query_request_usd(req: pd.DataFrame, q: pd.DataFrame, run: dict) -> dict[str, dict[int, float]]:
    """query -> checkpoint -> dollars of requests per query run (``run``: run.json, for the runs a
    simulated row stands for, :func:`runresults.query_runs.runs_per_row`)."""
    out: dict[str, dict[int, float]] = {}
    mine = req[req.phase.isin(QUERY_PHASES)]
    q = q.assign(_runs=runs_per_row(run, q))
    for (name, cp), g in q.groupby(["query", "checkpoint"]):
        runs = int(g._runs.sum())
        spent = float(mine[mine.context == f"{name}@{cp}"].usd.sum())
        if runs:
            out.setdefault(str(name), {})[int(cp)] = spent / runs
    return out


def ledger(results: Results, engine: str, prices: Prices, queries_per_hour: float) -> Ledger:
    """The candidate's ledger, one entry per sample (module docstring)."""
    run = results.run
    cores, span = run_cores(run), batch_span_s(run)
    commits = results.of_engine("commits", engine, all_repeats=True)
    maint = results.of_engine("maintenance", engine, all_repeats=True)
    queries = results.of_engine("queries", engine, all_repeats=True)
    rounds = results.of_engine("query_rounds", engine)
    req = results.of_engine("requests", engine, all_repeats=True)
    req = req.assign(usd=req["count"] * req["op"].map(prices.request_usd)) if len(req) else req.assign(usd=0.0)
    first = commits[commits.repeat == commits.repeat.min()] if len(commits) else commits
    ingest_first = first[first.kind == "ingest"]
    out = Ledger(engine, float(ingest_first.batch_bytes.fillna(0).sum()) / TB, cores)
    out.parts_usd = {p: [] for p in PARTS}
    out.core_seconds = {p: [] for p in ("ingest", "maintenance", "cleaning", "queries")}
    batches = int(((run.get("scenario") or {}).get("workload") or {}).get("num_batches") or
                  (int(commits.batch.max()) + 1 if len(commits) else 0))
    core_usd = prices.core_hour.usd / 3600
    repeats = sorted(int(r) for r in commits.repeat.unique()) if len(commits) else []
    q_first = queries[queries.repeat == queries.repeat.min()] if len(queries) else queries
    groups = round_groups(q_first, rounds) if len(repeats) == 1 else 0
    # each sample: (its key, its repetition, its query latencies)
    samples: list[tuple[int, int, dict[str, dict[int, float]]]] = []
    if groups > 1:
        out.basis = ROUND
        samples = [(k, repeats[0], _round_latencies(q_first, rounds, groups, k)) for k in range(groups)]
    else:
        # a repetition not queried at a checkpoint (a later repetition at the review's final checkpoint, whose
        # warm runs are the rounds on the first repetition's table: bench.runner) is priced with the first's
        first_lat = _latencies(q_first, rounds) if len(queries) else {}
        for r in repeats:
            lat = {name: dict(pts) for name, pts in first_lat.items()}
            # an earlier checkpoint's rounds ran on the first repetition's tables; the final one's price every one
            mine = rounds if r == repeats[0] or rounds.empty else rounds[rounds.checkpoint == rounds.checkpoint.max()]
            for name, pts in _latencies(queries[queries.repeat == r], mine).items():
                lat.setdefault(name, {}).update(pts)
            samples.append((r, r, lat))
    qph = queries_per_hour / 3600
    for key, r, lat in samples:
        c, m = commits[commits.repeat == r], maint[maint.repeat == r]
        q, rq = queries[queries.repeat == r], req[req.repeat == r]
        # the corrections' upsert commits (workload.update_fraction) are writes of the ingest
        secs = {"ingest": float(c[c.kind.isin(INGEST_KINDS)].duration_s.sum()),
                "maintenance": float(m[m.kind != "clean"].duration_s.sum()),
                "cleaning": float(m[m.kind == "clean"].duration_s.sum()),
                "queries": qph * sum(integrate(pts, span, batches) for pts in lat.values())}
        for k, v in secs.items():
            out.core_seconds[k].append(v * cores)
        end_of_batch = c.sort_values("seq").groupby("batch").physical_bytes.last()
        held = end_of_batch.reindex(range(batches)).ffill().fillna(0) if batches else end_of_batch
        gib_months = float(held.sum()) * span / GB / 3600 / HOURS_PER_MONTH  # GB: one GiB, S3's GB-month
        q_req = _query_request_usd(req[req.repeat == queries.repeat.min()], q_first, run) if len(queries) else {}
        for name, pts in _query_request_usd(rq, q, run).items():
            q_req.setdefault(name, {}).update(pts)
        requests_usd = (float(rq[rq.phase.isin(WRITE_PHASES)].usd.sum())
                        + qph * sum(integrate(pts, span, batches) for pts in q_req.values()))
        out.samples.append(int(key))
        for part, usd in (("compute: ingest", secs["ingest"] * cores * core_usd),
                          ("compute: maintenance", secs["maintenance"] * cores * core_usd),
                          ("compute: cleaning", secs["cleaning"] * cores * core_usd),
                          ("queries", secs["queries"] * cores * core_usd),
                          ("storage", gib_months * prices.storage_gb_month.usd), ("requests", requests_usd)):
            out.parts_usd[part].append(usd)
    return out
