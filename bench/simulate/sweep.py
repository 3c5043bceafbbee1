"""``layoutbench sweep SWEEP.yaml``: the calibrated simulator over a grid of workload and config
parameters, and which RFC design is chosen at each grid point, by the verdict's rules.

A sweep file names a base scenario and, per parameter, the values to try (a list, or
``{from, to, steps, scale}``). Each grid point is the base scenario with those values applied
(validated like any scenario), simulated in memory (:func:`bench.simulate.simulator.run_simulation`).
Per point and engine the figures of :data:`runresults.SWEEP_CRITERIA` are kept, the ledger's
$ per TB ingested first (:mod:`runresults.plain_ledger`); :mod:`reports.map_winners` turns them
into choices and crossovers: whole candidates, each design represented by its cheapest, a
difference inside the margin "equivalent".

The required gates: with ``--gates RUN`` (a run's results folder with its ``gates`` table), a
candidate that failed a gate the run's scenario requires (``review.requires``, default all) is left
out of the map, and ``sweep.json`` says which and why.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bench.scenario import Scenario, ScenarioError, load_scenario
from bench.simulate.costmodel import CostModel
from bench.simulate.production_map import DEFAULTS as FAST_DEFAULTS
from bench.simulate.production_map import PARAMETERS as FAST_PARAMETERS
from bench.simulate.production_map import Settings, point_problems, run_points
from bench.simulate.simulator import RowSink, run_simulation
from runresults import SWEEP_CRITERIA as CRITERIA
from runresults import SWEEP_RUN, SWEEP_TABLE
from runresults.plain_ledger import DEFAULT_MARGIN, failed_gates, ledger, required_gates


class SweepError(ValueError):
    """A sweep file that cannot run; the message names the field."""


@dataclass(frozen=True)
class Parameter:
    """A sweep axis: where it goes in a scenario document and what it means."""

    description: str
    apply: Callable[[dict[str, Any], Any], None]
    integer: bool = False


def _set(*path: str) -> Callable[[dict[str, Any], Any], None]:
    def apply(doc: dict[str, Any], value: Any) -> None:
        node = doc
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return apply


def _batch_mb(doc: dict[str, Any], value: Any) -> None:
    doc["workload"]["batch_mb"] = value
    doc["workload"]["batch_records"] = None


def _target(doc: dict[str, Any], value: Any) -> None:
    doc["sizing"]["target_file_mb"] = value
    doc["sizing"]["max_file_mb"] = value


PARAMETERS: dict[str, Parameter] = {
    "batch_mb": Parameter("MB per ingested batch", _batch_mb),
    "partitions": Parameter("partitions the run's time spans (fewer batches, so less data, per partition)",
                            _set("workload", "num_partitions"), integer=True),
    "late_fraction": Parameter("share of rows arriving in an earlier partition", _set("workload", "late_fraction")),
    "maintenance_every": Parameter("commits between maintenance runs", _set("maintenance", "every_commits"),
                                   integer=True),
    "small_file_limit_mb": Parameter("small-file limit (MB)", _set("sizing", "small_file_limit_mb")),
    "target_file_mb": Parameter("target and max file size (MB)", _target),
    "cleaner_retention": Parameter("commits the cleaner retains", _set("sizing", "cleaner_commits_retained"),
                                   integer=True),
    "query_window_hours": Parameter("the selective query's time window (hours): its selectivity",
                                    _set("queries", "service_window_hours")),
}


WORKLOAD_PARAMETERS = ("batch_mb", "partitions", "late_fraction")
INTEGER_PARAMETERS = {n for n, p in PARAMETERS.items() if p.integer} | {
    "partitions_per_year", "maintenance_every", "cleaner_retention"}


class Range(BaseModel):
    """``steps`` values from ``from`` to ``to`` (both included), evenly on a linear or log scale."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: float = Field(alias="from")
    stop: float = Field(alias="to")
    steps: int = Field(ge=1, le=1000)
    scale: Literal["linear", "log"] = "linear"

    def values(self) -> list[float]:
        if self.steps == 1:
            return [self.start]
        if self.scale == "log":
            if self.start <= 0 or self.stop <= 0:
                raise ValueError("a log scale needs from and to above 0")
            lo, hi = math.log(self.start), math.log(self.stop)
            return [round(math.exp(lo + (hi - lo) * i / (self.steps - 1)), 6) for i in range(self.steps)]
        return [round(self.start + (self.stop - self.start) * i / (self.steps - 1), 6) for i in range(self.steps)]


