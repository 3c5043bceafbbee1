"""``--out s3://bucket/prefix``: a command's results folders written to an object store through ``pyarrow.fs``.

Every command that takes a results root (``run``, ``stream``, ``simulate``, ``sweep``, ``crashtest``)
goes through :func:`results_root`: for a local root it changes nothing; for ``s3://`` it checks the
bucket before any engine or Spark starts (one error naming it), lets the command write its folder
on local disk as usual (Spark's log, the Parquet tables, the report), then copies whatever was
written to ``<prefix>/<run-id>/`` on the store and removes the local copy, also when the command
failed: its partial results and ``error.log`` land in the bucket, and the error message names them
there. The endpoint comes from the URI's query (``?endpoint_override=host:port&scheme=http``), else
from the scenario's own store (``store.endpoint``), else AWS; credentials from the environment or a
profile.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyarrow.fs as pafs

from bench.store.external import filesystem
from bench.store.server import StoreError


def is_remote(out: str | Path | None) -> bool:
    """True for an ``s3://`` results root."""
    return bool(out) and str(out).startswith("s3://")


def results_location(out: str, store_spec: Any = None) -> tuple[pafs.FileSystem, str, str]:
    """(file system, bucket, key prefix) of an ``s3://`` results root."""
    parts = urlsplit(out)
    q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    bucket, prefix = parts.hostname or "", parts.path.strip("/")
    if "@" in parts.netloc:  # never echoed: the message leaves the secret out
        raise StoreError("--out: the URI has a user name or password before '@': credentials come from the "
                         "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) or an AWS profile (AWS_PROFILE)")
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


class ResultsRoot:
    """The results root a command writes to: ``local`` is the folder to hand the runner (None: the
    scenario's own output); :meth:`where` is what to print for a results folder written under it."""

    def __init__(self, out: str | None, local: str | None, store_spec: Any = None) -> None:
        self.out, self.local, self.store_spec = out, local, store_spec

    @property
    def remote(self) -> bool:
        return is_remote(self.out)

    def where(self, folder: str | Path) -> str:
        """The folder's ``s3://`` URI on the store, or its local path."""
        if not self.remote:
            return str(folder)
        _, bucket, prefix = results_location(str(self.out), self.store_spec)
        try:
            rel = Path(folder).resolve().relative_to(Path(str(self.local)).resolve()).as_posix().strip(".")
        except ValueError:  # not under the staging folder: not uploaded, where it is
            return str(folder)
        return "s3://" + "/".join(p for p in (bucket, prefix, rel) if p)

    def upload(self) -> list[str]:
        """Copy every folder written under the staging folder to the store; their ``s3://`` URIs."""
        assert self.local is not None
        return [upload_results(d, str(self.out), self.store_spec) for d in sorted(Path(self.local).iterdir())
                if d.is_dir()]


@contextmanager
def results_root(out: str | Path | None, store_spec: Any = None) -> Iterator[ResultsRoot]:
    """``with results_root(out, scenario.store) as root: run(out=root.local) ...; print(root.where(run_dir))``.

    A local ``out`` (or None) is handed through. An ``s3://`` one has its bucket checked first (a
    :class:`StoreError` naming it), and what the block wrote goes to the store when the block ends,
    raised or not; a local path in the exception's message (``traceback in .../error.log``) is
    rewritten to the folder's place on the store."""
    if not is_remote(out):
        yield ResultsRoot(None if out is None else str(out), None if out is None else str(out), store_spec)
        return
    check_results_bucket(str(out), store_spec)
    staging = tempfile.mkdtemp(prefix="layoutbench-results-")
    root = ResultsRoot(str(out), staging, store_spec)
    try:
        yield root
    except BaseException as exc:
        try:
            root.upload()
        except OSError as upload_error:  # the store went away meanwhile: the local copy stays where named
            exc.add_note(f"results kept in {staging}: the upload failed: {upload_error}")
        else:
            _relocate_message(exc, staging, root.where(staging))
            shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        root.upload()
    except OSError as upload_error:
        raise StoreError(f"--out {str(out).split('?')[0]}: the upload failed ({' '.join(str(upload_error).split())}); "
                         f"the results are kept in {staging}") from upload_error
    shutil.rmtree(staging, ignore_errors=True)


def _relocate_message(exc: BaseException, local: str, remote: str) -> None:
    """Point a message's local paths under the staging folder at the store, where the files now are."""
    if exc.args and isinstance(exc.args[0], str) and local in exc.args[0]:
        exc.args = (exc.args[0].replace(local, remote), *exc.args[1:])
