"""The unit of every column of every results table, and ``docs/results.md`` generated from them.

A column name means one thing in every table that has it, with one unit; the few that differ by
table are in :data:`BY_TABLE`. ``tests/test_results_units.py`` checks that every column of
:data:`runresults.TABLES` has a unit and that the checked-in ``docs/results.md`` is current
(``python -m runresults.units > docs/results.md``).
"""

from __future__ import annotations

import re

from runresults import TABLES

S, B, N, X = "seconds", "bytes", "count", "ratio (dimensionless)"
TEXT, FLAG, ID = "text", "true / false", "identifier"

UNITS: dict[str, str] = {
    "action": "Hudi timeline action (commit, replacecommit, ...)", "arrived": "landing files",
    "backlog_batches": "batches", "backlog_s": S, "batch": "batch index (0-based)", "batch_bytes": B,
    "bytes_read": B, "bytes_written": B, "checked": N, "checkpoint": "batch index (0-based)", "committed": "batches",
    "context": TEXT, "count": "requests", "cum_batch_bytes": B, "cum_bytes_written": B, "detail": TEXT,
    "details": "JSON text", "duration_s": S, "ended_s": "seconds since the run (stream) or race started",
    "engine": ID, "error": TEXT, "expected": TEXT, "failures": N, "figure": "number (unit in figure_unit)",
    "figure_unit": TEXT, "file_id": ID, "files": "files", "files_deleted": "files", "files_in": "files",
    "files_out": "files", "files_pruned": "files", "files_replaced": "files", "files_scanned": "files",
    "files_total": "files", "files_written": "files", "final_backlog_s": S, "freshness_s": S, "gate": TEXT,
    "got": TEXT, "hudi_rs_agrees": FLAG, "ingest_s": S, "inline_maintenance_s": S,
    "instant": "17-digit Hudi instant time", "kind": TEXT, "lag_slope": "seconds of backlog per second",
    "late_rows": "rows", "latency_s": S, "log_bytes_merged": B, "log_files_merged": "files",
    "ro_latency_s": S + " (the read-optimized view: base files only)", "live": FLAG, "live_bytes": B, "live_files": "files",
    "maintenance_instant": "17-digit Hudi instant time", "maintenance_running": FLAG, "mean_file_bytes": B,
    "metadata_bytes": B, "micro_batch": "Spark micro-batch id", "mode": TEXT, "object": TEXT,
    "oldest_freshness_s": S, "op": "request type (GET, PUT, LIST, HEAD, ...)", "operation": TEXT,
    "outcome": "ok / failed / wrong", "partition": "partition path", "passed": "true / false / null (n/a)",
    "path": "path relative to the table", "phase": TEXT, "plan_s": S, "planning_s": S, "execution_s": S, "write_s": S, "commit_s": S, "physical_bytes": B, "physical_files": "files",
    "point": "fault-injection point name", "position": "order within the round (0-based)",
    "processed_per_s": "batches per second", "quarantined": "landing file names", "query": ID,
    "query_failures": "queries", "rate": "batches per second", "reader": ID, "records": "rows",
    "records_per_s": "rows per second", "records_written": "rows", "recovered": FLAG,
    "repeat": "repetition (0-based)", "replayed": FLAG, "request_bytes": B, "response_bytes": B,
    "result_rows": "rows", "round": "round (0-based)", "row_groups_scanned": "Parquet row groups",
    "row_groups_total": "Parquet row groups", "rows": "rows", "rows_duplicated": "rows", "rows_lost": "rows",
    "rows_scanned": "rows", "run": "0 = cold, 1.. = warm (queries); run label (stream)", "seq": "order (1-based)",
    "size_bytes": B, "small_files": "files", "space_amp": X + ": bytes on storage / live bytes",
    "store_requests": "requests", "store_get": "requests", "store_head": "requests", "store_list": "requests",
    "started_s": "seconds since the run (stream) or race started", "step": "rate-search step (0-based)",
    "sustained": FLAG, "t_s": "seconds since the stream started", "throttled": "requests (HTTP 503)",
    "verified": FLAG, "wa": X + ": data bytes written / batch bytes", "wall_s": S,
}
BY_TABLE: dict[tuple[str, str], str] = {
    ("stream", "batches"): "generator batch indexes (text)",
    ("stream_rates", "batches"): "batches",
    ("queries", "run"): "0 = cold, 1.. = warm",
    ("stream", "run"): "fixed, or rate:<batches per second>",
    ("stream_lag", "run"): "fixed, or rate:<batches per second>",
}


