"""Scenarios as validated YAML: workload, engines, maintenance schedule, queries, isolation, Spark.

``load_scenario(path)`` returns a :class:`Scenario` or raises :class:`ScenarioError` with one
message that lists every problem (unknown key, wrong type, impossible value) with its location.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from bench.engine_config import build_config
from bench.scenario_error import ScenarioError
from bench.simulate.supports import corrections_problems
from engines.config.registry import COW, MB, default
from engines.kinds import KINDS, kind_for_table_type, kind_of
from runresults.review.settings import ReviewSpec
from workloads.spec import WorkloadSpec

QUERY_NAMES = ("full_scan_by_level", "service_hours", "point_lookup", "recent_hour", "topn_latency")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EngineSpec(_Strict):
    """One engine of the comparison; ``config`` keys are checked by the engine factory."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: str  # a kind of the registry (engines.kinds), checked below
    config: dict[str, Any] = Field(default_factory=dict)
    # at most this many of the run's repetitions (``repeat``): a reference peer, outside the verdict's
    # tally, can run once while the designs it is set beside repeat; None: every repetition
    repeat: int | None = Field(None, ge=1, le=20)
    # a stated prefix: this engine takes the workload's first ``num_batches`` batches only (a design
    # whose rewrites would not fit the run's time); the report marks the rest as the simulator's
    # projection. None: every batch
    num_batches: int | None = Field(None, ge=1)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        if v not in KINDS:
            raise ValueError(f"unknown engine kind; known: {', '.join(KINDS)}")
        return v

    @model_validator(mode="after")
    def _table_type(self) -> EngineSpec:
        """``config.table_type`` picks the kind that runs this design on that table type (``clustering``
        with ``MERGE_ON_READ`` is ``clustering_mor``); a kind without it is refused, naming both."""
        if "table_type" in self.config:
            config = dict(self.config)
            value = config.pop("table_type")
            if not isinstance(value, str):
                raise ValueError(f"config.table_type: expected COPY_ON_WRITE or MERGE_ON_READ, got {value!r}")
            kind = kind_for_table_type(self.kind, value)
            object.__setattr__(self, "config", config)
            object.__setattr__(self, "kind", kind)
        return self


class MaintenanceSpec(_Strict):
    """When table services run (the one reading of ``mode`` is :class:`bench.batch_loop.MaintenanceSchedule`):
    ``inline`` schedules, executes and cleans every ``every_commits`` commits; ``schedule_inline``
    (semi-async) schedules after every commit when no plan is pending and executes the pending plans
    every ``every_commits`` commits; ``async`` maintains on a service thread every
    ``async_interval_s`` seconds (with ``async_max_commits``, only once that many commits followed
    the engine's last maintenance; a driver without a wall clock: every that many commits); ``none`` never. ``final``: one last maintenance after the last batch."""

    mode: Literal["inline", "async", "schedule_inline", "none"] = "inline"
    every_commits: int = Field(10, ge=1)
    async_interval_s: float = Field(2.0, gt=0)
    # async: the service maintains only once this many commits followed the engine's last maintenance
    # (Hudi's hoodie.clustering.async.max.commits); None: at every round
    async_max_commits: int | None = Field(None, ge=1)
    final: bool = True  # run one last maintenance after the final batch


class SizingSpec(_Strict):
    """File sizing shared by every engine so the comparison is fair; defaults from the config
    registry (Hudi's: the copy-on-write small-file limit and max file size, also the target)."""

    small_file_limit_mb: float = Field(default("small_file_limit", COW) / MB, ge=0)
    target_file_mb: float = Field(default("max_file_size", COW) / MB, gt=0)
    max_file_mb: float = Field(default("max_file_size", COW) / MB, gt=0)
    row_group_rows: int = Field(default("row_group_rows", COW), ge=1_000)
    cleaner_commits_retained: int = Field(default("cleaner_commits_retained", COW), ge=1)

    @model_validator(mode="after")
    def _limits(self) -> SizingSpec:
        if self.small_file_limit_mb > self.max_file_mb:
            raise ValueError("small_file_limit_mb must not exceed max_file_mb")
        return self


