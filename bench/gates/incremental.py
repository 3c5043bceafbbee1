"""The incremental gate: for each completed instant t, an incremental pull over ``(t, latest]``
returns exactly the rows committed in that range — no row re-emitted by maintenance, none missing.

Hudi's incremental query (Apache Hudi's and hudi-rs's alike) returns the rows of the latest file
slices touched in the range whose ``_hoodie_commit_time`` lies in it. So one snapshot read of
(record key, ``_hoodie_commit_time``) answers every pull at once: the pull from t returns the rows
stamped after t, and must return the rows whose batch was ingested after t or whose correction was
upserted after t (the ground truth: an update gives a row a new commit time, so a pull over the
range holding the update includes it, once).
A maintenance run that re-stamps the rows it rewrites makes every pull from an instant between a
row's ingest and the rewrite re-emit it. That exact check runs at every instant the run recorded;
the readers' own incremental queries run at a sample of instants (:func:`sample_begins`) to show
they give the same answer: the first instant still on the active timeline and the instant before
the first and before the last maintenance run on it (the pulls that cross a rewrite).

The figure is the worst pull's rows re-emitted + rows missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.gates.history import EngineHistory, wrong_rows
from bench.gates.readers import (
    APACHE_HUDI,
    COMMIT_TIME,
    HUDI_RS,
    KEY,
    ReadError,
    apache_hudi_key_sum,
    apache_hudi_keys,
    apache_hudi_wrong_rows,
    hudi_rs_read,
)
from bench.gates.truth import KeySum, key_hashes
from engines.table.mor import snapshot_read
from engines.table.table import HudiTable

GATE = "incremental"
UNIT = "rows re-emitted + missing (worst pull)"


@dataclass
class PullCheck:
    """The pulls from every instant, judged from one snapshot of (key, commit time)."""

    checked: int
    failures: int
    worst: int  # rows re-emitted + missing in the worst pull
    worst_begin: str | None
    worst_reemitted: int
    worst_missing: int
    restamped: int  # rows whose commit time is not their batch's ingest instant


def check_every_pull(history: EngineHistory, keys: Any, commit_times: Any) -> PullCheck:
    """Judge the pull from every instant of ``history`` from a snapshot's (record key, commit time)
    columns: the pull from ``instants[j]`` returns the rows stamped after it and must return the rows
    ingested after it."""
    instants = np.asarray(history.instants)
    n = len(instants)
    truth = history.truth
    order = np.argsort(truth.hashes, kind="stable")
    t_hash = truth.hashes[order]
    t_pos = history.row_commit_positions()[order]  # the row belongs to the pull from j iff j < t_pos
    r_hash = key_hashes(keys)
    stamps = commit_times.to_numpy(zero_copy_only=False) if hasattr(commit_times, "to_numpy") else commit_times
    r_pos = np.searchsorted(instants, np.asarray(stamps, dtype=str), side="left")
    idx = np.clip(np.searchsorted(t_hash, r_hash), 0, max(len(t_hash) - 1, 0))
    found = (t_hash[idx] == r_hash) if len(t_hash) else np.zeros(len(r_hash), bool)
    first = np.zeros(len(r_hash), bool)
    first[np.unique(r_hash, return_index=True)[1]] = True
    normal = found & first
    reemit = np.zeros(n + 1, np.int64)
    missing = np.zeros(n + 1, np.int64)

    def add(diff: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:  # +1 on [lo, hi) per row
        keep = hi > lo
        np.add.at(diff, lo[keep], 1)
        np.add.at(diff, hi[keep], -1)

    s_pos, t_of_r = r_pos[normal], t_pos[idx[normal]]
    add(reemit, t_of_r, s_pos)  # stamped later than ingested: re-emitted by pulls in between
    add(missing, s_pos, t_of_r)  # stamped earlier: missing from pulls in between
    extra = ~normal  # unknown keys and second copies: returned by every pull before their stamp
    add(reemit, np.zeros(int(extra.sum()), np.int64), r_pos[extra])
    absent = np.ones(len(t_hash), bool)
    absent[idx[normal]] = False
    add(missing, np.zeros(int(absent.sum()), np.int64), t_pos[absent])
    reemit, missing = np.cumsum(reemit)[:n], np.cumsum(missing)[:n]
    wrong = reemit + missing
    j = int(np.argmax(wrong)) if n else 0
    return PullCheck(checked=n, failures=int((wrong > 0).sum()), worst=int(wrong[j]) if n else 0,
                     worst_begin=str(instants[j]) if n and wrong[j] else None,
                     worst_reemitted=int(reemit[j]) if n else 0, worst_missing=int(missing[j]) if n else 0,
                     restamped=int((s_pos != t_of_r).sum()))


def sample_begins(history: EngineHistory, active: list[str]) -> list[str]:
    """Where the readers' own incremental queries start: the first instant on the active timeline,
    and the instant before the first and before the last maintenance instant on it."""
    on_timeline = [t for t in history.instants if t in set(active)]
    if len(on_timeline) < 2:
        return []
    out = [on_timeline[0]]
    runs = [m for m in history.maintenance if m in set(on_timeline[1:])]
    for m in (runs[:1] + runs[-1:]):
        before = history.before(m)
        if before is not None and before in on_timeline:
            out.append(before)
    return sorted(set(out))


@dataclass
class RealPull:
    begin: str
    reemitted: int
    missing: int
    error: str | None = None

    @property
    def wrong(self) -> int:
        return self.reemitted + self.missing


def _judge(history: EngineHistory, begin: str, returned: Any) -> RealPull:
    reemitted, missing = wrong_rows(history.written_after(begin), key_hashes(returned))
    return RealPull(begin, reemitted, missing)


def hudi_rs_pull(history: EngineHistory, base_uri: str, begin: str) -> RealPull:
    """hudi-rs's incremental query over ``(begin, latest]``, judged against the ground truth."""
    end = history.instants[-1]
    try:
        return _judge(history, begin, hudi_rs_read(base_uri, [KEY], incremental=(begin, end)).column(0))
    except ReadError as exc:
        return RealPull(begin, 0, history.committed_after(begin).rows, str(exc))


