"""``layoutbench service``: table services on an existing table, as Hudi's HoodieClusteringJob runs them.

Modes mirror ``HoodieClusteringJob --mode schedule | execute | scheduleAndExecute`` (any case),
plus ``clean`` and ``rollback`` (of inflight instants). ``--design clustering`` (Option 2, the
default, as HoodieClusteringJob) or ``compaction`` (Option 1's base-file compaction). Each mode is
one :class:`engines.maintenance_round.MaintenanceRound` (schedule, execute, clean), as Hudi's job
schedules, clusters and then cleans.

Configuration comes in Hudi's own keys (``--props FILE`` read as Hudi's DFSPropertiesConfiguration,
:mod:`bench.hudi_props`, then ``--hoodie-conf k=v``, the command line winning), through the one map
of :mod:`bench.hoodie_conf`; a key this service does not implement is refused, naming it, and so is
a sort column the table lacks. For clustering, the scheduling keys gate a schedule as
HoodieClusteringJob's (``hoodie.clustering.async.enabled=true`` with ``.async.max.commits=N``: no
plan before N commits followed the last clustering).

As Hudi's job (``UtilHelpers.retry``), ``--retry N`` re-runs the whole mode while it finds nothing
to do, at most N more times, and stops at the first exception. ``execute`` without
``--instant-time`` takes the earliest *requested* clustering plan (an inflight one is a failed
attempt: ``scheduleAndExecute --retry-last-failed-clustering-job`` takes the last of those, when it
started more than ``--job-max-processing-time-ms`` ago).
"""

from __future__ import annotations

import dataclasses
import json
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from bench.hoodie_conf import HoodieConfError, clustering_job_gates, named_columns, translate
from bench.hudi_props import PropsError, read_props
from engines.append_compaction.config import CompactionConfig
from engines.base import MaintenanceResult
from engines.clustering.config import ClusteringConfig
from engines.kinds import KINDS
from engines.maintenance_round import MaintenanceRound, Runs, earliest_pending
from engines.table.instants import parse_instant
from engines.table.lock import LockHeldError
from engines.table.properties import PROPERTIES_FILE
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, REPLACE, State

Mode = Literal["schedule", "execute", "scheduleAndExecute", "clean", "rollback"]
Design = Literal["clustering", "compaction"]
MODES: tuple[str, ...] = ("schedule", "execute", "scheduleAndExecute", "clean", "rollback")
HUDI_MODES: tuple[str, ...] = MODES[:3]  # HoodieClusteringJob's own; --retry re-runs these


class ServiceError(ValueError):
    """A service request that cannot be carried out: the message says why."""


