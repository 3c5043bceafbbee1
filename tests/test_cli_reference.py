"""docs/cli.md is the command line's own help, regenerated: it cannot drift from --help."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from bench.cli import app
from bench.cli_reference import reference

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_docs_cli_md_is_current() -> None:
    assert DOC.read_text() == reference(), "regenerate: python -m bench.cli_reference > docs/cli.md"


def test_every_option_of_help_is_in_the_reference() -> None:
    text = DOC.read_text()
    for name in ("run", "report", "service", "simulate", "sweep"):
        assert f"## `layoutbench {name}`" in text
    runner = CliRunner()
    help_text = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "200"}).output
    for opt in ("--design-review", "--simulation", "--sweep", "--crash", "--fidelity"):
        assert opt in help_text and f"`{opt}`" in text