class SweepSpec(BaseModel):
    """A validated sweep file."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = ""
    base: str
    calibration: str | None = None
    # "simulate": every point replays every batch; "fast": the production map's fast path
    # (bench.simulate.production_map: one replay per replay key, the horizon in closed form)
    method: Literal["simulate", "fast"] = "simulate"
    store_calibration: str | None = None  # fast: the request model and first-byte share of the S3 points
    batches_per_hour: float = Field(60.0, gt=0)  # fast: the ingest rate of every point
    latency_ms: float = Field(20.0, ge=0, le=5000)  # fast: the S3 points' first-byte latency
    replay_cap: int = Field(400, ge=8, le=100_000)  # fast: batches replayed per replay key at first
    # fast: a replay that is not periodic within replay_cap is replayed again up to this many batches
    # (None: replay_cap), its window fitted to the steady state (production_map.fit_window)
    replay_max: int | None = Field(None, ge=8, le=100_000)
    # fast: batches a replay with corrections (update_fraction > 0) takes, at most (None: replay_cap, replay_max):
    # every copy-on-write upsert rewrites a share of the whole table, so such a replay costs ~ batches x files
    corrections_replay_cap: int | None = Field(None, ge=8, le=100_000)
    parameters: dict[str, list[float | str] | Range]
    axes: list[str] | None = None
    workers: int | None = Field(None, ge=1, le=64)
    # a difference inside it is "equivalent" (default: the base scenario's review.margin, else 5%)
    margin: float | None = Field(None, gt=0, lt=1)

    @field_validator("parameters")
    @classmethod
    def _known(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not v:
            raise ValueError("no parameters: name at least one of " + ", ".join(PARAMETERS))
        known = set(PARAMETERS) | set(FAST_PARAMETERS)
        unknown = sorted(k for k in v if k not in known)
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; known: {sorted(known)}")
        for k, values in v.items():
            if isinstance(values, list) and not values:
                raise ValueError(f"{k}: empty list of values")
        return v


@dataclass
class Grid:
    """The sweep resolved: its base scenario, each parameter's values and every point's scenario."""

    spec: SweepSpec
    base: Scenario
    values: dict[str, list[Any]]
    axes: tuple[str, str | None]
    calibration: Path | None
    margin: float = DEFAULT_MARGIN
    excluded: dict[str, str] = field(default_factory=dict)  # engine -> the required gate it failed at the run
    gates_run: str | None = None
    required: list[str] = field(default_factory=list)
    statement: dict[str, Any] = field(default_factory=dict)  # how the points were computed (the fast path's)
    store_calibration: Path | None = None

    @property
    def fast(self) -> bool:
        return self.spec.method == "fast"

    def points(self) -> list[dict[str, Any]]:
        names = list(self.values)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*self.values.values())]

    def base_values(self) -> dict[str, Any]:
        """Each parameter's value nearest the base scenario's (the line the crossovers are read on)."""
        if self.fast:
            return {name: min(values, key=lambda v: _distance(v, FAST_DEFAULTS[name]))
                    for name, values in self.values.items()}
        doc = self.base.model_dump(mode="json")
        out = {}
        for name, values in self.values.items():
            probe = _blank_doc()
            PARAMETERS[name].apply(probe, "__probe__")
            current = _lookup(doc, probe)
            out[name] = min(values, key=lambda v: abs(v - current)) if isinstance(current, int | float) \
                else values[len(values) // 2]
        return out

    def scenario(self, point: dict[str, Any]) -> Scenario:
        """The base scenario with ``point``'s values (one :class:`SweepError` naming the field if impossible)."""
        doc = self.base.model_dump(mode="json")
        doc["name"] = f"{self.base.name}_sweep"
        for name, value in point.items():
            PARAMETERS[name].apply(doc, value)
        try:
            return Scenario.model_validate(doc)
        except ValidationError as exc:
            where = ", ".join(f"{k}={v}" for k, v in point.items())
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise SweepError(f"sweep {self.spec.name}: the point {where} is not a valid scenario: {problems}") from None


