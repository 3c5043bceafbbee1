"""``layoutbench service``: table services on an existing table, as Hudi's HoodieClusteringJob runs them.

Modes mirror ``HoodieClusteringJob --mode schedule | execute | scheduleAndExecute``, plus ``clean``
and ``rollback`` (of inflight instants). ``--design clustering`` (Option 2, the default, as
HoodieClusteringJob) or ``compaction`` (Option 1's base-file compaction). Configuration comes in
Hudi's own keys (``--hoodie-conf k=v``, repeatable, or ``--props FILE`` of ``k=v`` lines, the
command line winning), through the one map of :mod:`bench.hoodie_conf`; a key this service does
not implement is refused, naming it. For clustering, the scheduling keys gate a schedule as
HoodieClusteringJob's (``hoodie.clustering.async.enabled=true`` with ``.async.max.commits=N``:
no plan before N commits followed the last clustering).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from bench.hoodie_conf import HoodieConfError, clustering_job_gates, translate
from engines.append_compaction.config import CompactionConfig
from engines.base import MaintenanceResult
from engines.clustering.config import ClusteringConfig
from engines.kinds import KINDS
from engines.maintenance_round import MaintenanceRound, Runs
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, REPLACE, State

Mode = Literal["schedule", "execute", "scheduleAndExecute", "clean", "rollback"]
Design = Literal["clustering", "compaction"]
MODES: tuple[str, ...] = ("schedule", "execute", "scheduleAndExecute", "clean", "rollback")


class ServiceError(ValueError):
    """A service request that cannot be carried out: the message says why."""


class NothingToDo(ServiceError):
    """No plan to schedule or execute: HoodieClusteringJob's ``cluster()`` returns -1 here; the command
    exits with :data:`EXIT_NOTHING_TO_DO` and says why."""


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
    """``k=v`` pairs from ``--props FILE`` (``#`` comments and blank lines skipped), then ``--hoodie-conf``."""
    lines: list[tuple[str, str]] = []
    if props is not None:
        path = Path(props)
        if not path.is_file():
            raise ServiceError(f"--props {props}: no such file")
        lines += [(f"{props}:{i}", ln.strip()) for i, ln in enumerate(path.read_text().splitlines(), 1)
                  if ln.strip() and not ln.strip().startswith("#")]
    lines += [("--hoodie-conf", p) for p in pairs]
    conf: dict[str, str] = {}
    for where, line in lines:
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ServiceError(f"{where}: expected key=value, got {line!r}")
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
    retry: int = 0  # --retry: executions retried after a failure (each retry rolls the failed attempt back)
    retry_last_failed: bool = False  # --retry-last-failed-clustering-job: run a pending plan before scheduling


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


def _with_retries(req: ServiceRequest, run: Any) -> Any:
    """``run()``, retried ``req.retry`` more times when it raises (the executor rolls a failed attempt back)."""
    for attempt in range(req.retry + 1):
        try:
            return run()
        except ServiceError:
            raise
        except Exception:
            if attempt == req.retry:
                raise
    return None


def run_service(req: ServiceRequest) -> list[MaintenanceResult | str]:
    """Carry out one service request; what it did (maintenance results, or the scheduled instant).
    :class:`NothingToDo` when there is no plan to schedule or execute."""
    req.mode = normalize_mode(req.mode)  # type: ignore[assignment]
    try:
        table = HudiTable.open(req.base_path)
    except Exception as exc:
        raise ServiceError(f"--base-path {req.base_path}: {exc}") from None
    name = table.properties.get("hoodie.table.name")
    if req.table_name is not None and req.table_name != name:
        raise ServiceError(f"--table-name {req.table_name}: the table at {req.base_path} is named {name!r} "
                           "(hoodie.table.name)")
    engine = build_service_engine(table, req.design, req.conf or {})
    action = REPLACE if req.design == "clustering" else COMPACTION
    if req.instant_time is not None:
        if req.mode != "execute":
            raise ServiceError(f"--instant-time is for --mode execute (a pending plan), not {req.mode}")
        inst = table.refresh().get(req.instant_time)
        if inst is None:
            raise ServiceError(f"--instant-time {req.instant_time}: no such instant on {req.base_path}")
        if inst.state == State.COMPLETED:
            raise ServiceError(f"--instant-time {req.instant_time}: already completed ({inst.action}); "
                               "only a pending plan can be executed")
        if inst.action != action:
            raise ServiceError(f"--instant-time {req.instant_time}: a pending {inst.action}, not a {req.design} plan")
    if req.mode == "scheduleAndExecute" and req.retry_last_failed and (failed := engine.pending_plan()):
        # as HoodieClusteringJob --retry-last-failed-clustering-job: the last failed plan runs instead of a new one
        res = _with_retries(req, lambda: engine.execute(failed))
        return [r for r in (res, engine.clean()) if r is not None]
    if req.mode in ("schedule", "scheduleAndExecute") and req.design == "clustering":
        held = _held_by_gate(table, req.conf or {})
        if held:
            raise NothingToDo(held)
    if req.mode == "schedule":
        instant = engine.schedule()
        if instant is None:
            raise NothingToDo(f"no {req.design} plan scheduled on {req.base_path}: nothing is eligible")
        return [instant]
    if req.mode == "execute":
        instant = req.instant_time or engine.pending_plan()
        if instant is None:
            raise NothingToDo(f"no pending {req.design} plan on {req.base_path}: nothing to execute "
                              "(run --mode schedule first)")
        res = _with_retries(req, lambda: engine.execute(instant))
        return [res] if res is not None else []
    if req.mode == "scheduleAndExecute":  # as HoodieClusteringJob: no plan scheduled, no execute and no clean
        rnd = MaintenanceRound(engine, Runs.NEW)
        instant = rnd.schedule()
        if instant is None:
            raise NothingToDo(f"no {req.design} plan scheduled on {req.base_path}: nothing is eligible")
        retried: list[MaintenanceResult | str] = []
        try:
            rnd.execute()
        except Exception:
            if req.retry == 0:
                raise
            res = _with_retries(replace(req, retry=req.retry - 1), lambda: engine.execute(instant))
            retried = [res] if res is not None else []
        rnd.clean()
        return [*retried, *rnd.results]
    if req.mode == "clean":
        res = engine.clean()
        return [res] if res is not None else []
    from engines.table.rollback import recover

    return [f"rolled back {r.rolled_back} ({r.action})" for r in recover(table)]
