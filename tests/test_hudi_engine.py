"""Apache Hudi itself in the harness: the ``hudi`` engine on the same batches as ours, and real
Hudi (``spark.read.format("hudi")``) as the reference reader of every table our engines write.

The session loads Hudi's Spark bundle from Maven Central (cached in ~/.ivy2), see tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench.scenario import ScenarioError, load_scenario

HUDI_SMALL = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "hudi_small.yaml"


def _scenario_with(tmp_path: Path, config: dict) -> Path:
    doc = yaml.safe_load(HUDI_SMALL.read_text())
    doc["engines"] = [{"name": "h", "kind": "hudi", "config": config}]
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.mark.parametrize(("config", "named"), [
    ({"preset": "hudi_mor"}, "hudi_mor"),
    ({"options": {"parquet.max.file.size": 1}}, "parquet.max.file.size"),
    ({"parquet_small_file_limit": 1}, "parquet_small_file_limit"),
    ({"hoodie.clustering.inline": True, "mode": "sometimes"}, "sometimes"),
])
def test_validate_refuses_bad_hudi_config_naming_it(tmp_path: Path, config: dict, named: str) -> None:
    with pytest.raises(ScenarioError, match=named.replace(".", r"\.")):
        load_scenario(_scenario_with(tmp_path, config))


def test_hoodie_keys_pass_through_unchanged(tmp_path: Path) -> None:
    """Top-level hoodie.* keys (a Hudi config table pasted into a scenario) join ``options``; they win
    over the preset's and the sizing's values."""
    from bench.hoodie_conf import read_config
    from engines.hudi.config import HudiConfig, hoodie_options

    config = {"preset": "hudi_clustering", "hoodie.parquet.small.file.limit": 104857600,
              "options": {"hoodie.clustering.plan.strategy.sort.columns": "service"}}
    load_scenario(_scenario_with(tmp_path, config))
    opts = hoodie_options(HudiConfig(**read_config("hudi", config)), "t", "dt", "trace_id")  # type: ignore[arg-type]
    assert opts["hoodie.parquet.small.file.limit"] == "104857600"
    assert opts["hoodie.clustering.plan.strategy.sort.columns"] == "service"
    assert opts["hoodie.write.table.version"] == "6" and opts["hoodie.datasource.write.operation"] == "insert"


@pytest.fixture(scope="module")
def hudi_run(spark, tmp_path_factory):
    from bench.runner import run_scenario
    from runresults import Results

    out = tmp_path_factory.mktemp("hudi")
    return Results(run_scenario(load_scenario(HUDI_SMALL), out=out, progress=False, run_id="hudi"))


def _hudi_rows(spark, path: str, **options: str):
    reader = spark.read.format("hudi")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(path)


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
def test_real_hudi_tables_verify_like_ours(spark, hudi_run) -> None:
    from engines.spark.session import HUDI_BUNDLE
    from engines.table.table import HudiTable
    from workloads.truth import expected_table

    run = hudi_run.run
    assert run["verification"]["ok"], run["verification"]["failures"]
    group_artifact, version = HUDI_BUNDLE.rsplit(":", 1)
    assert run["versions"][group_artifact] == version
    commits = hudi_run.table("commits")
    scenario = load_scenario(HUDI_SMALL)
    truth = expected_table(scenario.workload, scenario.workload.num_batches - 1)
    for name in ("hudi_cow", "hudi_clustering", "hudi_clustering_sorted"):
        rows = commits[commits.engine == name]
        assert (rows.kind == "ingest").sum() == scenario.workload.num_batches
        path = run["engines"][name]["table_path"]
        ours = sum(s.num_rows for s in HudiTable.open(path).view().snapshot())
        assert ours == _hudi_rows(spark, path).count() == truth.num_rows
    for name in ("hudi_clustering", "hudi_clustering_sorted"):
        assert (commits[commits.engine == name].action == "replacecommit").sum() >= 2, name


def _reference_read(spark, path: str, truth_keys: set[str]) -> dict[str, object]:
    """Snapshot, time travel at two instants and one incremental query by real Hudi, each checked
    against our own view of the same table."""
    from pyspark.sql import functions as F

    from engines.table.table import HudiTable

    table = HudiTable.open(path)
    view = table.view()
    snap = _hudi_rows(spark, path)
    keys = {r[0] for r in snap.select("_hoodie_record_key").collect()}
    assert snap.count() == len(truth_keys) and keys == truth_keys
    retained = view.earliest_retained_by_cleaner()  # older instants: Hudi refuses them too (cleaned)
    data = [i.timestamp for i in view.timeline.completed_data_instants()
            if retained is None or i.timestamp >= retained[0]]
    assert len(data) >= 2, data
    t1, t2 = data[0], data[-1]
    for t in (t1, t2):
        ours = sum(s.num_rows for s in view.snapshot(as_of=t))
        assert _hudi_rows(spark, path, **{"as.of.instant": t}).count() == ours, t
    ours_t2 = spark.read.parquet(*[table.storage.abs(s.path) for s in view.snapshot(as_of=t2)])
    expected = ours_t2.where((F.col("_hoodie_commit_time") > t1) & (F.col("_hoodie_commit_time") <= t2))
    incr = _hudi_rows(spark, path, **{"hoodie.datasource.query.type": "incremental",
                                      "hoodie.datasource.read.begin.instanttime": t1,
                                      "hoodie.datasource.read.end.instanttime": t2})
    assert incr.count() == expected.count(), (t1, t2)
    return {"rows": len(keys), "instants": (t1, t2)}


def _truth_keys(small_run) -> tuple[set[str], int]:
    from workloads.truth import expected_table

    spec = load_scenario(Path(small_run.run["scenario_path"])).workload
    truth = expected_table(spec, spec.num_batches - 1)
    return set(truth.column("trace_id").to_pylist()), truth.num_rows


@pytest.mark.parametrize("engine", ["baseline", "option1_cbd", "option2", "option2_sorted"])
def test_real_hudi_reads_every_engine_table(spark, small_run, engine: str) -> None:
    """Apache Hudi as the reference reader: snapshot, time travel at two instants, incremental."""
    _reference_read(spark, small_run.run["engines"][engine]["table_path"], _truth_keys(small_run)[0])


def _incremental(spark, path: str, begin: str, end: str):
    return _hudi_rows(spark, path, **{"hoodie.datasource.query.type": "incremental",
                                      "hoodie.datasource.read.begin.instanttime": begin,
                                      "hoodie.datasource.read.end.instanttime": end})


def test_what_real_hudi_does_with_option1_basefilecompaction(spark, small_run) -> None:
    """Findings (design review): Hudi reads an Option 1 table's snapshot correctly (the compaction
    completes as a plain ``commit``; ``.basefilecompaction.requested/.inflight`` are an action Hudi
    does not know and ignores). But (1) in RFC order the compaction deletes its inputs with no
    replace or clean record, so time travel to any instant before it returns 0 rows in Hudi with
    no error (our view agrees: the files are gone); (2) an incremental query starting before it
    fails in Hudi (FileNotFound on a deleted input); (3) the compaction rewrites
    ``_hoodie_commit_time`` and is a plain commit, so Hudi's incremental query re-emits every
    compacted row as new, where across an Option 2 ``replacecommit`` it returns none."""
    from py4j.protocol import Py4JJavaError

    from engines.table.table import HudiTable

    keys, rows = _truth_keys(small_run)
    engines = small_run.run["engines"]
    rfc = engines["option1_rfc"]["table_path"]
    timeline = HudiTable.open(rfc).view().timeline
    actions = [(i.timestamp, i.action) for i in timeline.instants]
    assert ("basefilecompaction" in {a for _, a in actions})
    data = [i.timestamp for i in timeline.completed_data_instants()]
    snap = _hudi_rows(spark, rfc)
    assert snap.count() == rows and {r[0] for r in snap.select("_hoodie_record_key").collect()} == keys
    before = data[-2]  # every batch ingested, the final compaction not yet run: 9000 rows were committed
    assert _hudi_rows(spark, rfc, **{"as.of.instant": before}).count() == 0
    assert sum(s.num_rows for s in HudiTable.open(rfc).view().snapshot(as_of=before)) == 0
    with pytest.raises(Py4JJavaError, match="does not exist"):
        _incremental(spark, rfc, data[0], data[-1]).count()

    cbd = engines["option1_cbd"]["table_path"]
    cbd_data = [i.timestamp for i in HudiTable.open(cbd).view().timeline.completed_data_instants()]
    assert _incremental(spark, cbd, cbd_data[-2], cbd_data[-1]).count() == rows  # no new data, all rows again
    opt2 = engines["option2"]["table_path"]
    opt2_timeline = HudiTable.open(opt2).view().timeline
    last = opt2_timeline.completed_data_instants()
    assert last[-1].action == "replacecommit"
    assert _incremental(spark, opt2, last[-2].timestamp, last[-1].timestamp).count() == 0


@pytest.mark.parametrize("table_version", ["6", None])  # None: Hudi's own default table version
def test_inspect_reports_real_hudi_row_count(spark, tmp_path: Path, table_version: str | None) -> None:
    """``layoutbench inspect --json`` on tables Apache Hudi wrote (two commits, a clean retained)."""
    import json

    from typer.testing import CliRunner

    from bench.cli import app

    path = str(tmp_path / "t")
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
            "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.metadata.enable": "false",
            "hoodie.embed.timeline.server": "false", "hoodie.datasource.write.operation": "insert"}
    if table_version is not None:
        opts["hoodie.write.table.version"] = table_version
    for batch in range(2):
        rows = [(f"k{batch}-{i}", i, f"p{i % 3}") for i in range(200 + batch)]
        spark.createDataFrame(rows, "k string, ts long, p string").write.format("hudi").options(**opts) \
            .mode("append").save(path)
    result = CliRunner().invoke(app, ["inspect", path, "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["snapshot_rows"] == _hudi_rows(spark, path).count() == 401
    if table_version is not None:
        assert info["table_version"] == table_version


@pytest.mark.parametrize("mode", ["inline", "schedule_inline"])
def test_hudi_clustering_modes_shape_the_timeline(spark, tmp_path: Path, mode: str) -> None:
    """Hudi's own inline clustering runs inside the write every ``inline_every`` commits;
    semi-async (schedule inline) leaves the plan requested until it is executed."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec
    from workloads.generator import batch_df

    scenario = load_scenario(HUDI_SMALL)
    spec = EngineSpec(name="h", kind="hudi", config={"preset": "hudi_clustering", "mode": mode, "inline_every": 2})
    engine = build_engine(spec, scenario, str(tmp_path / "h"))
    reported = []
    for b in range(4):
        engine.ingest(batch_df(spark, scenario.workload, b))
        reported += [m.kind for m in engine.after_commit()]
    timeline = engine.table.refresh()
    replaces = [i for i in timeline.instants if i.action == "replacecommit"]
    if mode == "inline":
        assert [i.is_completed for i in replaces] == [True, True] and reported.count("clustering") == 2
    else:
        pending = [i.timestamp for i in replaces if not i.is_completed]
        assert pending and not [i for i in replaces if i.is_completed]
        res = engine.execute(engine.schedule())
        assert res is not None and res.kind == "clustering" and res.files_in >= 2
        assert engine.table.refresh().get(res.instant).is_completed
    rows = sum(s.num_rows for s in engine.snapshot())
    assert rows == _hudi_rows(spark, str(tmp_path / "h")).count() == 4 * scenario.workload.batch_records
    engine.close()