def _distance(v: Any, to: Any) -> float:
    if isinstance(v, str) or isinstance(to, str):
        return 0.0 if v == to else 1.0
    return abs(math.log(max(float(v), 1e-9) / max(float(to), 1e-9)))


def _blank_doc() -> dict[str, Any]:
    return {"workload": {}, "sizing": {}, "maintenance": {}, "queries": {}}


def _lookup(doc: dict[str, Any], probe: dict[str, Any]) -> Any:
    """The value in ``doc`` at the path where ``probe`` holds ``"__probe__"``."""
    for key, sub in probe.items():
        if sub == "__probe__":
            return doc.get(key)
        if isinstance(sub, dict) and sub:
            found = _lookup(doc.get(key) or {}, sub)
            if found is not None:
                return found
    return None


def _margin(spec: SweepSpec, base: Scenario) -> float:
    if spec.margin is not None:
        return spec.margin
    review = getattr(base, "review", None)
    return float(getattr(review, "margin", None) or DEFAULT_MARGIN)


def _gates(path: Path, base: Scenario, gates_run: str | Path) -> tuple[Scenario, dict[str, str], list[str]]:
    """The base scenario without the candidates that failed a required gate at ``gates_run``."""
    from runresults import Results, ResultsError

    try:
        run = Results(gates_run)
        excluded = failed_gates(run)
    except (ResultsError, OSError) as exc:
        raise SweepError(f"--gates {gates_run}: {exc}") from None
    required = required_gates(run.run)
    if run.table("gates").empty:
        raise SweepError(f"--gates {gates_run}: the run has no gates table (a run before the review's gates)")
    kept = [e for e in base.engines if e.name not in excluded]
    if not kept:
        raise SweepError(f"{path}: every engine of the base scenario failed a required gate at {gates_run}")
    return base.model_copy(update={"engines": kept}), {e: r for e, r in excluded.items()
                                                        if e in {x.name for x in base.engines}}, required


def load_sweep(path: str | Path, gates_run: str | Path | None = None) -> Grid:
    """Read and validate a sweep file; every value of every parameter is checked on the base scenario.
    With ``gates_run``, candidates that failed a required gate there are left out (module docstring)."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise SweepError(f"cannot read sweep file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise SweepError(f"{path}: not valid YAML ({exc})") from None
    try:
        spec = SweepSpec.model_validate(doc)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'sweep'}: {e['msg']}" for e in exc.errors())
        raise SweepError(f"{path}: invalid sweep: {problems}") from None
    base_path = (path.parent / spec.base).resolve()
    try:
        base = load_scenario(base_path)
    except ScenarioError as exc:
        raise SweepError(f"{path}: base scenario {spec.base}: {exc}") from None
    own = FAST_PARAMETERS if spec.method == "fast" else PARAMETERS
    foreign = sorted(k for k in spec.parameters if k not in own)
    if foreign:
        raise SweepError(f"{path}: parameters {foreign} are not parameters of method {spec.method!r}; "
                         f"its parameters: {sorted(own)}")
    values: dict[str, list[Any]] = {}
    for name, raw in spec.parameters.items():
        try:
            vals = raw.values() if isinstance(raw, Range) else list(raw)
        except ValueError as exc:
            raise SweepError(f"{path}: parameters.{name}: {exc}") from None
        if (name == "store") != any(isinstance(v, str) for v in vals):
            raise SweepError(f"{path}: parameters.{name}: " + ("names only (local, s3)" if name == "store"
                                                               else f"numbers only, got {vals}"))
        if name in INTEGER_PARAMETERS:
            if any(float(v) != int(v) for v in vals):
                raise SweepError(f"{path}: parameters.{name}: whole numbers only, got {vals}")
            vals = [int(v) for v in vals]
        values[name] = sorted(dict.fromkeys(vals))
    axes = spec.axes or list(values)[:2]
    bad = [a for a in axes if a not in values]
    if bad or not 1 <= len(axes) <= 2:
        raise SweepError(f"{path}: axes {axes}: one or two of the sweep's parameters {list(values)}")
    calibration = (path.parent / spec.calibration).resolve() if spec.calibration else None
    if calibration is not None and not calibration.is_file():
        raise SweepError(f"{path}: calibration {spec.calibration}: no such file")
    store_calibration = (path.parent / spec.store_calibration).resolve() if spec.store_calibration else None
    if store_calibration is not None and not store_calibration.is_file():
        raise SweepError(f"{path}: store_calibration {spec.store_calibration}: no such file")
    excluded: dict[str, str] = {}
    required: list[str] = []
    if gates_run is not None:
        base, excluded, required = _gates(path, base, gates_run)
    grid = Grid(spec, base, values, (axes[0], axes[1] if len(axes) > 1 else None), calibration,
                _margin(spec, base), excluded, str(gates_run) if gates_run is not None else None, required,
                store_calibration=store_calibration)
    if grid.fast:
        _check_fast(path, grid)
        return grid
    for name, vals in values.items():  # each value alone on the base: names the impossible one
        for v in vals:
            grid.scenario({name: v})
    return grid


def _check_fast(path: Path, grid: Grid) -> None:
    """A fast map's calibration (its bytes per record size the batches) and each value on the base point."""
    if grid.calibration is None or CostModel.load(grid.calibration).bytes_per_record is None:
        raise SweepError(f"{path}: calibration: method 'fast' needs a calibration with bytes_per_record "
                         "(a batch's records are its MB over the calibrated bytes per record)")
    if "s3" in grid.values.get("store", [FAST_DEFAULTS["store"]]) and grid.store_calibration is None:
        raise SweepError(f"{path}: store_calibration: S3 points need the request model of a run on the store "
                         "(e.g. s3_calibration.json)")
    base = grid.base_values()
    for name, vals in grid.values.items():
        for v in vals:
            problems = point_problems({**base, name: v}, fast_settings(grid))
            if problems:
                raise SweepError(f"{path}: parameters.{name}: the point {name}={v} cannot be modelled: "
                                 + "; ".join(problems))


