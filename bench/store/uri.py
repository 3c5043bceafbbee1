"""Table URIs on the local S3 store, as pyarrow takes them (our table core and write tasks); delta-rs and
Spark (s3a) get theirs from the same URI (``engines.table.storage.s3_location``)."""

from __future__ import annotations

from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY


def table_uri(endpoint: str, bucket: str, prefix: str) -> str:
    """A ``pyarrow.fs.FileSystem.from_uri`` URI: credentials, plain-HTTP endpoint and region inline.

    ``allow_delayed_open`` lets pyarrow write an object smaller than one part with a single PUT
    (as Hadoop's s3a does below its multipart threshold) instead of a multipart upload's three
    requests; larger objects still go up in parts."""
    return (f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/{prefix.strip('/')}"
            f"?endpoint_override={endpoint}&scheme=http&region={REGION}&allow_delayed_open=true")

