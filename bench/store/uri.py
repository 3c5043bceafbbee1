"""Table URIs on the local S3 store, for pyarrow (our table core and write tasks) and for Spark (s3a)."""

from __future__ import annotations

from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY


def table_uri(endpoint: str, bucket: str, prefix: str) -> str:
    """A ``pyarrow.fs.FileSystem.from_uri`` URI: credentials, plain-HTTP endpoint and region inline.

    ``allow_delayed_open`` lets pyarrow write an object smaller than one part with a single PUT
    (as Hadoop's s3a does below its multipart threshold) instead of a multipart upload's three
    requests; larger objects still go up in parts."""
    return (f"s3://{ACCESS_KEY}:{SECRET_KEY}@{bucket}/{prefix.strip('/')}"
            f"?endpoint_override={endpoint}&scheme=http&region={REGION}&allow_delayed_open=true")


def s3a_conf(endpoint: str) -> dict[str, str]:
    """Spark settings for reading the store through ``s3a://`` (hadoop-aws, path-style, no TLS)."""
    return {
        "spark.hadoop.fs.s3a.endpoint": f"http://{endpoint}",
        "spark.hadoop.fs.s3a.access.key": ACCESS_KEY,
        "spark.hadoop.fs.s3a.secret.key": SECRET_KEY,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": REGION,
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
    }
