"""The object-store section of the report: requests per phase, per GB ingested, per maintenance run
and per query, and what they cost at S3's published request prices.

Request counts come from the ``requests`` table (the counting proxy in front of the store,
``bench/store/proxy.py``), attributed by the runner to the phase that made them.
"""

from __future__ import annotations

import pandas as pd

from engines.config.registry import GB, MB
from engines.kinds import engines_with
from reports.markdown import md_table
from runresults import Results
from runresults.query_runs import runs_per_row
from runresults.review.prices import DEFAULT_PRICES, Prices
from runresults.review.settings import review_settings
from runresults.uncertainty import Interval, interval

PHASES = ("ingest", "maintenance_planning", "maintenance_execution", "cleaner", "query_planning", "query_scan")
MAINTENANCE = ("maintenance_planning", "maintenance_execution", "cleaner")
QUERY = ("query_planning", "query_scan")


def prices_of(results: Results) -> Prices:
    """The run's price table (its scenario's ``review.prices``, else the defaults)."""
    return review_settings(results.run).prices


def priced(requests: pd.DataFrame, prices: Prices = DEFAULT_PRICES) -> pd.DataFrame:
    """The requests table with a ``usd`` column (count x list price)."""
    return requests.assign(usd=requests["count"] * requests["op"].map(prices.request_usd))


def per_phase(results: Results) -> pd.DataFrame:
    """Requests per engine and phase (repetition 0), with the total and its dollar cost."""
    req = priced(results.table("requests"), prices_of(results))
    req = req[req.engine.notna() & (req.get("repeat", 0) == 0)]
    counts = req.pivot_table(index="engine", columns="phase", values="count", aggfunc="sum", fill_value=0)
    cols = [p for p in PHASES if p in counts.columns]
    out = counts[cols].copy()
    out["total"] = out.sum(axis=1)
    out["usd"] = req[req.phase.isin(PHASES)].groupby("engine")["usd"].sum().reindex(out.index).fillna(0.0)
    return out


def unit_costs(results: Results) -> pd.DataFrame:
    """Per engine: requests and dollars per GB ingested, per maintenance run and per query run."""
    req = priced(results.table("requests"), prices_of(results))
    req = req[req.engine.notna() & (req.get("repeat", 0) == 0)]
    commits, maint, queries = (results.table(t) for t in ("commits", "maintenance", "queries"))
    rows = []
    for engine in sorted(req.engine.unique()):
        mine = req[req.engine == engine]
        ing = commits[(commits.engine == engine) & (commits.kind == "ingest") & (commits.get("repeat", 0) == 0)]
        gb = ing.batch_bytes.fillna(0).sum() / GB
        runs = len(maint[(maint.engine == engine) & (maint.get("repeat", 0) == 0)])
        mq = queries[(queries.engine == engine) & (queries.get("repeat", 0) == 0)]
        nq = int(runs_per_row(results.run, mq).sum())

        def total(phases: tuple[str, ...], col: str, mine: pd.DataFrame = mine) -> float:
            return float(mine[mine.phase.isin(phases)][col].sum())

        rows.append({
            "engine": engine,
            "GB ingested": round(gb, 4),
            "requests / GB ingested": round(total(("ingest",), "count") / gb) if gb else None,
            "$ / GB ingested": round(total(("ingest",), "usd") / gb, 4) if gb else None,
            "maintenance runs": runs,
            "requests / maintenance run": round(total(MAINTENANCE, "count") / runs, 1) if runs else None,
            "$ / 1,000 maintenance runs": round(1000 * total(MAINTENANCE, "usd") / runs, 4) if runs else None,
            "query runs": nq,
            "requests / query": round(total(QUERY, "count") / nq, 1) if nq else None,
            "GET / query": round(float(mine[mine.phase.isin(QUERY) & (mine.op == "GET")]["count"].sum()) / nq, 1)
            if nq else None,
            "$ / 1,000 queries": round(1000 * total(QUERY, "usd") / nq, 4) if nq else None,
        })
    return pd.DataFrame(rows)


