"""Shared fixtures: one real local[2] Spark session for the whole run, paths to the shared fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from shared_files import HUDI_FIXTURES, shared_path

# Property tests (hypothesis) take their example count from a profile. Under CI (CI=true, as .ci/run
# sets) the examples are derandomized, so a run is red or green by the code alone; `make test-random`
# draws fresh ones, ten times as many, to look for new counterexamples (pin each as an @example).
# No deadline in any profile: hypothesis's 200 ms per example is a timed unit test, and on a shared
# 2-core machine an example's time says more about the load than about the code (speed targets
# live in the benchmarks).
settings.register_profile("ci", max_examples=300, derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile("dev", max_examples=300, deadline=None)
settings.register_profile("random", max_examples=3000, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") == "true" else "dev"))


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
    scenario = load_scenario(SMALL_SCENARIO)
    # the gates and interleaved rounds, which the smoke scenario leaves off: tests/test_gates.py,
    # test_history_gates.py and the report tests read them from this run
    scenario = scenario.model_copy(update={"review": scenario.review.model_copy(update={"measure": True})})
    return Results(run_scenario(scenario, out=out, progress=False, run_id="first", scenario_path=SMALL_SCENARIO))
