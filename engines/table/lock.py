"""Single-writer lock: ``.hoodie/.layoutbench.lock`` created exclusively, holding the owner and a token.

A second writer gets :class:`LockHeldError` naming the holder. A lock whose owner process is dead
(same host, pid gone) is stale and is taken over; a lock from another host is only taken over
after ``stale_after_s`` seconds (we cannot see remote processes).

Every lock carries a random ``token``. Whoever removes a lock — a writer taking over a stale one,
or the owner releasing its own — first creates the claim ``.hoodie/.layoutbench.lock.claim-<token>``
exclusively, so exactly one party can remove that lock instance, and only after reading it back
with the same token (compare-and-swap on the token). A new lock is created exclusively and read
back to confirm ownership. So when several writers find one stale lock, one of them takes it over
and the others see a live lock; ``release`` removes only the lock it owns.

| lock file     | who may act            | how                                                        |
|---------------|------------------------|------------------------------------------------------------|
| absent        | any writer             | exclusive create with a new token, read back               |
| live, other   | nobody                 | ``LockHeldError`` naming the holder                        |
| stale (token) | the claim-<token> winner | verify token, delete, exclusive create, read back, unclaim |
| ours (token)  | the owner              | claim, verify token, delete, unclaim                       |

The exclusive create is atomic on local and POSIX-like file systems (``O_EXCL``), and on an S3
store given by an ``s3://`` URI, where it is one conditional PUT (``If-None-Match: *``): the store
refuses the second creator (412), so exactly one of several racing writers holds the lock. On an
object store without the conditional PUT it is a check-then-write, so two writers can both believe
they created the lock; the read back catches the case where the later write wins, but not every
interleaving: there, run a single writer process per table.

A writer killed between creating a claim and removing it (a read and a delete apart) leaves the
claim behind, and that lock instance cannot be removed until recovery (``break_stale``) drops
claims whose claimer is gone.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
import uuid

from engines.table.storage import Storage, StorageError

LOCK_FILE = ".hoodie/.layoutbench.lock"
CLAIM_PREFIX = LOCK_FILE + ".claim-"


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


def lock_token(info: dict, raw: bytes = b"") -> str:
    """The token that names one lock instance (a lock written before tokens: a hash of its bytes)."""
    token = info.get("token")
    return str(token) if token else "sha1-" + hashlib.sha1(raw).hexdigest()


class WriterLock:
    """Re-entrant within one process (threads of the same writer share it)."""

    def __init__(self, storage: Storage, owner: str = "writer", stale_after_s: float = 3600.0) -> None:
        self.storage = storage
        self.owner = owner
        self.stale_after_s = stale_after_s
        self._depth = 0
        self._token: str | None = None
        self.took_over: str | None = None  # the token of the stale lock the last acquire removed
        self._mutex = threading.RLock()

    def _payload(self, token: str) -> bytes:
        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "owner": self.owner,
                           "since": time.time(), "token": token}).encode()

    def _read(self) -> tuple[dict, str] | None:
        """The lock's holder and token, or None when there is no lock."""
        try:
            raw = self.storage.read_bytes(LOCK_FILE)
        except (OSError, StorageError):
            return None
        try:
            info = json.loads(raw)
            if not isinstance(info, dict):
                raise ValueError("not an object")
        except ValueError:
            info = {"pid": -1, "host": "?", "owner": "unreadable lock file", "since": 0}
        return info, lock_token(info, raw)

    def is_stale(self, info: dict) -> bool:
        """True when the holder is gone: a dead pid on this host, or a remote lock older than ``stale_after_s``."""
        if info.get("host") == socket.gethostname():
            pid = int(info.get("pid", -1))
            return pid <= 0 or (pid != os.getpid() and not _pid_alive(pid))
        return time.time() - float(info.get("since", 0)) > self.stale_after_s

    def _remove_if(self, token: str) -> bool:
        """Remove the lock instance named ``token``, if it is still there; True when this call removed it.

        The claim makes the removal of one lock instance exclusive: a writer that lost the claim, or
        that won it after the instance was already replaced, removes nothing.
        """
        claim = CLAIM_PREFIX + token
        if not self.storage.create_exclusive(claim, self._payload(token)):
            return False
        try:
            found = self._read()
            if found is None or found[1] != token:
                return False
            self.storage.delete(LOCK_FILE, missing_ok=True)
            return True
        finally:
            self.storage.delete(claim, missing_ok=True)

    def break_stale(self) -> bool:
        """Recovery, before a writer resumes: drop claims left by killed claimers, then remove the
        lock if its holder is gone; True when this call removed the lock."""
        for entry in self.storage.list(".hoodie"):
            if not entry.path.startswith(CLAIM_PREFIX):
                continue
            try:
                info = json.loads(self.storage.read_bytes(entry.path) or b"{}")
            except (OSError, StorageError, ValueError):
                info = {}
            if self.is_stale(info):
                self.storage.delete(entry.path, missing_ok=True)
        found = self._read()
        return found is not None and self.is_stale(found[0]) and self._remove_if(found[1])

    def _try_create(self) -> bool:
        token = uuid.uuid4().hex
        if not self.storage.create_exclusive(LOCK_FILE, self._payload(token)):
            return False
        found = self._read()
        if found is None or found[1] != token:
            raise LockHeldError(
                f"table {self.storage.uri}: another writer replaced the lock just created (the store has no "
                f"atomic exclusive create); tables on object stores take one writer at a time")
        self._token = token
        return True

    def acquire(self) -> None:
        """Take the lock, taking over a stale one; ``LockHeldError`` naming a live holder."""
        with self._mutex:
            if self._depth:
                self._depth += 1
                return
            self.took_over = None
            for _ in range(5):
                if self._try_create():
                    self._depth = 1
                    return
                found = self._read()
                if found is None:
                    continue
                info, token = found
                if info.get("pid") == os.getpid() and info.get("host") == socket.gethostname() \
                        and token != self._token:
                    raise LockHeldError(
                        f"table {self.storage.uri} is already locked by this process ({info.get('owner')})"
                    )
                if self.is_stale(info):
                    if self._remove_if(token):
                        self.took_over = token
                    continue  # the next exclusive create decides who holds it
                raise LockHeldError(
                    f"table {self.storage.uri} is locked by another writer: pid {info.get('pid')} on "
                    f"{info.get('host')} ({info.get('owner')}) since {time.ctime(float(info.get('since', 0)))}"
                )
            raise LockHeldError(f"could not acquire the writer lock of {self.storage.uri}")

    def release(self) -> None:
        """Leave the lock; the last release removes it, only if it is still the lock this writer created."""
        with self._mutex:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth == 0 and self._token is not None:
                token, self._token = self._token, None
                self._remove_if(token)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
