"""One streaming run of one engine: landing folder -> ``readStream`` (Parquet file source in the
generator's schema) -> ``foreachBatch`` -> engine, with its table services beside the stream and
the lag sampled while it runs. A ``hudi`` engine with ``stream_sink: hudi`` is written by Apache
Hudi's own sink instead (``writeStream.format("hudi")``, its async clustering inside the sink;
``bench.stream.hudi_sink`` observes it).

The run ends when every scheduled landing file is committed or quarantined (or at
``stream.timeout_s``, or when the query fails); the query is then stopped, the services stopped,
and whatever they still have pending executed once (``Services.finish``). A run restarted on the
same root resumes: files already landed keep their arrival time, Spark's checkpoint replays the
micro-batch its commit log lacks, and the table's commit markers make that replay a no-op.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.scenario import Scenario
from bench.stream.landing import BAD_NAME, OLD_NAME, Dropper, Landing, batch_name, schedule
from bench.stream.services import Recorder, Services
from bench.stream.sink import StreamSink
from engines.kinds import kind_of
from workloads.generator import arrow_schema


@dataclass
class StreamRun:
    engine: Any
    label: str
    sink: Any  # StreamSink (foreachBatch) or bench.stream.hudi_sink.HudiSinkObserver (Hudi's own sink)
    services: Any  # Services, or bench.stream.hudi_sink.HudiSinkServices
    names: list[str]
    lag: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    error: str | None = None

    @property
    def good_names(self) -> list[str]:
        return [n for n in self.names if n != BAD_NAME]


def landing_names(batches: list[int], bad_input: bool) -> list[str]:
    """The files a run lands, in order; with bad input the foreign file lands a third of the way in
    and the old batch two thirds of the way."""
    names = [batch_name(b) for b in batches]
    if bad_input:
        names.insert(max(1, len(names) // 3), BAD_NAME)
        names.insert(max(2, 2 * len(names) // 3), OLD_NAME)
    return names


def stream_manual(config: dict[str, Any], kind: str) -> dict[str, Any]:
    """An engine's config with its own service modes off: beside a stream, the driver runs them
    (unless the kind runs its own inside its writer: Apache Hudi)."""
    return {**config, "mode": "manual"} if kind_of(kind).driver_runs_services else config


def uses_hudi_sink(engine: Any, kind: str) -> bool:
    """Whether the engine is written by Apache Hudi's own streaming sink (``stream_sink: hudi``)."""
    return kind_of(kind).is_apache_hudi and engine.config.stream_sink == "hudi"


def spark_schema(scenario: Scenario) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema(scenario.workload))


def stream_engine(spark: Any, scenario: Scenario, engine: Any, kind: str, root: str | Path, label: str, rate: float,
                  batches: list[int], cache: str | Path, bad_input: bool = False, record: Recorder | None = None,
                  maintenance: bool | None = None, names: list[str] | None = None,
                  on_lag: Callable[[dict[str, Any], int], None] | None = None) -> StreamRun:
    """Stream ``batches`` (landing every ``1 / rate`` s) into ``engine``; see the module docstring.
    ``names``, when given, are the landing files instead (generator batches, update files); ``on_lag``
    is told each lag sample and the micro-batches committed so far (progress)."""
    cfg = scenario.stream
    root = Path(root)
    landing = Landing(root, scenario.workload, cache, cfg.retention_hours)
    names = landing_names(batches, bad_input) if names is None else list(names)
    enabled = cfg.maintenance == "design" if maintenance is None else maintenance
    schema = spark_schema(scenario)
    t0 = time.time()
    query_name = f"{engine.name}_{label}".replace(":", "_").replace(".", "_")
    if uses_hudi_sink(engine, kind):
        from bench.stream.hudi_sink import HudiSinkObserver, HudiSinkServices, start_hudi_sink

        services: Any = HudiSinkServices(engine, enabled, record, wait_s=cfg.timeout_s)
        sink: Any = HudiSinkObserver(engine, services, landing, label, t0, cfg.retention_hours, root / "checkpoint")
    else:
        services = Services(engine, kind, enabled, scenario.maintenance.async_interval_s, cfg.async_max_commits,
                            record)
        sink = StreamSink(spark, engine, services, landing, label, t0, cfg.retention_hours, schema,
                          root / "checkpoint")
    run = StreamRun(engine, label, sink, services, names)
    dropper = Dropper(landing, schedule([n for n in names if n not in landing.arrivals], rate))
    services.start()
    if isinstance(sink, StreamSink):
        query = (spark.readStream.schema(schema).option("maxFilesPerTrigger", cfg.files_per_trigger)
                 .parquet(str(landing.folder))
                 .writeStream.foreachBatch(sink).option("checkpointLocation", str(sink.checkpoint))
                 .trigger(processingTime=f"{int(cfg.trigger_s * 1000)} milliseconds")
                 .queryName(query_name).start())
    else:
        query = start_hudi_sink(spark, engine, schema, landing.folder, sink.checkpoint, cfg.files_per_trigger,
                                cfg.trigger_s, query_name, cfg.async_max_commits, enabled)
    dropper.start()
    expected = set(run.good_names)
    deadline = time.time() + cfg.timeout_s
    try:
        while True:
            time.sleep(cfg.lag_sample_s)
            sink.poll(query)
            now = time.time()
            arrived, committed, backlog, backlog_s = sink.lag(now)
            run.lag.append({"engine": engine.name, "run": label, "t_s": now - t0, "arrived": arrived,
                            "committed": committed, "backlog_batches": backlog, "backlog_s": backlog_s,
                            "maintenance_running": services.busy})
            if on_lag is not None:
                on_lag(run.lag[-1], len(sink.state.rows))
            done = expected <= set(sink.state.committed) and (not bad_input or BAD_NAME in sink.state.quarantined)
            if done:
                services.drain()
                break
            exc = query.exception()
            if exc is not None or not query.isActive:
                run.error = f"{engine.name}: the streaming query stopped: {str(exc).splitlines()[0] if exc else 'inactive'}"
                break
            if dropper.error:
                run.error = f"{engine.name}: landing failed: {dropper.error}"
                break
            if now > deadline:
                run.error = (f"{engine.name}: stream run {label} timed out after {cfg.timeout_s:.0f} s with "
                             f"{len(expected - set(sink.state.committed))} landing file(s) uncommitted")
                break
    finally:
        query.stop()
        sink.poll(query)
        dropper.stop()
        services.stop()
    run.wall_s = time.time() - t0
    if run.error is None:
        services.finish()
    sink.finish()
    errors = sink.state.errors + services.errors
    if run.error is None and sink.state.errors:
        run.error = f"{engine.name}: " + sink.state.errors[0]
    if errors and run.error is None:
        run.error = f"{engine.name}: table service failed: {errors[0]}"
    return run


__all__ = ["OLD_NAME", "StreamRun", "landing_names", "stream_engine", "stream_manual"]
