"""The no-loss gate: rows lost or duplicated by a crash (SIGKILL of the writer) at each maintenance
step boundary of the candidate — data written, commit, deletes — after recovery and the rest of
the run.

The crash matrix (``layoutbench crashtest``, :mod:`bench.crashtest`) kills real child processes at
the named points of :data:`engines.table.faults.POINTS`. It does not fit in ``make bench``: a
point costs a child JVM start, the crashed run's prefix and the recovered run to the end (measured
on the 2-core machine: see the README), and a candidate has 8 to 15 maintenance points. So the run
attaches the latest ``crashtest`` folder of the same git commit found beside its own results
folder, and reads each candidate's maintenance points from it (matched by engine name and kind).
Without one, every candidate's row is n/a and says which command produces it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bench.gates import gate_row, not_applicable
from engines.kinds import KINDS, kind_of

GATE = "no_loss"
READER = "ours"  # keys read from the recovered snapshot's files (hudi-rs agreement is in the detail)
# the kinds whose maintenance of ours has step boundaries to crash: a table service, or the clean after every commit
MAINTAINED_KINDS = tuple(n for n, k in KINDS.items() if k.fault_points or k.cleans_after_commit)


def maintenance_points(kind: str, config: Mapping[str, Any] | None = None) -> list[str]:
    """The crash points of ``kind``'s maintenance (its table service and cleaner, and the rollback
    of a killed service write): the crash matrix's points minus the ingest ones. None for a kind
    without maintenance of ours (the append-only control, the peers)."""
    from bench.engine_points import INGEST, ROLLBACK, points_for_kind

    points = [p for p in points_for_kind(kind, dict(config or {})) if p not in INGEST]
    if kind_of(kind).fault_points:  # a table service of ours
        points += ROLLBACK  # crash_jobs: rollback points follow the service's mid-write crash
    return points


def latest_crashtest(results_root: Path, sha: str | None) -> Path | None:
    """The newest ``crashtest`` results folder under ``results_root`` run at git commit ``sha``
    (a dirty tree does not count: its code is not the commit's)."""
    if not sha or not results_root.is_dir():
        return None
    found = []
    for run_file in results_root.glob("*/run.json"):
        try:
            run = json.loads(run_file.read_text())
        except (OSError, ValueError):
            continue
        git = run.get("git") or {}
        if run.get("kind") == "crashtest" and git.get("sha") == sha and not git.get("dirty"):
            found.append(run_file.parent)
    return max(found, key=lambda p: p.name) if found else None


def no_loss_rows(candidates: Iterable[tuple[str, str, Mapping[str, Any]]], crash_dir: Path | None,
                 sha: str | None) -> list[dict[str, Any]]:
    """One gate row per (name, kind, config) candidate, from the crash rows of ``crash_dir``."""
    candidates = list(candidates)
    if crash_dir is None:
        why = (f"no crashtest run of {sha or 'this code (not in git)'} in the results folder; "
               "run layoutbench crashtest (a clean tree at this commit)")
        return [not_applicable(name, GATE, READER, why if kind in MAINTAINED_KINDS
                               else f"{name} ({kind}) runs no maintenance of ours: no step boundary to crash")
                for name, kind, _ in candidates]
    import pyarrow.parquet as pq

    crash_file = crash_dir / "crash.parquet"
    crash = pq.read_table(crash_file).to_pylist() if crash_file.is_file() else []
    crash_run = json.loads((crash_dir / "run.json").read_text())
    kinds = {n: e.get("kind") for n, e in (crash_run.get("engines") or {}).items()}
    out = []
    for name, kind, config in candidates:
        if kind not in MAINTAINED_KINDS:
            out.append(not_applicable(name, GATE, READER, f"{name} ({kind}) runs no maintenance of ours: "
                                      "no step boundary to crash"))
            continue
        if kinds.get(name) != kind:
            out.append(not_applicable(name, GATE, READER, f"crashtest run {crash_dir.name} has no engine {name} "
                                      f"of kind {kind}; add it to the crash scenario"))
            continue
        wanted = set(maintenance_points(kind, config))
        rows = [r for r in crash if r["engine"] == name and r["point"] in wanted]
        if not rows:
            out.append(not_applicable(name, GATE, READER, f"crashtest run {crash_dir.name} ran none of {name}'s "
                                      "maintenance points"))
            continue
        out.append(_row(name, crash_dir.name, rows, len(wanted)))
    return out


def _row(name: str, run_id: str, rows: list[Mapping[str, Any]], wanted: int) -> dict[str, Any]:
    bad = [r for r in rows if not r["recovered"] or r["rows_lost"] or r["rows_duplicated"] or r["query_failures"]]
    lost = sum(max(0, int(r["rows_lost"])) + max(0, int(r["rows_duplicated"])) for r in rows)
    disagree = sum(not r["hudi_rs_agrees"] for r in rows)
    parts = [f"{len(rows)} of {wanted} maintenance crash points from crashtest run {run_id}"]
    if bad:
        worst = max(bad, key=lambda r: (not r["recovered"], int(r["rows_lost"]) + int(r["rows_duplicated"])))
        parts.append(f"{len(bad)} lost or duplicated rows or did not recover; worst {worst['point']}: "
                     f"recovered={worst['recovered']}, lost {worst['rows_lost']}, duplicated {worst['rows_duplicated']}")
    else:
        parts.append("every one recovered with no row lost or duplicated")
    if disagree:
        parts.append(f"hudi-rs disagrees at {disagree}")
    if not bad and len(rows) < wanted:  # a subset can show a loss, not its absence
        parts.append(f"the other {wanted - len(rows)} were not run: run the whole matrix")
    passed = False if bad else (True if len(rows) >= wanted else None)
    return gate_row(name, GATE, READER, passed, len(rows), len(bad), lost, "rows lost or duplicated",
                    "; ".join(parts))
