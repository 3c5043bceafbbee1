"""The clustering article's three HoodieClusteringJob commands: in ``service --help`` as the article
prints them (only the spark-submit prefix replaced), parsed by a real shell, and run unchanged on a
table shaped like the article's (a ``review_date`` column) at ``s3://${S3_BUCKET}/${TABLE_NAME}`` on
a real S3-protocol server; on a table without the column they are refused, naming it."""

from __future__ import annotations

import os
import subprocess

import pyarrow.fs as pafs
import pytest
from engine_helpers import keys, spec
from test_service import _batch, small_file_table
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, EXIT_OK, app
from bench.service import EXIT_NOTHING_TO_DO
from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from engines.spark.insert import insert_new_file_groups
from engines.table.table import HudiTable
from engines.table.timeline import REPLACE, State

# The article's commands as it prints them (sections 4.3, 4.4, 4.5: one line each in its text, " \ " between
# the lines of the original), copied unchanged.
PREFIX = ("sudo -u hadoop spark-submit \\ --jars '/usr/lib/hudi/hudi-spark-bundle.jar' \\ --class "
          "'org.apache.hudi.utilities.HoodieClusteringJob' \\ /usr/lib/hudi/hudi-utilities-bundle.jar")
KEYS = (' \\ --hoodie-conf "hoodie.clustering.async.enabled=true" \\ --hoodie-conf '
        '"hoodie.clustering.async.max.commits=3" \\ --hoodie-conf '
        '"hoodie.clustering.plan.strategy.small.file.limit=209715200" \\ --hoodie-conf '
        '"hoodie.clustering.plan.strategy.target.file.max.bytes=314572800" \\ --hoodie-conf '
        '"hoodie.clustering.plan.strategy.sort.columns=review_date"')
ARTICLE = {
    "schedule": PREFIX + " \\ --spark-memory '4g' \\ --mode 'schedule' \\ --base-path "
                         '"s3://${S3_BUCKET}/${TABLE_NAME}" \\ --table-name "${TABLE_NAME}"' + KEYS,
    "execute": PREFIX + " \\ --spark-memory '4g' \\ --mode 'execute' \\ --base-path "
                        '"s3://${S3_BUCKET}/${TABLE_NAME}" \\ --table-name "${TABLE_NAME}"',
    "scheduleAndExecute": PREFIX + " \\ --spark-memory '4g' \\ --mode 'scheduleAndExecute' \\ --base-path "
                                   '"s3://${S3_BUCKET}/${TABLE_NAME}" \\ --table-name "${TABLE_NAME}"' + KEYS,
}
cli = CliRunner()


def ours(article: str) -> str:
    """The article's command with only its spark-submit prefix replaced, one argument a line."""
    assert article.startswith(PREFIX + " \\ ")
    return " \\\n    ".join(["layoutbench service", *article[len(PREFIX) + 3:].split(" \\ ")])


def shell_arguments(command: str, env: dict[str, str]) -> list[str]:
    """What bash hands ``layoutbench`` when the command is pasted (continuations, quotes, ``${...}``)."""
    script = "layoutbench() { printf '%s\\0' \"$@\"; }\n" + command + "\n"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    args = out.split("\0")[:-1]
    assert args[0] == "service"
    return args[1:]


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_shows_the_articles_three_commands_as_printed(flag: str) -> None:
    shown = cli.invoke(app, ["service", flag], env={"COLUMNS": "80"}).output
    for mode, article in ARTICLE.items():
        assert ours(article) in shown, mode  # unwrapped even at 80 columns: each still pastes
    flat = " ".join(shown.split())
    assert f"{EXIT_NOTHING_TO_DO} nothing to do" in flat and "cluster() returns -1" in flat  # the exit statuses
    assert f"{EXIT_BAD_INPUT} bad input" in flat and "0 done" in flat
    env = {"PATH": os.environ["PATH"], "S3_BUCKET": "bkt", "TABLE_NAME": "reviews"}
    args = shell_arguments(ours(ARTICLE["schedule"]), env)
    assert args[:8] == ["--spark-memory", "4g", "--mode", "schedule", "--base-path", "s3://bkt/reviews",
                        "--table-name", "reviews"]
    assert args[-1] == "hoodie.clustering.plan.strategy.sort.columns=review_date"


