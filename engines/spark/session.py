"""The one way to get a SparkSession in layoutbench (DESIGN.md §4).

Local by default (``local[*]``); any master URL (``spark://…``, ``yarn``, ``k8s://…``) may be
passed. Workers run this interpreter (``PYSPARK_PYTHON=sys.executable``) so they have pyarrow;
the driver binds to 127.0.0.1 for a local master and to its address towards a remote one; the UI is off unless asked; Parquet timestamps are written as
TIMESTAMP_MICROS so min/max statistics exist.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import SparkSession

from engines.table.storage import S3Location

_LOCK = threading.Lock()
_SESSION: SparkSession | None = None

DEFAULT_CONF: dict[str, str] = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "2g",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.scheduler.mode": "FAIR",
    # Hive-style partition values (the Delta peer) stay strings, as our Hudi files store them.
    "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
}


# Apache Hudi's Spark bundle: the newest published for the PySpark minor pyproject.toml pins (3.5;
# hudi-spark4.0/4.1 bundles are not on Maven Central). Resolved by spark.jars.packages into ~/.ivy2.
HUDI_VERSION = "1.2.0"
HUDI_BUNDLE = f"org.apache.hudi:hudi-spark3.5-bundle_2.12:{HUDI_VERSION}"


# Hadoop's S3 connector (s3a://) for the Hadoop PySpark 3.5 ships (pyspark/jars/hadoop-client-api-3.3.4);
# it brings the AWS SDK bundle it was built with. Resolved by spark.jars.packages into ~/.ivy2.
HADOOP_AWS = "org.apache.hadoop:hadoop-aws:3.3.4"


def s3a_conf(loc: S3Location) -> dict[str, str]:
    """The session settings that let Spark (and Apache Hudi) read and write ``loc``'s bucket
    through ``s3a://``: hadoop-aws, the endpoint (path-style, TLS as the URI says) and its keys."""
    conf = {
        "spark.jars.packages": HADOOP_AWS,
        "spark.hadoop.fs.s3a.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3a.endpoint.region": loc.region or "us-east-1",
        # Keep directory markers (HADOOP-13230, Hadoop 3.3.1+): by default s3a deletes every parent
        # marker after each file it writes, one DELETE_MULTI (and its probes) per write; on
        # s3_small that was 11% of Apache Hudi's ingest requests. Readers of 3.3.x handle kept markers.
        "spark.hadoop.fs.s3a.directory.marker.retention": "keep",
    }
    if loc.endpoint:
        conf |= {"spark.hadoop.fs.s3a.endpoint": f"{loc.scheme}://{loc.endpoint}",
                 "spark.hadoop.fs.s3a.path.style.access": "true",
                 "spark.hadoop.fs.s3a.connection.ssl.enabled": str(loc.scheme == "https").lower()}
    if loc.access_key:
        conf |= {"spark.hadoop.fs.s3a.access.key": loc.access_key,
                 "spark.hadoop.fs.s3a.secret.key": loc.secret_key or "",
                 "spark.hadoop.fs.s3a.aws.credentials.provider":
                     "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}
    return conf


def merge_conf(*confs: Mapping[str, str]) -> dict[str, str]:
    """Session settings merged left to right; ``spark.jars.packages`` lists are joined, not replaced."""
    out: dict[str, str] = {}
    for conf in confs:
        for k, v in conf.items():
            if k == "spark.jars.packages" and out.get(k):
                v = ",".join(dict.fromkeys([*out[k].split(","), *v.split(",")]))
            out[k] = v
    return out


class JvmPackagesError(RuntimeError):
    """Spark could not start with the JVM packages it was asked to load."""


def hudi_conf() -> dict[str, str]:
    """The session settings Apache Hudi's Spark datasource needs: its bundle, Kryo with Hudi's
    registrator, and Hudi's SQL extension (for its procedures)."""
    return {
        "spark.jars.packages": HUDI_BUNDLE,
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
        "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    }


def _maven_cause(coordinates: str) -> str:
    """Why ``coordinates`` (group:artifact:version[,…]) did not resolve, asked of Maven Central."""
    import urllib.error
    import urllib.request

    causes = []
    for coord in coordinates.split(","):
        group, artifact, version = coord.strip().split(":")
        url = (f"https://repo1.maven.org/maven2/{group.replace('.', '/')}/{artifact}/{version}/"
               f"{artifact}-{version}.pom")
        try:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10):
                causes.append(f"{coord}: found on Maven Central (see Ivy's output in the Spark log)")
        except urllib.error.HTTPError as exc:
            causes.append(f"{coord}: Maven Central answered HTTP {exc.code} for {url}")
        except (urllib.error.URLError, OSError) as exc:
            causes.append(f"{coord}: Maven Central unreachable ({exc})")
    return "; ".join(causes)


def _ivy_cause(log_path: str | Path | None) -> str | None:
    """Ivy's own account of a failed resolution, from the JVM's output in ``log_path``: the repository it
    could not reach, else the dependency it did not find (None when the log has neither)."""
    if log_path is None or not Path(log_path).is_file():
        return None
    lines = [ln.strip() for ln in Path(log_path).read_text(errors="replace").splitlines()]
    access = next((ln for ln in lines if ln.startswith("Server access error at url")), None)
    unresolved = next((ln for ln in lines if "unresolved dependency:" in ln), None)
    if access is not None:
        return f"Ivy could not reach the repository: {access}"
    if unresolved is not None:
        return f"Ivy: {unresolved.split('RuntimeException: ', 1)[-1]}"
    return None


@contextmanager
def _jvm_output_into(log_path: str | Path | None) -> Iterator[None]:
    """Point file descriptors 1 and 2 at ``log_path`` while the JVM starts: the JVM (and the Python
    workers it forks) inherit them for their lifetime — Hudi's bundle prints warnings on the JVM's
    stdout — and this process gets its own back (PySpark talks to the JVM over a socket)."""
    if log_path is None:
        yield
        return
    path = Path(log_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for fd in saved:
            os.dup2(log, fd)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, keep in saved.items():
            os.dup2(keep, fd)
            os.close(keep)
        os.close(log)


def _get_or_create(builder: SparkSession.Builder, settings: Mapping[str, str],
                   log_path: str | Path | None = None) -> SparkSession:
    """Start the session; a failure to load ``spark.jars.packages`` is one error naming them and why."""
    packages = settings.get("spark.jars.packages")
    try:
        return builder.getOrCreate()
    except Exception as exc:
        if not packages:
            raise
        ivy = settings.get("spark.jars.ivySettings")
        raise JvmPackagesError(f"Spark could not start with JVM packages {packages} "
                               f"(resolved into {settings.get('spark.jars.ivy') or '~/.ivy2'} by spark.jars.packages"
                               + (f", repositories from {ivy}" if ivy else "") + "): "
                               f"{_ivy_cause(log_path) or _maven_cause(packages)}; "
                               f"Spark said: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                               + (f" (Spark's log: {log_path})" if log_path is not None else "")) from None


class SparkMasterUnreachable(RuntimeError):
    """A ``spark://`` master that does not answer on its port."""


class SparkMasterInvalid(ValueError):
    """A master URL Spark cannot parse (refused before any JVM package is blamed for it)."""


# Spark's master URLs (SparkContext.createTaskScheduler): local, local[N|*], local[N|*, F], local-cluster[N, C, M],
# and the cluster managers' schemes.
_MASTER = re.compile(r"local(\[(\d+|\*)\]|\[(\d+|\*),\s*\d+\]|-cluster\[\d+,\s*\d+,\s*\d+\])?"
                     r"|(spark|k8s|mesos)://.+|yarn")


def check_master_syntax(master: str) -> None:
    """One error naming a master URL Spark would refuse (``local[x]``), before the JVM starts: Spark's own
    failure comes only after its packages resolve, and reads as theirs."""
    if not _MASTER.fullmatch(master.strip()):
        raise SparkMasterInvalid(f"Spark master {master!r} is not a master URL: expected local, local[N], local[*], "
                                 "local[N,F], spark://host:port, yarn or k8s://...")


def check_master_reachable(master: str, timeout_s: float = 10.0) -> None:
    """For a standalone ``spark://host:port[,host:port]`` master, one TCP connect per address: an
    unreachable master is one error naming the URL at once, where Spark's client retries for minutes."""
    if not master.startswith("spark://"):
        return
    import socket

    errors = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":")
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
                return
        except (OSError, ValueError) as exc:
            errors.append(f"{address}: {exc}")
    raise SparkMasterUnreachable(f"Spark master {master} is unreachable ({'; '.join(errors)})")


def launched_by_spark_submit() -> bool:
    """True when spark-submit started this interpreter (its JVM gateway is already up)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def resolve_master(cli: str | None, scenario: str | None) -> str | None:
    """The master to ask for, by precedence: ``--master``, then ``$LAYOUTBENCH_SPARK_MASTER``, then
    None when spark-submit launched us (its ``--master`` stands), then the scenario's, then ``local[*]``."""
    if cli:
        return cli
    env = os.environ.get("LAYOUTBENCH_SPARK_MASTER")
    if env:
        return env
    if launched_by_spark_submit():
        return None
    return scenario or "local[*]"


def on_loopback(master: str) -> bool:
    """True for a local master, or a cluster master whose address is on the loopback."""
    if master.startswith("local"):
        return True
    host = master.split("://", 1)[-1].split(",")[0].rsplit(":", 1)[0]
    return host in {"localhost", "::1", "[::1]"} or host.startswith("127.")


def address_towards(master: str) -> str | None:
    """For a standalone ``spark://host:port`` master off the loopback, the local address the
    kernel routes to it from (the address executors on the master's network reach this driver at);
    None for other masters or when there is no route."""
    if not master.startswith("spark://") or on_loopback(master):
        return None
    import socket

    host, _, port = master.removeprefix("spark://").split(",")[0].rpartition(":")
    try:
        family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((host.strip("[]"), int(port)))  # UDP: no packet sent, only the route looked up
            return s.getsockname()[0]
    except (OSError, ValueError):
        return None


def get_spark(
    master: str | None = None,
    app_name: str = "layoutbench",
    conf: Mapping[str, str] | None = None,
    ui: bool = False,
    log_path: str | Path | None = None,
) -> SparkSession:
    """Return the active session, creating one with layoutbench's settings if none exists.

    ``master`` defaults to ``resolve_master(None, None)``: ``$LAYOUTBENCH_SPARK_MASTER``, then the
    master spark-submit was given, then ``local[*]``. The driver binds to the loopback only for a
    local master or one on the loopback; for a ``spark://`` master elsewhere it advertises and binds
    the address its route to the master leaves from (:func:`address_towards`), so executors on other
    hosts can connect back; for other masters Spark's own choice stands. ``conf`` overrides both.

    With ``log_path``, everything the JVM writes to its stdout and stderr — Ivy's resolution of JVM packages,
    log4j's warnings and errors (level WARN), JVM warnings, Python workers' stderr — goes to that
    file instead of the terminal. Without it, Spark logs errors to the terminal. Either way a
    failure also surfaces as a Python exception. A session that already exists is returned as it is.
    """
    with _LOCK:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        global _SESSION
        if _SESSION is not None and _SESSION.sparkContext._jsc is not None:
            return _SESSION
        master = master or resolve_master(None, None)
        builder = SparkSession.builder.appName(app_name)
        if master is not None:  # None: spark-submit's master stands, never overridden
            check_master_syntax(master)
            check_master_reachable(master)
            builder = builder.master(master)
        settings = dict(DEFAULT_CONF)
        if master is not None and on_loopback(master):
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            settings["spark.driver.host"] = "127.0.0.1"
            settings["spark.driver.bindAddress"] = "127.0.0.1"
        elif master is not None and (reachable := address_towards(master)):
            settings["spark.driver.host"] = reachable  # the bind address follows it (Spark's default)
        settings["spark.executorEnv.PYSPARK_PYTHON"] = sys.executable
        if ui:
            settings["spark.ui.enabled"] = "true"
        settings.update(conf or {})
        for key, value in settings.items():
            builder = builder.config(key, value)
        with _jvm_output_into(log_path):
            spark = _get_or_create(builder, settings, log_path)
        spark.sparkContext.setLogLevel("WARN" if log_path is not None else "ERROR")
        _SESSION = spark
        return spark


def stop_spark() -> None:
    """Stop the active session, if any."""
    global _SESSION
    with _LOCK:
        if _SESSION is not None:
            _SESSION.stop()
            _SESSION = None


def warm_up(spark: SparkSession) -> None:
    """Start the Python workers of both task kinds the engines use — Arrow UDFs (``mapInArrow``
    writes) and plain RDD tasks (pyarrow rewrites), with the modules those tasks import — so no timed step pays
    their start-up
    (measured: 1.5–2 s for the first plain RDD job, even after Arrow jobs ran)."""
    import pyarrow as pa

    def load_task_modules(rows: object) -> list[int]:
        import engines.files.rewrite_tasks  # noqa: F401  (what rewrite tasks import: pyarrow.parquet, writer)

        return [0]

    n = max(1, spark.sparkContext.defaultParallelism)
    spark.sparkContext.parallelize(range(n), n).mapPartitions(load_task_modules).collect()
    spark.range(n, numPartitions=n).mapInArrow(
        lambda batches: (pa.RecordBatch.from_arrays([b.column(0)], names=["id"]) for b in batches),
        "id long").collect()
