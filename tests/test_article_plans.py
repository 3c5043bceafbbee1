"""The clustering article's semi-async and async test plans, as the shell scripts in docs/plans/
run them: `layoutbench run` writes, `layoutbench service` clusters (HoodieClusteringJob's modes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # each script starts layoutbench again and again (writer, services, inspects): ~45 s a plan
@pytest.mark.parametrize("plan", ["semi_async_clustering", "async_clustering"])
def test_article_plan_script_clusters_the_table(tmp_path: Path, plan: str) -> None:
    env = {**os.environ, "LAYOUTBENCH": str(Path(sys.executable).parent / "layoutbench")}
    env.pop("LAYOUTBENCH_SPARK_MASTER", None)
    proc = subprocess.run(["bash", str(REPO / "docs" / "plans" / f"{plan}.sh"), str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=900, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "WARN" not in proc.stdout + proc.stderr  # Spark's output went to its log
    before = json.loads((tmp_path / "work" / "before.json").read_text())
    after = json.loads((tmp_path / "work" / "after.json").read_text())
    if plan == "semi_async_clustering":
        assert before["pending_clustering_file_groups"] > 0  # scheduled inline by the writer
    else:
        assert before["pending_clustering_file_groups"] == 0  # the writer did no clustering
    assert after["pending_clustering_file_groups"] == 0
    replaces = [t for t in after["timeline"] if t["action"] == "replacecommit"]
    assert replaces and all(t["state"] == "COMPLETED" for t in replaces)
    assert after["replaced_file_groups"] > 0 and after["live_files"] < before["live_files"]
    assert after["snapshot_rows"] == before["snapshot_rows"] == 9000