def _shape(engine) -> list[tuple[str, str]]:
    timeline = engine.table.refresh()
    return [(i.action, i.state.name) for i in timeline.instants if i.action not in ("clean", "rollback")]


# Our Option 2 with Apache Hudi 1.2's rules where they differ from the article's 0.12.1: semi-async
# gated by async.max.commits, unsorted clustering outputs as Hudi's coalesce of whole input files;
# one row group per file, as Hudi's 120 MB hoodie.parquet.block.size gives at these sizes.
ARTICLE_OURS = {"inline_max_commits": 3, "async_max_commits": 3, "schedule_rules": "1.2",
                "clustering_split": "hudi", "row_group_rows": 1 << 30}
SIZE_TOLERANCE = 0.05


def _article_plan(spark, tmp_path: Path, mode: str, hudi_config: dict | None = None, **ours_config):
    """Six batches of the small scenario into our Option 2 and into Apache Hudi, clustering in ``mode``
    with max.commits 3 (the article's plans, scaled down)."""
    from bench.engine_factory import build_engine
    from bench.scenario import EngineSpec
    from workloads.generator import batch_df

    scenario = load_scenario(HUDI_SMALL)
    ours = build_engine(EngineSpec(name="ours", kind="clustering", config={"mode": mode, **ARTICLE_OURS,
                                                                         **ours_config}),
                        scenario, str(tmp_path / f"ours_{mode}"))
    hudi = build_engine(EngineSpec(name="hudi", kind="hudi",
                                   config={"preset": "hudi_clustering", "mode": mode, "inline_every": 3,
                                           **(hudi_config or {})}),
                        scenario, str(tmp_path / f"hudi_{mode}"))
    for b in range(6):
        df = batch_df(spark, scenario.workload, b).cache()
        for engine in (ours, hudi):
            engine.ingest(df)
            engine.after_commit()
        df.unpersist()
    return ours, hudi