# ``sweep.parquet`` (``layoutbench sweep``, a folder of its own): one row per grid point and engine. Its
# columns are the sweep's axes (those of bench/simulate/sweep.py's and production_map.py's PARAMETERS
# that the sweep file varies), engine and kind, the criteria (:data:`runresults.SWEEP_CRITERIA`), and on
# the fast path (``method: fast``) the replay's statement. tests/test_results_units.py runs real sweeps
# and checks that every column they write is here.
SWEEP_UNITS: dict[str, str] = {
    # axes
    "batch_mb": "MB per batch", "partitions": "partitions", "late_fraction": "share of rows (0-1)",
    "maintenance_every": "commits", "small_file_limit_mb": "MB", "target_file_mb": "MB",
    "cleaner_retention": "commits", "query_window_hours": "hours", "partitions_per_year": "partitions a year",
    "update_fraction": "share of each batch's rows (0-1)", "horizon_days": "days",
    "queries_per_hour": "query suites per hour", "store": "local / s3",
    "engine": ID, "kind": "engine kind",
    # criteria (lower is better; the first is the choice's)
    "usd_per_tb": "$ per TB ingested (TB = 10^12 bytes)", "wa": X + ": data bytes written / batch bytes",
    "live_files": "files", "space_amp_peak": X + ": bytes on storage / live bytes (peak)",
    "write_s": "seconds (simulated: ingest + maintenance)", "query_files": "files (the suite, final checkpoint)",
    "query_s": "seconds (simulated: the suite, final checkpoint)",
    # the fast path's figures and statement
    "bytes_written": B, "requests_usd": "$ over the horizon (object-store requests; 0 on local disk)",
    "replayed_batches": "batches", "window_batches": "batches", "replay_start": "batch index (0-based)",
    "horizon_batches": "batches", "periodic": FLAG, "window_fitted": FLAG,
    "replay_s": "seconds (wall, the shared replay)",
}


def unit_of(table: str, column: str) -> str:
    """The unit of ``table.column`` (KeyError when the column has none: a test forbids that)."""
    return BY_TABLE.get((table, column)) or UNITS[column]


def _table_notes() -> dict[str, str]:
    """Each table's one-paragraph description, from the results module's docstring."""
    import runresults

    doc = runresults.__doc__ or ""
    notes = {}
    for m in re.finditer(r"^- ``(\w+)``(?: \([^)]*\))?: (.*?)(?=^- ``|^\S|\Z)", doc, re.S | re.M):
        notes[m.group(1)] = " ".join(m.group(2).split())
    return notes


def results_doc() -> str:
    """``docs/results.md``: every table, its description, and each column's type and unit."""
    notes = _table_notes()
    parts = ["# The results format\n",
             "Generated by `python -m runresults.units > docs/results.md` from `runresults` (a test checks it is "
             "current). A run is `results/<run-id>/run.json` plus one Parquet file per table below; a table with "
             "no rows is written with its schema.\n",
             "`run.json` holds the scenario as run, the seed, the git SHA, package versions, the machine, absolute "
             "table paths, the verification, the harness's overhead, the run's profile (wall seconds per phase "
             "and engine, `profile.phases_s`; the write jobs run in the driver or as Spark tasks, with the gate's "
             "reason, `profile.routes`) and, for a design review, `review` (T17: per candidate its gates, "
             "its cost ledger and the choice), `load` (the 1-minute load average and the tables' bytes sampled "
             "during the run, their min / mean / max and peak) and `scale_wa` (per engine its batches, small-file "
             "limit and closed-form WA; for an engine that ran a stated prefix, the simulator's WA at the prefix and "
             "over every batch). Spark's own output (Ivy's package resolution, warnings and "
             "errors, Python workers' stderr) goes to `spark.log` in the same folder; a failed step's traceback "
             "to `error.log`. Tables are kept under `results/<run-id>/tables/<engine>` for `layoutbench inspect`, "
             "hudi-rs or Spark unless `--no-keep-tables` or the scenario's `keep_tables: false` (then each "
             "engine's tables are removed once its figures are taken). While a run goes, the rows so far are "
             "written every minute and after each checkpoint, with a `run.json` that holds `incomplete` (batches "
             "done of the run's, per engine, and when; WA is derived when the run ends): a run cut off keeps what "
             "it measured (`bench/partial_results.py`); the finished run replaces them, each file whole.\n"]
    for table, schema in TABLES.items():
        parts.append(f"## `{table}`\n")
        if table in notes:
            parts.append(notes[table] + "\n")
        parts += ["| column | type | unit |", "|---|---|---|"]
        parts += [f"| `{f.name}` | {f.type} | {unit_of(table, f.name)} |" for f in schema]
        parts.append("")
    parts += ["## `sweep.parquet` (`layoutbench sweep`)\n",
              "A sweep writes a folder of its own: `sweep.parquet`, one row per grid point and engine, and "
              "`sweep.json` (the sweep file, its resolved values and axes, the criteria, timing, machine, git "
              "SHA, the gates' exclusions and, on the fast path, `fast_path`: the replays' statement), then "
              "`map.md`. The row holds the axes the sweep file varies (any of the axes below), `engine` and "
              "`kind`, the criteria, and on the fast path (`method: fast`) the columns after `query_s`.\n",
              "| column | unit |", "|---|---|"]
    parts += [f"| `{c}` | {u} |" for c, u in SWEEP_UNITS.items()]
    parts.append("")
    return "\n".join(parts)


if __name__ == "__main__":
    print(results_doc(), end="")
