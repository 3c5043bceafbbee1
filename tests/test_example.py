"""docs/example/ is what ``make example`` writes (bench/example.py): regenerated here in a temporary
folder from the example scenario's pinned seed, it agrees with the committed files in every
deterministic part.

Compared: the scenario, workload, engine and sizing lines of the setup; per engine the figures that
follow from the seed alone (write amplification, space amplification, maintenance runs and MB
written, live and physical files, mean file size, queries verified, verification); each gate's
outcome per candidate (pass / FAIL / n/a / not measured) and the required gates each failed; the
candidates the ledger shows, their $ per TB and its storage part, and the TB they ingested; the
answer's choice: the design and candidate it names and the designs it calls equivalent; that the
answer opens the report, names every candidate the required gates ruled out, and chooses a design
with a candidate that passed them; the plots' names and the images embedded in the HTML.

The choice is deterministic because the example prices only what follows from the seed
(bench/scenarios/example.yaml: ``queries_per_hour: 0`` and a core-hour price of $0, so the ledger is
storage byte-hours of physical bytes after each batch, and on local disk no requests). A smoke-sized
run times each query once (n=1), so a ledger that priced seconds would choose by noise.

Not compared, because they are measured or dated and differ from run to run: timings (ingest,
maintenance and query seconds, wall time, the profile), the run's date, machine, versions and
git SHA, the isolation gate's count of reader queries (how many fit during a maintenance run), and
the core-seconds the findings and "when the answer would change" derive from timings.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.example import DEFAULT_DEST, write_example

COMMITTED = DEFAULT_DEST
SUMMARY_COLUMNS = ("engine", "design", "WA", "space amp peak", "space amp final", "maintenance runs",
                   "maintenance MB written", "live files", "physical files", "mean file MB", "queries verified",
                   "verification")
SETUP_LINES = ("- scenario ", "- workload: ", "- engines: ", "- sizing: ")
MAX_BYTES = 1_500_000


@pytest.fixture(scope="module")
def regenerated(spark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("example")
    write_example(dest)
    return dest


def section(md: str, title: str) -> str:
    """The text under heading ``title`` (any level) up to the next heading."""
    m = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ |\Z)", md, re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


def table(md: str, title: str) -> list[dict[str, str]]:
    """The first Markdown table of section ``title`` as rows of {column: cell}."""
    lines = [ln for ln in section(md, title).splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")), strict=True)) for ln in lines[2:]]


def deterministic(md: str) -> dict[str, object]:
    """The parts of a report that follow from the scenario and its seed (module docstring)."""
    setup = [ln for ln in section(md, "Setup").splitlines() if ln.startswith(SETUP_LINES)]
    summary = [{c: row[c] for c in SUMMARY_COLUMNS} for row in table(md, "Summary per engine")]
    gates = [{c: (v if c in ("candidate", "design", "required gates failed") else v.split(" (")[0].split(" ")[0])
              for c, v in row.items()} for row in table(md, "Gates")]
    ledger = [(row["candidate"], row["design"], row["$ / TB"], row["storage"], row["TB ingested"])
              for row in table(md, "Cost ledger: $ per TB ingested over the table's life")]
    plots = sorted(re.findall(r"!\[[^\]]*\]\((plots/[^)]+)\)", md))
    return {"setup": setup, "summary": summary, "gates": gates, "ledger": ledger, "choice": choice(md),
            "plots": plots}


def choice(md: str) -> dict[str, object]:
    """The answer's choice: the design and candidate named first, and the designs called equivalent
    to it (empty when the answer says "Choose")."""
    answer = section(md, "The answer")
    chose = re.search(r"\*\*Scenario `\w+`\.\*\* Choose (.+?) \(`(\w+)`\)", answer)
    if chose:
        return {"design": chose.group(1), "candidate": chose.group(2), "equivalent": []}
    tied = re.search(r"\*\*Scenario `\w+`\.\*\* (.+?) are equivalent in cost", answer)
    assert tied, answer
    named = re.findall(r"(?:^|, | and )(.+?) \(`(\w+)`\)", tied.group(1))
    assert named, tied.group(1)
    return {"design": named[0][0], "candidate": named[0][1], "equivalent": sorted(d for d, _ in named[1:])}


def test_the_committed_example_is_whole_and_small() -> None:
    md = (COMMITTED / "report.md").read_text()
    assert md.startswith("# layoutbench report — example\n\n## The answer\n")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert "plots/cost_ledger.png" in images and all((COMMITTED / p).is_file() for p in images)
    assert sorted(p.name for p in (COMMITTED / "plots").iterdir()) == sorted(Path(p).name for p in images)
    html = (COMMITTED / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(images) and "The answer" in html
    size = sum(p.stat().st_size for p in COMMITTED.rglob("*") if p.is_file())
    assert size < MAX_BYTES, f"docs/example holds {size} bytes"


def test_make_example_regenerates_the_committed_example(regenerated: Path) -> None:
    committed, fresh = ((d / "report.md").read_text() for d in (COMMITTED, regenerated))
    want, got = deterministic(committed), deterministic(fresh)
    for part in want:
        assert got[part] == want[part], f"docs/example differs from a regeneration in {part} (make example)"
    assert sorted(p.name for p in (regenerated / "plots").iterdir()) == sorted(
        p.name for p in (COMMITTED / "plots").iterdir())
    assert (regenerated / "report.html").read_text().count("data:image/png;base64,") == len(want["plots"])  # type: ignore[arg-type]


def test_the_answers_choice_follows_from_the_seed() -> None:
    """The committed example prices no seconds, so its choice is the deterministic one the test above
    compares (module docstring): every ledger part but storage is $0, and the answer says storage is
    its cost."""
    md = (COMMITTED / "report.md").read_text()
    rows = table(md, "Cost ledger: $ per TB ingested over the table's life")
    timed = ("compute: ingest", "compute: maintenance", "compute: cleaning", "queries", "requests")
    assert all(float(row[p].split(" ")[0]) == 0 for row in rows for p in timed), rows
    assert "Most of its cost is storage (100%), with no query runs priced" in section(md, "The answer")


def test_the_answer_follows_the_gates(regenerated: Path) -> None:
    """In both reports: every candidate the required gates ruled out is named so in the answer, and
    the chosen design has a candidate that passed them (which one is cheapest rests on timings)."""
    for md in ((COMMITTED / "report.md").read_text(), (regenerated / "report.md").read_text()):
        answer = section(md, "The answer")
        rows = table(md, "Gates")
        ruled = {r["candidate"]: r["required gates failed"] for r in rows if r["required gates failed"] != "none"}
        assert ruled, "the example shows a candidate failing a required gate"
        for cand, gates in ruled.items():
            assert f"`{cand}` ({gates.split(', ')[0]}:" in answer.split("Ruled out by the required gates:")[1], answer
        chosen = re.search(r"Choose (.+?) \(`(\w+)`\)|\*\* (.+?) \(`(\w+)`\)(?:,| and)", answer)
        assert chosen, answer
        candidate = chosen.group(2) or chosen.group(4)
        assert candidate not in ruled and candidate in {r["candidate"] for r in rows}
