"""The table core, the planners and the simulator import without Spark (DESIGN.md §1): they are
what the simulator and non-Spark tools run on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TABLE_MODULES = sorted(f"engines.table.{p.stem}" for p in (REPO / "engines" / "table").glob("*.py")
                       if p.stem != "__init__")
FILES_MODULES = sorted(f"engines.files.{p.stem}" for p in (REPO / "engines" / "files").glob("*.py")
                       if p.stem != "__init__")  # writing base files without Spark
PLANNERS = ["engines.append_compaction.planner", "engines.append_compaction.config", "engines.clustering.planner",
            "engines.clustering.strategies", "engines.clustering.config", "engines.cow_baseline.assign",
            "engines.cow_baseline.config", "engines.hudi.config", "engines.base", "engines.kinds",
            "engines.sim", "engines.cow_baseline.sim", "engines.append_compaction.sim", "engines.clustering.sim", "engines.append_only.sim"]


@pytest.mark.parametrize("module", ["engines.table", *TABLE_MODULES, *FILES_MODULES, *PLANNERS, "engines.config.registry",
                                    "engines.config.docs", "bench.hoodie_conf", "bench.scenario", "bench.simulate",
                                    "bench.simulate.simulator", "bench.engine_factory"])
def test_imports_without_pyspark(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark')[:3])"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"importing {module} loads pyspark: {out.stdout.strip()}"
