"""Results written as a run goes: a run cut off (a scale run's hour, a killed job) keeps what it measured.

Every ``every_s`` seconds at the end of a batch, and after each checkpoint's queries (where an engine
with a stated prefix finishes), the rows so far are written to the results folder with a ``run.json``
marked ``incomplete``: the batches done of the run's, each engine's batches taken so far, and when.
Write amplification is not derived yet (it is, once, when the run ends); each commit's bytes written
and its batch's bytes are there. The finished run overwrites the folder's tables and ``run.json``
(each file replaced whole: a cut-off write leaves the previous one). :class:`runresults.Results`
reads such a folder; ``Results.incomplete`` says what it holds.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from runresults import ResultsWriter

EVERY_S = 60.0  # at most one partial write a minute: a write of every row so far costs a few ms


class PartialResults:
    """Writes the rows a run has so far, marked incomplete (module docstring)."""

    def __init__(self, writer: ResultsWriter, scenario: Any, batches: dict[str, int], every_s: float = EVERY_S) -> None:
        self.writer = writer
        self.scenario = scenario
        self.batches = batches  # engine name -> batches it takes
        self.every_s = every_s
        self.last = time.monotonic()

    def tick(self, batch: int) -> None:
        """After batch ``batch``: write when ``every_s`` has passed since the last write."""
        if time.monotonic() - self.last >= self.every_s:
            self.write(batch)

    def write(self, batch: int) -> None:
        """The rows so far and a ``run.json`` marked incomplete, after batch ``batch``."""
        done = batch + 1
        run = {
            "run_id": self.writer.folder.name, "created": datetime.now(UTC).isoformat(), "simulated": False,
            "scenario": self.scenario.model_dump(mode="json"),
            "engines": {e.name: {"kind": e.kind, "config": e.config} for e in self.scenario.engines},
            "incomplete": {"batches_done": done, "batches_run": self.scenario.batches_run,
                           "engines_batches_done": {n: min(done, b) for n, b in self.batches.items()},
                           "written": datetime.now(UTC).isoformat(),
                           "note": "written as the run went; WA and the run's summary are derived when it ends"},
        }
        self.writer.write_run(run)
        self.last = time.monotonic()