def apache_hudi_pull(spark: Any, history: EngineHistory, base_uri: str, begin: str) -> RealPull:
    """Apache Hudi's incremental query over ``(begin, latest]``: its rows and key checksum
    aggregated in Spark; when they disagree, the rows re-emitted and missing counted in Spark."""
    end = history.instants[-1]
    expected: KeySum = history.committed_after(begin)
    try:
        if apache_hudi_key_sum(spark, base_uri, incremental=(begin, end)) == expected:
            return RealPull(begin, 0, 0)
        if history.truth.has_updates:  # a key names its batch, not its last write: judge the keys themselves
            return _judge(history, begin, apache_hudi_keys(spark, base_uri, (begin, end)))
        reemitted, missing = apache_hudi_wrong_rows(spark, base_uri, history.batches_upto(begin), expected.rows,
                                                    (begin, end))
        if not reemitted and not missing:  # the checksum differs all the same: keys the workload never made
            return RealPull(begin, 0, 0, "apache_hudi: key checksum differs from the ground truth's")
        return RealPull(begin, reemitted, missing)
    except ReadError as exc:
        return RealPull(begin, 0, expected.rows, str(exc))


def _pulls_detail(pulls: list[RealPull]) -> str:
    parts = []
    for p in pulls:
        what = f"error {p.error}" if p.error else (f"{p.reemitted} re-emitted, {p.missing} missing" if p.wrong
                                                    else "exact")
        parts.append(f"from {p.begin}: {what}")
    return "; ".join(parts)


