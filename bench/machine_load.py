"""The machine's load and the tables' disk during a run, sampled beside it.

A timing on a shared machine means little without the load it was taken under: a thread samples
the 1-minute load average (``os.getloadavg``) and the bytes under the run's table folders every
``interval_s`` seconds; ``run.json`` keeps the samples and their summary (``load``), which the
scale report prints beside the run time, with the tables' disk peak.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def folder_bytes(folders: Iterable[Path]) -> int:
    """Bytes of the regular files under ``folders`` (a folder removed meanwhile counts 0)."""
    total = 0
    stack = [Path(f) for f in folders]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:  # removed between the listing and the stat
                        continue
        except OSError:
            continue
    return total


class LoadSampler:
    """A context manager: samples ``(seconds since start, load1, table bytes)`` every ``interval_s``."""

    def __init__(self, table_dirs: Iterable[Path], interval_s: float = 10.0) -> None:
        self.table_dirs = list(table_dirs)
        self.interval_s = interval_s
        self.samples: list[tuple[float, float, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def sample(self) -> None:
        """Take one sample now."""
        self.samples.append((round(time.perf_counter() - self._t0, 1), round(os.getloadavg()[0], 2),
                             folder_bytes(self.table_dirs)))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def __enter__(self) -> LoadSampler:
        self._t0 = time.perf_counter()
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="load-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()

    def summary(self) -> dict[str, Any]:
        """The samples and their summary: load1 min / mean / max, the tables' peak bytes, the CPUs."""
        loads = [s[1] for s in self.samples]
        return {"interval_s": self.interval_s, "cpus": os.cpu_count(),
                "load1_min": min(loads, default=None), "load1_max": max(loads, default=None),
                "load1_mean": round(sum(loads) / len(loads), 2) if loads else None,
                "tables_peak_bytes": max((s[2] for s in self.samples), default=0),
                "samples": [list(s) for s in self.samples]}
