"""Apache Hudi's own config pastes into a scenario (T19): the clustering article's three config
tables (inline, async, semi-async) and Hudi's quick-start options validate as written, for our
engines and for real Hudi; what they say about the schedule is honoured by the maintenance section
or refused, never dropped; and ``validate`` refuses each mistake in one message naming the key,
exit 3, without starting Spark (a child process shows no JVM and no SparkContext)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.batch_loop import MaintenanceSchedule
from bench.cli import EXIT_BAD_INPUT, app
from bench.engine_factory import resolve_planner
from bench.hoodie_conf import read_config, scenario_context
from bench.scenario import ScenarioError, parse_scenario
from engines.hudi.config import HudiConfig, hoodie_options

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()

# The article's tables, the "设定值" column as written, and the maintenance section each one's mode is in
# this harness. The one change: sort.columns names this workload's column where the article's commands name
# its review table's review_date, which validate refuses here (test_a_sort_column_the_rows_lack_is_refused).
_SIZES = {"hoodie.clustering.plan.strategy.small.file.limit": 209715200,
          "hoodie.clustering.plan.strategy.target.file.max.bytes": 314572800,
          "hoodie.clustering.plan.strategy.sort.columns": "service", "hoodie.parquet.small.file.limit": 0,
          "hoodie.copyonwrite.record.size.estimate": 175}
ARTICLE_TABLES = {
    "inline": ({"hoodie.clustering.inline": "true", "hoodie.clustering.schedule.inline": "false",
                "hoodie.clustering.async.enabled": "false", "hoodie.clustering.inline.max.commits": 3, **_SIZES},
               {"mode": "inline", "every_commits": 3}),
    "async": ({"hoodie.clustering.inline": "false", "hoodie.clustering.schedule.inline": "false",
               "hoodie.clustering.async.enabled": "true", "hoodie.clustering.async.max.commits": 3, **_SIZES},
              {"mode": "async", "async_max_commits": 3}),
    "semi-async": ({"hoodie.clustering.inline": "false", "hoodie.clustering.schedule.inline": "true",
                    "hoodie.clustering.async.enabled": "false", **_SIZES},
                   {"mode": "schedule_inline", "every_commits": 3}),
}
# Hudi's quick-start (0.12, pyspark): its hudi_options, the table and columns named as this workload's
QUICK_START = {"hoodie.table.name": "hudi_trips_cow", "hoodie.datasource.write.recordkey.field": "trace_id",
               "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.datasource.write.table.name": "hudi_trips_cow",
               "hoodie.datasource.write.operation": "upsert", "hoodie.datasource.write.precombine.field": "ts",
               "hoodie.upsert.shuffle.parallelism": 2, "hoodie.insert.shuffle.parallelism": 2}
IDENTITY = {"hoodie.datasource.write.recordkey.field": "trace_id", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.parquet.compression.codec": "snappy"}
STRATEGIES = {
    "hoodie.clustering.plan.strategy.class":
        "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy",
    "hoodie.clustering.execution.strategy.class":
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"}


def scenario(engines: list[dict], maintenance: dict | None = None) -> dict:
    return {"name": "pastes", "workload": {"num_batches": 3, "batch_records": 100},
            "maintenance": maintenance or {"mode": "inline", "every_commits": 3}, "engines": engines}


def _validate(doc: dict, tmp_path: Path) -> object:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return runner.invoke(app, ["validate", str(path)])


@pytest.mark.parametrize("mode", list(ARTICLE_TABLES))
def test_the_articles_config_tables_paste_in_unchanged(mode: str, tmp_path: Path) -> None:
    table, maintenance = ARTICLE_TABLES[mode]
    doc = scenario([{"name": "ours", "kind": "clustering", "config": {**table, **STRATEGIES}},
                    {"name": "real", "kind": "hudi", "config": {"preset": "hudi_clustering", **table}}], maintenance)
    result = _validate(doc, tmp_path)
    assert result.exit_code == 0, result.output
    sc = parse_scenario(doc)
    planner, _ = resolve_planner(sc.engines[0], sc)
    assert (planner.small_file_limit, planner.target_file_size, planner.sort_columns) == (
        209715200, 314572800, ("service",))
    # real Hudi: the schedule is the maintenance section's, not passed on beside it (Hudi would cluster
    # inside its writes as well); the sizes are passed through unchanged
    fields = read_config("hudi", sc.engines[1].config, **scenario_context(sc, "real"))
    assert not [k for k in fields["options"] if k.startswith("hoodie.clustering.") and "strategy" not in k]
    opts = hoodie_options(HudiConfig(**fields), "real", "dt", "trace_id")
    assert opts["hoodie.clustering.inline"] == opts["hoodie.clustering.async.enabled"] == "false"
    assert opts["hoodie.clustering.plan.strategy.small.file.limit"] == "209715200"


def test_the_async_tables_commit_count_is_honoured_by_the_maintenance_section() -> None:
    """``hoodie.clustering.async.max.commits`` = ``maintenance.async_max_commits``: the runner's async
    service waits for that many commits after the last maintenance; a driver without a wall clock
    (crash child, simulator) maintains every that many commits."""
    table, maintenance = ARTICLE_TABLES["async"]
    sc = parse_scenario(scenario([{"name": "ours", "kind": "clustering", "config": table}],
                                 {**maintenance, "every_commits": 5}))
    assert MaintenanceSchedule.of(sc, threads=False).every == 3
    assert MaintenanceSchedule.of(sc).every == 5 and MaintenanceSchedule.of(sc).runs_async


@pytest.mark.parametrize("maintenance,config,phrase", [
    ({"mode": "async"}, {"hoodie.clustering.async.max.commits": 3},
     "maintenance.async_max_commits is not set"),
    ({"mode": "async", "async_max_commits": 4}, {"hoodie.clustering.async.max.commits": 3},
     "disagrees with the scenario's maintenance.async_max_commits 4"),
    ({"mode": "schedule_inline", "every_commits": 3}, {"hoodie.clustering.async.max.commits": 3},
     "semi-async schedules after every commit"),
    ({"mode": "schedule_inline", "every_commits": 3}, {"hoodie.clustering.inline.max.commits": 3},
     "only inline clustering reads it"),
    ({"mode": "async", "async_max_commits": 3}, {"hoodie.clustering.inline.max.commits": 3},
     "only inline clustering reads it"),
    ({"mode": "async", "async_max_commits": 3}, {"hoodie.clustering.schedule.inline": "true"},
     "disagrees with the scenario's maintenance.mode 'async'"),
])
@pytest.mark.parametrize("kind", ["clustering", "hudi"])
def test_a_count_outside_the_mode_that_reads_it_is_refused_not_dropped(kind: str, maintenance: dict, config: dict,
                                                                       phrase: str, tmp_path: Path) -> None:
    key = next(iter(config))
    if kind == "hudi":  # a clustering preset: hudi_cow does not read the clustering keys (refused as such)
        config = {**config, "preset": "hudi_clustering"}
    result = _validate(scenario([{"name": "e", "kind": kind, "config": config}], maintenance), tmp_path)
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    flat = " ".join(result.output.split())
    assert key in flat and phrase in flat and flat.count(" - ") == 1, flat


def test_async_max_commits_belongs_to_async_mode() -> None:
    with pytest.raises(ScenarioError, match="async_max_commits gates the async service"):
        parse_scenario(scenario([{"name": "e", "kind": "clustering"}], {"mode": "inline", "async_max_commits": 3}))


def test_hudis_quick_start_options_paste_in(tmp_path: Path) -> None:
    ok = _validate(scenario([{"name": "hudi_trips_cow", "kind": "hudi", "config": {"preset": "hudi_cow", **QUICK_START}}]),
                   tmp_path)
    assert ok.exit_code == 0, ok.output
    # as the quick-start writes them, its own table's columns: refused, naming the disagreement
    theirs = {**QUICK_START, "hoodie.datasource.write.recordkey.field": "uuid"}
    bad = _validate(scenario([{"name": "hudi_trips_cow", "kind": "hudi", "config": {"options": theirs}}]), tmp_path)
    assert bad.exit_code == EXIT_BAD_INPUT
    assert "hoodie.datasource.write.recordkey.field=uuid disagrees with the workload's record key, 'trace_id'" in \
        " ".join(bad.output.split())


@pytest.mark.parametrize("kind", ["cow_baseline", "append_compaction", "append_only", "clustering", "hudi"])
def test_identity_keys_that_agree_with_the_workload_are_accepted(kind: str) -> None:
    doc = scenario([{"name": "logs", "kind": kind, "config": {"hoodie.table.name": "logs", **IDENTITY}}])
    doc["workload"]["partition_column"] = "day"
    with pytest.raises(ScenarioError, match="partitionpath.field=dt disagrees with the workload's partition column, "
                                            "'day'"):
        parse_scenario(doc)
    doc["engines"][0]["config"]["hoodie.datasource.write.partitionpath.field"] = "day"
    sc = parse_scenario(doc)
    assert read_config(kind, sc.engines[0].config, **scenario_context(sc, "logs")) == read_config(
        kind, {}, **scenario_context(sc, "logs")) | ({"options": {"hoodie.table.name": "logs", **IDENTITY,
                                                                  "hoodie.datasource.write.partitionpath.field": "day"}}
                                                     if kind == "hudi" else {})


MISTAKES = {  # file name -> (engine, maintenance, the key its one message names)
    "identity": ({"kind": "clustering", "config": {"hoodie.datasource.write.recordkey.field": "uuid"}}, None,
                 "hoodie.datasource.write.recordkey.field"),
    "hudi_typo": ({"kind": "hudi", "config": {"hoodie.clustering.plan.strategy.sort.colums": "ts"}}, None,
                  "hoodie.clustering.plan.strategy.sort.colums"),
    "hudi_schedule": ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.inline": "false"}},
                      None, "hoodie.clustering.inline"),
    "hudi_zstd": ({"kind": "hudi", "config": {"hoodie.parquet.compression.codec": "zstd"}}, None,
                  "hoodie.parquet.compression.codec"),
    "async_count": ({"kind": "clustering", "config": {"hoodie.clustering.async.max.commits": 3}},
                    {"mode": "schedule_inline"}, "hoodie.clustering.async.max.commits"),
    "strategy": ({"kind": "clustering", "config": {"hoodie.clustering.plan.strategy.class": "com.acme.MyStrategy"}},
                 None, "hoodie.clustering.plan.strategy.class"),
}

CHILD = """
import json, subprocess, sys
from typer.testing import CliRunner
from bench.cli import app

