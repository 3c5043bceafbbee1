"""The user's own S3-compatible store (T19.6): our moto server started as if it were someone else's
endpoint, reached with credentials from the environment, the scenario naming only endpoint, bucket,
prefix and region; `--out s3://...` leaves run.json and the results tables in the bucket."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
import yaml

from bench.scenario import ScenarioError, parse_scenario
from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server

REPO = Path(__file__).resolve().parents[1]
S3_SMALL = REPO / "bench" / "scenarios" / "s3_small.yaml"


def _scenario(endpoint: str, bucket: str) -> dict:
    doc = yaml.safe_load(S3_SMALL.read_text())
    doc["name"] = "external"
    # ours only: Apache Hudi's and delta-rs' own s3 clients are covered by the built-in store's test
    doc["engines"] = [e for e in doc["engines"] if e["kind"] in ("cow_baseline", "clustering", "append_only")]
    doc["store"] = {"kind": "s3", "endpoint": f"http://{endpoint}", "bucket": bucket, "prefix": "team/logs",
                    "region": REGION}
    return doc


def test_store_spec_refuses_half_an_external_store() -> None:
    base = yaml.safe_load(S3_SMALL.read_text())
    for store, words in (({"kind": "s3", "endpoint": "http://h:1"}, "needs store.bucket"),
                         ({"kind": "local", "bucket": "b"}, "is for kind: s3"),
                         ({"kind": "s3", "bucket": "b", "first_byte_ms": 5}, "has its own latency"),
                         ({"kind": "s3", "bucket": "b", "secret_key": "x"}, "secret_key")):
        with pytest.raises(ScenarioError, match=words):
            parse_scenario({**base, "store": store})


@pytest.mark.parametrize("store", [
    {"kind": "s3", "endpoint": "http://AKIAEXAMPLE:sekrit@127.0.0.1:9000", "bucket": "b"},
    {"kind": "s3", "endpoint": "AKIAEXAMPLE:sekrit@minio.example:9000", "bucket": "b"},
    {"kind": "s3", "bucket": "b", "aws_secret_access_key": "sekrit"},
    {"kind": "s3", "bucket": "b", "profile": "team"},
])
def test_credentials_in_the_scenario_are_refused_naming_the_environment(store: dict) -> None:
    base = yaml.safe_load(S3_SMALL.read_text())
    with pytest.raises(ScenarioError) as refused:
        parse_scenario({**base, "store": store})
    assert "AWS_ACCESS_KEY_ID" in str(refused.value) and "AWS_PROFILE" in str(refused.value)
    assert "sekrit" not in str(refused.value)  # never echoed


def test_no_credential_reaches_run_json_through_the_endpoint() -> None:
    from bench.store.external import ExternalStore

    base = yaml.safe_load(S3_SMALL.read_text())
    spec = parse_scenario({**base, "store": {"kind": "s3", "endpoint": "http://127.0.0.1:9000", "bucket": "b"}}).store
    described = ExternalStore(spec.endpoint, spec.bucket, spec.prefix, spec.region, "run").describe()
    assert described["server"] == "external (http://127.0.0.1:9000)" and "@" not in str(described)


@pytest.mark.slow
def test_run_on_an_external_endpoint_with_results_in_the_bucket(s3_small_runs, tmp_path: Path) -> None:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "AWS_DEFAULT_REGION": REGION, "PYTHONPATH": str(REPO)}
    with S3Server() as server:
        fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=server.endpoint,
                               scheme="http", region=REGION, allow_bucket_creation=True)
        fs.create_dir("userbucket")  # the user's bucket, made beforehand as a user would
        path = tmp_path / "external.yaml"
        path.write_text(yaml.safe_dump(_scenario(server.endpoint, "userbucket")))
        out = f"s3://userbucket/results?endpoint_override={server.endpoint}&scheme=http"

        missing = yaml.safe_load(path.read_text())
        missing["store"]["bucket"] = "no-such-bucket"
        bad = tmp_path / "missing.yaml"
        bad.write_text(yaml.safe_dump(missing))
        refused = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(bad), "--out", str(tmp_path / "r")],
                                 capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
        assert refused.returncode == 3 and "bucket 'no-such-bucket' does not exist" in refused.stderr
        assert not list((tmp_path / "r").glob("*/tables/*"))  # refused before any engine started

        proc = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(path), "--out", out],
                              capture_output=True, text=True, timeout=1800, env=env, cwd=REPO)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        where = proc.stdout.strip().splitlines()[-1]
        assert where.startswith("s3://userbucket/results/")
        key = where[len("s3://"):]
        run = yaml.safe_load(fs.open_input_stream(f"{key}/run.json").read())
        assert run["verification"]["ok"] and run["store"]["bucket"] == "userbucket"
        assert "requests_note" in run["store"]
        commits = pq.read_table(fs.open_input_file(f"{key}/commits.parquet")).to_pandas()
        assert set(commits.engine) == {"baseline", "option2_sorted", "append_only"}
        # the tables stay on the user's store, under its prefix
        tables = fs.get_file_info(pafs.FileSelector(f"userbucket/team/logs/{run['run_id']}/tables", recursive=True))
        assert any(i.path.endswith(".parquet") for i in tables)
        assert not any(ACCESS_KEY in str(v) for v in run["engines"].values())  # no credential in run.json

        # the same figures as the same engines of s3_small on local disk (the session's run, which
        # tests/test_store.py also holds equal to the built-in store's): a run's figures per engine do
        # not depend on which other engines ran beside it
        _, local = s3_small_runs
        local_commits = local.table("commits")
        local_commits = local_commits[local_commits.engine.isin(set(commits.engine))]
        cols = ["engine", "seq", "kind", "records_written", "files_written", "live_files", "bytes_written"]
        a, b = (c.sort_values(["engine", "seq"]).reset_index(drop=True)[cols] for c in (commits, local_commits))
        assert a.equals(b)