class QuerySpec(_Strict):
    suite: list[str] = Field(default_factory=lambda: list(QUERY_NAMES))
    warm_runs: int = Field(3, ge=1, le=50)
    # the final checkpoint's interleaved warm rounds (bench/query_rounds.py); fewer than 10 gives no 95% interval
    rounds: int = Field(10, ge=1, le=1000)
    # interleaved rounds at every earlier checkpoint too, over the same engines, in place of their warm runs
    # there (0: none). With one repetition they are the ledger's samples (runresults.review.ledger)
    checkpoint_rounds: int = Field(0, ge=0, le=1000)
    checkpoint_every: int = Field(50, ge=1)
    verify: bool = True
    # the selective query's time window (service_hours): its selectivity, a decision-map axis
    service_window_hours: float = Field(3.0, gt=0, le=24 * 366)
    # run the final checkpoint's interleaved rounds over every engine (the append_only control and the
    # peers included: a scale run's gains over append_only), also when the review does not measure its
    # gates (review.measure runs them over the design candidates)
    interleaved: bool = False

    @field_validator("suite")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        unknown = [q for q in v if q not in QUERY_NAMES]
        if unknown:
            raise ValueError(f"unknown queries {unknown}; known: {list(QUERY_NAMES)}")
        return v


class IsolationSpec(_Strict):
    enabled: bool = True
    readers: int = Field(2, ge=1, le=16)
    queries: list[str] = Field(default_factory=lambda: ["full_scan_by_level"])
    max_maintenance_runs: int = Field(2, ge=1)


# store keys that would carry a secret or pick one (refused with a message naming the environment)
_CREDENTIAL_WORDS = ("key", "secret", "token", "password", "credential", "profile")


class StoreSpec(_Strict):
    """Where the tables live: local disk (the results folder), or an S3-protocol store started on
    127.0.0.1 for the run (moto behind a counting proxy, ``bench/store``) with a first-byte latency
    and an optional bandwidth cap per connection."""

    kind: Literal["local", "s3"] = "local"
    first_byte_ms: float = Field(20.0, ge=0, le=5000)
    bandwidth_mb_s: float | None = Field(None, gt=0)
    # the user's own S3-compatible store (bench/store/external.py); credentials come from the
    # environment or an AWS profile, never from the scenario
    endpoint: str | None = None  # http://host:port, https://host, or host:port (https); None: AWS S3
    bucket: str | None = None
    prefix: str = "layoutbench"
    region: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_credentials(cls, data: Any) -> Any:
        """Credentials never come from the scenario (it is written to run.json and shared): a key or an
        endpoint carrying them is refused, naming where they go instead, and without echoing them."""
        if not isinstance(data, dict):
            return data
        where = ("credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                 "AWS_SESSION_TOKEN) or an AWS profile (AWS_PROFILE), never from the scenario")
        for key in data:
            if any(w in str(key).lower() for w in _CREDENTIAL_WORDS):
                raise ValueError(f"store.{key}: {where}")
        endpoint = data.get("endpoint")
        if isinstance(endpoint, str) and "@" in urlsplit(endpoint if "://" in endpoint else f"//{endpoint}").netloc:
            raise ValueError(f"store.endpoint holds credentials (a user name or password before '@'): {where}, "
                             "which is written into run.json; give the endpoint as http://host:port")
        return data

    @property
    def external(self) -> bool:
        """True when the tables go to a store the run does not start."""
        return self.bucket is not None

    @model_validator(mode="after")
    def _external_store(self) -> StoreSpec:
        if self.endpoint is not None and self.bucket is None:
            raise ValueError("store.endpoint needs store.bucket (the bucket the tables go to)")
        if self.bucket is not None:
            if self.kind != "s3":
                raise ValueError("store.bucket is for kind: s3")
            # compared with the defaults, not by fields set: a scenario's own dump re-validates with all of them
            shaped = [k for k, v in (("first_byte_ms", self.first_byte_ms != 20.0),
                                     ("bandwidth_mb_s", self.bandwidth_mb_s is not None)) if v]
            if shaped:
                raise ValueError(f"store.{shaped[0]} shapes the store layoutbench starts; a store of "
                                 "your own (store.bucket) has its own latency")
        return self


class SparkSpec(_Strict):
    master: str = "local[2]"
    conf: dict[str, str] = Field(default_factory=dict)


class RateSearchSpec(_Strict):
    """The sustainable-throughput search of ``layoutbench stream``: stepped rates (batches per second),
    multiplied by ``factor`` from ``start`` while the lag stays bounded, then bisected ``refine`` times."""

    enabled: bool = True
    start: float = Field(0.5, gt=0)
    factor: float = Field(2.0, gt=1)
    max_steps: int = Field(4, ge=1, le=20)
    refine: int = Field(1, ge=0, le=5)
    batches_per_step: int = Field(10, ge=3)
    # bounded lag: the backlog-seconds slope over the step is below this (seconds of lag per second)
    max_lag_slope: float = Field(0.15, gt=0)


