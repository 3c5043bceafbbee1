"""``docs/cli.md``: the command line's reference, generated from the commands themselves.

Each command's summary, arguments and options (with their defaults and help) come from the typer
app, so the reference cannot drift from ``--help``; ``tests/test_cli_reference.py`` checks that the
file in the repository equals what this module writes. Regenerate with
``python -m bench.cli_reference > docs/cli.md``.
"""

from __future__ import annotations

from typing import Any

import typer

HEADER = ("# The command line (`layoutbench`)\n\n"
          "Generated from the commands' own help by `python -m bench.cli_reference > docs/cli.md` "
          "(a test checks it is current). Exit codes: 0 success; 1 a failed verification, a regression, "
          "or a step of a run that raised; 2 a usage error; 3 bad input (a scenario, table, results "
          "folder, file, Spark master or JVM package that is wrong or missing). Every error is one line on "
          "stderr; its traceback goes to `error.log` in the results folder, or to `$LAYOUTBENCH_ERROR_LOG` "
          "(default `<tmp>/layoutbench-error.log`).\n")


def _param_row(p: Any) -> str:
    if getattr(p, "param_type_name", "") == "argument":
        name = f"`{(p.metavar or p.name).upper()}`"
    else:
        name = " / ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
    help_text = " ".join((getattr(p, "help", None) or "").split()).replace("|", "\\|")
    default = p.default
    shown = "" if default in (None, (), [], False) or callable(default) else f"`{default}`"
    return f"| {name} | {help_text} | {shown} |"


def command_reference(name: str, cmd: Any) -> str:
    """One command's section: summary, then its arguments and options as a table."""
    doc = " ".join((cmd.help or "").split())
    lines = [f"## `layoutbench {name}`\n", doc + "\n"]
    params = [p for p in cmd.params if p.name != "help"]
    if params:
        lines += ["| argument / option | meaning | default |", "|---|---|---|", *map(_param_row, params), ""]
    examples = getattr(cmd, "examples", None)  # shell text printed unwrapped after --help: a code block here
    if examples:
        prose, _, commands = examples.partition("\n\n")
        lines += [" ".join(prose.split()) + "\n", "```sh", commands.strip("\n"), "```", ""]
    return "\n".join(lines)


def reference() -> str:
    """The whole reference, commands in the order they are registered."""
    from bench.cli import app

    group: Any = typer.main.get_command(app)  # typer's own click (vendored): duck-typed here
    ctx = group.context_class(group)
    parts = [HEADER]
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is not None:
            parts.append(command_reference(name, cmd))
    return "\n".join(parts)


if __name__ == "__main__":
    print(reference(), end="")