def gate_rows(engine: str, table: HudiTable, history: EngineHistory, spark: Any | None,
              hudi_rs: bool = True) -> list[dict[str, Any]]:
    """The incremental gate on one Hudi-format table: ``hudi_rs`` (every instant from its snapshot
    of key and commit time, and its own incremental query at the sampled instants) and
    ``apache_hudi`` (its incremental query at the sampled instants; n/a without a Spark session
    holding its bundle). ``hudi_rs=False``: the exact check reads the snapshot with our view
    instead (object stores, which hudi-rs is not given credentials for here)."""
    from bench.gates.readers import OURS

    active = [i.timestamp for i in table.refresh().completed_data_instants()]
    begins = sample_begins(history, active)
    rows = []
    base = table.base_uri
    if hudi_rs:
        reader = HUDI_RS
        try:
            snap = hudi_rs_read(base, [KEY, COMMIT_TIME])
            check: PullCheck | None = check_every_pull(history, snap.column(0), snap.column(1))
            snap_error = None
        except ReadError as exc:
            check, snap_error = None, str(exc)
        pulls = [hudi_rs_pull(history, base, b) for b in begins]
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        reader, pulls, snap_error = OURS, [], None
        if table.merge_on_read:  # log files hold rows too: the merged read
            parts = [snapshot_read(table).rows.select([KEY, COMMIT_TIME])]
        else:
            parts = [pq.read_table(table.storage.abs(s.path), columns=[KEY, COMMIT_TIME],
                                   filesystem=table.storage.fs) for s in table.view().snapshot()]
        snap = pa.concat_tables(parts) if parts else pa.table({KEY: pa.array([], pa.string()),
                                                               COMMIT_TIME: pa.array([], pa.string())})
        check = check_every_pull(history, snap.column(0), snap.column(1))
    bad_pulls = [p for p in pulls if p.wrong or p.error]
    if check is None:
        rows.append(_row(engine, reader, False, len(history.instants), len(history.instants),
                         float(history.truth.hashes.size), f"the snapshot read failed: {snap_error}"))
    else:
        figure = max([check.worst, *(p.wrong for p in pulls)])
        every = (f"all {check.checked} pulls exact" if not check.failures else
                 f"{check.failures} of {check.checked} pulls wrong, worst from {check.worst_begin}: "
                 f"{check.worst_reemitted} re-emitted, {check.worst_missing} missing "
                 f"({check.restamped} rows carry a commit time other than their ingest instant)")
        own = f"; its own incremental query {_pulls_detail(pulls)}" if pulls else ""
        rows.append(_row(engine, reader, not check.failures and not bad_pulls, check.checked + len(pulls),
                         check.failures + len(bad_pulls), float(figure),
                         f"every instant from the {reader} snapshot's key and commit time: {every}{own}"))
    if spark is None:
        rows.append(_row(engine, APACHE_HUDI, None, 0, 0, None,
                         "n/a: the run's Spark session has no Apache Hudi bundle"))
    elif begins:
        real = []
        for b in begins:  # a Spark job or two each: the gate is decided at the first wrong pull
            real.append(apache_hudi_pull(spark, history, base, b))
            if real[-1].wrong or real[-1].error:
                break
        bad = [p for p in real if p.wrong or p.error]
        skipped = (f"; the {len(begins) - len(real)} later pull(s) not run: the gate failed at the first wrong one"
                   if len(real) < len(begins) else "")
        rows.append(_row(engine, APACHE_HUDI, not bad, len(real), len(bad), float(max(p.wrong for p in real)),
                         f"incremental query to {history.instants[-1]}: {_pulls_detail(real)}{skipped}"))
    return rows


def not_applicable(engine: str, reader: str, reason: str) -> dict[str, Any]:
    """The gate's row for an engine it does not apply to, with the reason."""
    return _row(engine, reader, None, 0, 0, None, f"n/a: {reason}")


def _row(engine: str, reader: str, passed: bool | None, checked: int, failures: int, figure: float | None,
         detail: str) -> dict[str, Any]:
    return {"engine": engine, "gate": GATE, "reader": reader, "passed": passed, "checked": checked,
            "failures": failures, "figure": figure, "figure_unit": UNIT, "detail": detail}
