"""``layoutbench service``: HoodieClusteringJob's modes on our tables, for both designs, with Hudi's keys."""

from __future__ import annotations

from engine_helpers import keys, new_table, spec
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, EXIT_OK, app
from bench.service import EXIT_NOTHING_TO_DO
from engines.spark.insert import insert_new_file_groups
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, REPLACE, State
from workloads.generator import batch_df

cli = CliRunner()
SMALL = ["--hoodie-conf", "hoodie.clustering.plan.strategy.small.file.limit=10485760",
         "--hoodie-conf", "hoodie.clustering.plan.strategy.target.file.max.bytes=20971520"]


def small_file_table(spark, path, batches: int = 4) -> HudiTable:
    table = new_table(path)
    s = spec(num_batches=batches, batch_records=500)
    for b in range(batches):
        insert_new_file_groups(table, batch_df(spark, s, b))
    return table


def invoke(*args: str):
    return cli.invoke(app, ["service", *args])


def test_clustering_schedule_then_execute_keeps_rows_and_merges_files(spark, tmp_path) -> None:
    table = small_file_table(spark, tmp_path / "t")
    rows, files = keys(table), len(table.view().snapshot())
    base = ["--base-path", table.base_uri]
    result = invoke(*base, "--mode", "schedule", *SMALL)
    assert result.exit_code == EXIT_OK, result.output
    pending = table.refresh().pending([REPLACE])
    assert len(pending) == 1 and pending[0].state == State.REQUESTED
    result = invoke(*base, "--mode", "execute", "--instant-time", pending[0].timestamp, *SMALL)
    assert result.exit_code == EXIT_OK and "clustering" in result.output, result.output
    assert keys(table) == rows and len(table.view().snapshot()) < files
    # nothing pending now; the completed instant cannot be executed again
    again = invoke(*base, "--mode", "execute")  # HoodieClusteringJob's -1: nothing to do, said
    assert again.exit_code == EXIT_NOTHING_TO_DO and "nothing to do: no pending clustering plan" in again.output
    done = invoke(*base, "--mode", "execute", "--instant-time", pending[0].timestamp)
    assert done.exit_code == EXIT_BAD_INPUT and "already completed" in done.output


def test_compaction_schedule_and_execute_with_props_file(spark, tmp_path) -> None:
    table = small_file_table(spark, tmp_path / "t")
    rows, files = keys(table), len(table.view().snapshot())
    props = tmp_path / "compaction.properties"
    props.write_text("# Option 1, Hudi's keys\nhoodie.parquet.small.file.limit=10485760\n"
                     "hoodie.parquet.max.file.size=20971520\n")
    result = invoke("--base-path", table.base_uri, "--mode", "scheduleAndExecute", "--design", "compaction",
                    "--props", str(props))
    assert result.exit_code == EXIT_OK, result.output
    assert [i.action for i in table.refresh().completed([COMPACTION])] == [COMPACTION]
    assert keys(table) == rows and len(table.view().snapshot()) < files


def test_bad_requests_are_refused_naming_the_problem(spark, tmp_path) -> None:
    table = small_file_table(spark, tmp_path / "t", batches=2)
    base = ["--base-path", table.base_uri]
    unknown = invoke(*base, "--mode", "schedule", "--hoodie-conf", "hoodie.clustering.no.such.key=1")
    assert unknown.exit_code == EXIT_BAD_INPUT and "hoodie.clustering.no.such.key" in unknown.output
    assert invoke(*base, "--mode", "explode").exit_code == EXIT_BAD_INPUT
    missing = invoke("--base-path", str(tmp_path / "nothing"), "--mode", "schedule")
    assert missing.exit_code == EXIT_BAD_INPUT and "--base-path" in missing.output
    assert table.refresh().pending() == []  # nothing was half-done


def test_the_articles_job_keys_gate_the_schedule_as_hoodie_clustering_job(spark, tmp_path) -> None:
    """The article's HoodieClusteringJob command (async.enabled=true, async.max.commits=3): on a table
    of 2 commits no plan is scheduled, saying why; one more commit and the same command schedules."""
    table = small_file_table(spark, tmp_path / "t", batches=2)
    article = ["--base-path", table.base_uri, "--mode", "schedule", *SMALL,
               "--hoodie-conf", "hoodie.clustering.async.enabled=true",
               "--hoodie-conf", "hoodie.clustering.async.max.commits=3",
               "--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=service,ts"]
    held = invoke(*article)
    assert held.exit_code == EXIT_NOTHING_TO_DO, held.output
    assert "not scheduled: 2 commits" in held.output and "hoodie.clustering.async.max.commits=3" in held.output
    assert table.refresh().pending([REPLACE]) == []
    insert_new_file_groups(table, batch_df(spark, spec(num_batches=3, batch_records=500), 2))
    assert invoke(*article).exit_code == EXIT_OK
    assert len(table.refresh().pending([REPLACE])) == 1
    bad = invoke(*article[:4], "--hoodie-conf", "hoodie.clustering.async.enabled=perhaps")
    assert bad.exit_code == EXIT_BAD_INPUT and "hoodie.clustering.async.enabled" in bad.output


def test_hoodie_clustering_jobs_command_line_as_the_article_writes_it(spark, tmp_path) -> None:
    """--table-name, --spark-memory, --parallelism and a mode in any case, as the article's three
    commands give them; a wrong table name is refused naming both; --retry-last-failed-clustering-job
    runs the pending (failed) plan instead of scheduling a new one."""
    table = small_file_table(spark, tmp_path / "t")
    name = table.properties["hoodie.table.name"]
    job = ["--base-path", table.base_uri, "--table-name", name, "--spark-memory", "1g", "--parallelism", "2", *SMALL]
    wrong = invoke("--base-path", table.base_uri, "--table-name", "other", "--mode", "schedule", *SMALL)
    assert wrong.exit_code == EXIT_BAD_INPUT and "'other'" not in wrong.output.split("named")[-1]
    assert f"named {name!r}" in wrong.output
    scheduled = invoke(*job, "--mode", "SCHEDULE")
    assert scheduled.exit_code == EXIT_OK, scheduled.output
    plan = table.refresh().pending([REPLACE])[0].timestamp
    retried = invoke(*job, "--mode", "scheduleandexecute", "--retry-last-failed-clustering-job", "--retry", "1")
    assert retried.exit_code == EXIT_OK, retried.output
    assert [i.timestamp for i in table.refresh().completed([REPLACE])] == [plan]  # the old plan ran, no new one
    assert invoke(*job, "--mode", "Execute").exit_code == EXIT_NOTHING_TO_DO
