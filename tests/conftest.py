"""Shared fixtures: one real local[2] Spark session for the whole run, paths to the shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from shared_files import HUDI_FIXTURES, shared_path


@pytest.fixture(scope="session")
def spark():
    from engines.spark.session import get_spark, hudi_conf, stop_spark

    # Apache Hudi's bundle (from Maven Central, cached in ~/.ivy2): the reference reader and the hudi engine
    session = get_spark(master=os.environ.get("LAYOUTBENCH_TEST_MASTER", "local[2]"), conf=hudi_conf())
    yield session
    stop_spark()


@pytest.fixture(scope="session")
def hudi_fixtures() -> Path:
    return shared_path(HUDI_FIXTURES)


SMALL_SCENARIO = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "small.yaml"


@pytest.fixture(scope="session")
def small_run(spark, tmp_path_factory):
    """One real run of the small scenario, shared by the runner and report tests."""
    from bench.runner import run_scenario
    from bench.scenario import load_scenario
    from runresults import Results

    out = tmp_path_factory.mktemp("results")
    return Results(run_scenario(load_scenario(SMALL_SCENARIO), out=out, progress=False, run_id="first",
                                scenario_path=SMALL_SCENARIO))
