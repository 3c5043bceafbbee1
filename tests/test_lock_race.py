"""The writer lock under a real race: 8 processes meet one stale lock, 50 times."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import threading
import time
from pathlib import Path

from engines.table.lock import CLAIM_PREFIX, LOCK_FILE, LockHeldError, WriterLock
from engines.table.storage import Storage

WRITERS = 8
ROUNDS = 50
IN_CRITICAL = ".hoodie/in-critical-section"
COUNTER = ".hoodie/commits"


def _writer(base: str, start: mp.Barrier, end: mp.Barrier, takeovers: mp.Queue, violations: mp.Value) -> None:
    storage = Storage(base)
    for _ in range(ROUNDS):
        try:
            start.wait()
        except threading.BrokenBarrierError:
            return
        lock = WriterLock(storage, owner=f"writer-{os.getpid()}")
        removed = None  # the stale lock this writer removed, in whichever attempt
        while True:
            try:
                lock.acquire()
                removed = removed or lock.took_over
                break
            except LockHeldError:
                removed = removed or lock.took_over
                time.sleep(0.001)
        # a second holder now would find the marker: exclusive create fails
        if not storage.create_exclusive(IN_CRITICAL, b""):
            with violations.get_lock():
                violations.value += 1
        count = int(storage.read_bytes(COUNTER) or b"0")  # read-modify-write: a lost commit shows
        storage.write_atomic(COUNTER, str(count + 1).encode())
        storage.delete(IN_CRITICAL, missing_ok=True)
        takeovers.put(removed)
        lock.release()
        try:
            end.wait()
        except threading.BrokenBarrierError:
            return


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_eight_processes_on_a_stale_lock_one_takes_it_over_and_no_commit_is_lost(tmp_path: Path) -> None:
    storage = Storage(str(tmp_path))
    storage.write_atomic(COUNTER, b"0")
    ctx = mp.get_context("spawn")
    start, end = ctx.Barrier(WRITERS + 1), ctx.Barrier(WRITERS + 1)
    takeovers, violations = ctx.Queue(), ctx.Value("i", 0)
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), start, end, takeovers, violations))
             for _ in range(WRITERS)]
    for p in procs:
        p.start()
    try:
        for r in range(ROUNDS):
            stale = {"pid": _dead_pid(), "host": os.uname().nodename, "owner": "killed", "since": time.time(),
                     "token": f"stale-{r}"}
            storage.write_atomic(LOCK_FILE, json.dumps(stale).encode())
            start.wait(timeout=60)
            end.wait(timeout=60)
            took = [takeovers.get(timeout=10) for _ in range(WRITERS)]
            assert took.count(f"stale-{r}") == 1, (r, took)  # exactly one writer removed the stale lock
            assert [t for t in took if t is not None] == [f"stale-{r}"]
            assert not storage.exists(LOCK_FILE)  # every holder removed its own lock, and only it
        assert violations.value == 0  # never two holders at once
        assert int(storage.read_bytes(COUNTER)) == WRITERS * ROUNDS  # no commit lost
        assert not [e for e in storage.list(".hoodie") if e.path.startswith(CLAIM_PREFIX)]
    finally:
        start.abort()
        end.abort()
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def test_release_removes_only_the_lock_it_owns(tmp_path: Path) -> None:
    storage = Storage(str(tmp_path))
    mine = WriterLock(storage, owner="me")
    mine.acquire()
    # someone replaced our lock (e.g. took it over while we were thought dead)
    other = {"pid": 1, "host": "elsewhere", "owner": "other", "since": time.time(), "token": "theirs"}
    storage.write_atomic(LOCK_FILE, json.dumps(other).encode())
    mine.release()
    assert json.loads(storage.read_bytes(LOCK_FILE))["token"] == "theirs"


def test_recovery_drops_claims_of_dead_claimers_then_takes_the_stale_lock(tmp_path: Path) -> None:
    storage = Storage(str(tmp_path))
    dead = {"pid": _dead_pid(), "host": os.uname().nodename, "owner": "killed", "since": time.time(), "token": "t1"}
    storage.write_atomic(LOCK_FILE, json.dumps(dead).encode())
    storage.write_atomic(CLAIM_PREFIX + "t1", json.dumps(dead).encode())  # killed while removing it
    lock = WriterLock(storage)
    assert lock.break_stale()
    assert not storage.exists(LOCK_FILE) and not storage.exists(CLAIM_PREFIX + "t1")
