"""``--props`` read as Apache Hudi's DFSPropertiesConfiguration: one test per rule, locally and on a real S3 store."""

from __future__ import annotations

from pathlib import Path

import pyarrow.fs as pafs
import pytest

from bench.hudi_props import PropsError, read_props
from bench.service import ServiceError, parse_conf
from bench.store.server import ACCESS_KEY, REGION, SECRET_KEY, S3Server


def settings(path: Path | str) -> dict[str, str]:
    return {key: value for _, key, value in read_props(str(path))}


def test_key_value_with_equals_or_whitespace_and_equals_first(tmp_path: Path) -> None:
    f = tmp_path / "job.properties"
    f.write_text("a=1\nb = 2\nc 3\nd\t\t4\ne  five  words\nf=x y\ng h=i\nurl=s3://b/k?x=1\n")
    assert settings(f) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "five words", "f": "x y",
                           "g h": "i", "url": "s3://b/k?x=1"}


def test_comments_blank_lines_and_lines_without_a_separator_are_skipped(tmp_path: Path) -> None:
    f = tmp_path / "job.properties"
    f.write_text("# a comment\n\n   \n  # indented\nlonely\nkey:value\nkept=1\n")
    # "lonely" and "key:value" have neither '=' nor whitespace: Hudi's isValidLine skips them (':' is no separator)
    assert settings(f) == {"kept": "1"}


def test_a_later_setting_wins_and_include_reads_a_file_beside_this_one_inline(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "base.properties").write_text("x=from-base\ny=from-base\n")
    (tmp_path / "conf" / "job.properties").write_text("x=first\ninclude=base.properties\ny=last\n")
    assert settings(tmp_path / "conf" / "job.properties") == {"x": "from-base", "y": "last"}
    where = [w for w, _, _ in read_props(str(tmp_path / "conf" / "job.properties"))]
    assert where[1].endswith("base.properties:1")  # each setting names its file and line
    (tmp_path / "conf" / "spaced.properties").write_text(f"include = {tmp_path / 'conf' / 'base.properties'}\n")
    assert settings(tmp_path / "conf" / "spaced.properties") == {"x": "from-base", "y": "from-base"}


def test_an_include_loop_and_a_missing_file_are_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.properties").write_text("include=b.properties\n")
    (tmp_path / "b.properties").write_text("include=a.properties\n")
    with pytest.raises(PropsError, match="a.properties: include loop"):
        read_props(str(tmp_path / "a.properties"))
    with pytest.raises(ServiceError, match="nothing.properties: cannot read it"):
        parse_conf([], str(tmp_path / "nothing.properties"))


def test_hoodie_conf_wins_over_the_file_and_needs_an_equals(tmp_path: Path) -> None:
    f = tmp_path / "job.properties"
    f.write_text("hoodie.clustering.async.max.commits 3\nhoodie.clustering.async.enabled=true\n")
    conf = parse_conf(["hoodie.clustering.async.max.commits=5"], str(f))
    assert conf == {"hoodie.clustering.async.max.commits": "5", "hoodie.clustering.async.enabled": "true"}
    with pytest.raises(ServiceError, match="expected key=value"):
        parse_conf(["hoodie.clustering.async.enabled true"], None)


def test_a_props_file_on_an_s3_store_with_a_relative_include() -> None:
    with S3Server() as server:
        fs = pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=server.endpoint,
                               scheme="http", region=REGION, allow_bucket_creation=True)
        fs.create_dir("conf")
        with fs.open_output_stream("conf/jobs/base.properties") as out:
            out.write(b"hoodie.clustering.plan.strategy.small.file.limit 209715200\n")
        with fs.open_output_stream("conf/jobs/job.properties") as out:
            out.write(b"# on the store\ninclude=base.properties\nhoodie.clustering.async.enabled=true\n")
        uri = (f"s3://{ACCESS_KEY}:{SECRET_KEY}@conf/jobs/job.properties"
               f"?endpoint_override={server.endpoint}&scheme=http&region={REGION}")
        assert parse_conf([], uri) == {"hoodie.clustering.plan.strategy.small.file.limit": "209715200",
                                       "hoodie.clustering.async.enabled": "true"}