def fast_settings(grid: Grid) -> Settings:
    """The production map's shared settings from a fast sweep file."""
    return Settings(batches_per_hour=grid.spec.batches_per_hour, latency_ms=grid.spec.latency_ms,
                    replay_cap=grid.spec.replay_cap, replay_max=grid.spec.replay_max or grid.spec.replay_cap,
                    margin=grid.margin, corrections_replay_cap=grid.spec.corrections_replay_cap)


def fast_model(grid: Grid) -> CostModel:
    """The fast map's cost model: the calibration's time costs and bytes per record, with the store
    calibration's request model and first-byte share (the S3 points)."""
    model = CostModel.load(grid.calibration) if grid.calibration else CostModel()
    if grid.store_calibration is not None:
        store = CostModel.load(grid.store_calibration)
        model.requests, model.first_byte_share = store.requests, store.first_byte_share
        model.source = (f"{grid.calibration.name if grid.calibration else 'defaults'}: time costs and bytes per "
                        f"record; {grid.store_calibration.name}: requests and first-byte share")
    return model


# -- running -----------------------------------------------------------------------------------


class SinkResults:
    """A grid point's in-memory rows read like a results folder (for the ledger)."""

    def __init__(self, sink: RowSink, scenario: Scenario, kinds: dict[str, str],
                 requests: dict[str, dict[str, int]]) -> None:
        import pandas as pd

        from runresults import TABLES

        self._frames = {n: pd.DataFrame(rows, columns=TABLES[n].names) for n, rows in sink.rows.items()}
        self.run = {"scenario": scenario.model_dump(mode="json"), "engines": {n: {"kind": k} for n, k in kinds.items()},
                    "simulation": {"requests": requests}}

    def table(self, name: str):  # noqa: ANN201 - a pandas DataFrame
        return self._frames[name]


