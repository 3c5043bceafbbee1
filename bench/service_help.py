"""``layoutbench service --help``: the clustering article's three HoodieClusteringJob commands, ready to paste.

The article (Apache Hudi 0.12.1 on EMR, "clustering modes") runs Hudi's job as
``sudo -u hadoop spark-submit --jars … --class 'org.apache.hudi.utilities.HoodieClusteringJob'
/usr/lib/hudi/hudi-utilities-bundle.jar <arguments>``. Here only that prefix becomes
``layoutbench service``; every argument is the article's, quotes and ``${…}`` included, one per
line with ``\\`` continuations. They are printed after typer's help as they are (rich would wrap a
long line, and a wrapped line breaks a continuation), and ``docs/cli.md`` shows them as a code block.
"""

from __future__ import annotations

from typing import Any

import click
import typer.core

# The prefix the article writes before HoodieClusteringJob's own arguments.
ARTICLE_PREFIX = ("sudo -u hadoop spark-submit --jars '/usr/lib/hudi/hudi-spark-bundle.jar' "
                  "--class 'org.apache.hudi.utilities.HoodieClusteringJob' /usr/lib/hudi/hudi-utilities-bundle.jar")
_SCHEDULE_KEYS = (
    '--hoodie-conf "hoodie.clustering.async.enabled=true"',
    '--hoodie-conf "hoodie.clustering.async.max.commits=3"',
    '--hoodie-conf "hoodie.clustering.plan.strategy.small.file.limit=209715200"',
    '--hoodie-conf "hoodie.clustering.plan.strategy.target.file.max.bytes=314572800"',
    '--hoodie-conf "hoodie.clustering.plan.strategy.sort.columns=review_date"',
)
_JOB = ("--spark-memory '4g'", "--mode '{mode}'", '--base-path "s3://${{S3_BUCKET}}/${{TABLE_NAME}}"',
        '--table-name "${{TABLE_NAME}}"')
# The article's three commands (its sections 4.3, 4.4 and 4.5): HoodieClusteringJob's arguments, in its order.
ARTICLE_ARGUMENTS: tuple[tuple[str, ...], ...] = tuple(
    (*(a.format(mode=mode) for a in _JOB), *keys)
    for mode, keys in (("schedule", _SCHEDULE_KEYS), ("execute", ()), ("scheduleAndExecute", _SCHEDULE_KEYS)))


def pasteable(arguments: tuple[str, ...]) -> str:
    """``layoutbench service`` and the arguments, one per line, joined by shell continuations."""
    return " \\\n    ".join(("layoutbench service", *arguments))


ARTICLE_COMMANDS: tuple[str, ...] = tuple(pasteable(a) for a in ARTICLE_ARGUMENTS)

EXAMPLES = (
    "The clustering article's three commands (Hudi 0.12.1 on S3), as it prints them; only its\n"
    f"prefix `{ARTICLE_PREFIX}`\n"
    "becomes `layoutbench service`. They need a table with a review_date column, reachable as\n"
    "s3://${S3_BUCKET}/${TABLE_NAME} (credentials and endpoint from AWS_* variables); the schedule\n"
    "waits for 3 commits after the last clustering (exit 4 until then).\n\n"
    + "\n\n".join(ARTICLE_COMMANDS) + "\n"
)


# The command's help, a paragraph a line (rich keeps a docstring's line breaks and wraps each line again).
HELP = "\n\n".join((
    "Run a table service on an existing table, as Apache Hudi's HoodieClusteringJob does.",
    "Exit status: 0 done. 4 nothing to do: no plan to schedule (nothing eligible, or fewer commits than "
    "hoodie.clustering.async.max.commits since the last clustering) or none to execute; that is where "
    "HoodieClusteringJob's cluster() returns -1 (its process logs \"failed\" and still exits 0). 3 bad input: "
    "no table, a corrupt hoodie.properties, a wrong --table-name, an unknown key, a sort column the table "
    "lacks, a locked table. 1 an execution that failed (as in Hudi, --retry does not re-run it).",
    "--retry N runs the whole mode again while it finds nothing to do, at most N more times, as Hudi's "
    "UtilHelpers.retry; execute with no requested plan is not retried (Hudi throws there).",
))


class ServiceCommand(typer.core.TyperCommand):
    """typer's command, with :data:`EXAMPLES` printed unwrapped after its help."""

    examples = EXAMPLES

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> Any:
        out = super().format_help(ctx, formatter)
        if formatter.getvalue():  # click's plain formatter: the examples go into its buffer
            formatter.write("\n" + self.examples)
        else:  # rich printed the help already
            click.echo(self.examples)
        return out
