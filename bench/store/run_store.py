"""The object store of one run (``store.kind: s3``): server, counting proxy, bucket and table URIs.

Tables live under ``s3://layoutbench/<run-id>/tables/<engine>`` on a moto server started for the
run behind a :class:`~bench.store.proxy.CountingProxy` (its first-byte latency and bandwidth cap
from the scenario); every engine's pyarrow and Spark (s3a) requests cross the proxy's socket. The
server keeps objects in memory, so the tables end with the run; the results folder stays local.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyarrow.fs as pafs

from bench.store.proxy import CountingProxy
from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server, StoreError
from bench.store.uri import table_uri
from engines.table.storage import s3_location

BUCKET = "layoutbench"


class RunStore:
    """A started store: where the tables go and what the requests were."""

    def __init__(self, server: S3Server, proxy: CountingProxy, prefix: str, first_byte_ms: float,
                 bandwidth_mb_s: float | None) -> None:
        self.server, self.proxy, self.prefix = server, proxy, prefix.strip("/")
        self.first_byte_ms, self.bandwidth_mb_s = first_byte_ms, bandwidth_mb_s

    def table_uri(self, rel: str) -> str:
        """The URI of a table at ``rel`` under the run's prefix (through the proxy)."""
        return table_uri(self.proxy.endpoint, BUCKET, f"{self.prefix}/{rel}")

    def public_uri(self, rel: str) -> str:
        return f"s3://{BUCKET}/{self.prefix}/{rel}"

    def spark_conf(self) -> dict[str, str]:
        """What the Spark session needs to reach the store through s3a (hadoop-aws, endpoint, keys)."""
        from engines.spark.session import s3a_conf

        loc = s3_location(self.table_uri("tables"))
        assert loc is not None
        return s3a_conf(loc)

    def describe(self) -> dict[str, Any]:
        return {"kind": "s3", "server": "moto (S3 REST API) on 127.0.0.1", "bucket": BUCKET, "prefix": self.prefix,
                "first_byte_ms": self.first_byte_ms, "bandwidth_mb_s": self.bandwidth_mb_s,
                "requests": len(self.proxy.requests)}

    def request_rows(self) -> list[dict[str, Any]]:
        """The proxy's log aggregated per engine, repetition, phase, context and operation."""
        agg: dict[tuple, list[int]] = {}
        for r in self.proxy.requests:
            engine, repeat = _table_of(r.key)
            key = (engine, repeat, r.phase, r.context, r.op, object_kind(r.key))
            a = agg.setdefault(key, [0, 0, 0, 0])
            a[0] += 1
            a[1] += r.request_bytes
            a[2] += r.response_bytes
            a[3] += r.status == 503
        return [{"engine": e, "repeat": rep, "phase": ph, "context": ctx, "op": op, "object": obj, "count": c,
                 "request_bytes": qb, "response_bytes": rb, "throttled": t}
                for (e, rep, ph, ctx, op, obj), (c, qb, rb, t) in sorted(agg.items(), key=lambda kv: str(kv[0]))]


def object_kind(key: str) -> str:
    """What an object is: ``data`` (a Parquet base file), ``timeline`` (under ``.hoodie/``), or ``other``
    (the bucket, a listing prefix, a partition metadata file)."""
    if key.endswith(".parquet") and "/.hoodie/" not in f"/{key}":
        return "data"
    if "/.hoodie/" in f"/{key}/" or key.endswith("/.hoodie"):
        return "timeline"
    return "other"


def _table_of(key: str) -> tuple[str | None, int]:
    """(engine, repetition) of an object key ``<run>/tables/[repeat<r>/]<engine>/...``."""
    parts = key.split("/")
    if "tables" not in parts[:-1]:
        return None, 0
    i = parts.index("tables")
    rest = parts[i + 1:]
    if len(rest) > 1 and rest[0].startswith("repeat") and rest[0][6:].isdigit():
        return rest[1], int(rest[0][6:])
    return (rest[0] or None) if rest else None, 0  # the tables/ prefix itself (a listing) is no engine's


@contextmanager
def run_store(spec: Any, run_id: str) -> Iterator[RunStore | None]:
    """The run's store (None for local disk): started, its bucket created, stopped afterwards."""
    if spec.kind == "local":
        yield None
        return
    if getattr(spec, "external", False):
        from bench.store.external import open_external

        yield open_external(spec, run_id)
        return
    with S3Server() as server, CountingProxy(server.endpoint, spec.first_byte_ms, spec.bandwidth_mb_s,
                                                    access_key=ACCESS_KEY) as proxy:
        fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=proxy.endpoint,
                               scheme="http", region=REGION, allow_bucket_creation=True)
        try:
            with proxy.label("setup"):
                fs.create_dir(BUCKET)
        except OSError as exc:
            raise StoreError(f"S3 store at {proxy.endpoint}: cannot create bucket {BUCKET}: {exc}") from None
        yield RunStore(server, proxy, run_id, spec.first_byte_ms, spec.bandwidth_mb_s)
