"""A long replay's engines run side by side in forked processes, the rows merged in the serial order.

The simulated engines share nothing while they replay: each keeps its own table, and what the
batch loop hands every engine (a batch's partitions, rows and ranges) is computed from the
workload alone. So after the horizon's schedule is built, the replay forks: each process replays
its share of the engines through the same batch loop (:func:`bench.batch_loop.run_batches`), and
the parent, which replays the first share itself, takes the children's rows and tables back.

The serial replay emits its rows batch by batch, engine by engine in the scenario's order, the
final maintenance after every engine's last batch, and the checkpoint queries after the batch.
Every row carries its batch (a query its checkpoint), so the merge puts each process's rows in the
place the serial replay gives them: ordered by (batch, final maintenance or not, engine), each
engine's rows in its own order. The folder is the serial replay's, table for table.

A forked process starts with the parent's memory (the imports, the scenario, the horizon's
schedule), so only the per-batch work shared in the serial replay (the batch's counts and ranges)
is done once per process.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from bench.batch_loop import MaintenanceSchedule, run_batches
from bench.simulate import requests as reqmodel
from runresults import rows_table

# "1" keeps every replay serial (bench.sim_speed times the serial replay beside the replay's own choice)
SERIAL_ENV = "LAYOUTBENCH_SERIAL_REPLAY"
MIN_BATCHES = 20_000  # shorter replays stay serial: forking and merging would cost more than they save
# the engine state the results folder reads after the replay (bench.simulate.results_folder)
_STATE = ("live", "puts", "gets", "lists", "seq", "instants", "physical", "live_bytes", "phys_bytes", "small")


def machine_busy(cores: int) -> bool:
    """Whether the machine's 1-minute load average already fills its ``cores``: forked processes then only
    contend with the other work (sim_year_hourly on the 2-core machine at load 3-5: 52.1 s wall against
    the serial replay's 45.5 s; idle, 28.4 s against 48.5 s)."""
    try:
        return os.getloadavg()[0] >= cores
    except OSError:  # no load average on this platform
        return False


def processes_for(engines: int, batches: int, exact: bool) -> int:
    """How many processes replay ``engines`` over ``batches``: one per engine, up to twice the cores
    (the scheduler shares two cores among three engines better than two processes would), for the
    long replays of the estimated mode only, on a machine with a core to spare (:func:`machine_busy`);
    1 where fork is not available or in a daemon process (a sweep's worker, which may not start
    processes of its own), or when :data:`SERIAL_ENV` is 1. The folder is the same either way; run.json's ``replay_processes`` says which."""
    if os.environ.get(SERIAL_ENV) == "1":
        return 1
    cores = os.cpu_count() or 1
    if (exact or batches < MIN_BATCHES or engines < 2 or cores < 2 or multiprocessing.current_process().daemon
            or "fork" not in multiprocessing.get_all_start_methods() or machine_busy(cores)):
        return 1
    return min(engines, 2 * cores)


@dataclass
class Share:
    """What one process's replay produced: its results tables and its engines' state."""

    engines: list[int]  # indices into the scenario's simulated engines
    tables: dict[str, pa.Table]  # its results tables (``commits`` and those it added rows to), rows in its order
    final_at: dict[str, int] = field(default_factory=dict)  # per table, the row where the final maintenance began
    state: list[dict[str, Any]] = field(default_factory=list)  # per engine: :data:`_STATE` and its event log


def replay(sim: Any, engines: list[Any], steps_of: Callable[[list[Any], Callable[[], None]], Any],
           advance: Callable[[], None], schedule: MaintenanceSchedule, checkpoints: list[int],
           prefix: Callable[[Any], int], processes: int, events: bool) -> None:
    """Replay ``engines`` in ``processes`` processes (engine ``i`` in process ``i % processes``; the
    parent replays share 0) and leave ``sim.commits``'s table, ``sim.writer``'s tables (of the rows a
    serial replay leaves in it) and each engine's :data:`_STATE` as one serial replay leaves them.
    ``steps_of(engines, advance)`` builds the batch loop's steps for a share. ``events``: the
    engines' request events are taken back too."""
    ctx = multiprocessing.get_context("fork")
    children = []
    for k in range(1, processes):
        share = list(range(k, len(engines), processes))
        recv, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_child, args=(send, sim, engines, share, steps_of, schedule, checkpoints,
                                                 prefix, events), daemon=True)
        child.start()
        send.close()
        children.append((recv, child))
    try:
        shares = [_replay_share(sim, engines, list(range(0, len(engines), processes)), steps_of, advance, schedule,
                                checkpoints, prefix, events)]
        for recv, child in children:
            got = recv.recv()
            child.join()
            if isinstance(got, str):
                raise RuntimeError(f"simulator: a replay process failed:\n{got}")
            shares.append(got)
    finally:
        for _, child in children:
            if child.is_alive():
                child.terminate()
                child.join()
    _merge(sim, engines, shares)


