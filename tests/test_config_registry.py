"""The config registry (engines/config/registry.py) holds every key once, and what is built from it
agrees with it: the engines' config classes, ``layoutbench validate``, ``service --hoodie-conf`` and
docs/config.md. Adding a ``hoodie.*`` key is one registry entry (shown in a child process, so the
registry here is never changed). ``validate`` refuses each config mistake before Spark starts, in
one message naming the key, with the exit code of a bad scenario."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.hoodie_conf import read_config
from bench.scenario import ScenarioError, parse_scenario
from bench.simulate.sweep import load_sweep
from engines.config import docs
from engines.config.registry import (
    BLOOM,
    HUDI,
    OURS,
    PRESET_NAMES,
    SETTINGS,
    for_kind,
    hudi_names,
    hudi_preset_keys,
)
from engines.hudi.config import KIND_OF_PRESET
from engines.kinds import KINDS

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()
# fields of a config class that are not keys: the nested planner config, the workload's columns,
# real Hudi's pass-through map
NOT_KEYS = {"planner", "compaction", "clustering", "record_key_column", "partition_column", "options"}


def test_a_shorthand_has_one_meaning_per_kind() -> None:
    pairs = Counter((kind, s.name) for s in SETTINGS if s.name for kind in s.kinds)
    assert [p for p, n in pairs.items() if n > 1] == []
    sets = Counter((kind, s.hudi, s.name) for s in SETTINGS if s.hudi for kind in s.kinds if kind != HUDI)
    assert [p for p, n in sets.items() if n > 1] == []
    for preset in PRESET_NAMES:  # real Hudi: one entry per key under each preset (raises otherwise)
        assert hudi_preset_keys(preset)
    assert all(s.hudi is None or s.hudi.startswith("hoodie.") for s in SETTINGS)
    # the control honours Option 1's ingest keys only: its compaction and schedule keys are refused
    assert set(for_kind("append_only")) < set(for_kind("append_compaction"))
    assert {"small_file_limit", "target_file_size", "mode", "order", "min_files_per_partition",
            "cleaner_commits_retained"} & set(for_kind("append_only")) == set()


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_field_of_a_config_class_is_a_registry_key_of_its_kind(kind: str) -> None:
    entry = KINDS[kind]
    fields = {f.name for f in dataclasses.fields(entry.load("config"))}
    if entry.planner:
        fields |= {f.name for f in dataclasses.fields(entry.load("planner"))}
    keys = for_kind(entry.settings or kind)  # a kind may read another kind's keys (the MOR kinds: hudi's)
    if kind == "append_only":  # Option 1's config class, of which the control honours (and takes) a part
        assert set(keys) < fields - NOT_KEYS
    else:
        assert fields - NOT_KEYS == set(keys)
    for name, s in keys.items():  # and each starts from the registry's default
        cls = entry.load("planner") if entry.planner and name in {
            f.name for f in dataclasses.fields(entry.load("planner"))} else entry.load("config")
        default = {f.name: f.default for f in dataclasses.fields(cls)}[name]
        if name == "preset" and kind != (entry.settings or kind):  # a kind of one preset starts from its own
            assert KIND_OF_PRESET[default] == kind
            continue
        assert default in (s.default, dataclasses.MISSING), name


def test_the_docs_table_is_generated_from_the_registry() -> None:
    assert (REPO / "docs" / "config.md").read_text() == docs.render(), \
        "docs/config.md is stale: python -m engines.config.docs > docs/config.md"
    table = docs.render()
    assert all(f"`{key}`" in table for key in hudi_names())
    assert all(f"`{s.name}`" in table for s in SETTINGS if s.name)


# every shipped scenario validates: tests/test_scenario.py::test_shipped_scenarios_validate
SWEEPS = sorted((REPO / "bench" / "sweeps").glob("*.yaml"))


@pytest.mark.parametrize("path", SWEEPS, ids=[p.name for p in SWEEPS])
def test_every_sweep_in_the_repository_validates_at_every_point(path: Path) -> None:
    grid = load_sweep(path)
    if grid.fast:  # a production map's point is a target the simulator replays, not a scenario edit
        from bench.simulate.production_map import point_problems
        from bench.simulate.sweep import fast_settings

        settings = fast_settings(grid)
        assert {str(p): point_problems(p, settings) for p in grid.points() if point_problems(p, settings)} == {}
        return
    for point in grid.points():
        grid.scenario(point)


def _scenario(engines: list[dict], maintenance: dict | None = None) -> dict:
    return {"name": "mistakes", "workload": {"num_batches": 3, "batch_records": 100},
            "maintenance": maintenance or {"mode": "inline", "every_commits": 3}, "engines": engines}


MISTAKES = [
    # (engine, the key the message must name, a phrase of it)
    ({"kind": "clustering", "config": {"sort_colums": ["service"]}}, "sort_colums", "did you mean 'sort_columns'"),
    ({"kind": "cow_baseline", "config": {"bogus_knob": 1}}, "bogus_knob", "not a config key of engine kind"),
    ({"kind": "append_compaction", "config": {"hoodie.parquet.small.file.limt": 1}},
     "hoodie.parquet.small.file.limt", "did you mean 'hoodie.parquet.small.file.limit'"),
    ({"kind": "clustering", "config": {"hoodie.clustering.plan.strategy.max.num.groups": 3, "max_num_groups": 4}},
     "max_num_groups and hoodie.clustering.plan.strategy.max.num.groups", "set twice"),
    ({"kind": "clustering", "config": {"max_file_size": 1000, "max_file_mb": 1}}, "max_file_mb", "set twice"),
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.plan.strategy.sort.colums": "ts"}},
     "hoodie.clustering.plan.strategy.sort.colums", "did you mean 'hoodie.clustering.plan.strategy.sort.columns'"),
    ({"kind": "hudi", "config": {"preset": "hudi_cow", "options": {"hoodie.parquet.max.file.sise": "1"}}},
     "hoodie.parquet.max.file.sise", "not a Hudi key this harness knows"),
    ({"kind": "hudi", "config": {"presett": "hudi_cow"}}, "presett", "did you mean 'preset'"),
    ({"kind": "hudi", "config": {"max_file_size": 1000, "hoodie.parquet.max.file.size": 2000}},
     "max_file_size and hoodie.parquet.max.file.size", "set twice"),
    # hudi_clustering's small_file_limit is its clustering plan's: the plan's key is the double set
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "small_file_limit": 52428800,
                                 "hoodie.clustering.plan.strategy.small.file.limit": 209715200}},
     "small_file_limit and hoodie.clustering.plan.strategy.small.file.limit", "set twice"),
    # a key the preset would drop
    ({"kind": "hudi", "config": {"preset": "hudi_cow", "sort_columns": ["service"]}}, "sort_columns",
     "preset 'hudi_cow' does not read it"),
    ({"kind": "hudi_mor", "config": {"target_file_size": 1000}}, "target_file_size",
     "preset 'hudi_mor' does not read it"),
    ({"kind": "hudi", "config": {"mode": "manual"}}, "mode", "preset 'hudi_cow' does not read it"),
    ({"kind": "hudi", "config": {"hoodie.compact.inline.max.delta.commits": 3}},
     "hoodie.compact.inline.max.delta.commits", "preset 'hudi_cow' does not read it"),
    ({"kind": "hudi_mor", "config": {"hoodie.compact.inline": False}}, "hoodie.compact.inline",
     "false would leave every log file uncompacted"),
    # values outside what Apache Hudi 1.2 implements
    ({"kind": "hudi", "config": {"hoodie.index.type": "NO_SUCH_INDEX"}}, "hoodie.index.type", "'GLOBAL_BLOOM'"),
    ({"kind": "hudi", "config": {"hoodie.bulkinsert.sort.mode": "SIDEWAYS"}}, "hoodie.bulkinsert.sort.mode",
     "'PARTITION_SORT'"),
    ({"kind": "hudi", "config": {"hoodie.cleaner.policy": "KEEP_NOTHING"}}, "hoodie.cleaner.policy",
     "'KEEP_LATEST_FILE_VERSIONS'"),
    ({"kind": "hudi", "config": {"options": {"hoodie.write.table.version": 42}}}, "hoodie.write.table.version",
     "expected one of ['6', '8', '9']"),
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.plan.strategy.class":
                                 "SparkRecentDaysClusteringPlanStrategy"}},
     "hoodie.clustering.plan.strategy.class", "Apache Hudi 1.2 has no SparkRecentDaysClusteringPlanStrategy"),
    # the engines' own checks, now validate's: each value by its registry parser, the whole config built
    ({"kind": "delta_peer", "config": {"min_files": 1}}, "min_files", "one file cannot be compacted"),
    ({"kind": "delta_peer", "config": {"small_file_limit": 0}}, "small_file_limit", "0 compacts nothing"),
    ({"kind": "clustering_mor", "config": {"insert_small_file_limit_mb": 500}}, "insert_small_file_limit",
     "must not exceed max_file_size"),
    ({"kind": "append_compaction", "config": {"bloom_fpp": 2}}, "bloom_fpp", "expected a number in (0, 1)"),
    ({"kind": "clustering", "config": {"lookback_partitions": -3}}, "lookback_partitions", "expected a number >= 0"),
    ({"kind": "append_only", "config": {"small_file_limit_mb": 50}}, "small_file_limit_mb",
     "not a config key of engine kind 'append_only'"),
    ({"kind": "hudi", "config": {"hoodie.parquet.compression.codec": "zstd"}}, "hoodie.parquet.compression.codec",
     "would undo the fair comparison"),
    ({"kind": "hudi", "config": {"options": {"hoodie.parquet.compression.codec": "ZSTD"}}},
     "hoodie.parquet.compression.codec", "would undo the fair comparison"),
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.inlne": "true"}},
     "hoodie.clustering.inlne", "did you mean 'hoodie.clustering.inline'"),
    # scheduling keys against the maintenance section (inline, every 3 commits), real Hudi's too
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.inline": "false"}},
     "hoodie.clustering.inline", "disagrees with the scenario's maintenance.mode 'inline'"),
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.inline.max.commits": 4}},
     "hoodie.clustering.inline.max.commits", "disagrees with the scenario's maintenance.every_commits 3"),
    ({"kind": "clustering", "config": {"hoodie.clustering.async.enabled": "true"}},
     "hoodie.clustering.async.enabled", "disagrees with the scenario's maintenance.mode 'inline'"),
    ({"kind": "clustering", "config": {"hoodie.clustering.async.max.commits": 3}},
     "hoodie.clustering.async.max.commits", "only async clustering reads it"),
    # the table's identity against the workload's
    ({"kind": "clustering", "config": {"hoodie.table.name": "reviews"}}, "hoodie.table.name",
     "disagrees with the engine's name (each engine's table is named after it), 'e'"),
    ({"kind": "hudi", "config": {"hoodie.datasource.write.recordkey.field": "uuid"}},
     "hoodie.datasource.write.recordkey.field", "disagrees with the workload's record key, 'trace_id'"),
    ({"kind": "cow_baseline", "config": {"hoodie.datasource.write.partitionpath.field": "city"}},
     "hoodie.datasource.write.partitionpath.field", "disagrees with the workload's partition column, 'dt'"),
    ({"kind": "append_compaction", "config": {"hoodie.datasource.write.precombine.field": "event_time"}},
     "hoodie.datasource.write.precombine.field", "disagrees with the workload's ordering field, 'ts'"),
    ({"kind": "hudi", "config": {"options": {
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"}}},
     "hoodie.datasource.write.keygenerator.class", "disagrees with the key generator"),
    ({"kind": "hudi", "config": {"hoodie.datasource.write.table.type": "MERGE_ON_READ"}},
     "hoodie.datasource.write.table.type", "copy-on-write"),
    # strategy classes: the ones we implement, by Hudi's names
    ({"kind": "clustering", "config": {"hoodie.clustering.plan.strategy.class":
                                       "org.apache.hudi.client.clustering.plan.strategy.SparkConsistentBucketClusteringPlanStrategy"}},
     "hoodie.clustering.plan.strategy.class", "hoodie.clustering.plan.partition.filter.mode"),
    ({"kind": "hudi", "config": {"preset": "hudi_clustering", "hoodie.clustering.execution.strategy.class":
                                 "org.apache.hudi.client.clustering.run.strategy.SparkSingleFileSortExecutionStrategy"}},
     "hoodie.clustering.execution.strategy.class", "execution strategy we implement is SparkSortAndSizeExecutionStrategy"),
    ({"kind": "append_compaction", "config": {"hoodie.clustering.plan.strategy.class": "SparkSizeBasedClusteringPlanStrategy"}},
     "hoodie.clustering.plan.strategy.class", "not a key our append_compaction engine implements"),
    ({"kind": "delta_peer", "config": {"hoodie.parquet.max.file.size": 1}}, "hoodie.parquet.max.file.size",
     "takes no hoodie.* keys"),
    ({"kind": "clustering", "config": {"hoodie.layout.optimize.strategy": "peano"}}, "hoodie.layout.optimize.strategy",
     "expected one of"),
]


@pytest.mark.parametrize("engine,key,phrase", MISTAKES, ids=[m[1] + "-" + m[0]["kind"] for m in MISTAKES])
def test_validate_refuses_a_config_mistake_naming_the_key(engine: dict, key: str, phrase: str, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_scenario([{"name": "e", **engine}])))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    flat = " ".join(result.output.split())
    assert key in flat and phrase in flat and ("engines.e" in flat or "engine 'e'" in flat), flat
    assert "Traceback" not in result.output
    assert result.output.count("problem(s)") == 1 and flat.count(" - ") == 1, flat  # one message


@pytest.mark.parametrize("spelling", ["z-order", "ZORDER", "zorder", "Z_ORDER"])
def test_hudis_own_value_spellings_are_accepted(spelling: str) -> None:
    sc = parse_scenario(_scenario([
        {"name": "ours", "kind": "clustering",
         "config": {"hoodie.layout.optimize.strategy": spelling, "sort_columns": ["service", "ts"]}},
        {"name": "real", "kind": "hudi",
         "config": {"preset": "hudi_clustering", "hoodie.layout.optimize.strategy": spelling}}]))
    assert read_config("clustering", sc.engines[0].config)["ordering"] == "zorder"
    assert read_config(HUDI, sc.engines[1].config)["options"]["hoodie.layout.optimize.strategy"] == spelling
    for name in ("hilbert", "HILBERT", "linear", "LINEAR"):
        assert read_config("clustering", {"hoodie.layout.optimize.strategy": name})["ordering"] == name.lower()


def test_real_hudi_takes_every_registry_key_and_only_those() -> None:
    """Every hoodie.* key of the registry passes to real Hudi (the article's keys among them); the
    bloom keys, which real Hudi reads from its options, are not shorthands of the hudi kind."""
    assert not set(BLOOM) & set(for_kind(HUDI))
    bloom_off = read_config(HUDI, {"hoodie.parquet.bloom.filter.enabled": "false"})
    assert bloom_off == {"options": {"hoodie.parquet.bloom.filter.enabled": "false"}}
    with pytest.raises(ValueError, match="bloom_filter: not a config key of engine kind 'hudi'"):
        read_config(HUDI, {"bloom_filter": False})
    for kind in OURS:
        with pytest.raises(ScenarioError, match="not a key our"):
            parse_scenario(_scenario([{"name": "e", "kind": kind, "config": {"hoodie.no.such.key": 1}}]))


NEW_KEY = textwrap.dedent('''
    """A child process: a new hoodie.* key added to the registry before anything is built from it."""
    import json, sys, tempfile
    from pathlib import Path

    from engines.config import parsers, registry

    registry.SETTINGS = (*registry.SETTINGS, registry.Setting(
        "test_knob", ("clustering",), 7, parsers.positive, "count", "a key added by a test",
        hudi="hoodie.clustering.test.knob"))

    import yaml
    from typer.testing import CliRunner

    from bench.cli import app
    from bench.engine_factory import resolve_planner
    from bench.scenario import load_scenario
    from bench.service import build_service_engine
    from engines.clustering.engine import Option2Config
    from engines.config.docs import render
    from engines.table.table import HudiTable, TableConfig

    out, tmp = {}, Path(tempfile.mkdtemp())
    doc = {"name": "k", "workload": {"num_batches": 3, "batch_records": 100}, "engines": [
        {"name": "e", "kind": "clustering", "config": {"hoodie.clustering.test.knob": "9"}},
        {"name": "s", "kind": "clustering", "config": {"test_knob": 8}},
        {"name": "h", "kind": "hudi", "config": {"hoodie.clustering.test.knob": 5}}]}
    (tmp / "ok.yaml").write_text(yaml.safe_dump(doc))
    out["validate"] = CliRunner().invoke(app, ["validate", str(tmp / "ok.yaml")]).exit_code
    sc = load_scenario(tmp / "ok.yaml")
    out["engine_config"] = [Option2Config(**resolve_planner(e, sc)[1]).test_knob for e in sc.engines[:2]]
    out["default"] = Option2Config().test_knob
    doc["engines"] = [{"name": "e", "kind": "clustering", "config": {"hoodie.clustering.test.knob": 0}}]
    (tmp / "bad.yaml").write_text(yaml.safe_dump(doc))
    bad = CliRunner().invoke(app, ["validate", str(tmp / "bad.yaml")])
    out["bad"] = [bad.exit_code, "hoodie.clustering.test.knob=0" in bad.output]
    table = HudiTable.create(str(tmp / "t"), TableConfig("t", "dt", "trace_id"))
    engine = build_service_engine(table, "clustering", {"hoodie.clustering.test.knob": "6"})
    out["service"] = engine.config.test_knob
    out["docs"] = "| `hoodie.clustering.test.knob` | `test_knob` | 7 | count | clustering |" in render()
    print(json.dumps(out))
''')


def test_a_new_hoodie_key_is_one_registry_entry() -> None:
    """One entry added (in a child process): validate reads it in Hudi's spelling and ours, and refuses
    a bad value naming it; the engine's config class has the field with its default; the service's
    --hoodie-conf sets it; the docs table lists it. Nothing else was edited."""
    got = subprocess.run([sys.executable, "-c", NEW_KEY], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    import json

    assert json.loads(got.stdout.strip().splitlines()[-1]) == {
        "validate": 0, "engine_config": [9, 8], "default": 7, "bad": [EXIT_BAD_INPUT, True], "service": 6,
        "docs": True}
    assert "test_knob" not in {s.name for s in SETTINGS}  # this process's registry is untouched


def test_hudi_clusterings_own_small_file_setting_is_not_a_double_set() -> None:
    """The article's pair under hudi_clustering: the plan's limit by its shorthand and the insert's
    limit at 0 — one field each, both reach Hudi."""
    fields = read_config(HUDI, {"preset": "hudi_clustering", "small_file_limit": 50 * 2**20,
                                "hoodie.parquet.small.file.limit": 0})
    assert fields["small_file_limit"] == 50 * 2**20 and fields["options"] == {"hoodie.parquet.small.file.limit": 0}


def test_recent_days_plan_class_is_our_recent_days_filter() -> None:
    """Hudi 0.12's SparkRecentDaysClusteringPlanStrategy is the size-based plan with the RECENT_DAYS
    filter, which our planner implements; a filter mode that contradicts it is refused."""
    cls = "org.apache.hudi.client.clustering.plan.strategy.SparkRecentDaysClusteringPlanStrategy"
    assert read_config("clustering", {"hoodie.clustering.plan.strategy.class": cls})["partition_filter_mode"] \
        == "RECENT_DAYS"
    with pytest.raises(ValueError, match="sets partition_filter_mode RECENT_DAYS"):
        read_config("clustering", {"hoodie.clustering.plan.partition.filter.mode": "SELECTED_PARTITIONS",
                                   "hoodie.clustering.plan.strategy.class": cls})


def test_real_hudis_options_are_generated_from_the_registry() -> None:
    """Every key the hudi engine writes is a registry key of its preset, and every field of the hudi
    kind with a Hudi key under the preset reaches the options."""
    from engines.config.registry import hudi_preset_keys
    from engines.hudi.config import HudiConfig, HudiMorClusteringConfig, hoodie_options

    for cfg in (HudiConfig(), HudiConfig(preset="hudi_clustering", sort_columns=("service",)),
                HudiMorClusteringConfig(sort_columns=("service",))):
        opts = hoodie_options(cfg, "t", "dt", "trace_id")
        own = hudi_preset_keys(cfg.preset)
        assert set(opts) <= set(own)
        named = {key for key, s in own.items() if s.name}
        assert named <= set(opts), named - set(opts)
    mor = hoodie_options(HudiMorClusteringConfig(), "t", "dt", "trace_id")
    assert mor["hoodie.compact.inline.trigger.strategy"] == "NUM_COMMITS"
    assert mor["hoodie.parquet.small.file.limit"] == "0"
    assert mor["hoodie.clustering.plan.strategy.small.file.limit"] == str(HudiConfig().small_file_limit)


NEW_HUDI_SHORTHAND = textwrap.dedent('''
    """A child process: two hudi-kind shorthands added, one with a Hudi key and one without."""
    import json

    from engines.config import parsers, registry

    registry.SETTINGS = (*registry.SETTINGS,
        registry.Setting("test_hudi_knob", ("hudi",), 7, parsers.positive, "count", "with a key",
                         hudi="hoodie.test.hudi.knob"),
        registry.Setting("test_hudi_unkeyed", ("hudi",), 7, parsers.positive, "count", "without a key"))

    from bench.hoodie_conf import HoodieConfError, read_config
    from engines.hudi.config import HudiConfig, hoodie_options

    out = {"reaches": hoodie_options(HudiConfig(**read_config("hudi", {"test_hudi_knob": 9})), "t", "dt",
                                     "trace_id").get("hoodie.test.hudi.knob")}
    try:
        read_config("hudi", {"test_hudi_unkeyed": 9})
        out["unkeyed"] = "accepted"
    except HoodieConfError as exc:
        out["unkeyed"] = "no Hudi key carries it" in str(exc) and "test_hudi_unkeyed" in str(exc)
    print(json.dumps(out))
''')


def test_a_new_hudi_shorthand_reaches_hudi_or_is_refused() -> None:
    got = subprocess.run([sys.executable, "-c", NEW_HUDI_SHORTHAND], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    import json

    assert json.loads(got.stdout.strip().splitlines()[-1]) == {"reaches": "9", "unkeyed": True}


NEW_SCHEDULING_COUNT = textwrap.dedent('''
    """A child process: a new scheduling count, read by inline mode as maintenance.every_commits."""
    import json

    from engines.config import parsers, registry

    registry.SETTINGS = (*registry.SETTINGS, registry.Setting(
        None, ("clustering",), 4, parsers.positive, "commits", "a test scheduling count",
        hudi="hoodie.clustering.test.max.commits", maintenance="commits", counts_for=("inline", "every_commits")))

    from bench.hoodie_conf import HoodieConfError, Schedule, read_config

    out = {"agrees": read_config("clustering", {"hoodie.clustering.test.max.commits": 4}, schedule=Schedule("inline", 4))}
    try:
        read_config("clustering", {"hoodie.clustering.test.max.commits": 3}, schedule=Schedule("inline", 4))
    except HoodieConfError as exc:
        out["disagrees"] = "disagrees with the scenario's maintenance.every_commits 4" in str(exc)
    print(json.dumps(out))
''')


def test_a_new_scheduling_count_is_one_registry_entry() -> None:
    got = subprocess.run([sys.executable, "-c", NEW_SCHEDULING_COUNT], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr[-3000:]
    import json

    assert json.loads(got.stdout.strip().splitlines()[-1]) == {"agrees": {}, "disagrees": True}