def _clustered(engine, nth: int | None = None) -> list[tuple[str, int]]:
    """(partition, bytes) of the files completed replacecommits wrote (only the ``nth``), sorted."""
    table = engine.table
    replaces = table.refresh().completed(["replacecommit"])
    chosen = replaces if nth is None else replaces[nth:nth + 1]
    return sorted((s.partition, s.file_size) for i in chosen for s in table.commit_metadata(i).write_stats)


def _assert_same_layout(ours, hudi, label: str, nth: int | None = None) -> None:
    """Same clustered files per partition, sizes pairwise within SIZE_TOLERANCE (by partition, size)."""
    mine, theirs = _clustered(ours, nth), _clustered(hudi, nth)
    print(f"{label}: {len(mine)} clustered files, ours vs Apache Hudi (bytes, %):")
    for (p, a), (_, b) in zip(mine, theirs, strict=False):
        print(f"  {p} {a:>8} {b:>8} {100 * (a - b) / b:+.2f}%")
    assert mine and [p for p, _ in mine] == [p for p, _ in theirs], (mine, theirs)
    worst = max(abs(a - b) / b for (_, a), (_, b) in zip(mine, theirs, strict=True))
    assert worst <= SIZE_TOLERANCE, (label, worst, mine, theirs)


@pytest.mark.parametrize("mode", ["inline", "schedule_inline"])
def test_article_plans_ours_vs_real_hudi(spark, tmp_path: Path, mode: str) -> None:
    """The article's inline and semi-async plans (max.commits 3, scaled down) on our Option 2 with
    Hudi 1.2's rules and on Apache Hudi 1.2, same batches: identical timelines (instants, actions,
    states), and the same clustered files (count per partition, sizes within 5%). Semi-async: the
    writer leaves the plan requested after the third commit, a job executes it. Our default rules
    stay the article's 0.12.1 (a semi-async plan after the first commit)."""
    # semi-async counts async.max.commits (3) in Hudi 1.2: an inline.max.commits of 5 must not matter to
    # ours; for Apache Hudi's engine, validate refuses the key under schedule_inline (a key it would not honour)
    gate = {"inline_max_commits": 5} if mode == "schedule_inline" else {}
    if gate:
        from bench.engine_factory import build_engine
        from bench.scenario import EngineSpec, ScenarioError

        with pytest.raises(ScenarioError, match="hoodie.clustering.inline.max.commits"):
            build_engine(EngineSpec(name="hudi", kind="hudi", config={
                "preset": "hudi_clustering", "mode": mode, "inline_every": 3,
                "hoodie.clustering.inline.max.commits": 5}), load_scenario(HUDI_SMALL), str(tmp_path / "refused"))
    ours, hudi = _article_plan(spark, tmp_path, mode, None, **gate)
    c, rc, rq = ("commit", "COMPLETED"), ("replacecommit", "COMPLETED"), ("replacecommit", "REQUESTED")
    if mode == "inline":
        assert _shape(ours) == _shape(hudi) == [c, c, c, rc, c, c, c, rc]
    else:
        assert _shape(ours) == _shape(hudi) == [c, c, c, rq, c, c, c]
        for engine in (ours, hudi):
            res = engine.execute()
            assert res is not None and res.kind == "clustering" and engine.pending_plan() is None
        assert _shape(ours) == _shape(hudi) == [c, c, c, rc, c, c, c]
    _assert_same_layout(ours, hudi, mode)
    assert sum(s.num_rows for s in ours.snapshot()) == sum(s.num_rows for s in hudi.snapshot()) == 9000
    ours.close()
    hudi.close()
    if mode == "schedule_inline":  # the article's Hudi 0.12.1: a plan after the first commit, none while pending
        from bench.engine_factory import build_engine
        from bench.scenario import EngineSpec
        from workloads.generator import batch_df

        scenario = load_scenario(HUDI_SMALL)
        old = build_engine(EngineSpec(name="old", kind="clustering",
                                      config={"mode": mode, "async_max_commits": 3, "schedule_rules": "0.12.1"}),
                           scenario, str(tmp_path / "ours_0.12.1"))
        for b in range(6):
            old.ingest(batch_df(spark, scenario.workload, b))
            old.after_commit()
        assert _shape(old) == [c, rq, c, c, c, c, c]
        old.close()


