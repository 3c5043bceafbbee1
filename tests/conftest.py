"""Shared fixtures: one real local[2] Spark session for the whole run, paths to the shared fixtures."""

from __future__ import annotations

import os
import re
import subprocess
import sys
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


# The session runs several test files share. Under `make test`'s two xdist workers the files that use
# one are scheduled as one unit, on one worker, so the run is built once: with --dist loadfile alone a
# worker that takes any of those files builds it again (75 s idle for small_run). xdist's own loadgroup
# marks do not survive pytest 9.2's node ids, hence the scheduler below.
SHARED_RUNS = ("small_run", "corrections_run", "corrections_logs_run", "s3_small_runs")


def shared_run_scope(nodeid: str, rootdir: Path, _texts: dict[str, str] = {}) -> str:  # noqa: B006 - a cache
    """The scheduling unit of a test: the first shared session run its file names, else its file."""
    file = nodeid.split("::", 1)[0]
    if file not in _texts:
        try:
            _texts[file] = (rootdir / file).read_text()
        except OSError:
            _texts[file] = ""
    return next((name for name in SHARED_RUNS if re.search(rf"\b{name}\b", _texts[file])), file)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201 - xdist's hook
    from xdist.scheduler import LoadScopeScheduling

    rootdir = Path(config.rootpath)

    class SharedRunScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_run_scope(nodeid, rootdir)

    return SharedRunScheduling(config, log)


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
    # test_history_gates.py and the report tests read them from this run; two rounds at the earlier
    # checkpoint too, as make bench's one repetition runs them (the ledger's samples)
    scenario = scenario.model_copy(update={"review": scenario.review.model_copy(update={"measure": True}),
                                           "queries": scenario.queries.model_copy(update={"checkpoint_rounds": 2})})
    return Results(run_scenario(scenario, out=out, progress=False, run_id="first", scenario_path=SMALL_SCENARIO))


CORRECTIONS_BATCHES = 4
NO_BLOOM = {"hoodie.parquet.bloom.filter.enabled": False}
# option2_mor_logs' small-file limit: small.yaml's (0.6 MB), every base file of the run below it
LOGS_SMALL_FILE_LIMIT = 629145


def corrections_scenario(names: tuple[str, ...]):
    """small.yaml cut to four batches with 10% corrections, with the engines ``names`` of: the COW
    baseline, Option 1 (commit before delete), Option 2 on MERGE_ON_READ with inserts into new base files
    (``option2_mor``) and with inserts appended to small file groups' logs (``option2_mor_logs``); the
    MOR engines with no footer bloom filter. Maintenance after batch 3 and none at the end, queries
    after batches 2 and 4 (both see the MOR tables' logs unmerged), the final checkpoint's interleaved
    rounds."""
    from bench.scenario import load_scenario

    sc = load_scenario(SMALL_SCENARIO)
    engines = [e for e in sc.engines if e.name in ("baseline", "option1_cbd")]
    mor = engines[0].model_copy(update={"name": "option2_mor", "kind": "clustering_mor", "config": NO_BLOOM})
    logs = mor.model_copy(update={"name": "option2_mor_logs",
                                  "config": {**NO_BLOOM, "hoodie.parquet.small.file.limit": LOGS_SMALL_FILE_LIMIT}})
    engines = [e for e in (*engines, mor, logs) if e.name in names]
    return sc.model_copy(update={
        "name": "corrections_test", "engines": engines,
        "workload": sc.workload.model_copy(update={"num_batches": CORRECTIONS_BATCHES, "corrections_fraction": 0.1}),
        "queries": sc.queries.model_copy(update={"checkpoint_every": 2, "interleaved": True}),
        "maintenance": sc.maintenance.model_copy(update={"final": False}),  # the last batch's logs stay
        "isolation": sc.isolation.model_copy(update={"enabled": False}),
        "spark": sc.spark.model_copy(update={"master": "local[1]"})})


@pytest.fixture(scope="session")
def corrections_run(spark, tmp_path_factory):
    """:func:`corrections_scenario` with the COW baseline, Option 1 and ``option2_mor``. Shared by
    tests/test_runner_corrections.py (the runner) and tests/test_sim_corrections.py (the simulator)."""
    from bench.runner import run_scenario
    from runresults import Results

    sc = corrections_scenario(("baseline", "option1_cbd", "option2_mor"))
    return Results(run_scenario(sc, out=tmp_path_factory.mktemp("corrections"), progress=False, run_id="corr",
                                keep_tables=True))


@pytest.fixture(scope="session")
def corrections_logs_run(spark, tmp_path_factory):
    """:func:`corrections_scenario` with ``option2_mor_logs`` alone (inserts appended to small file
    groups' logs), held to by the simulator (tests/test_sim_mor.py)."""
    from bench.runner import run_scenario
    from runresults import Results

    sc = corrections_scenario(("option2_mor_logs",))
    return Results(run_scenario(sc, out=tmp_path_factory.mktemp("corrections_logs"), progress=False,
                                run_id="corr_logs", keep_tables=True))


S3_SMALL_SCENARIO = Path(__file__).resolve().parents[1] / "bench" / "scenarios" / "s3_small.yaml"


def start_cli_run(scenario: Path, out: Path) -> tuple[subprocess.Popen, Path]:
    """``layoutbench run`` in its own process (Spark needs hadoop-aws at start-up); output to a file,
    so two runs at once never block on a full pipe."""
    out.mkdir(parents=True)
    log = out / "run.log"
    with open(log, "w") as f, open(out / "run.err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "bench.cli", "run", str(scenario), "--out", str(out)],
                                cwd=SMALL_SCENARIO.parents[2], stdout=f, stderr=err, text=True)
    return proc, log


def finish_cli_run(started: tuple[subprocess.Popen, Path]):
    """Wait for :func:`start_cli_run`'s process; its results (the run folder its last line names)."""
    from runresults import Results

    proc, log = started
    try:
        proc.wait(timeout=1800)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    text = log.read_text()
    assert proc.returncode == 0, text[-3000:] + log.with_suffix(".err").read_text()[-3000:]
    return Results(next(line for line in reversed(text.splitlines()) if line.strip()).strip())


@pytest.fixture(scope="session")
def s3_small_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """s3_small on the S3 store and the same scenario on local disk, one pair for the session, shared
    by tests/test_store.py (the store against local disk, the simulated request counts) and
    tests/test_external_store.py (an external endpoint's figures against the same local run). The
    store's run is ``layoutbench run`` in its own process (its Spark needs hadoop-aws at start-up);
    the local one runs meanwhile here, on the session's warm Spark."""
    from bench.runner import run_scenario
    from bench.scenario import load_scenario
    from runresults import Results

    tmp_path = tmp_path_factory.mktemp("s3_small")
    local_yaml = tmp_path / "local.yaml"
    local_yaml.write_text(S3_SMALL_SCENARIO.read_text().replace("kind: s3", "kind: local"))
    on_s3 = start_cli_run(S3_SMALL_SCENARIO, tmp_path / "s3")
    try:
        request.getfixturevalue("spark")  # after the store's run has started: the two JVMs start together
        local = Results(run_scenario(load_scenario(local_yaml), out=tmp_path / "local", progress=False,
                                     scenario_path=local_yaml))
    except BaseException:
        on_s3[0].kill()
        raise
    return finish_cli_run(on_s3), local