def selective_query(results: Results, query: str = "service_hours") -> pd.DataFrame:
    """The selective query at the last checkpoint, per engine: warm-run median latency, files scanned
    and the store requests of one run (query planning and scan, cold and warm runs averaged)."""
    q = results.table("queries")
    req = results.table("requests")
    if q.empty or req.empty:
        return pd.DataFrame()
    q = q[(q["query"] == query) & (q.get("repeat", 0) == 0)]
    if q.empty:
        return pd.DataFrame()
    last = int(q.checkpoint.max())
    q = q[q.checkpoint == last]
    req = req[(req.get("repeat", 0) == 0) & (req.context == f"{query}@{last}") & (req.phase == "query_scan")]
    rows = []
    for engine, runs in q.groupby("engine"):
        mine = req[req.engine == engine]
        n = int(runs_per_row(results.run, runs).sum())
        warm = runs[runs.run > 0].latency_s
        iv = interval((warm if len(warm) else runs.latency_s).tolist())
        rows.append({"engine": engine, "warm median s": round(float(warm.median() if len(warm) else
                                                                      runs.latency_s.median()), 3),
                     "interval": iv.text() if iv is not None else "",
                     "files scanned": int(runs[runs.run == 0].files_scanned.iloc[0]) if (runs.run == 0).any() else None,
                     "requests / run": round(float(mine["count"].sum()) / n, 1),
                     "GET / run": round(float(mine[mine.op == "GET"]["count"].sum()) / n, 1),
                     "HEAD / run": round(float(mine[mine.op == "HEAD"]["count"].sum()) / n, 1),
                     "LIST / run": round(float(mine[mine.op == "LIST"]["count"].sum()) / n, 1),
                     "requests / file": (round(float(mine["count"].sum()) / n / files, 1) if (files := int(
                         runs[runs.run == 0].files_scanned.iloc[0]) if (runs.run == 0).any() else 0) else None),
                     "MB read / run": round(float(mine.response_bytes.sum()) / n / MB, 2)})
    return pd.DataFrame(rows).sort_values("warm median s", ascending=False)


PER_RUN = (("requests", "store_requests"), ("GET", "store_get"), ("HEAD", "store_head"), ("LIST", "store_list"))
SCALE_QUERIES = ("service_hours", "full_scan_by_level")  # the selective query and the full scan


def _cell(iv: Interval | None, digits: int = 3) -> str:
    """A statistic with its interval, its n in a column of its own: ``v [lo, hi]`` (95%, from
    :data:`MIN_N` samples), ``v (range lo–hi)`` below, ``v`` for one sample or an exact figure."""
    if iv is None:
        return ""
    v = f"{iv.value:.{digits}g}"
    if iv.n <= 1:
        return v
    lo, hi = f"{iv.lo:.{digits}g}", f"{iv.hi:.{digits}g}"
    return f"{v} [{lo}, {hi}]" if iv.kind == "bootstrap" else f"{v} (range {lo}–{hi})"


def query_runs_table(results: Results, queries: tuple[str, ...] = SCALE_QUERIES) -> pd.DataFrame:
    """Per query and engine at the last checkpoint: the warm runs' seconds and each run's own store
    requests (all, GET, HEAD, LIST: the ``queries`` table's store columns), medians with their
    intervals (95% from :data:`MIN_N` warm runs, else the range) and n, beside the cold run's
    requests and files scanned. A folder written before the store columns (or a simulated run) has
    one figure per query: the context's requests over its runs, no interval."""
    q = results.table("queries")
    if q.empty:
        return pd.DataFrame()
    q = q[q["query"].isin(queries) & (q.get("repeat", 0) == 0) & q.error.isna()]
    if q.empty:
        return pd.DataFrame()
    last = int(q.checkpoint.max())
    q = q[q.checkpoint == last]
    req = results.table("requests")
    req = req[(req.get("repeat", 0) == 0) & (req.phase == "query_scan")] if not req.empty else req
    rows = []
    for (name, engine), runs in sorted(q.groupby(["query", "engine"]), key=lambda kv: (queries.index(kv[0][0]), kv[0][1])):
        warm = runs[runs.run > 0]
        cold = runs[runs.run == 0]
        sample = warm if len(warm) else runs
        row: dict[str, object] = {"query": name, "engine": engine,
                                  "files scanned": int(cold.files_scanned.iloc[0]) if len(cold) else None,
                                  "n (warm runs)": len(warm), "seconds": _cell(interval(sample.latency_s.tolist()))}
        if sample.store_requests.notna().any():
            for label, col in PER_RUN:
                row[f"{label} / run"] = _cell(interval(sample[col].astype(float).tolist()), 4)
            row["cold run requests"] = int(cold.store_requests.iloc[0]) if len(cold) and cold.store_requests.notna().any() \
                else None
        elif not req.empty:
            mine = req[(req.engine == engine) & (req.context == f"{name}@{last}")]
            n = int(runs_per_row(results.run, runs).sum())
            row["requests / run"] = f"{float(mine['count'].sum()) / n:.4g}" if n else ""
            for label, _col in PER_RUN[1:]:
                row[f"{label} / run"] = f"{float(mine[mine.op == label]['count'].sum()) / n:.4g}" if n else ""
            row["cold run requests"] = None
        rows.append(row)
    return pd.DataFrame(rows)


GOAL_RATIO = 4.0  # T12: with 20 ms latency, sorted clustering answers the selective query >= 4x faster


def goal_engines(results: Results) -> tuple[str | None, str | None]:
    """The goal's two sides in the run: (the control, the first sorted Option 2 on COPY_ON_WRITE), each
    found by its kind's registry entry (role control; a design whose service is clustering, with sort columns)."""
    engines = results.run.get("engines") or {}
    slow = next(iter(engines_with(engines, role="control")), None)
    clustering = engines_with(engines, role="design", service="clustering", table_types=("COPY_ON_WRITE",))
    fast = next((n for n in clustering if (engines[n].get("config") or {}).get("sort_columns")), None)
    return slow, fast