def test_article_plans_async_ours_vs_real_hudi(spark, tmp_path: Path) -> None:
    """The article's async plan: the writer schedules once 3 commits passed (async.max.commits), a
    service thread executes beside ingestion. Deterministic once both services drained: the multiset
    of (action, state) and the first clustering's files. Timing decides the order of the instants
    and whether the first clustering completed before the sixth commit scheduled the second (if not,
    the second plan leaves the first one's file groups out): the second clustering's files are
    compared when both sides saw the same."""
    from collections import Counter

    ours, hudi = _article_plan(spark, tmp_path, "async")
    try:
        assert ours.wait_async(300) and hudi.wait_async(300)
        assert Counter(_shape(ours)) == Counter(_shape(hudi)) == Counter(
            {("commit", "COMPLETED"): 6, ("replacecommit", "COMPLETED"): 2})
        _assert_same_layout(ours, hudi, "async, first clustering", 0)
        saw = {}
        for name, engine in (("ours", ours), ("hudi", hudi)):
            first, second = engine.table.refresh().completed(["replacecommit"])
            outputs = {(s.partition, s.file_id) for s in engine.table.commit_metadata(first).write_stats}
            replaced = engine.table.commit_metadata(second).replaced_file_ids
            saw[name] = bool(outputs & {(p, f) for p, ids in replaced.items() for f in ids})
        print(f"async: the second plan re-clustered the first one's outputs: {saw}; timelines: "
              f"ours {_shape(ours)}, hudi {_shape(hudi)}")
        if saw["ours"] == saw["hudi"]:
            _assert_same_layout(ours, hudi, "async, both clusterings")
        assert sum(s.num_rows for s in ours.snapshot()) == sum(s.num_rows for s in hudi.snapshot()) == 9000
    finally:
        ours.close()
        hudi.close()


