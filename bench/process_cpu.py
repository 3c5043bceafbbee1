"""CPU seconds of the run's process tree (this Python process, the Spark JVM it launched, the JVM's
Python workers), read from ``/proc``.

On a shared machine a phase's wall time mixes what the run did with what the other processes took
from it; its CPU seconds do not (to the first order): the profile keeps both, so that a phase's
cost on an idle machine can be estimated from a loaded run. A process that exited counts through
its parent's ``cutime``/``cstime`` once reaped (Spark's Python daemon reaps its forked workers).
Off Linux, or when ``/proc`` cannot be read, the figure is None.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and its reaped children), or None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    ppid = int(fields[1])
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    return ppid, ticks / _TICK


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, from one scan of ``/proc``."""
    parents: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return [root]
    for name in names:
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                parents.setdefault(st[0], []).append(int(name))
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(parents.get(pid, []))
    return out


class TreeCpu:
    """CPU seconds of this process's tree, cheap to read often: the tree's pids are found by a scan of
    ``/proc`` at most every ``rescan_s`` seconds (Spark's JVM and its Python daemon live as long as
    the session), and only their ``stat`` files are read in between. Monotone: a member that exits
    keeps the seconds last read from it."""

    def __init__(self, rescan_s: float = 30.0) -> None:
        self.rescan_s = rescan_s
        self._last: dict[int, float] = {}  # pid -> its CPU seconds when last read
        self._live: list[int] = []
        self._scanned = -1e9

    def rescan(self) -> None:
        """Find the tree's members again at the next read (a child process was just started)."""
        self._scanned = -1e9

    def seconds(self) -> float | None:
        """The tree's CPU seconds so far (None off Linux)."""
        if not Path("/proc/self/stat").exists():
            return None
        now = time.monotonic()
        if now - self._scanned > self.rescan_s:
            self._live, self._scanned = descendants(os.getpid()), now
        for pid in self._live:
            st = _stat(pid)
            if st is not None:
                self._last[pid] = max(st[1], self._last.get(pid, 0.0))
        return sum(self._last.values())