class StreamSpec(_Strict):
    """Continuous ingestion (``layoutbench stream``): the generator drops the scenario's batches into
    a landing folder every ``1 / rate`` seconds (sizes shaped by ``workload.arrival``) and Spark
    Structured Streaming feeds each engine through ``foreachBatch``."""

    rate: float = Field(1.0, gt=0)  # batches per second at the fixed-rate run (freshness figures)
    files_per_trigger: int = Field(1, ge=1)  # landing files per micro-batch (maxFilesPerTrigger)
    trigger_s: float = Field(0.2, ge=0)  # processing-time trigger
    maintenance: Literal["design", "none"] = "design"  # each design's table services beside the stream
    async_max_commits: int = Field(3, ge=1)  # Option 2: hoodie.clustering.async.max.commits
    lag_sample_s: float = Field(0.25, gt=0)
    retention_hours: float = Field(24.0, gt=0)  # rows older than the newest event minus this are counted late
    bad_input: bool = False  # also drop a file in a foreign schema and a batch older than the retention
    timeout_s: float = Field(600.0, gt=0)  # per streaming run
    rate_search: RateSearchSpec = Field(default_factory=RateSearchSpec)


def _target_problems(target: Any) -> list[str]:
    """Each reason the simulator cannot model ``target`` (a :class:`runresults.review.settings.TargetSpec`),
    named by the target's field; empty when it can."""
    checks = (
        (WorkloadSpec, {"batch_mb": target.batch_mb, "num_partitions": target.partitions,
                        "num_batches": target.batches}, {"batch_mb": "batch_mb", "num_partitions": "partitions",
                                                          "num_batches": "horizon_days"}),
        (SizingSpec, {"small_file_limit_mb": target.small_file_limit_mb, "target_file_mb": target.target_file_mb,
                      "max_file_mb": target.max_file_mb}, {}),
        (StoreSpec, {"kind": target.store, "first_byte_ms": target.latency_ms}, {"kind": "store",
                                                                                 "first_byte_ms": "latency_ms"}),
    )
    out = []
    for spec, doc, names in checks:
        try:
            spec.model_validate(doc)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(names.get(str(p), str(p)) for p in err["loc"]) or spec.__name__
                out.append(f"{field}: {err['msg'].removeprefix('Value error, ')}")
    if target.batch_mb > target.max_file_mb:
        out.append(f"batch_mb: a batch of {target.batch_mb:g} MB is larger than max_file_mb "
                   f"({target.max_file_mb:g} MB); the simulator's planners size files from batches below the maximum")
    return out


