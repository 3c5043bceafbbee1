"""Driver-JVM options for the short-lived Spark processes the crash test starts and kills.

A crash child lives for seconds, so JVM start-up, not work, is its cost: C1-only JIT and the
serial collector cut its CPU time roughly in half, and an application class-data-sharing archive
(JDK 13+ ``-XX:ArchiveClassesAtExit``, built once by a warm-up child that exits cleanly) saves
loading Spark's classes again in every child. The archive is cached per (Java, PySpark, Python)
under ``$XDG_CACHE_HOME/layoutbench`` (``~/.cache`` by default); if it cannot be built, children
simply start without it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BASE_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"


def _java_version() -> str:
    java = Path(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else "unknown"


def archive_path() -> Path:
    import pyspark

    key = hashlib.sha256(f"{_java_version()}|{pyspark.__version__}|{sys.executable}".encode()).hexdigest()[:16]
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "layoutbench"
    return root / f"spark-driver-{key}.jsa"


def child_java_options(scenario_path: str, engine_name: str, use_archive: bool) -> str:
    """Options for a crash child's driver JVM; builds the class-data archive first if asked and missing."""
    if not use_archive:
        return BASE_OPTS
    archive = archive_path()
    if not archive.exists():
        _build_archive(archive, scenario_path, engine_name)
    return f"{BASE_OPTS} -XX:SharedArchiveFile={archive}" if archive.exists() else BASE_OPTS


def _build_archive(archive: Path, scenario_path: str, engine_name: str) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(f".{os.getpid()}.partial")
    with tempfile.TemporaryDirectory(prefix="layoutbench-cds-") as tmp:
        cmd = [sys.executable, "-m", "bench.crash_child", "warmup", scenario_path, engine_name,
               str(Path(tmp, "table")), "local[1]", f"{BASE_OPTS} -XX:ArchiveClassesAtExit={partial}"]
        env = {k: v for k, v in os.environ.items() if k != "LAYOUTBENCH_CRASH_AT"}
        try:
            subprocess.run(cmd, env=env, capture_output=True, timeout=600)
        except subprocess.TimeoutExpired:
            pass
    if partial.exists() and partial.stat().st_size > 0:
        os.replace(partial, archive)
    else:
        partial.unlink(missing_ok=True)