out = {}
for name, path in json.loads(sys.argv[1]).items():
    r = CliRunner().invoke(app, ["validate", path])
    out[name] = [r.exit_code, r.output]
from pyspark import SparkContext
java = subprocess.run(["pgrep", "-P", str(__import__("os").getpid())], capture_output=True, text=True).stdout
out["_spark"] = [SparkContext._active_spark_context is not None, java.strip()]
print(json.dumps(out))
"""


def test_each_mistake_is_one_message_exit_3_and_no_spark_starts(tmp_path: Path) -> None:
    paths = {}
    for name, (engine, maintenance, _) in MISTAKES.items():
        paths[name] = str(tmp_path / f"{name}.yaml")
        Path(paths[name]).write_text(yaml.safe_dump(scenario([{"name": "e", **engine}], maintenance)))
    env = {**os.environ, "PYTHONPATH": str(REPO), "LAYOUTBENCH_ERROR_LOG": str(tmp_path / "error.log")}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(paths)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got.pop("_spark") == [False, ""]  # no SparkContext, no child process (the JVM) was started
    for name, (code, output) in got.items():
        flat = " ".join(output.split())
        assert code == EXIT_BAD_INPUT and MISTAKES[name][2] in flat and flat.count(" - ") == 1, (name, flat)
        assert "Traceback" not in output


def test_a_run_honours_the_async_tables_commit_count(spark, tmp_path: Path) -> None:
    """The article's async table in a real run: the runner's async service polls every 50 ms, yet
    clusters only once three commits followed the last clustering (async.max.commits = 3). Its sort
    column is this workload's (the article's review_date is not a column here, and validate refuses it)."""
    from bench.runner import run_scenario
    from runresults import Results

    table, maintenance = ARTICLE_TABLES["async"]
    doc = scenario([{"name": "ours", "kind": "clustering", "config": table}],
                   {**maintenance, "async_interval_s": 0.05, "final": False})
    doc["workload"].update(num_batches=8, batch_records=200)
    doc.update(queries={"suite": ["point_lookup"], "warm_runs": 1, "checkpoint_every": 100},
               isolation={"enabled": False})
    results = Results(run_scenario(parse_scenario(doc), out=tmp_path, progress=False, keep_tables=False))
    commits = results.table("commits").sort_values("instant")
    kinds = commits["kind"].tolist()
    runs = [i for i, k in enumerate(kinds) if k == "clustering"]
    assert runs, kinds  # the small files (all under the table's 200 MB limit) were clustered
    ingests_before = [kinds[:i].count("ingest") for i in runs]
    assert all(b - a >= 3 for a, b in zip([0, *ingests_before], ingests_before, strict=False)), kinds


@pytest.mark.parametrize("engine", [
    {"name": "ours", "kind": "clustering", "config": {"hoodie.clustering.plan.strategy.sort.columns": "review_date"}},
    {"name": "ours", "kind": "clustering", "config": {"sort_columns": ["service", "review_date"]}},
    {"name": "real", "kind": "hudi",
     "config": {"preset": "hudi_clustering", "hoodie.clustering.plan.strategy.sort.columns": "review_date"}},
    {"name": "real", "kind": "hudi", "config": {"preset": "hudi_clustering",
                                                "options": {"hoodie.clustering.plan.strategy.sort.columns": "review_date"}}},
    {"name": "peer", "kind": "delta_peer", "config": {"sort_columns": ["review_date"]}},
])
def test_a_sort_column_the_rows_lack_is_refused(engine: dict, tmp_path: Path) -> None:
    """The article's sort column pasted unchanged: this workload has no review_date. Our clustering
    would plan nothing and Apache Hudi's sort would fail inside Spark; validate names it first."""
    result = _validate(scenario([engine]), tmp_path)
    flat = " ".join(result.output.split())
    assert result.exit_code == EXIT_BAD_INPUT, flat
    assert "['review_date'], not a column of this workload" in flat and "'service'" in flat, flat
    assert "Traceback" not in result.output
