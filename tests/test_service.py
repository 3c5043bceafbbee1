"""``layoutbench service``: HoodieClusteringJob's modes on our tables, for both designs, with Hudi's keys."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_helpers import keys, new_table, spec
from pyspark.sql import functions as F
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, app
from bench.service import EXIT_NOTHING_TO_DO, NothingToDo, ServiceRequest, run_service
from engines.spark.insert import insert_new_file_groups
from engines.table import faults
from engines.table.table import HudiTable
from engines.table.timeline import COMPACTION, REPLACE, State
from workloads.generator import batch_df

cli = CliRunner()
SMALL = ["--hoodie-conf", "hoodie.clustering.plan.strategy.small.file.limit=10485760",
         "--hoodie-conf", "hoodie.clustering.plan.strategy.target.file.max.bytes=20971520"]
REPO = Path(__file__).resolve().parents[1]


def small_file_table(spark, path, batches: int = 4, review_date: bool = False) -> HudiTable:
    """``batches`` commits of small files; with ``review_date``, the article's sort column too (the day of ``ts``)."""
    table = new_table(path)
    s = spec(num_batches=batches, batch_records=500)
    for b in range(batches):
        insert_new_file_groups(table, _batch(spark, s, b, review_date))
    return table


def _batch(spark, s, b: int, review_date: bool):
    df = batch_df(spark, s, b)
    return df.withColumn("review_date", F.date_format("ts", "yyyy-MM-dd")) if review_date else df


def invoke(*args: str):
    return cli.invoke(app, ["service", *args])


def hoodie_files(table: HudiTable) -> list[str]:
    return sorted(e.path for e in table.storage.list(".hoodie", recursive=True))


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
    # nothing scheduled now (Hudi throws here, so --retry does not re-run it); a completed instant is refused
    again = invoke(*base, "--mode", "execute", "--retry", "2")
    assert again.exit_code == EXIT_NOTHING_TO_DO, again.output
    assert "nothing to do: no pending clustering plan in the requested state" in again.output and "attempt 2" not in again.output
    done = invoke(*base, "--mode", "execute", "--instant-time", pending[0].timestamp)
    assert done.exit_code == EXIT_BAD_INPUT and "already completed" in done.output
    # schedule and scheduleAndExecute with nothing eligible (every file is over a 1-byte limit): exit 4
    tiny = ["--hoodie-conf", "hoodie.clustering.plan.strategy.small.file.limit=1"]
    for mode in ("schedule", "scheduleAndExecute"):
        none = invoke(*base, "--mode", mode, *tiny)
        assert none.exit_code == EXIT_NOTHING_TO_DO and "nothing is eligible" in none.output, none.output
    assert table.refresh().pending() == []


def test_compaction_schedule_and_execute_with_props_file(spark, tmp_path) -> None:
    table = small_file_table(spark, tmp_path / "t")
    rows, files = keys(table), len(table.view().snapshot())
    props = tmp_path / "compaction.properties"
    props.write_text("# Option 1, Hudi's keys, in both of Hudi's forms\nhoodie.parquet.small.file.limit=10485760\n"
                     "hoodie.parquet.max.file.size 20971520\n")
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


def test_a_corrupt_table_is_refused_naming_its_properties_file_and_nothing_is_written(spark, tmp_path) -> None:
    table = small_file_table(spark, tmp_path / "t", batches=2)
    props = Path(table.storage.abs(".hoodie/hoodie.properties"))
    good = props.read_text()
    corruptions = {
        "garbage": "\x00\x17 not a properties file \xff\n",
        "checksum": good.replace("hoodie.table.checksum=", "hoodie.table.checksum=1"),
        "record key": "\n".join(ln for ln in good.splitlines() if not ln.startswith("hoodie.table.recordkey")) +
                      "\nhoodie.table.recordkey.fields=\n",
    }
    for what, text in corruptions.items():
        props.write_text(text)
        before = hoodie_files(table)
        for mode in ("schedule", "scheduleAndExecute", "execute"):
            result = invoke("--base-path", table.base_uri, "--mode", mode, *SMALL)
            assert result.exit_code == EXIT_BAD_INPUT, (what, result.output)
            assert ".hoodie/hoodie.properties: corrupt" in " ".join(result.output.split()), (what, result.output)
            assert len(result.output.strip().splitlines()) <= 2 and "Traceback" not in result.output
        assert hoodie_files(table) == before, what  # no replacecommit.requested, no lock left behind
    props.write_text(good)
    sound = invoke("-sp", table.base_uri, "-sc", *SMALL)  # Hudi's short flag and its deprecated --schedule
    assert sound.exit_code == EXIT_OK and len(table.refresh().pending([REPLACE])) == 1, sound.output


