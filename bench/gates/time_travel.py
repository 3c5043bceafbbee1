"""The time-travel gate: an as-of read at every instant inside the cleaner's retention returns that
instant's ground-truth rows (count and key checksum: the batches ingested at or before it; with
corrections, each key at the version the upserts committed by then gave it, read from its message).

The retention is the scenario's promise, ``hoodie.cleaner.commits.retained`` (KEEP_LATEST_COMMITS):
the latest that many completed data instants of the run, whatever each engine's cleaner did. Readers:
ours (our file-system view's ``snapshot(as_of)``) and hudi-rs (its file slices as of the instant,
``get_file_slices``) at every one of them, each base file's keys read once; hudi-rs's full read and
Apache Hudi's (``as.of.instant``) at the earliest, the one before the latest maintenance run among
them and the latest; Delta tables: delta-rs at each version of the window. The figure is the number of instants wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.gates.history import EngineHistory
from bench.gates.readers import (
    APACHE_HUDI,
    DELTA_RS,
    HUDI_RS,
    KEY,
    MESSAGE,
    OURS,
    FileKeySums,
    HudiRsSlices,
    OurReader,
    ReadError,
    apache_hudi_key_sum,
    columns,
    delta_rs_key_sum,
    hudi_rs_read,
)
from bench.gates.truth import KeySum
from engines.table.table import HudiTable

GATE = "time_travel"
UNIT = "instants wrong"


def retained_instants(history: EngineHistory, retained: int) -> list[str]:
    """The completed data instants an as-of read is promised: the latest ``retained``."""
    return history.instants[-retained:]


def spark_sample(history: EngineHistory, window: list[str]) -> list[str]:
    """Apache Hudi's as-of instants: the earliest and latest of ``window``, and the instant before
    the latest maintenance run in it (the read a rewrite most easily breaks)."""
    if not window:
        return []
    out = {window[0], window[-1]}
    runs = [m for m in history.maintenance if m in set(window[1:])]
    if runs:
        before = history.before(runs[-1])
        if before is not None and before in window:
            out.add(before)
    return sorted(out)


def check_instants(history: EngineHistory, instants: list[str], read: Callable[[str], KeySum],
                   first_only: bool = False) -> list[str]:
    """One message per instant whose read differs from the ground truth (or fails); ``first_only``:
    stop at the first such instant (a reader whose every read is a Spark job)."""
    wrong: list[str] = []
    for t in instants:
        if first_only and wrong:
            break
        expected = history.as_of(t)
        try:
            got = read(t)
        except ReadError as exc:
            wrong.append(f"{t}: {exc}")
            continue
        if got != expected:
            wrong.append(f"{t}: {got.rows} rows (key checksum {'equal' if got.key_sum == expected.key_sum else 'differs'}),"
                         f" expected {expected.rows}")
    return wrong


def _hudi_rs_key_sum(base_uri: str, versions: bool = False) -> Callable[[str], KeySum]:
    def read(as_of: str) -> KeySum:
        rows = hudi_rs_read(base_uri, columns(versions), as_of=as_of)
        return KeySum.of_keys(rows.column(KEY), rows.column(MESSAGE) if versions else None)
    return read


def gate_rows(engine: str, table: HudiTable, history: EngineHistory, retained: int, spark: Any | None,
              readers: tuple[str, ...] = (OURS, HUDI_RS, APACHE_HUDI)) -> list[dict[str, Any]]:
    """The time-travel gate on one Hudi-format table, one row per reader: ours and hudi-rs's file
    slices at every instant of the window (each base file's keys read once), hudi-rs's full read and
    Apache Hudi's at :func:`spark_sample`'s instants."""
    window = retained_instants(history, retained)
    sample = spark_sample(history, window)
    versions = history.truth.has_updates  # with corrections: every key at its version as of the instant
    files = FileKeySums(table, versions)
    rows = []
    for reader in readers:
        if reader == APACHE_HUDI:
            if spark is None:
                rows.append(_row(engine, reader, None, 0, [], "n/a: the run's Spark session has no Apache Hudi bundle"))
                continue
            wrong = check_instants(history, sample, lambda t: apache_hudi_key_sum(spark, table.base_uri, as_of=t,
                                                                                  versions=versions),
                                   first_only=True)
            what = f"as.of.instant at {_span(sample)}"
            checked = len(sample)
            if wrong and wrong[0].split(":", 1)[0] != sample[-1]:
                checked = sample.index(wrong[0].split(":", 1)[0]) + 1
                what += f" (stopped at the first wrong instant: {checked} read)"
        elif reader == HUDI_RS:
            wrong = check_instants(history, window, HudiRsSlices(table, files).key_sum)
            wrong += [f"full read {w}" for w in check_instants(history, sample, _hudi_rs_key_sum(table.base_uri, versions))]
            what = f"file slices as of {_span(window)}, full reads at {_span(sample)}"
            checked = len(window) + len(sample)
        else:
            wrong = check_instants(history, window, OurReader(table, files).key_sum)
            what = f"view.snapshot(as_of) at {_span(window)}"
            checked = len(window)
        rows.append(_row(engine, reader, not wrong, checked, wrong,
                         f"{what}: " + ("all equal the ground truth" if not wrong else "; ".join(wrong[:3]))))
    return rows


def delta_gate_rows(engine: str, path: str, history: EngineHistory, retained: int, key: str,
                    storage_options: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Delta time travel: delta-rs reads each version of the window (a version is the instant
    ``version_instant`` names, 17 digits)."""
    window = retained_instants(history, retained)
    wrong = check_instants(history, window, lambda t: delta_rs_key_sum(path, int(t), key, storage_options,
                                                                       history.truth.has_updates))
    return [_row(engine, DELTA_RS, not wrong, len(window), wrong,
                 f"delta-rs reads of versions {_span(window)}: " + ("all equal the ground truth" if not wrong
                                                                   else "; ".join(wrong[:3])))]


def _span(instants: list[str]) -> str:
    if not instants:
        return "no instant"
    return f"{len(instants)} instants {instants[0]}..{instants[-1]}" if len(instants) > 1 else instants[0]


def _row(engine: str, reader: str, passed: bool | None, checked: int, wrong: list[str], detail: str) -> dict[str, Any]:
    return {"engine": engine, "gate": GATE, "reader": reader, "passed": passed, "checked": checked,
            "failures": len(wrong), "figure": float(len(wrong)) if passed is not None else None,
            "figure_unit": UNIT, "detail": detail}
