"""The README leads with what a new user needs, and what it shows works: its scenario validates,
its links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from bench.scenario import parse_scenario

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def test_the_readmes_own_scenario_validates() -> None:
    block = re.search(r"```yaml\n(.*?)```", README, re.S)
    assert block, "the README shows a scenario to copy"
    text = block.group(1)
    assert len(text.strip().splitlines()) <= 15
    doc = yaml.safe_load(text)
    sc = parse_scenario(doc)
    assert {e.kind for e in sc.engines} >= {"cow_baseline", "append_compaction", "clustering"}
    # what a user changes: batch size and rate (batches over the partitions' time), limits, queries, store
    assert {"batch_mb", "num_batches", "num_partitions", "partition_granularity"} <= set(doc["workload"])
    assert "small_file_limit_mb" in doc["sizing"] and doc["queries"]["suite"]
    assert "queries_per_hour" in doc["review"] and sc.store.external and sc.store.endpoint
    assert "credentials" in text and "a batch every" in text


def test_the_readmes_scenario_passes_validate(tmp_path: Path) -> None:
    """``layoutbench validate`` on the README's scenario as a user would save it: exit 0."""
    from typer.testing import CliRunner

    from bench.cli import app

    path = tmp_path / "my_logs.yaml"
    path.write_text(re.search(r"```yaml\n(.*?)```", README, re.S).group(1))  # type: ignore[union-attr]
    res = CliRunner().invoke(app, ["validate", str(path)])
    assert res.exit_code == 0 and ": ok" in res.output, res.output


def test_every_link_of_the_readme_resolves() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README)
    assert links and all((REPO / link).exists() for link in links), [x for x in links if not (REPO / x).exists()]


def test_the_two_commands_come_first() -> None:
    first = README.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [ln.split("#")[0].strip() for ln in first.splitlines() if ln.split("#")[0].strip()]
    assert commands == ["make bench", "make test"]


def test_the_readme_quotes_the_examples_answer_and_shows_its_figure() -> None:
    """The answer quoted under "What you get" is the committed example's (``make example`` rewrites it)."""
    from bench.example import DEFAULT_DEST, quoted_answer

    assert quoted_answer((DEFAULT_DEST / "report.md").read_text()) in README
    assert "](docs/example/plots/cost_ledger.png)" in README and "](docs/example/report.md)" in README
    lead = README.split("## ")[1:4]  # the answer and its figure come before the reference parts
    assert [h.split("\n", 1)[0] for h in lead] == ["What it answers", "What you get", "How to read the answer"]
