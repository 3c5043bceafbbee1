"""One config language: Apache Hudi's ``hoodie.*`` keys in a scenario configure our engines exactly
as the scenario's shorthands do; the clustering article's config table pastes in as is; a key we do
not implement is refused by ``layoutbench validate``, named."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app
from bench.engine_factory import build_engine, engine_bloom, resolve_planner
from bench.scenario import ScenarioError, load_scenario, parse_scenario
from engines.config.registry import MB
from engines.table.bloom import BloomConfig

runner = CliRunner()


def scenario(engines: list[dict], maintenance: dict | None = None) -> dict:
    return {"name": "hoodie", "workload": {"num_batches": 3, "batch_records": 100},
            "sizing": {"small_file_limit_mb": 1, "target_file_mb": 2, "max_file_mb": 2},
            "maintenance": maintenance or {"mode": "inline", "every_commits": 3}, "engines": engines}


# (kind, our shorthand config, the same in Hudi's keys)
PAIRS = [
    ("clustering",
     {"small_file_limit_mb": 0.5, "target_file_mb": 3, "max_num_groups": 7, "max_bytes_per_group": 9 * MB,
      "sort_columns": ["service", "ts"], "partition_filter_mode": "RECENT_DAYS", "lookback_partitions": 4,
      "ordering": "zorder", "max_parallel_groups": 3, "update_strategy": "allow", "cleaner_commits_retained": 4,
      "max_file_mb": 5},
     {"hoodie.clustering.plan.strategy.small.file.limit": 524288,
      "hoodie.clustering.plan.strategy.target.file.max.bytes": "3145728",
      "hoodie.clustering.plan.strategy.max.num.groups": 7,
      "hoodie.clustering.plan.strategy.max.bytes.per.group": 9 * MB,
      "hoodie.clustering.plan.strategy.sort.columns": "service,ts",
      "hoodie.clustering.plan.partition.filter.mode": "recent_days",
      "hoodie.clustering.plan.strategy.daybased.lookback.partitions": 4,
      "hoodie.layout.optimize.strategy": "ZORDER", "hoodie.clustering.max.parallelism": 3,
      "hoodie.clustering.updates.strategy": "org.apache.hudi.client.clustering.update.strategy.SparkAllowUpdateStrategy",
      "hoodie.cleaner.commits.retained": 4, "hoodie.parquet.max.file.size": 5 * MB,
      "hoodie.parquet.small.file.limit": 0}),
    ("clustering",
     {"record_size_estimate": 175, "record_size_estimation_threshold": 0.5, "insert_split_size": 999,
      "auto_split_inserts": False},
     {"hoodie.copyonwrite.record.size.estimate": 175, "hoodie.record.size.estimation.threshold": 0.5,
      "hoodie.copyonwrite.insert.split.size": 999, "hoodie.copyonwrite.insert.auto.split": "false"}),
    ("append_compaction",
     {"small_file_limit_mb": 0.25, "target_file_mb": 1.5, "max_file_mb": 1.5, "cleaner_commits_retained": 3},
     {"hoodie.parquet.small.file.limit": MB // 4, "hoodie.parquet.max.file.size": int(1.5 * MB),
      "hoodie.cleaner.commits.retained": 3}),
    ("cow_baseline",
     {"small_file_limit_mb": 0.75, "max_file_mb": 1.5, "record_size_estimate": 175, "insert_split_size": 999,
      "auto_split_inserts": False, "operation": "bulk_insert", "cleaner_commits_retained": 5},
     {"hoodie.parquet.small.file.limit": int(0.75 * MB), "hoodie.parquet.max.file.size": int(1.5 * MB),
      "hoodie.copyonwrite.record.size.estimate": 175, "hoodie.copyonwrite.insert.split.size": 999,
      "hoodie.copyonwrite.insert.auto.split": "false", "hoodie.datasource.write.operation": "BULK_INSERT",
      "hoodie.cleaner.commits.retained": 5}),
]


@pytest.mark.parametrize("kind,shorthand,hoodie", PAIRS, ids=[p[0] for p in PAIRS])
def test_hoodie_keys_configure_our_engines_as_the_shorthands_do(kind, shorthand, hoodie, tmp_path: Path) -> None:
    sc = parse_scenario(scenario([{"name": "short", "kind": kind, "config": shorthand},
                                  {"name": "hudi_keys", "kind": kind, "config": hoodie}]))
    short, keys = sc.engines
    assert resolve_planner(short, sc) == resolve_planner(keys, sc)  # planner config and engine-level keys
    built = [build_engine(e, sc, str(tmp_path / e.name)).config for e in (short, keys)]
    assert built[0] == built[1]  # the engines' whole configs, planner included
    default = parse_scenario(scenario([{"name": "plain", "kind": kind}]))
    assert resolve_planner(default.engines[0], default) != resolve_planner(keys, sc)  # the keys did something


@pytest.mark.parametrize("kind,key,needle", [
    ("clustering", "hoodie.clustering.no.such.key", "not a key our clustering engine implements"),
    ("append_compaction", "hoodie.copyonwrite.record.size.estimate", "real bytes written"),
    ("append_compaction", "hoodie.clustering.plan.strategy.sort.columns", "not a key our append_compaction"),
    ("cow_baseline", "hoodie.clustering.inline", "not a key our cow_baseline engine implements"),
])
def test_validate_refuses_a_key_we_do_not_implement_naming_it(kind, key, needle, tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario([{"name": "e", "kind": kind, "config": {key: "1"}}])))
    with pytest.raises(ScenarioError, match=needle):
        load_scenario(path)
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == EXIT_BAD_INPUT
    assert key in result.output and "engines.e" in result.output


def test_bad_values_and_clashes_are_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="hoodie.parquet.small.file.limit=104857600: Option 2 inserts never merge"):
        parse_scenario(scenario([{"name": "e", "kind": "clustering",
                                  "config": {"hoodie.parquet.small.file.limit": 104857600}}]))
    with pytest.raises(ScenarioError, match="hoodie.clustering.max.parallelism=many"):
        parse_scenario(scenario([{"name": "e", "kind": "clustering",
                                  "config": {"hoodie.clustering.max.parallelism": "many"}}]))
    with pytest.raises(ScenarioError, match=r"engines.e: max_num_groups and "
                       r"hoodie.clustering.plan.strategy.max.num.groups set twice"):  # by validate, not the run
        parse_scenario(scenario([{"name": "e", "kind": "clustering",
                                  "config": {"hoodie.clustering.plan.strategy.max.num.groups": 3,
                                             "max_num_groups": 4}}]))


def test_every_consumer_reads_an_engines_bloom_filter_from_its_hudi_key() -> None:
    """The runner's reference write, the simulator and the calibration size files by engine_bloom:
    Hudi's key switches the footer off like the shorthand, in real Hudi's options too; delta-rs has none."""
    off = {"hoodie.parquet.bloom.filter.enabled": "false"}
    sc = parse_scenario(scenario([{"name": "default", "kind": "append_compaction"},
                                  {"name": "key", "kind": "clustering", "config": off},
                                  {"name": "short", "kind": "cow_baseline", "config": {"bloom_filter": False}},
                                  {"name": "hudi_key", "kind": "hudi", "config": {"preset": "hudi_cow", **off}},
                                  {"name": "hudi", "kind": "hudi", "config": {"preset": "hudi_cow"}},
                                  {"name": "delta", "kind": "delta_peer"}]))
    got = {e.name: engine_bloom(e, sc).enabled for e in sc.engines}
    assert got == {"default": True, "key": False, "short": False, "hudi_key": False, "hudi": True, "delta": False}


@pytest.mark.parametrize("kind", ["cow_baseline", "append_compaction", "clustering", "append_only"])
def test_each_engine_writes_the_footer_its_bloom_key_asks_for(kind: str, tmp_path: Path) -> None:
    """The table every engine writes through carries the engine's bloom setting (the writer reads
    table.bloom): append_only used to keep the table's default, so its files got the ~431 KB filter
    while its config, and the simulator, switched it off."""
    off = {"hoodie.parquet.bloom.filter.enabled": "false"}
    sc = parse_scenario(scenario([{"name": "off", "kind": kind, "config": off},
                                  {"name": "on", "kind": kind, "config": {"bloom_num_entries": 1000}}]))
    built = {e.name: build_engine(e, sc, str(tmp_path / e.name)) for e in sc.engines}
    assert built["off"].table.bloom == engine_bloom(sc.engines[0], sc) == BloomConfig(enabled=False)
    assert built["on"].table.bloom == engine_bloom(sc.engines[1], sc) == BloomConfig(num_entries=1000)