def test_a_locked_table_is_refused_and_nothing_is_written(spark, tmp_path) -> None:
    """A real lock: another process holds the table's writer lock while the service runs."""
    table = small_file_table(spark, tmp_path / "t", batches=2)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom engines.table.lock import WriterLock\n"
         "from engines.table.storage import Storage\nWriterLock(Storage(sys.argv[1]), owner='other job').acquire()\n"
         "print('held', flush=True)\ntime.sleep(120)\n", table.base_uri],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = hoodie_files(table)
        result = invoke("--base-path", table.base_uri, "--mode", "schedule", *SMALL)
        flat = " ".join(result.output.split())
        assert result.exit_code == EXIT_BAD_INPUT, flat
        assert "locked by another writer" in flat and "other job" in flat and f"pid {holder.pid}" in flat
        assert hoodie_files(table) == before and table.refresh().pending() == []
    finally:
        holder.kill()
        holder.wait()


def test_the_articles_job_keys_gate_the_schedule_and_retry_reruns_the_mode(spark, tmp_path) -> None:
    """The article's HoodieClusteringJob keys (async.enabled=true, async.max.commits=3): on a table
    of 2 commits no plan is scheduled, saying why; --retry 2 runs the schedule 3 times (Hudi re-runs
    the mode while it returns -1). One more commit and the same command schedules at once."""
    table = small_file_table(spark, tmp_path / "t", batches=2)
    article = ["--base-path", table.base_uri, "--mode", "schedule", *SMALL,
               "--hoodie-conf", "hoodie.clustering.async.enabled=true",
               "--hoodie-conf", "hoodie.clustering.async.max.commits=3",
               "--hoodie-conf", "hoodie.clustering.plan.strategy.sort.columns=service,ts"]
    held = invoke(*article, "--retry", "2")
    assert held.exit_code == EXIT_NOTHING_TO_DO, held.output
    assert [ln.split(":")[0] for ln in held.output.splitlines() if ln.startswith("attempt")] == [
        "attempt 1 of 3", "attempt 2 of 3", "attempt 3 of 3"]
    assert "nothing to do (3 attempts): not scheduled: 2 commits" in held.output
    assert "hoodie.clustering.async.max.commits=3" in held.output
    assert table.refresh().pending([REPLACE]) == []
    insert_new_file_groups(table, batch_df(spark, spec(num_batches=3, batch_records=500), 2))
    once = invoke(*article, "--retry", "2")
    assert once.exit_code == EXIT_OK and "attempt" not in once.output, once.output
    assert len(table.refresh().pending([REPLACE])) == 1
    bad = invoke(*article[:4], "--hoodie-conf", "hoodie.clustering.async.enabled=perhaps")
    assert bad.exit_code == EXIT_BAD_INPUT and "hoodie.clustering.async.enabled" in bad.output