def _child(conn: Any, sim: Any, engines: list[Any], share: list[int], steps_of: Callable, schedule: MaintenanceSchedule,
           checkpoints: list[int], prefix: Callable, events: bool) -> None:
    try:
        conn.send(_replay_share(sim, engines, share, steps_of, lambda: None, schedule, checkpoints, prefix, events))
    except BaseException:  # the parent raises it with the child's traceback
        conn.send(traceback.format_exc())
    finally:
        conn.close()


def _replay_share(sim: Any, engines: list[Any], share: list[int], steps_of: Callable, advance: Callable[[], None],
                  schedule: MaintenanceSchedule, checkpoints: list[int], prefix: Callable, events: bool) -> Share:
    mine = [engines[i] for i in share]
    rows = sim.writer.rows
    out = Share(share, {})

    def before_final() -> None:
        out.final_at = {"commits": len(sim.commits), **{t: len(r) for t, r in rows.items() if t != "commits"}}

    steps = steps_of(mine, advance)
    steps.before_final = lambda b: before_final()
    run_batches(steps, mine, schedule, sim.n, checkpoints=checkpoints, prefix=prefix)
    # each engine's cumulative columns are its own, and every engine's ingest commit of a batch carries
    # the batch's bytes written once: a share's table holds the rows the serial replay's table holds
    out.tables = {"commits": sim.commits.table(),
                  **{t: rows_table(t, r) for t, r in rows.items() if r and t != "commits"}}
    out.state = [{**{name: getattr(e, name) for name in _STATE}, "log": e.log if events else None} for e in mine]
    return out


def _merge(sim: Any, engines: list[Any], shares: list[Share]) -> None:
    """The shares' tables in the serial replay's order, and each engine's state back on it."""
    by_name = {e.name: i for i, e in enumerate(engines)}
    for name in dict.fromkeys(t for share in shares for t in share.tables):
        parts = [(share.tables[name], share.final_at.get(name)) for share in shares if name in share.tables]
        merged = _in_serial_order(parts, by_name)
        if name == "commits":
            sim.commits = MergedCommits(merged)
        else:
            sim.writer.tables[name] = merged
            sim.writer.rows[name].clear()
    for share in shares:
        for i, state in zip(share.engines, share.state, strict=True):
            e = engines[i]
            for name in _STATE:
                setattr(e, name, state[name])
            e.log = state["log"] if state["log"] is not None else reqmodel.UnreadEventLog()


def _in_serial_order(parts: list[tuple[pa.Table, int | None]], by_name: dict[str, int]) -> pa.Table:
    """One table of the shares' ``parts`` (each with the row where its final maintenance began),
    ordered by (batch or checkpoint, final maintenance or not, engine), each engine's rows in their order."""
    keys = []
    for t, final_at in parts:
        n = t.num_rows
        codes = t.column("engine").dictionary_encode().combine_chunks()
        index = np.array([by_name[name] for name in codes.dictionary.to_pylist()], dtype=np.int64)
        engine = index[codes.indices.to_numpy(zero_copy_only=False)] if n else np.zeros(0, dtype=np.int64)
        batch = t.column("batch" if "batch" in t.column_names else "checkpoint").to_numpy(zero_copy_only=False)
        keys.append((batch, np.arange(n) >= (n if final_at is None else final_at), engine))
    batch, final, engine = (np.concatenate(k) for k in zip(*keys, strict=True))
    return pa.concat_tables([t for t, _ in parts]).take(pa.array(np.lexsort((engine, final, batch))))


class MergedCommits:
    """The merged ``commits`` table where the replay's :class:`CommitLog` stood (the results folder
    reads its table only)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __len__(self) -> int:
        return self._table.num_rows

    def table(self) -> pa.Table:
        """The ``commits`` table, in the serial replay's order."""
        return self._table