def selective_goal(frame: pd.DataFrame, slow: str | None, fast: str | None,
                   first_byte_ms: float | None = None, spark_master: str | None = None) -> str:
    """The goal's sentence, computed: the ratio of warm medians, whether it meets :data:`GOAL_RATIO`,
    and the files and requests per run on each side that explain it (per file scanned, and the
    first-byte waits they add up to against the measured times)."""
    ratio = selective_ratio(frame, slow, fast)
    if ratio is None:
        return ""
    by = frame.set_index("engine")
    a, b = by.loc[slow], by.loc[fast]
    req_ratio = a["requests / run"] / b["requests / run"] if b["requests / run"] else float("nan")

    def side(r: pd.Series) -> str:
        per_file = f"; {r['requests / file']:g} per file" if pd.notna(r.get("requests / file")) else ""
        return (f"{r['files scanned']} files with {r['requests / run']:g} requests per run ({r['GET / run']:g} GET, "
                f"{r['HEAD / run']:g} HEAD, {r['LIST / run']:g} LIST{per_file})")

    out = (f"Goal: sorted clustering answers it >= {GOAL_RATIO:g}x faster than the unmaintained small files "
           f"({slow} / {fast}, warm medians): **{ratio:.1f}x, {'met' if ratio >= GOAL_RATIO else 'not met'}**. "
           f"{slow} scans {side(a)}, {fast} {side(b)}: {req_ratio:.1f}x the requests, each paying the first-byte "
           "latency. ")
    if first_byte_ms:
        waits = [r["requests / run"] * first_byte_ms / 1000 for r in (a, b)]
        out += (f"At {first_byte_ms:g} ms each they add up to {waits[0]:.2f} s and {waits[1]:.2f} s of first-byte "
                f"waits against warm medians of {a['warm median s']:.2f} s and {b['warm median s']:.2f} s (waits "
                f"overlap where reads run in parallel tasks{f', {spark_master}' if spark_master else ''}). ")
        if ratio < req_ratio:
            out += ("The time ratio stays below the request ratio: both sides also pay what a query costs whatever "
                    "its files (a Spark job, its planning). ")
    return out


def selective_ratio(frame: pd.DataFrame, slow: str | None, fast: str | None) -> float | None:
    """How many times faster ``fast`` answers the selective query than ``slow`` (warm medians); None
    without either."""
    by = frame.set_index("engine")["warm median s"] if not frame.empty else pd.Series(dtype=float)
    if slow is None or fast is None or slow not in by or fast not in by or not by[fast]:
        return None
    return float(by[slow] / by[fast])


def requests_section(results: Results) -> str | None:
    """The section's Markdown, or None when the run was not on an object store."""
    req = results.table("requests")
    if req.empty:
        return None
    store = results.run.get("store") or {}
    head = (f"Tables on an S3-protocol store ({store.get('server', 's3')}, first-byte latency "
            f"{store.get('first_byte_ms')} ms per request, bandwidth cap {store.get('bandwidth_mb_s') or 'none'} "
            "MB/s per connection); every request crossed a counting proxy and is attributed to the phase the "
            "runner was in. Harness reads (audits, file listings for the results) are excluded. "
            f"Prices: {prices_of(results).describe()}.\n\n")
    phase = per_phase(results).reset_index()
    phase["usd"] = phase["usd"].map(lambda v: f"{v:.6f}")
    out = (head + "### Requests per phase\n\n" + md_table(phase) + "\n### Per GB ingested, per maintenance run, "
           "per query\n\n" + md_table(unit_costs(results)))
    per_run = query_runs_table(results)
    if not per_run.empty and "requests / run" in per_run:
        n = per_run["n (warm runs)"].max()
        out += ("\n### The selective query and the full scan per run (last checkpoint)\n\n"
                f"Each query run's own requests (those the proxy recorded while it ran) and seconds: medians over "
                f"the warm runs (n = {n}{', the interleaved rounds' if results.table('query_rounds').shape[0] else ''}) "
                "with their 95% bootstrap intervals [lo, hi] from 10 runs on, the range below; the cold run's "
                "requests beside them.\n\n" + md_table(per_run))
    sel = selective_query(results)
    if not sel.empty:
        goal = selective_goal(sel, *goal_engines(results), first_byte_ms=store.get("first_byte_ms"),
                              spark_master=results.run.get("spark_master"))
        out += ("\n### The selective query on the store (one service, three hours, last checkpoint)\n\n" + goal +
                "Each file the query cannot prune costs requests in Spark's driver (Hadoop's s3a: an existence "
                "HEAD, then a LIST and a HEAD as it lists the path) and in a task (HEADs as the file is opened, "
                "ranged GETs for the footer's length and the footer, which Spark reads twice, then for the column "
                "chunks), each paying the first-byte latency.\n\n" + md_table(sel))
    return out