def test_a_retry_runs_the_mode_again_and_succeeds_when_a_commit_arrived_between(spark, tmp_path) -> None:
    """Another writer commits between the attempts: the second schedule finds 3 commits and plans."""
    table = small_file_table(spark, tmp_path / "t", batches=2)
    conf = {"hoodie.clustering.async.enabled": "true", "hoodie.clustering.async.max.commits": "3",
            "hoodie.clustering.plan.strategy.small.file.limit": "10485760",
            "hoodie.clustering.plan.strategy.target.file.max.bytes": "20971520"}
    seen: list[int] = []

    def another_writer_commits(attempt: int, why: NothingToDo) -> None:
        seen.append(attempt)
        insert_new_file_groups(HudiTable.open(table.base_uri), batch_df(spark, spec(num_batches=3, batch_records=500), 2))

    done = run_service(ServiceRequest(table.base_uri, "scheduleAndExecute", conf=conf, retry=3),
                       on_attempt=another_writer_commits)
    assert seen == [1] and done[0] == "attempt 2 of 4 did it", done
    assert len(table.refresh().completed([REPLACE])) == 1
    with pytest.raises(NothingToDo) as no_retry:  # without --retry the first attempt's answer stands
        run_service(ServiceRequest(table.base_uri, "schedule", conf=conf))
    assert no_retry.value.attempts == 1


def _fail_after_inflight(name: str) -> None:
    if name == "clustering.after_inflight":
        raise RuntimeError("injected: the executor died after marking the plan inflight")


def test_retry_last_failed_takes_the_last_inflight_plan_older_than_jt(spark, tmp_path) -> None:
    """-rc: a merely requested plan is not failed; an inflight one is, unless it started less than
    -jt ms ago. execute without --instant-time takes the earliest requested plan, never an inflight one."""
    table = small_file_table(spark, tmp_path / "t")
    name = table.properties["hoodie.table.name"]
    job = ["--base-path", table.base_uri, "--table-name", name, "--spark-memory", "1g", "--parallelism", "2", *SMALL]
    assert invoke(*job, "--mode", "SCHEDULE").exit_code == EXIT_OK
    requested = table.refresh().pending([REPLACE])[0].timestamp
    # -rc with only a requested plan: nothing failed, so a new plan is scheduled (none eligible: the
    # requested plan holds every small file) - the requested plan is not taken
    nothing = invoke(*job, "--mode", "scheduleandexecute", "-rc")
    assert nothing.exit_code == EXIT_NOTHING_TO_DO, nothing.output
    assert [(i.timestamp, i.state) for i in table.refresh().pending([REPLACE])] == [(requested, State.REQUESTED)]
    # the execution dies after marking the plan inflight: exit 1, the plan stays inflight (failed)
    remove = faults.observe(_fail_after_inflight)
    try:
        died = invoke(*job, "--mode", "execute", "--retry", "3")
    finally:
        remove()
    assert died.exit_code == EXIT_FAILED and "injected" in died.output and "attempt" not in died.output, died.output
    assert [(i.timestamp, i.state) for i in table.refresh().pending([REPLACE])] == [(requested, State.INFLIGHT)]
    gone = invoke(*job, "--mode", "execute")  # execute takes a requested plan only: none
    assert gone.exit_code == EXIT_NOTHING_TO_DO and "no pending clustering plan in the requested state" in gone.output, gone.output
    # -jt longer than the plan's age (its instant is from the table's logical clock, 2026-01-01): it may
    # still be running, so it is left alone and a new schedule finds nothing eligible
    age_ms = int(time.time() * 1000 - 1767225600000)
    young = invoke(*job, "--mode", "scheduleAndExecute", "-rc", "-jt", str(age_ms + 86_400_000))
    assert young.exit_code == EXIT_NOTHING_TO_DO, young.output
    retried = invoke(*job, "--mode", "scheduleAndExecute", "--retry-last-failed-clustering-job",
                     "--job-max-processing-time-ms", "1000")
    assert retried.exit_code == EXIT_OK and f"retrying the failed plan {requested}" in retried.output, retried.output
    assert [i.timestamp for i in table.refresh().completed([REPLACE])] == [requested]  # the old plan ran, no new one
    assert table.refresh().pending([REPLACE]) == []
    assert invoke(*job, "--mode", "Execute").exit_code == EXIT_NOTHING_TO_DO
    wrong = invoke("--base-path", table.base_uri, "--table-name", "other", "--mode", "schedule", *SMALL)
    assert wrong.exit_code == EXIT_BAD_INPUT and f"named {name!r}" in wrong.output
