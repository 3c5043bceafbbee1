"""Two hosts on one machine: Linux network namespaces joined by a veth pair (iproute2's ``ip``).

Each host is a network namespace with its own loopback and one end of the pair, addressed in a
private /30 that exists only inside those namespaces (the machine's own interfaces are never
touched: both ends of the pair are created directly inside the namespaces). The file system is
shared, so a Spark cluster across the hosts differs from a local one by the network only.

Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and ``ip``; :func:`namespaces_unavailable` says why
not, naming the missing capability, so a test can skip with that reason.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

SUBNET = "10.213.0"  # 10.213.0.0/30: .1 and .2, only inside the namespaces this module creates


@dataclass(frozen=True)
class Host:
    """One namespace: its name and its address on the veth pair."""

    netns: str
    address: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host's network namespace."""
        return ["ip", "netns", "exec", self.netns, *argv]


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def ensure_iproute2() -> str | None:
    """Make ``ip`` available; install Debian's iproute2 as root when missing. None on success,
    else why not."""
    if shutil.which("ip"):
        return None
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "iproute2's `ip` is missing (and installing it needs root and apt-get)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for argv in (["apt-get", "install", "-y", "-q", "iproute2"],
                 ["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "iproute2"]):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
        if proc.returncode == 0 and shutil.which("ip"):
            return None
    return f"iproute2's `ip` is missing and apt-get could not install it: {proc.stderr.strip()[-300:]}"


@functools.cache
def namespaces_unavailable() -> str | None:
    """None when this process can create network namespaces with veth pairs; else the reason,
    naming the missing capability or tool (asked once per process)."""
    missing = ensure_iproute2()
    if missing:
        return missing
    name = f"lbprobe{os.getpid()}"
    try:
        made = _ip("netns", "add", name)
        if made.returncode != 0:
            return ("cannot create a network namespace (needs root with CAP_SYS_ADMIN): "
                    f"`ip netns add` said: {made.stderr.strip()}")
        veth = _ip("-n", name, "link", "add", "lbp0", "type", "veth", "peer", "name", "lbp1")
        if veth.returncode != 0:
            return f"cannot create a veth pair (needs CAP_NET_ADMIN and the veth driver): {veth.stderr.strip()}"
        return None
    finally:
        _ip("netns", "del", name)


def _kill_everything_in(netns: str) -> None:
    """SIGKILL the processes still inside ``netns`` (started there by us), by their ids."""
    for _ in range(20):
        listed = _ip("netns", "pids", netns)
        pids = [int(p) for p in listed.stdout.split()] if listed.returncode == 0 else []
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)


def _must(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed: {proc.stderr.strip()}")


def remove_orphans() -> list[str]:
    """Delete the namespaces an earlier, killed process of this module left (``lb<pid>a|b`` whose
    process is gone), with whatever still runs inside them; their names."""
    listed = _ip("netns", "list")
    removed = []
    for line in listed.stdout.splitlines() if listed.returncode == 0 else []:
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(r"lb(\d+)[ab]", name)
        if m is None or _alive(int(m.group(1))):
            continue
        _kill_everything_in(name)
        _ip("netns", "del", name)
        removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def two_hosts(tag: str | None = None) -> Iterator[tuple[Host, Host]]:
    """Create two namespaces joined by a veth pair (``SUBNET``.1 and .2 /30, loopbacks up); yield
    their hosts; afterwards kill whatever still runs inside them and delete both, even on failure."""
    remove_orphans()
    tag = tag or str(os.getpid())
    a, b = Host(f"lb{tag}a", f"{SUBNET}.1"), Host(f"lb{tag}b", f"{SUBNET}.2")
    created: list[str] = []
    try:
        for host in (a, b):
            _must(_ip("netns", "add", host.netns), f"ip netns add {host.netns}")
            created.append(host.netns)
        # Both ends are born inside the namespaces: no interface ever appears on the real network.
        _must(_ip("-n", a.netns, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1", "netns", b.netns),
              "creating the veth pair")
        for host, dev in ((a, "veth0"), (b, "veth1")):
            _must(_ip("-n", host.netns, "addr", "add", f"{host.address}/30", "dev", dev), f"addressing {dev}")
            _must(_ip("-n", host.netns, "link", "set", dev, "up"), f"bringing {dev} up")
            _must(_ip("-n", host.netns, "link", "set", "lo", "up"), f"bringing lo up in {host.netns}")
        yield a, b
    finally:
        for netns in created:
            _kill_everything_in(netns)
            _ip("netns", "del", netns)