def test_the_articles_commands_run_unchanged_on_a_table_like_the_articles(spark, tmp_path, monkeypatch) -> None:
    with S3Server() as server:
        aws = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": REGION,
               "AWS_REGION": REGION, "AWS_ENDPOINT_URL": f"http://{server.endpoint}"}
        for k, v in aws.items():
            monkeypatch.setenv(k, v)
        pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=server.endpoint,
                          scheme="http", region=REGION, allow_bucket_creation=True).create_dir("emr-bucket")
        env = {"PATH": os.environ["PATH"], "S3_BUCKET": "emr-bucket", "TABLE_NAME": "t"}  # new_table names it "t"
        table = small_file_table(spark, "s3://emr-bucket/t", batches=3, review_date=True)
        rows, files = keys_on(table), len(table.view().snapshot())

        def run(mode: str):
            return cli.invoke(app, ["service", *shell_arguments(ours(ARTICLE[mode]), env)])

        scheduled = run("schedule")
        assert scheduled.exit_code == EXIT_OK, scheduled.output
        [plan] = table.refresh().pending([REPLACE])
        assert plan.state == State.REQUESTED and plan.timestamp in scheduled.output
        executed = run("execute")  # no --instant-time: the earliest requested plan, as the article's
        assert executed.exit_code == EXIT_OK and f"clustering {plan.timestamp}: {files} files in" in executed.output
        assert [i.timestamp for i in table.refresh().completed([REPLACE])] == [plan.timestamp]
        assert keys_on(table) == rows and len(table.view().snapshot()) < files
        held = run("scheduleAndExecute")  # async.max.commits=3: no commit since the clustering yet
        assert held.exit_code == EXIT_NOTHING_TO_DO and "not scheduled: 0 commits" in held.output, held.output
        s = spec(num_batches=6, batch_records=500)
        for b in range(3, 6):
            insert_new_file_groups(HudiTable.open(table.base_uri), _batch(spark, s, b, True))
        both = run("scheduleAndExecute")
        assert both.exit_code == EXIT_OK and "clustering" in both.output, both.output
        assert len(table.refresh().completed([REPLACE])) == 2 and table.refresh().pending([REPLACE]) == []


def keys_on(table: HudiTable) -> list[str]:
    return keys(table) if table.storage.is_local else sorted(
        k for s in table.view().snapshot() for k in _read_keys(table, s.path))


def _read_keys(table: HudiTable, path: str) -> list[str]:
    import pyarrow.parquet as pq

    with table.storage.fs.open_input_file(table.storage.abs(path)) as f:
        return pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()


def test_the_articles_sort_column_on_a_table_without_it_is_refused_naming_it(spark, tmp_path) -> None:
    """This project's own workload has no review_date: one message naming the column and the
    table's columns, exit 3, nothing written (before: exit 4 "nothing is eligible")."""
    table = small_file_table(spark, tmp_path / "reviews", batches=3)
    env = {"PATH": os.environ["PATH"], "S3_BUCKET": "unused", "TABLE_NAME": "t"}
    for mode in ("schedule", "scheduleAndExecute"):
        args = shell_arguments(ours(ARTICLE[mode]), env)
        args[args.index("--base-path") + 1] = table.base_uri  # the one change: a local table
        result = cli.invoke(app, ["service", *args])
        flat = " ".join(result.output.split())
        assert result.exit_code == EXIT_BAD_INPUT, flat
        assert "hoodie.clustering.plan.strategy.sort.columns names ['review_date'], not a column" in flat, flat
        assert "'service'" in flat and "'trace_id'" in flat and "_hoodie_" not in flat
        assert table.refresh().pending() == []
