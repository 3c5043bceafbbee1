"""A store endpoint with credentials in it (``http://user:password@host``) is refused by validate,
without echoing the secret: credentials come from the environment or an AWS profile, and the
scenario is written into run.json."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from bench.cli import EXIT_BAD_INPUT, app


@pytest.mark.parametrize("endpoint", ["http://AKIAEXAMPLE:sekrit@127.0.0.1:9000", "AKIAEXAMPLE:sekrit@minio:9000",
                                      "https://user@s3.example.com/path"])
def test_credentials_in_the_endpoint_are_refused_and_not_echoed(endpoint: str, tmp_path: Path) -> None:
    doc = {"name": "creds", "workload": {"num_batches": 2, "batch_records": 100},
           "store": {"kind": "s3", "endpoint": endpoint, "bucket": "b"},
           "engines": [{"name": "e", "kind": "append_only"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "s.yaml")])
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    assert "store.endpoint holds credentials" in result.output and "AWS_PROFILE" in result.output
    assert "sekrit" not in result.output and "AKIAEXAMPLE" not in result.output and "user@" not in result.output


def test_an_endpoint_without_credentials_validates(tmp_path: Path) -> None:
    doc = {"name": "ok", "workload": {"num_batches": 2, "batch_records": 100},
           "store": {"kind": "s3", "endpoint": "http://127.0.0.1:9000", "bucket": "b"},
           "engines": [{"name": "e", "kind": "append_only"}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    assert CliRunner().invoke(app, ["validate", str(tmp_path / "s.yaml")]).exit_code == 0