def figures(sink: RowSink, engine: str, usd_per_tb: float = float("nan")) -> dict[str, float]:
    """The :data:`CRITERIA` of one simulated engine, from its result rows (its ledger's $ per TB given)."""
    commits = [r for r in sink.rows["commits"] if r["engine"] == engine]
    ingest = [r for r in commits if r["kind"] == "ingest"]
    written = sum(r["bytes_written"] for r in commits)
    batch = sum(r["batch_bytes"] for r in ingest)
    maint = [r for r in sink.rows["maintenance"] if r["engine"] == engine]
    queries = [r for r in sink.rows["queries"] if r["engine"] == engine]
    last = max((r["checkpoint"] for r in queries), default=None)
    final = [r for r in queries if r["checkpoint"] == last]
    amps = [r["space_amp"] for r in commits if r["space_amp"] is not None]
    return {
        "usd_per_tb": usd_per_tb,
        "wa": written / batch if batch else float("nan"),
        "live_files": float(commits[-1]["live_files"]) if commits else float("nan"),
        "space_amp_peak": max(amps) if amps else float("nan"),
        "write_s": sum(r["duration_s"] for r in ingest) + sum(r["duration_s"] for r in maint),
        "query_files": float(sum(r["files_scanned"] for r in final)),
        "query_s": sum(r["latency_s"] for r in final),
    }


def _run_point(args: tuple[Scenario, dict[str, Any], str | None]) -> list[dict[str, Any]]:
    scenario, point, calibration = args
    model = CostModel.load(calibration) if calibration else CostModel()
    done = run_simulation(scenario, model, sink=RowSink())
    books = ledger(SinkResults(done.sink, scenario, {e.name: e.kind for e in done.engines},  # type: ignore[arg-type]
                               {e.name: {"put": e.puts, "get": e.gets, "list": e.lists} for e in done.engines}))
    rows = []
    for e in done.engines:
        usd = books[e.name].usd_per_tb if e.name in books else float("nan")
        rows.append({**point, "engine": e.name, "kind": e.kind, **figures(done.sink, e.name, usd)})  # type: ignore[arg-type]
    return rows


def run_grid(grid: Grid, workers: int | None = None) -> tuple[list[dict[str, Any]], float]:
    """Every point's figures per engine, and the wall time. Points run in worker processes."""
    t0 = time.perf_counter()
    if grid.fast:
        rows, grid.statement = run_points(grid.base, grid.points(), fast_settings(grid), fast_model(grid),
                                          workers or grid.spec.workers)
        return rows, time.perf_counter() - t0
    # points sharing a workload run one after another in one process: its generated rows are cached
    points = sorted(grid.points(), key=lambda p: tuple(p.get(k, 0) for k in WORKLOAD_PARAMETERS))
    jobs = [(grid.scenario(p), p, str(grid.calibration) if grid.calibration else None) for p in points]
    n = workers or grid.spec.workers or max(1, os.cpu_count() or 1)
    rows: list[dict[str, Any]] = []
    if n == 1:
        for job in jobs:
            rows += _run_point(job)
    else:
        with ProcessPoolExecutor(n) as pool:
            for out in pool.map(_run_point, jobs, chunksize=max(1, len(jobs) // (n * 4))):
                rows += out
    return rows, time.perf_counter() - t0


# -- results -----------------------------------------------------------------------------------


def write_sweep(grid: Grid, rows: list[dict[str, Any]], wall_s: float, out_dir: str | Path,
                run_id: str | None = None, validation: list[dict[str, Any]] | None = None) -> Path:
    """Write a sweep's results folder (``sweep.parquet`` + ``sweep.json``); returns the folder."""
    import json
    from datetime import UTC, datetime

    import pandas as pd

    from runresults import git_info, machine_info, new_run_id

    folder = Path(out_dir) / (run_id or new_run_id(f"sweep-{grid.spec.name}"))
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(folder / SWEEP_TABLE, index=False)
    run = {
        "sweep": grid.spec.model_dump(mode="json", by_alias=True), "base_scenario": grid.base.name,
        "values": grid.values, "axes": list(grid.axes), "base_values": grid.base_values(),
        "points": len(grid.points()), "criteria": CRITERIA, "wall_time_s": wall_s,
        "calibration": str(grid.calibration) if grid.calibration else None,
        "margin": grid.margin, "gates_run": grid.gates_run, "required_gates": grid.required,
        "excluded": grid.excluded, "candidates": [e.name for e in grid.base.engines],
        "created": datetime.now(UTC).isoformat(), "git": git_info(), "machine": machine_info(),
        "validation": validation or [],
    }
    if grid.statement:
        run["fast_path"] = grid.statement
    (folder / SWEEP_RUN).write_text(json.dumps(run, indent=2, default=str))
    return folder