def test_article_plans_bloom_off_real_hudi_clusters_with_the_filter_anyway(spark, tmp_path: Path) -> None:
    """Finding (docs/apache-hudi.md): with hoodie.parquet.bloom.filter.enabled=false, Apache Hudi 1.2's
    inserts carry no footer bloom filter but its clustering outputs do (the row writer's
    HoodieInternalRowFileWriterFactory checks only populateMetaFields), and it rolls a clustering
    output on the open row group's uncompressed size: more, smaller files than ours for the same
    plan. Ours follows the key. Timelines still match."""
    import pyarrow.parquet as pq

    ours, hudi = _article_plan(spark, tmp_path, "inline", {"hoodie.parquet.bloom.filter.enabled": False},
                               bloom_filter=False)
    try:
        assert _shape(ours) == _shape(hudi)

        def blooms(engine, action: str) -> set[bool]:
            """Whether each file of ``action`` instants not yet cleaned carries a footer bloom filter."""
            table = engine.table
            paths = [s.path for i in table.refresh().completed([action]) for s in table.commit_metadata(i).write_stats]
            return {any(b"bloom" in k for k in (pq.read_metadata(table.storage.abs(p)).metadata or {}))
                    for p in paths if table.storage.exists(p)}

        assert blooms(ours, "commit") == blooms(ours, "replacecommit") == blooms(hudi, "commit") == {False}
        assert blooms(hudi, "replacecommit") == {True}
        first_ours, first_hudi = _clustered(ours, 0), _clustered(hudi, 0)
        print(f"bloom off, first clustering: ours {first_ours}, hudi {first_hudi}")
        assert len(first_hudi) > len(first_ours)
    finally:
        ours.close()
        hudi.close()