class Scenario(_Strict):
    name: str
    description: str = ""
    workload: WorkloadSpec
    engines: list[EngineSpec]
    # engines a run takes only when ``--engines`` names them (Apache Hudi's own writers at a scale where
    # they would take hours): beside the scenario's engines, never in a run that does not ask for them
    engines_on_request: list[EngineSpec] = Field(default_factory=list)
    sizing: SizingSpec = Field(default_factory=SizingSpec)
    maintenance: MaintenanceSpec = Field(default_factory=MaintenanceSpec)
    queries: QuerySpec = Field(default_factory=QuerySpec)
    isolation: IsolationSpec = Field(default_factory=IsolationSpec)
    spark: SparkSpec = Field(default_factory=SparkSpec)
    store: StoreSpec = Field(default_factory=StoreSpec)
    stream: StreamSpec = Field(default_factory=StreamSpec)
    # the review (runresults.review): required gates, equivalence margin, query rate, prices, target scale
    review: ReviewSpec = Field(default_factory=ReviewSpec)
    output: str = "results"
    deterministic_instants: bool = True
    # timed parts run this many times on fresh tables from the same batches (run --repeat overrides)
    repeat: int = Field(1, ge=1, le=20)
    # keep every engine's table after the run; False: each engine's tables are removed once its
    # figures are taken (a scale run's disk peak; run --keep-tables overrides)
    keep_tables: bool = True
    # run only the workload's first ``stop_after`` batches (``run --batches``): the same batches as the
    # whole scenario's; the simulator projects every engine to all of them (bench.scale_projection)
    stop_after: int | None = Field(None, ge=1)

    @field_validator("engines")
    @classmethod
    def _unique(cls, v: list[EngineSpec]) -> list[EngineSpec]:
        if not v:
            raise ValueError("at least one engine is required")
        names = [e.name for e in v]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"engine names must be unique; repeated: {dupes}")
        return v

    @model_validator(mode="after")
    def _names_once(self) -> Scenario:
        """An engine on request is named once, and not as one of the scenario's engines."""
        names = [e.name for e in self.engines]
        both = sorted({e.name for e in self.engines_on_request if e.name in names})
        if both:
            raise ValueError(f"engines_on_request names engines the scenario already has: {both}")
        mine = [e.name for e in self.engines_on_request]
        dupes = sorted({n for n in mine if mine.count(n) > 1})
        if dupes:
            raise ValueError(f"engines_on_request: engine names must be unique; repeated: {dupes}")
        return self

    @model_validator(mode="after")
    def _prefixes(self) -> Scenario:
        """An engine's ``num_batches`` is a prefix of the workload's batches, under a schedule the loop
        can end early for one engine (not ``async``: its service thread runs beside every engine)."""
        n = self.workload.num_batches
        for e in self.engines:
            if e.num_batches is None:
                continue
            if e.num_batches > n:
                raise ValueError(f"engines.{e.name}.num_batches is {e.num_batches}, more than the workload's "
                                 f"{n} batches (a prefix takes at most all of them)")
            if self.maintenance.mode == "async":
                raise ValueError(f"engines.{e.name}.num_batches: a prefix needs a synchronous maintenance mode; "
                                 "maintenance.mode is 'async'")
        if self.review.measure and any(e.num_batches is not None and e.num_batches < n for e in self.engines):
            raise ValueError("review.measure reads every candidate's table over all the batches; "
                             "an engine with a prefix (num_batches) cannot be gated")
        if self.stop_after is not None and self.stop_after > n:
            raise ValueError(f"stop_after is {self.stop_after}, more than the workload's {n} batches")
        run = min(self.stop_after or n, n)
        if all(e.num_batches is not None and e.num_batches < run for e in self.engines):
            raise ValueError(f"every engine runs a prefix of the {run} batches the run takes: at least one must run "
                             "them all (or the run must stop at the longest prefix: run --batches)")
        return self

    @model_validator(mode="after")
    def _checkpoint_rounds(self) -> Scenario:
        """``queries.checkpoint_rounds`` runs only where the final rounds run: refused, not dropped, elsewhere."""
        if self.queries.checkpoint_rounds and not (self.review.measure or self.queries.interleaved):
            raise ValueError(f"queries.checkpoint_rounds is {self.queries.checkpoint_rounds}, but no interleaved "
                             "rounds run (review.measure and queries.interleaved are both false)")
        return self

    def first_batches(self, n: int) -> Scenario:
        """This scenario stopped after its first ``n`` batches (``run --batches``): the same batches as the
        whole run's (the workload is unchanged), every engine's prefix capped at ``n``."""
        if not 1 <= n <= self.workload.num_batches:
            raise ScenarioError(f"--batches must be between 1 and the scenario's {self.workload.num_batches} "
                                f"batches, got {n}")
        return self.model_copy(update={"stop_after": n})  # fewer batches: every rule above still holds

    @property
    def batches_run(self) -> int:
        """How many batches the run's loop takes: ``stop_after`` (``run --batches``), else all."""
        n = self.workload.num_batches
        return min(self.stop_after or n, n)

    def batches_of(self, engine: str) -> int:
        """How many of the workload's batches engine ``engine`` takes (its prefix, else all the run takes)."""
        spec = next(e for e in self.engines if e.name == engine)
        return min(spec.num_batches or self.workload.num_batches, self.batches_run)

    @model_validator(mode="after")
    def _corrections(self) -> Scenario:
        """A workload with corrections (``update_fraction``) names only engines that take updates; the
        runner feeds updates, not deletes."""
        wl = self.workload
        if wl.delete_fraction > 0:
            raise ValueError(f"workload.delete_fraction is {wl.delete_fraction}: the runner feeds updates "
                             "(update_fraction) but no deletes; set delete_fraction to 0")
        if wl.corrections_fraction > 0:
            inserts_only = [e for e in self.engines if not kind_of(e.kind).takes_updates]
            if inserts_only:
                names = ", ".join(f"{e.name} (kind {e.kind})" for e in inserts_only)
                raise ValueError(f"workload.update_fraction is {wl.corrections_fraction}, but engine(s) {names} "
                                 "take inserts only: they have no update path; remove them or set "
                                 "update_fraction to 0")
        if self.review.project:
            unmodelled = corrections_problems(self, designs_only=True)  # with corrections or in the config
            if unmodelled:
                raise ValueError("review.project: " + "; ".join(unmodelled) + "; set review.project to false "
                                 "or remove the engine")
        return self

    @model_validator(mode="after")
    def _async_gate(self) -> Scenario:
        if self.maintenance.async_max_commits is not None and self.maintenance.mode != "async":
            raise ValueError(f"maintenance.async_max_commits gates the async service; maintenance.mode is "
                             f"{self.maintenance.mode!r} (use every_commits)")
        return self

    @model_validator(mode="after")
    def _engine_configs(self) -> Scenario:
        """Every engine's config read as the engine factory reads it (shorthands, ``*_mb`` sizes and
        ``hoodie.*`` keys through the config registry, the planner's config built), so ``layoutbench
        validate`` refuses what the run would, before Spark starts: a bad key is named."""
        from bench.hoodie_conf import named_columns, read_config, scenario_context
        from workloads.rowdef import arrow_schema

        columns = arrow_schema(self.workload).names
        for e in self.engines:
            fields = read_config(e.kind, e.config, f"engines.{e.name}", **scenario_context(self, e.name))  # a ValueError
            for key, named in named_columns(e.kind, fields).items():
                missing = [c for c in named if c not in columns]
                if missing:  # a sort by a column the rows lack plans nothing here and fails in Hudi's sort
                    raise ValueError(f"engines.{e.name}: {key} names {missing}, not a column of this workload; "
                                     f"its columns are {columns}")
        for e in self.engines:  # each engine's whole config, as build_engine builds it: one code path decides
            build_config(e, self)  # ScenarioError (a ValueError) names the engine
        return self

    @model_validator(mode="after")
    def _target_modelled(self) -> Scenario:
        """``review.target`` must be a scale the simulator can model."""
        problems = _target_problems(self.review.target)
        if problems:
            raise ValueError("review.target: the simulator cannot model it: " + "; ".join(problems))
        return self

    def select_engines(self, names: list[str]) -> Scenario:
        """The scenario with the engines ``names`` (``--engines``): its own and those on request, in the
        scenario's order, validated again as a whole (a prefix needs an engine that takes every batch)."""
        every = [*self.engines, *self.engines_on_request]
        known = [e.name for e in every]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ScenarioError(f"--engines names unknown engines {unknown}; this scenario has {known}")
        doc = self.model_dump()
        doc.update(engines=[e.model_dump() for e in every if e.name in names], engines_on_request=[])
        try:
            return Scenario.model_validate(doc)
        except ValidationError as exc:
            raise ScenarioError(_describe(exc, f"--engines {','.join(names)}")) from None


