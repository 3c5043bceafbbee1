"""A rich progress bar for long commands (``crashtest``, long ``simulate`` runs), on stderr.

Quiet unless stderr is a terminal and no test is running (pytest sets ``PYTEST_CURRENT_TEST``),
so piped output and captured test output stay plain. With ``delay_s`` the bar appears only once
the work has run that long: short runs print nothing extra.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def interactive() -> bool:
    """True when a progress bar may be drawn: stderr is a terminal and no test is running."""
    return sys.stderr.isatty() and "PYTEST_CURRENT_TEST" not in os.environ


class ProgressBar:
    """``with ProgressBar("crash jobs", total=n) as bar: ... bar.advance()``; drawn only when
    :func:`interactive` (or ``enabled``) and after ``delay_s`` seconds of work."""

    def __init__(self, description: str, total: int, unit: str = "", delay_s: float = 0.0,
                 enabled: bool | None = None) -> None:
        self.description, self.total, self.unit, self.delay_s = description, total, unit, delay_s
        self.enabled = interactive() if enabled is None else enabled
        self.completed = 0
        self._t0 = time.perf_counter()
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> ProgressBar:
        self._t0 = time.perf_counter()
        self._maybe_start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def advance(self, n: int = 1, description: str | None = None) -> None:
        """``n`` more units done; ``description`` replaces the text before the bar."""
        self.completed += n
        if description is not None:
            self.description = description
        self._maybe_start()
        if self._progress is not None and self._task is not None:
            # a new description is drawn at once: a step shorter than the refresh period still shows
            self._progress.update(self._task, completed=self.completed, description=self.description,
                                  refresh=description is not None)

    def describe(self, description: str) -> None:
        """Change the text before the bar (what is running now) without advancing."""
        self.advance(0, description)

    def _maybe_start(self) -> None:
        if self._progress is not None or not self.enabled or time.perf_counter() - self._t0 < self.delay_s:
            return
        suffix = f" {self.unit}" if self.unit else ""
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn(suffix), TimeElapsedColumn(), TimeRemainingColumn(),
                                  console=Console(stderr=True), transient=False,
                                  # lines printed meanwhile go above the bar when both share the terminal
                                  redirect_stdout=sys.stdout.isatty(), redirect_stderr=True)
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=self.total, completed=self.completed)