@pytest.mark.slow  # an end-to-end run (20-60 s): make test-slow
def test_report_sets_ours_next_to_real_hudi(hudi_run) -> None:
    from reports.hudi_fidelity import fidelity_pairs
    from reports.render import render_report

    assert fidelity_pairs(hudi_run) == [
        ("COW baseline", "baseline", "hudi_cow"), ("Option 2", "option2", "hudi_clustering"),
        ("Option 2 sorted by service, ts", "option2_sorted", "hudi_clustering_sorted")]
    render_report(hudi_run.folder)
    text = (Path(hudi_run.folder) / "report.md").read_text()
    section = text.split("## Ours next to Apache Hudi, same batches", 1)[1].split("\n## ", 1)[0]
    assert "hudi-spark3.5-bundle_2.12:1.2.0" in section and "File rolling on the open row group" in section
    assert section.index("rules our engines follow") < section.index("Bloom filter in every base file")
    for figure in ("live files after every commit", "WA", "ingest p50 (s)", "maintenance runs / time (s)"):
        assert section.count(f"| {figure} |") == 3, figure


@pytest.mark.parametrize("bloom", [True, False])
def test_real_hudis_bloom_index_finds_the_keys_of_our_files(spark, tmp_path: Path, bloom: bool) -> None:
    """Our base files carry Hudi's footer bloom filter (engines/table/bloom.py): real Hudi's upsert with
    its BLOOM index on a table our baseline wrote finds every key it updates (updates, no inserts, no
    duplicate rows). Without the filter, Hudi's index lookup fails on our files."""
    from engine_helpers import new_table, spec
    from pyspark.sql import functions as F

    from engines.cow_baseline.config import CowConfig
    from engines.cow_baseline.engine import CowBaselineEngine, CowEngineConfig
    from engines.hudi.config import HudiConfig, hoodie_options
    from workloads.generator import batch_df

    ws = spec(num_batches=2, batch_records=1000, num_partitions=2)
    e = CowBaselineEngine(new_table(tmp_path / "t"), CowEngineConfig(
        planner=CowConfig(small_file_limit=8 << 20, max_file_size=16 << 20), bloom_filter=bloom))
    for b in range(ws.num_batches):
        e.ingest(batch_df(spark, ws, b))
    rows = sum(s.num_rows for s in e.table.view().snapshot())
    updates = batch_df(spark, ws, 0).limit(40).withColumn("level", F.lit("UPDATED"))
    opts = {**hoodie_options(HudiConfig(preset="hudi_cow", operation="upsert"), "t", "dt", "trace_id"),
            "hoodie.index.type": "BLOOM"}
    write = updates.write.format("hudi").options(**opts).mode("append")
    if not bloom:
        with pytest.raises(Exception, match="bloom"):
            write.save(e.table.base_uri)
        return
    write.save(e.table.base_uri)
    stats = e.table.commit_metadata(e.table.refresh().completed(["commit"])[-1]).write_stats
    assert (sum(s.num_update_writes for s in stats), sum(s.num_inserts for s in stats)) == (40, 0)
    snapshot = _hudi_rows(spark, e.table.base_uri)
    assert snapshot.count() == rows and snapshot.where(F.col("level") == "UPDATED").count() == 40


@pytest.mark.parametrize("type_code,entries,max_entries,n,one_length", [
    ("DYNAMIC_V0", 60_000, 100_000, 500, False), ("SIMPLE", 60_000, 100_000, 300, False),
    ("DYNAMIC_V0", 100, 250, 420, False),  # a second row at 100 keys, then round robin from 200 (the bound)
    ("DYNAMIC_V0", 100, 250, 420, True),  # keys of one length: read as the Arrow bytes lie
])
def test_our_bloom_filter_is_byte_for_byte_hudis(spark, type_code: str, entries: int, max_entries: int,
                                                 n: int, one_length: bool) -> None:
    """engines/table/bloom.py against Apache Hudi's own BloomFilterFactory in the JVM: the same
    serialized string for the same keys (ASCII and not, odd lengths, or all of one length, as the
    generated record keys are), and each reads the other's."""
    from engines.table.bloom import BloomConfig, might_contain, serialize

    keys = [f"{i * 2654435761 % (1 << 64):016x}-000003-{i:08d}" if i % 4 or one_length else f"k{i}-é{'x' * (i % 5)}"
            for i in range(n)]
    factory = spark._jvm.org.apache.hudi.common.bloom.BloomFilterFactory
    theirs = factory.createBloomFilter(entries, 1e-9, max_entries, type_code)
    for k in keys:
        theirs.add(k)
    ours = serialize(keys, BloomConfig(filter_type=type_code, num_entries=entries, dynamic_max_entries=max_entries))
    assert ours == theirs.serializeToString()
    back = factory.fromString(ours, type_code)
    assert all(back.mightContain(k) for k in keys[::25]) and all(might_contain(ours, k) for k in keys[::25])