def _describe(exc: ValidationError, source: str) -> str:
    lines = [f"{source}: {exc.error_count()} problem(s)"]
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")  # our validators' messages say what is wrong
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"  - {loc}: {msg}" + (f" (got {err['input']!r})" if err["type"] != "extra_forbidden"
                                            and not isinstance(err.get("input"), dict) else ""))
    return "\n".join(lines)


def parse_scenario(doc: Any, source: str = "<scenario>") -> Scenario:
    if not isinstance(doc, dict):
        raise ScenarioError(f"{source}: a scenario must be a YAML mapping, got {type(doc).__name__}")
    try:
        return Scenario.model_validate(doc)
    except ValidationError as exc:
        raise ScenarioError(_describe(exc, source)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    p = Path(path)
    if not p.is_file():
        raise ScenarioError(f"scenario file {p} does not exist")
    try:
        doc = yaml.safe_load(p.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{p}: not valid YAML ({exc})") from None
    return parse_scenario(doc, str(p))


def fingerprint(scenario: Scenario) -> str:
    """A hash of the scenario without the keys left at their defaults (recorded in ``run.json``; the CI
    gate refuses a baseline of another scenario), so a new field whose default keeps today's
    behaviour does not move it."""
    import hashlib
    import json

    doc = Scenario.model_validate(scenario.model_dump(mode="json")).model_dump(mode="json", exclude_defaults=True)
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:16]
