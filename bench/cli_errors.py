"""No traceback on a user's terminal: every command's exception becomes one message and an exit code.

A user error (a bad scenario, table, results folder, option, file, calibration file, an unreachable
Maven Central, Spark master or results bucket, a locked or corrupt table) is named in one line with
exit code 3 (bad input), also when a run's step raised it; a run step that raised anything else, or
any other failure, is one line with exit code 1; Ctrl-C is one line naming the step, exit code 130. The traceback goes to a log
file whose path the message gives: the results folder's ``error.log`` when the runner wrote one,
else ``$LAYOUTBENCH_ERROR_LOG`` or ``<tmp>/layoutbench-error.log``.
"""

from __future__ import annotations

import functools
import os
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape

from bench.interrupt import interrupted, recorded

EXIT_FAILED = 1
EXIT_BAD_INPUT = 3
EXIT_INTERRUPTED = 130  # Ctrl-C: the shell's 128 + SIGINT

F = TypeVar("F", bound=Callable[..., Any])


def _user_error_types() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the input or the environment is wrong, not the code."""
    try:
        return _imported_user_error_types()
    except ImportError:  # a broken install is not the user's input: only the builtin kinds
        return (FileNotFoundError, PermissionError, IsADirectoryError)


def _imported_user_error_types() -> tuple[type[BaseException], ...]:
    from bench.hoodie_conf import HoodieConfError
    from bench.scenario import ScenarioError
    from bench.service import ServiceError
    from bench.simulate.costmodel import CalibrationError
    from bench.simulate.sweep import SweepError
    from bench.store.server import StoreError
    from engines.spark.session import JvmPackagesError, SparkMasterInvalid, SparkMasterUnreachable
    from engines.table.lock import LockHeldError
    from engines.table.metadata import MetadataError
    from engines.table.properties import NotAHudiTableError, UnsupportedTableError
    from engines.table.storage import StorageError
    from engines.table.timeline import TimelineError
    from runresults import ResultsError
    from workloads.spec import WorkloadSpecError

    return (ScenarioError, ResultsError, ServiceError, SweepError, HoodieConfError, WorkloadSpecError, CalibrationError,
            JvmPackagesError, SparkMasterInvalid, SparkMasterUnreachable, LockHeldError, MetadataError, NotAHudiTableError,
            UnsupportedTableError, TimelineError, StoreError, StorageError, FileNotFoundError, PermissionError, IsADirectoryError)


def error_log_path() -> Path:
    """Where a command's traceback goes when no results folder holds it."""
    return Path(os.environ.get("LAYOUTBENCH_ERROR_LOG") or Path(tempfile.gettempdir()) / "layoutbench-error.log")


def exit_code_of(exc: BaseException) -> int:
    """130 for Ctrl-C, 3 for a user's error (input or environment), 1 for anything else."""
    from bench.runner import RunStepError

    if interrupted(exc):
        return EXIT_INTERRUPTED
    if isinstance(exc, RunStepError):  # a step that raised: the user's when what it raised is (a lock held)
        return EXIT_BAD_INPUT if isinstance(exc.__cause__, _user_error_types()) else EXIT_FAILED
    return EXIT_BAD_INPUT if isinstance(exc, _user_error_types()) else EXIT_FAILED


def message_of(exc: BaseException) -> str:
    """The exception as one line: its own message, or its type when it has none."""
    text = " ".join(str(exc).split())
    if interrupted(exc):
        return text if isinstance(exc, KeyboardInterrupt) and text else "interrupted"
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"no such file: {exc.filename}"
    return text or type(exc).__name__


def log_traceback(exc: BaseException, command: str) -> str:
    """Write ``exc``'s traceback to :func:`error_log_path`; `` (traceback in <log>)`` for the message,
    or nothing when the log cannot be written."""
    log = error_log_path()
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"layoutbench {command} failed\n\n{''.join(traceback.format_exception(exc))}")
    except OSError:
        return ""
    return f" (traceback in {log})"


def report(exc: BaseException, command: str) -> int:
    """Write the traceback to the log, print one line on stderr, and return the exit code."""
    where = log_traceback(exc, command)
    code = exit_code_of(exc)
    kind = "" if code in (EXIT_BAD_INPUT, EXIT_INTERRUPTED) else f"{type(exc).__name__}: "
    if "(traceback in " in message_of(exc):  # the run's own error.log: named once
        where = ""
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(kind + message_of(exc) + where)}",
                                               highlight=False)
    return code


def guarded(func: F) -> F:
    """A command whose exceptions (other than typer's and click's own exits) become :func:`report`."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with recorded():  # Ctrl-C is told apart from the Py4J errors it causes
                return func(*args, **kwargs)
        except (typer.Exit, click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BaseException as exc:
            if not isinstance(exc, Exception) and not interrupted(exc):
                raise  # SystemExit
            raise typer.Exit(report(exc, func.__name__)) from None
    return wrapper  # type: ignore[return-value]


def command(app: typer.Typer, *args: Any, **kwargs: Any) -> Callable[[F], F]:
    """``@app.command(...)`` for a guarded command."""
    def register(func: F) -> F:
        app.command(*args, **kwargs)(guarded(func))
        return func
    return register
