"""``--out s3://bucket/prefix``: a run's results folder written to an object store through ``pyarrow.fs``.

The run writes its folder on local disk as usual (Spark's log, the Parquet tables, the report), then
the whole folder goes to ``<prefix>/<run-id>/`` on the store, and the local copy is removed. The
endpoint comes from the URI's query (``?endpoint_override=host:port&scheme=http``), else from the
scenario's own store (``store.endpoint``), else AWS; credentials from the environment or a profile.
The bucket is checked before the run starts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyarrow.fs as pafs

from bench.store.external import filesystem
from bench.store.server import StoreError


def is_remote(out: str | None) -> bool:
    """True for an ``s3://`` results root."""
    return bool(out) and str(out).startswith("s3://")


def results_location(out: str, store_spec: Any = None) -> tuple[pafs.FileSystem, str, str]:
    """(file system, bucket, key prefix) of an ``s3://`` results root."""
    parts = urlsplit(out)
    q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    bucket, prefix = parts.hostname or "", parts.path.strip("/")
    if not bucket:
        raise StoreError(f"--out {out}: no bucket in the URI (s3://bucket/prefix)")
    endpoint = None
    if "endpoint_override" in q:
        endpoint = f"{q.get('scheme', 'https')}://{q['endpoint_override']}"
    elif store_spec is not None and getattr(store_spec, "endpoint", None):
        endpoint = store_spec.endpoint
    region = q.get("region") or getattr(store_spec, "region", None)
    return filesystem(endpoint, region), bucket, prefix


def check_results_bucket(out: str, store_spec: Any = None) -> None:
    """One error naming the bucket of ``--out`` when it does not exist (before any engine starts)."""
    fs, bucket, _ = results_location(out, store_spec)
    try:
        info = fs.get_file_info(bucket)
    except OSError as exc:
        raise StoreError(f"--out {out.split('?')[0]}: cannot reach bucket {bucket!r}: {' '.join(str(exc).split())}") from None
    if info.type == pafs.FileType.NotFound:
        raise StoreError(f"--out {out.split('?')[0]}: bucket {bucket!r} does not exist (create it first)")


def upload_results(run_dir: Path, out: str, store_spec: Any = None) -> str:
    """Copy the results folder to the store and remove the local copy; returns its ``s3://`` URI."""
    fs, bucket, prefix = results_location(out, store_spec)
    dest = "/".join(p for p in (bucket, prefix, run_dir.name) if p)
    pafs.copy_files(str(run_dir.resolve()), dest, source_filesystem=pafs.LocalFileSystem(), destination_filesystem=fs)
    shutil.rmtree(run_dir, ignore_errors=True)
    return f"s3://{dest}"
