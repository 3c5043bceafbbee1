"""The example in the repository, ``docs/example/``: the example scenario
(``bench/scenarios/example.yaml``, pinned seed) run end to end and its report rendered with the
design review, so a reader sees what a run produces without running one.

``python -m bench.example [DEST]`` (``make example``) writes DEST/report.md, DEST/report.html and
DEST/plots/*.png (default DEST: docs/example); the results tables and the tables themselves stay in
a temporary folder; for docs/example the README's quote of the answer is rewritten from the new
report. tests/test_example.py regenerates it and compares the deterministic parts with the committed
files; tests/test_readme.py checks the README quotes the committed answer.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SCENARIO = "bench/scenarios/example.yaml"  # relative: the report names it so
DEFAULT_DEST = REPO / "docs" / "example"
RUN_ID = "example"  # the report's run id, the same at every regeneration
README = REPO / "README.md"
# the README quotes the example's answer between these lines; `make example` rewrites what is between
ANSWER_BEGIN = "<!-- the example's answer: written by `make example` from docs/example/report.md -->"
ANSWER_END = "<!-- end of the example's answer -->"


def answer_paragraph(report_md: str) -> str:
    """The text of a report's ``## The answer`` (its figure aside)."""
    body = report_md.split("## The answer\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(ln for ln in body.strip().splitlines() if ln.strip() and not ln.startswith("!["))


def quoted_answer(report_md: str) -> str:
    """The README's block: the answer as a Markdown quote between the markers."""
    return f"{ANSWER_BEGIN}\n> {answer_paragraph(report_md)}\n{ANSWER_END}"


def sync_readme(readme: Path = README, report: Path = DEFAULT_DEST / "report.md") -> None:
    """Rewrite the README's quote of the example's answer from ``report``."""
    text = readme.read_text()
    start, end = text.index(ANSWER_BEGIN), text.index(ANSWER_END) + len(ANSWER_END)
    readme.write_text(text[:start] + quoted_answer(report.read_text()) + text[end:])


def write_example(dest: str | Path = DEFAULT_DEST, master: str | None = None) -> dict[str, Path]:
    """Run the example scenario and write its report, HTML and plots into ``dest`` (its earlier
    plots replaced); returns name -> written path."""
    from bench.runner import run_scenario
    from bench.scenario import load_scenario
    from reports import render_report

    dest = Path(dest)
    with tempfile.TemporaryDirectory(prefix="layoutbench-example-") as tmp:
        run_dir = run_scenario(load_scenario(REPO / EXAMPLE_SCENARIO), out=tmp, master=master, keep_tables=False,
                               progress=False, run_id=RUN_ID, scenario_path=EXAMPLE_SCENARIO)
        rendered = render_report(run_dir, design_review=True)
        shutil.rmtree(dest / "plots", ignore_errors=True)
        (dest / "plots").mkdir(parents=True)
        written = {}
        for name, path in rendered.items():
            target = dest / path.relative_to(run_dir)
            shutil.copyfile(path, target)
            written[name] = target
    return written


def main(argv: list[str]) -> None:
    """``python -m bench.example [DEST]``: print each written file; for docs/example, the README's
    quote of the answer is rewritten too."""
    dest = Path(argv[0]) if argv else DEFAULT_DEST
    for path in write_example(dest).values():
        print(path)
    if dest.resolve() == DEFAULT_DEST.resolve():
        sync_readme()
        print(README)


if __name__ == "__main__":
    main(sys.argv[1:])
