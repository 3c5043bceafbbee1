"""The user's own S3-compatible store (MinIO, Ceph, AWS): ``store: {kind: s3, endpoint, bucket, prefix, region}``.

Tables live under ``s3://<bucket>/<prefix>/<run-id>/tables/<engine>`` and are kept after the run
unless ``--no-keep-tables``. Credentials never come from the scenario: pyarrow and delta-rs take
the AWS default chain (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` / ``AWS_SESSION_TOKEN``,
or ``AWS_PROFILE``'s profile), and Spark's s3a the environment's keys or the profile. No proxy sits
in front of a store we did not start (its own latency applies, and a proxy would break request
signing), so requests are not counted: the run says so in ``run.json``'s ``store``.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from bench.store.server import StoreError
from engines.table.storage import s3_location

# s3a's own chain, plus the profile a user's AWS CLI set-up has (not in s3a 3.3.4's default list)
S3A_PROVIDERS = ",".join([
    "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
    "com.amazonaws.auth.profile.ProfileCredentialsProvider",
    "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
])


class _NoLabels:
    """The requests of a store we do not proxy are not attributed to phases."""

    def label(self, phase: str, context: str = "") -> Any:
        return nullcontext()


def split_endpoint(endpoint: str) -> tuple[str, str]:
    """(scheme, host[:port]) of ``http://host:port``, ``https://host`` or a bare ``host:port`` (https)."""
    if "://" in endpoint:
        parts = urlsplit(endpoint)
        return parts.scheme, parts.netloc
    return "https", endpoint


def filesystem(endpoint: str | None, region: str | None) -> pafs.S3FileSystem:
    """pyarrow's S3 client for the store, with the AWS default credential chain."""
    kwargs: dict[str, Any] = {"region": region} if region else {}
    if endpoint:
        scheme, host = split_endpoint(endpoint)
        kwargs |= {"endpoint_override": host, "scheme": scheme}
    return pafs.S3FileSystem(**kwargs)


class ExternalStore:
    """A store the run did not start: where its tables go, and how Spark reaches them."""

    def __init__(self, endpoint: str | None, bucket: str, prefix: str, region: str | None, run_id: str) -> None:
        self.endpoint, self.bucket, self.region = endpoint, bucket, region
        self.prefix = "/".join(p for p in (prefix.strip("/"), run_id) if p)
        self.proxy = _NoLabels()
        self.fs = filesystem(endpoint, region)

    def _query(self) -> str:
        q = ["allow_delayed_open=true"]
        if self.endpoint:
            scheme, host = split_endpoint(self.endpoint)
            q = [f"endpoint_override={host}", f"scheme={scheme}", *q]
        if self.region:
            q.append(f"region={self.region}")
        return "&".join(q)

    def table_uri(self, rel: str) -> str:
        """The URI of a table at ``rel`` under the run's prefix (no credentials in it)."""
        return f"s3://{self.bucket}/{self.prefix}/{rel.strip('/')}?{self._query()}"

    def public_uri(self, rel: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}/{rel.strip('/')}"

    def spark_conf(self) -> dict[str, str]:
        """s3a settings for the endpoint; credentials from the environment or the profile."""
        from engines.spark.session import s3a_conf

        loc = s3_location(self.table_uri("tables"))
        assert loc is not None
        return {**s3a_conf(loc), "spark.hadoop.fs.s3a.aws.credentials.provider": S3A_PROVIDERS}

    def describe(self) -> dict[str, Any]:
        return {"kind": "s3", "server": f"external ({self.endpoint or 'AWS S3'})", "bucket": self.bucket,
                "prefix": self.prefix, "region": self.region, "requests": None,
                "requests_note": "not counted: no proxy in front of a store the run did not start"}

    def request_rows(self) -> list[dict[str, Any]]:
        return []

    def remove_tables(self) -> None:
        """Delete the run's tables (``--no-keep-tables``)."""
        self.fs.delete_dir_contents(f"{self.bucket}/{self.prefix}/tables", missing_dir_ok=True)


def open_external(spec: Any, run_id: str) -> ExternalStore:
    """The user's store, its bucket checked before any engine starts (one error naming it)."""
    store = ExternalStore(spec.endpoint, spec.bucket, spec.prefix, spec.region, run_id)
    where = spec.endpoint or "AWS S3"
    try:
        info = store.fs.get_file_info(spec.bucket)
    except OSError as exc:
        raise StoreError(f"store {where}: cannot reach bucket {spec.bucket!r}: {' '.join(str(exc).split())}") from None
    if info.type == pafs.FileType.NotFound:
        raise StoreError(f"store {where}: bucket {spec.bucket!r} does not exist (create it first; "
                         "layoutbench never creates a bucket on a store it did not start)")
    return store
