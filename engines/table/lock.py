"""Single-writer lock: ``.hoodie/.layoutbench.lock`` created exclusively, holding the owner.

A second writer gets :class:`LockHeldError` naming the holder. A lock whose owner process is dead
(same host, pid gone) is stale and is taken over; a lock from another host is only taken over
after ``stale_after_s`` seconds (we cannot see remote processes).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

from engines.table.storage import Storage

LOCK_FILE = ".hoodie/.layoutbench.lock"


class LockHeldError(RuntimeError):
    """Another live writer holds the table lock."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class WriterLock:
    """Re-entrant within one process (threads of the same writer share it)."""

    def __init__(self, storage: Storage, owner: str = "writer", stale_after_s: float = 3600.0) -> None:
        self.storage = storage
        self.owner = owner
        self.stale_after_s = stale_after_s
        self._depth = 0
        self._mutex = threading.RLock()

    def _payload(self) -> bytes:
        return json.dumps(
            {"pid": os.getpid(), "host": socket.gethostname(), "owner": self.owner, "since": time.time()}
        ).encode()

    def holder(self) -> dict | None:
        if not self.storage.exists(LOCK_FILE):
            return None
        try:
            return json.loads(self.storage.read_bytes(LOCK_FILE))
        except (OSError, ValueError):
            return {"pid": -1, "host": "?", "owner": "unreadable lock file", "since": 0}

    def is_stale(self, info: dict) -> bool:
        if info.get("host") == socket.gethostname():
            pid = int(info.get("pid", -1))
            return pid <= 0 or (pid != os.getpid() and not _pid_alive(pid))
        return time.time() - float(info.get("since", 0)) > self.stale_after_s

    def acquire(self) -> None:
        with self._mutex:
            if self._depth:
                self._depth += 1
                return
            for _ in range(3):
                if self.storage.create_exclusive(LOCK_FILE, self._payload()):
                    self._depth = 1
                    return
                info = self.holder()
                if info is None:
                    continue
                if info.get("pid") == os.getpid() and info.get("host") == socket.gethostname():
                    raise LockHeldError(
                        f"table {self.storage.uri} is already locked by this process ({info.get('owner')})"
                    )
                if self.is_stale(info):
                    self.storage.delete(LOCK_FILE, missing_ok=True)
                    continue
                raise LockHeldError(
                    f"table {self.storage.uri} is locked by another writer: pid {info.get('pid')} on "
                    f"{info.get('host')} ({info.get('owner')}) since {time.ctime(float(info.get('since', 0)))}"
                )
            raise LockHeldError(f"could not acquire the writer lock of {self.storage.uri}")

    def release(self) -> None:
        with self._mutex:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth == 0:
                self.storage.delete(LOCK_FILE, missing_ok=True)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