class NothingToDo(ServiceError):
    """No plan to schedule or execute: HoodieClusteringJob's ``cluster()`` returns -1 here (its
    process still exits 0, logging "failed"); ours exits :data:`EXIT_NOTHING_TO_DO` and says why.
    ``retryable`` is False where Hudi throws instead (``execute`` with no scheduled plan), so
    ``--retry`` does not re-run it; ``attempts`` is how many times the mode ran."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.attempts = 1


EXIT_NOTHING_TO_DO = 4


def normalize_mode(mode: str) -> str:
    """A mode in any case (``SCHEDULEANDEXECUTE``, ``scheduleandexecute``) as :data:`MODES` spells it."""
    by_lower = {m.lower(): m for m in MODES}
    found = by_lower.get(mode.strip().lower())
    if found is None:
        raise ServiceError(f"--mode {mode}: expected one of {', '.join(MODES)} (any case)")
    return found


# The service's designs (a table service of ours) and the RFC design's kind that runs each, whose
# hoodie.* keys it takes (bench/hoodie_conf.py): the first kind of each service in the registry
# (reversed, so the first wins: Option 2's COPY_ON_WRITE kind, not its MERGE_ON_READ one).
DESIGN_KINDS: dict[str, str] = {k.service: name for name, k in reversed(KINDS.items()) if k.in_verdict and k.service}


def parse_conf(pairs: list[str], props: str | None) -> dict[str, str]:
    """The settings of ``--props FILE`` (Hudi's rules, :mod:`bench.hudi_props`), then each
    ``--hoodie-conf k=v`` (``=`` required, as Hudi's ``buildProperties``); a later one wins."""
    conf: dict[str, str] = {}
    if props is not None:
        try:
            conf |= {key: value for _, key, value in read_props(props)}
        except PropsError as exc:
            raise ServiceError(str(exc)) from None
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ServiceError(f"--hoodie-conf: expected key=value, got {pair!r}")
        conf[key.strip()] = value.strip()
    return conf


@dataclass
class ServiceRequest:
    """One service run, as HoodieClusteringJob's command line gives it."""

    base_path: str
    mode: Mode
    design: Design = "clustering"
    instant_time: str | None = None
    conf: dict[str, str] | None = None
    table_name: str | None = None  # --table-name: must be the table's hoodie.table.name
    retry: int = 0  # --retry: re-runs of the whole mode while it finds nothing to do
    retry_last_failed: bool = False  # --retry-last-failed-clustering-job: the last inflight plan first
    max_processing_time_ms: int = 0  # --job-max-processing-time-ms: an inflight plan younger is still running


def _split(fields: dict[str, Any], planner: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the planner config's fields, the engine's)."""
    names = {f.name for f in dataclasses.fields(planner)}
    return {k: v for k, v in fields.items() if k in names}, {k: v for k, v in fields.items() if k not in names}


def build_service_engine(table: HudiTable, design: Design, conf: dict[str, str]) -> Any:
    """The design's engine over ``table``, configured from Hudi keys (an unknown key is refused, named)."""
    try:
        if design == "clustering":
            conf, _ = clustering_job_gates(conf)
        fields = translate(DESIGN_KINDS[design], conf)
    except HoodieConfError as exc:
        raise ServiceError(f"--hoodie-conf {exc}") from None
    try:
        if design == "clustering":
            from engines.clustering.engine import ClusteringEngine, Option2Config

            planner, engine = _split(fields, ClusteringConfig)
            cfg = Option2Config(clustering=ClusteringConfig(**planner), **engine)
            return ClusteringEngine(table, cfg, name="service")
        from engines.append_compaction.engine import AppendCompactionEngine, Option1Config

        planner, engine = _split(fields, CompactionConfig)
        cfg1 = Option1Config(compaction=CompactionConfig(**planner), **engine)
        return AppendCompactionEngine(table, cfg1, name="service")
    except (TypeError, ValueError) as exc:
        raise ServiceError(f"{design} service config: {exc}") from None


def _held_by_gate(table: HudiTable, conf: dict[str, str]) -> str | None:
    """Why HoodieClusteringJob would not schedule now (too few commits since the last clustering
    for a gate the scheduling keys set), or None."""
    from engines.clustering.modes import commits_since_last_clustering

    _, gates = clustering_job_gates(conf)
    since = commits_since_last_clustering(table.refresh())
    for key, needed in gates.items():
        if since < needed:
            return f"not scheduled: {since} commits since the last clustering, {key}={needed}"
    return None


def check_table_properties(table: HudiTable) -> None:
    """Refuse a table whose ``hoodie.properties`` is corrupt, naming the file: no table name, no
    record key, or a ``hoodie.table.checksum`` that is not Hudi's CRC32 of ``<database>.<name>``."""
    props = table.properties
    where = f"{table.base_uri}/{PROPERTIES_FILE}"
    name = props.get("hoodie.table.name", "").strip()
    if not name:
        raise ServiceError(f"{where}: corrupt or not a Hudi properties file: no hoodie.table.name")
    if not props.get("hoodie.table.recordkey.fields", "").strip():
        raise ServiceError(f"{where}: corrupt: hoodie.table.recordkey.fields is empty (a table needs a record key)")
    stored = props.get("hoodie.table.checksum")
    if stored is not None:
        expected = zlib.crc32(f"{props.get('hoodie.database.name', '')}.{name}".encode())
        if stored.strip() != str(expected):
            raise ServiceError(f"{where}: corrupt: hoodie.table.checksum {stored} is not {expected}, the CRC32 of "
                               "hoodie.database.name.hoodie.table.name")


def table_columns(table: HudiTable) -> list[str] | None:
    """The data columns of the table's latest schema (Hudi's meta fields left out), or None when
    no commit records one."""
    schema = table.latest_schema()
    if not schema:
        return None
    try:
        fields = json.loads(schema).get("fields", [])
    except (ValueError, AttributeError):
        return None
    return [f["name"] for f in fields if not str(f.get("name", "")).startswith("_hoodie_")]


def check_sort_columns(table: HudiTable, design: Design, conf: dict[str, str]) -> None:
    """Refuse a column-valued key (the sort columns) naming a column the table lacks: our planner
    would plan nothing and Hudi's sort would fail inside Spark."""
    columns = table_columns(table)
    if columns is None:
        return
    fields = translate(DESIGN_KINDS[design], clustering_job_gates(conf)[0] if design == "clustering" else conf)
    for key, named in named_columns(DESIGN_KINDS[design], fields).items():
        missing = [c for c in named if c not in columns]
        if missing:  # named by the Hudi key the user gave, when one gave it
            given = next((k for k, v in conf.items() if set(missing) & {c.strip() for c in v.split(",")}), key)
            raise ServiceError(f"{given} names {missing}, not a column of the table at {table.base_uri}; "
                               f"its columns are {columns}")


def earliest_requested(table: HudiTable, action: str) -> str | None:
    """The earliest *requested* plan of ``action``: what HoodieClusteringJob ``--mode execute`` takes
    without ``--instant-time`` (an inflight plan is a failed or running attempt, not a scheduled one)."""
    requested = [i for i in table.refresh().pending([action]) if i.state == State.REQUESTED]
    return requested[0].timestamp if requested else None


def last_failed_plan(table: HudiTable, action: str, max_processing_time_ms: int,
                     now_ms: float | None = None) -> str | None:
    """HoodieClusteringJob's failed plan: the *last* inflight plan of ``action``, if it started more
    than ``max_processing_time_ms`` ago (else it may still be running); None otherwise."""
    inflight = [i for i in table.refresh().pending([action]) if i.state == State.INFLIGHT]
    if not inflight:
        return None
    started_ms = parse_instant(inflight[-1].timestamp).timestamp() * 1000
    now = time.time() * 1000 if now_ms is None else now_ms
    return inflight[-1].timestamp if started_ms + max_processing_time_ms < now else None


def _executed(engine: Any, instant: str) -> list[MaintenanceResult | str]:
    """One round that executes ``instant`` and then cleans, as Hudi's ``cluster(instant)`` then ``clean``."""
    rnd = MaintenanceRound(engine, Runs.NEW)
    rnd.next_plan = instant  # the plan to execute is chosen here, not by the round's schedule step
    rnd.execute()
    rnd.clean()
    return list(rnd.results)


def _attempt(req: ServiceRequest, table: HudiTable, engine: Any) -> list[MaintenanceResult | str]:
    """The mode, once: what it did; :class:`NothingToDo` when it found nothing to do."""
    action = REPLACE if req.design == "clustering" else COMPACTION
    if req.mode == "execute":
        instant = req.instant_time or (earliest_requested(table, action) if req.design == "clustering"
                                       else earliest_pending(table, [action]))
        if instant is None:  # Hudi throws here ("There is no scheduled clustering"): no retry
            state = " in the requested state" if req.design == "clustering" else ""
            raise NothingToDo(f"no pending {req.design} plan{state} on {req.base_path}: nothing to "
                              "execute (run --mode schedule first; --mode scheduleAndExecute "
                              "--retry-last-failed-clustering-job re-runs a failed, inflight one)", retryable=False)
        return _executed(engine, instant)
    if req.mode in ("schedule", "scheduleAndExecute"):
        if req.mode == "scheduleAndExecute" and req.retry_last_failed:
            failed = last_failed_plan(table, action, req.max_processing_time_ms)
            if failed is not None:  # rolled back and executed again instead of a new plan
                return [f"retrying the failed plan {failed}", *_executed(engine, failed)]
        held = _held_by_gate(table, req.conf or {}) if req.design == "clustering" else None
        if held:
            raise NothingToDo(held)
        rnd = MaintenanceRound(engine, Runs.NEW)
        instant = rnd.schedule()
        if instant is None:
            raise NothingToDo(f"no {req.design} plan scheduled on {req.base_path}: nothing is eligible")
        if req.mode == "schedule":
            return [instant]
        rnd.execute()
        rnd.clean()
        return [f"scheduled {instant}", *rnd.results]
    if req.mode == "clean":
        cleaned = MaintenanceRound(engine, Runs.NEW).clean()
        return [cleaned] if cleaned is not None else []
    from engines.table.rollback import recover

    return [f"rolled back {r.rolled_back} ({r.action})" for r in recover(table)]


def _open(req: ServiceRequest) -> HudiTable:
    """The table, checked before anything is written: it opens, its properties are sound, its name
    is ``--table-name``."""
    try:
        table = HudiTable.open(req.base_path)
    except Exception as exc:
        raise ServiceError(f"--base-path {req.base_path}: {' '.join(str(exc).split())}") from None
    check_table_properties(table)
    name = table.properties.get("hoodie.table.name")
    if req.table_name is not None and req.table_name != name:
        raise ServiceError(f"--table-name {req.table_name}: the table at {req.base_path} is named {name!r} "
                           "(hoodie.table.name)")
    return table


def _check_instant(req: ServiceRequest, table: HudiTable) -> None:
    if req.instant_time is None:
        return
    if req.mode != "execute":
        raise ServiceError(f"--instant-time is for --mode execute (a pending plan), not {req.mode}")
    inst = table.refresh().get(req.instant_time)
    if inst is None:
        raise ServiceError(f"--instant-time {req.instant_time}: no such instant on {req.base_path}")
    if inst.state == State.COMPLETED:
        raise ServiceError(f"--instant-time {req.instant_time}: already completed ({inst.action}); "
                           "only a pending plan can be executed")
    action = REPLACE if req.design == "clustering" else COMPACTION
    if inst.action != action:
        raise ServiceError(f"--instant-time {req.instant_time}: a pending {inst.action}, not a {req.design} plan")


OnAttempt = Callable[[int, NothingToDo], None]


def run_service(req: ServiceRequest, on_attempt: OnAttempt | None = None) -> list[MaintenanceResult | str]:
    """Carry out one service request; what it did (maintenance results, or lines saying what it
    scheduled or retried). As HoodieClusteringJob's ``UtilHelpers.retry``: the mode runs again while
    it finds nothing to do, at most ``req.retry`` more times (``on_attempt(n, why)`` after each such
    attempt), and an exception stops it. :class:`NothingToDo` when the last attempt found nothing.
    The table's writer lock is held for each attempt (a locked table is refused before anything is
    written) and released between attempts."""
    req.mode = normalize_mode(req.mode)  # type: ignore[assignment]
    table = _open(req)
    engine = build_service_engine(table, req.design, req.conf or {})
    _check_instant(req, table)
    if req.mode in HUDI_MODES and req.design == "clustering":
        check_sort_columns(table, req.design, req.conf or {})
    attempt = 0
    while True:
        attempt += 1
        try:
            try:
                table.lock.acquire()
            except LockHeldError as exc:
                raise ServiceError(f"--base-path {req.base_path}: {exc}") from None
            try:
                done = _attempt(req, table, engine)
            finally:
                table.lock.release()
        except NothingToDo as exc:
            exc.attempts = attempt
            if on_attempt is not None:
                on_attempt(attempt, exc)
            if not exc.retryable or req.mode not in HUDI_MODES or attempt > req.retry:
                raise
            continue
        return done if attempt == 1 else [f"attempt {attempt} of {req.retry + 1} did it", *done]
