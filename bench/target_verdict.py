"""The verdict at the user's scale (T17): the run's passing candidates projected to ``review.target``.

After a run has written its folder and its review, the simulator, calibrated on the run itself,
replays every candidate that passed the required gates at the target's sizes, rate, partitions,
horizon and store (:func:`bench.simulate.target_review.project_review`), and the same review rules (ledger,
margin) choose among them there. The target's choice goes into ``run.json``'s
``review.choice.target``, beside the run's own, with how it was made and its seconds
(``review.projection.phases_s``). Around the target, the prices and the query rate that flip the answer come from
the projected ledgers in closed form (``breakeven``, :mod:`runresults.review.breakeven`). The full
decision map (batch size, limits, partitions, latency, moved how far) is ``project_review(...,
flip=True)``: it replays ~24 more horizons (326 s on the small scenario's run at 2026-11-27, against
18 s for the center), so it runs on demand (``layoutbench sweep``), not in every run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from runresults import Results
from runresults.review import REVIEW_VERSION, review


def choice_text(choice: dict[str, Any]) -> str:
    """A review choice in words: the design and its candidate, or the designs it ties with."""
    if not choice.get("design"):
        return "no candidate passes the required gates"
    head = f"{choice['design']} (`{choice['candidate']}`)"
    if choice.get("equivalent"):
        return head + " equivalent within the margin to " + ", ".join(choice["equivalent"])
    return head


def _production_clause(prod: dict[str, Any] | None) -> str:
    """The production map's answer at its point nearest the target, as a clause of the target's sentence."""
    if not prod:
        return ""
    where = ", ".join(f"{k} {v:g}" if isinstance(v, int | float) else f"{k} {v}" for k, v in prod["point"].items())
    return f"; the production map ({prod['sweep']}) at its nearest point ({where}) chooses {prod['choice']}"


def passing_candidates(stored: dict[str, Any]) -> list[str]:
    """The design candidates of a stored review that passed every required gate."""
    return [e for e, c in stored["candidates"].items() if c["competes"] and not c["failed_required"]]


def project_run(run_dir: str | Path, scenario: Any) -> dict[str, Any] | None:
    """Project the stored review's passing candidates to the scenario's target and store the target's
    choice in ``run.json``; returns it (None when no candidate passed, said in the review)."""
    from bench.simulate.target_review import project_review

    folder = Path(run_dir)
    results = Results(folder)
    stored = results.run.get("review") or review(results)
    passing = passing_candidates(stored)
    reviewed: dict[str, dict[str, Any]] = {}  # folder -> its review: the centre's is read once, not twice

    def choose(projected: Results) -> str:
        reviewed[str(projected.folder)] = review(projected, criteria=False)
        return choice_text(reviewed[str(projected.folder)]["choice"]["run"])

    t0 = time.perf_counter()
    if not passing:
        projection: dict[str, Any] = {"design": None, "text": "not projected: no candidate passed the required gates"}
    else:
        try:
            out = project_review(results, scenario, scenario.review.target, choose, engines=passing,
                                 out_dir=folder / "projection", flip=False)
        except Exception as exc:  # a projection that cannot be made is said, not a failed run
            projection = {"design": None, "text": f"not projected: {type(exc).__name__}: {exc}"}
        else:
            # the choice and its break-even only: the review choose made of the centre
            projected = reviewed.get(str(out["folder"])) or review(Results(out["folder"]), criteria=False)
            center = projected["choice"]["run"]
            run_choice = stored["choice"]["run"]
            differs = center.get("design") != run_choice.get("design")
            projection = {**out, "design": center.get("design"), "candidate": center.get("candidate"),
                          "equivalent": center.get("equivalent"), "differs_from_run": differs,
                          "breakeven": projected["breakeven"],
                          "text": choice_text(center) + (
                              f", not the run's {run_choice.get('design') or 'none'}: at this scale the ledger's "
                              "parts weigh differently (the projection's own review is in "
                              f"`{Path(out['folder']).name}/`)" if differs else ", as at the run's scale")
                          + f" ({out['method']})" + _production_clause(out.get("production_map"))}
    projection["elapsed_s"] = time.perf_counter() - t0
    if stored.get("version") == REVIEW_VERSION:  # nothing in the run's review but its target slot reads the projection
        full = {**stored, "choice": {**stored["choice"], "target": projection}}
    else:
        full = review(results, projection=projection)
    full["elapsed_s"] = stored.get("elapsed_s")
    path = folder / "run.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({**results.run, "review": full}, indent=2, default=str))
    tmp.replace(path)
    return projection
