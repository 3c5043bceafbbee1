"""The simulator's object-store request model: requests per phase as a linear function of what the
phase did, with coefficients fitted to the counted requests of a real run on the store.

The simulator records one *event* per phase and context (the runner's labels: ``batch 3``,
``checkpoint 5``, ``service_hours@5``) with the figures below, summed when a context holds several
runs (the baseline cleans after its ingest and again after a maintenance step). A request count of
one kind (operation and object: data file, timeline, other) in one phase is

    count = sum_f coef[kind, phase, op, object][f] * event[f]

with one coefficient vector per engine kind (each design's code path makes its own requests), fitted
by non-negative least squares (``scipy.optimize.nnls``) on the simulator's events of the real run's
scenario against the real run's ``requests`` table. The simulator's events come from the same pure
planners, so its file counts are the real ones (held exact by :mod:`bench.simulate.validate`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

# What each phase's count depends on. ``runs``: how many times the phase ran in the context;
# ``commits``: the timeline's completed commits at the time (each run lists and reads the timeline).
FEATURES: dict[str, tuple[str, ...]] = {
    "ingest": ("runs", "commits", "files_written", "files_merged", "row_groups_merged", "partitions_new"),
    "maintenance_planning": ("runs", "commits", "live_files"),
    "maintenance_execution": ("runs", "commits", "files_in", "files_out", "row_groups_in"),
    "cleaner": ("runs", "commits", "files_deleted"),
    "query_planning": ("runs", "commits"),
    "query_scan": ("runs", "files_scanned", "row_groups_scanned"),
}
PHASES = tuple(FEATURES)
OPS = ("PUT", "GET", "HEAD", "LIST", "DELETE", "DELETE_MULTI", "COPY", "MULTIPART_CREATE", "MULTIPART_PART",
       "MULTIPART_COMPLETE")

Events = dict[tuple[str, str], dict[str, float]]  # (phase, context) -> feature -> value


_FEATURE_SETS = {phase: frozenset(names) for phase, names in FEATURES.items()}


def add_event(events: Events, phase: str, context: str, **features: float) -> None:
    """Add one run of ``phase`` in ``context`` (its figures summed into the context's)."""
    _check(phase, features)
    acc = events.get((phase, context))
    if acc is None:
        acc = events[(phase, context)] = defaultdict(float)
    acc["runs"] += 1
    for k, v in features.items():
        acc[k] += float(v)


class EventLog:
    """One engine's events as the replay records them: a compact row per phase run (its context and
    the figures in the order of a ``names`` tuple the caller keeps), summed into :data:`Events` by
    :func:`add_event` only when read (a long replay records millions and most runs never read them).
    A context given as an int is batch ``b`` (``batch {b}``)."""

    def __init__(self) -> None:
        self._runs: list[tuple[str, str | int, tuple[str, ...], tuple[float, ...]]] = []
        self._events: Events = {}
        self._checked: set[tuple[str, tuple[str, ...]]] = set()

    def add(self, phase: str, context: str | int, names: tuple[str, ...], values: tuple[float, ...]) -> None:
        """One run of ``phase`` in ``context`` with ``values`` of the features ``names``."""
        if (phase, names) not in self._checked:
            _check(phase, names)
            self._checked.add((phase, names))
        self._runs.append((phase, context, names, values))

    @property
    def events(self) -> Events:
        """Every run so far, summed per (phase, context)."""
        if self._runs:
            events = self._events
            for phase, context, names, values in self._runs:
                add_event(events, phase, f"batch {context}" if isinstance(context, int) else context,
                          **dict(zip(names, values, strict=True)))
            self._runs.clear()
        return self._events


class UnreadEventLog(EventLog):
    """The log of a replay whose events nobody reads (no request model): each run is dropped as it
    comes, so a long replay does not keep millions of rows for nothing."""

    def add(self, phase: str, context: str | int, names: tuple[str, ...], values: tuple[float, ...]) -> None:
        """Nothing kept."""


def _check(phase: str, features: Iterable[str]) -> None:
    known = _FEATURE_SETS.get(phase)
    if known is None:
        raise ValueError(f"request model: unknown phase {phase!r} (expected one of {', '.join(PHASES)})")
    if not known.issuperset(features):
        raise ValueError(f"request model: phase {phase} has no feature {sorted(set(features) - known)}")


def vector(phase: str, figures: dict[str, float]) -> np.ndarray:
    return np.array([float(figures.get(f, 0.0)) for f in FEATURES[phase]])


def _key(kind: str, phase: str, op: str, obj: str) -> str:
    return f"{kind}|{phase}|{op}|{obj}"


def real_counts(requests: pd.DataFrame) -> pd.Series:
    """Counted requests (repetition 0, an engine's) per (engine, phase, context, op, object)."""
    req = requests[requests.engine.notna() & (requests.get("repeat", 0) == 0) & requests.phase.isin(PHASES)]
    return req.groupby(["engine", "phase", "context", "op", "object"])["count"].sum()


def fit(events: dict[str, Events], kinds: dict[str, str], requests: pd.DataFrame) -> dict[str, list[float]]:
    """Coefficients per ``kind|phase|op|object`` from simulated ``events`` per engine (``kinds``: the
    engine's kind) and the real run's ``requests``. Contexts the simulator has no event for are left
    out of the fit (their requests stay unexplained and show in the validation)."""
    counts = real_counts(requests)
    rows: dict[tuple[str, str], list[tuple[np.ndarray, dict[tuple[str, str], float]]]] = defaultdict(list)
    for engine, evs in events.items():
        mine = counts[counts.index.get_level_values(0) == engine] if engine in kinds else counts.iloc[:0]
        for (phase, context), figures in evs.items():
            sel = mine[(mine.index.get_level_values(1) == phase) & (mine.index.get_level_values(2) == context)]
            y = {(op, obj): float(c) for (_e, _p, _c, op, obj), c in sel.items()}
            rows[(kinds[engine], phase)].append((vector(phase, figures), y))
    coef: dict[str, list[float]] = {}
    for (kind, phase), pts in rows.items():
        x = np.vstack([p[0] for p in pts])
        for op, obj in sorted({k for _, y in pts for k in y}):
            y = np.array([ys.get((op, obj), 0.0) for _, ys in pts])
            coef[_key(kind, phase, op, obj)] = [round(float(v), 6) for v in sparsest_fit(x, y)]
    return coef


def sparsest_fit(x: np.ndarray, y: np.ndarray, slack: float = 0.1) -> np.ndarray:
    """Non-negative least squares on the fewest features that fit about as well as all of them (a
    squared error at most ``slack`` requests² per point above the full fit's). A calibration run has
    few contexts per phase and its features move together (commits, files), so the full fit is not
    unique; the sparsest one is, and it extrapolates by the figure that drives the count (a PUT per
    file written, not a share of the commits so far)."""
    from scipy.optimize import nnls  # imported here: scipy costs every `simulate` a second or more to load

    n = x.shape[1]
    full = float(np.sum((x @ nnls(x, y)[0] - y) ** 2))
    budget = full + slack * len(y)
    for k in range(n + 1):
        best: tuple[float, np.ndarray] | None = None
        for cols in combinations(range(n), k):
            c = np.zeros(n)
            if cols:
                c[list(cols)] = nnls(x[:, cols], y)[0]
            rss = float(np.sum((x @ c - y) ** 2))
            if rss <= budget and (best is None or rss < best[0]):
                best = (rss, c)
        if best is not None:
            return best[1]
    return nnls(x, y)[0]


def predict(coef: dict[str, list[float]], kind: str, events: Events) -> list[dict[str, Any]]:
    """Request rows (the ``requests`` table's shape, counts rounded) for one engine's ``events``."""
    by_phase: dict[str, list[tuple[str, str, np.ndarray]]] = defaultdict(list)
    for key, c in coef.items():
        k, phase, op, obj = key.split("|")
        if k == kind:
            by_phase[phase].append((op, obj, np.array(c)))
    out = []
    for (phase, context), figures in sorted(events.items()):
        x = vector(phase, figures)
        for op, obj, c in by_phase.get(phase, ()):
            n = int(round(max(0.0, float(c @ x))))
            if n:
                out.append({"phase": phase, "context": context, "op": op, "object": obj, "count": n})
    return out


def totals(rows: Iterable[dict[str, Any]] | pd.DataFrame, by: tuple[str, ...] = ("engine", "phase", "op")) -> pd.Series:
    """Counts summed by ``by``."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if df.empty:
        return pd.Series(dtype=float)
    return df.groupby(list(by))["count"].sum()


def per_run(coef: dict[str, list[float]] | None, kind: str, phase: str, figures: dict[str, float]) -> float:
    """All requests of one run of ``phase`` with ``figures`` (0 without a fitted model)."""
    return sum(per_run_ops(coef, kind, phase, figures).values())


def per_run_ops(coef: dict[str, list[float]] | None, kind: str, phase: str,
                figures: dict[str, float]) -> dict[str, float]:
    """The requests of one run of ``phase`` with ``figures`` per operation (empty without a fitted model)."""
    out: dict[str, float] = defaultdict(float)
    if not coef:
        return out
    x = vector(phase, {"runs": 1.0, **figures})
    for key, c in coef.items():
        if key.startswith(f"{kind}|{phase}|"):
            out[key.split("|")[2]] += max(0.0, float(np.array(c) @ x))
    return out
