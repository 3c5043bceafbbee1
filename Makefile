# layoutbench — `make bench` runs the default scenario and renders its reports; `make test` runs the suite
# (but its long end-to-end tests, marked slow: `make test-slow` runs those; CI runs both).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SCENARIO ?= bench/scenarios/default.yaml
PYTEST_ARGS ?=
# pytest-xdist workers for `make test` (0: one process, no xdist)
PYTEST_WORKERS ?= 2
REPEAT ?=

.PHONY: venv test test-slow test-random example bench bench-full bench-hudi bench-scale bench-scale-hudi bench-s3 bench-s3-scale bench-stream bench-micro bench-sim bench-cluster bench-map-production perf-check lint clean

venv: $(STAMP)

# The venv is rebuilt from scratch when missing or older than pyproject.toml.
$(STAMP): pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Every test but the slow ones (its measured time: docs/benchmarks.md), then the perf gate. Two pytest-xdist workers,
# each with its own Spark; a file's tests stay on one worker, and so do all the files that share a session
# run (small_run, ...), so neither a module fixture nor a run is built twice (the scheduler: tests/conftest.py).
test: $(STAMP)
	$(BIN)/ruff check engines workloads bench reports runresults tests
	$(BIN)/pytest -q -m "not slow" -n $(PYTEST_WORKERS) --dist loadscope --durations=30 $(PYTEST_ARGS)
	$(MAKE) --no-print-directory perf-check

# The long end-to-end tests (marker slow, pyproject.toml: full runs on the S3 store, real SIGKILLs,
# streams, the two-host cluster, the article's plan scripts, spark-submit): about 20 minutes more.
# .ci/run runs `make test` and then this, so CI gates on every test.
test-slow: $(STAMP)
	$(BIN)/pytest -q -m slow --durations=15 $(PYTEST_ARGS)

# The property tests (hypothesis's own marker) with fresh random examples, ten times as many as
# `make test` draws (derandomized under CI=true; tests/conftest.py holds the profiles).
test-random: $(STAMP)
	HYPOTHESIS_PROFILE=random $(BIN)/pytest -q -m hypothesis tests $(PYTEST_ARGS)

# The example in the repository (docs/example/: report.md, report.html, plots/) from the example
# scenario's pinned seed; tests/test_example.py regenerates it in a temporary folder and compares
# its deterministic parts with the committed files.
example: $(STAMP)
	$(BIN)/python -m bench.example docs/example

# REPEAT=N overrides the scenario's repetitions (the default scenario's 1: its ledger samples are groups of
# interleaved query rounds; docs/benchmarks.md).
# The default scenario is sized to finish within 5 minutes on 2 cores (its comments give the arithmetic;
# docs/benchmarks.md the measurements).
bench: $(STAMP)
	$(BIN)/layoutbench run $(SCENARIO) --report $(if $(REPEAT),--repeat $(REPEAT))

# The long run make bench was before T19: 150 batches over 3 partitions, 8/10 MB limits (bench/scenarios/full.yaml).
bench-full: $(STAMP)
	$(BIN)/layoutbench run bench/scenarios/full.yaml --report $(if $(REPEAT),--repeat $(REPEAT))

# Apache Hudi's own writers (hudi_cow, hudi_clustering) beside our baseline and sorted Option 2 on the default
# scenario's batches: the fidelity section. A later `make bench` report (same git SHA) attaches it by itself;
# `layoutbench report RUN --fidelity HUDI_RUN` attaches it to any report. Then Apache Hudi's own streaming sink
# (writeStream.format("hudi"), its async clustering) beside our Option 2 on the stream scenario's micro-batches,
# at its fixed rate (no rate search): freshness and micro-batch slowdown, one stream report.
bench-hudi: $(STAMP)
	$(BIN)/layoutbench run bench/scenarios/hudi.yaml --report
	$(BIN)/layoutbench stream bench/scenarios/stream.yaml --engines option2,hudi_sink_clustering --no-rate-search --report

# The RFC at its own sizes (T18): 1,000 x 1 MB batches (1 GB) over 2 days at Apache Hudi 1.2's defaults (100 MB
# small-file limit, 120 MB max file, clustering's 300 MB / 1 GB every 4 commits, the footer bloom filter on);
# the baseline runs a stated prefix, the rest is the simulator's projection. Tables are removed per engine once its
# figures are taken (KEEP_TABLES=1 keeps them). `layoutbench validate` prints its disk estimate first.
# Measured time and disk peak: docs/benchmarks.md.
bench-scale: $(STAMP)
	$(BIN)/layoutbench validate bench/scenarios/rfc_scale.yaml
	$(BIN)/layoutbench run bench/scenarios/rfc_scale.yaml --report $(if $(KEEP_TABLES),--keep-tables)

# Apache Hudi's own two writers at the RFC's sizes (rfc_scale.yaml's engines_on_request): hudi_cow (its
# copy-on-write small-file handling) and hudi_clustering, over the first 100 batches. Time: docs/benchmarks.md.
bench-scale-hudi: $(STAMP)
	$(BIN)/layoutbench validate bench/scenarios/rfc_scale.yaml --engines hudi_cow,hudi_clustering --batches 100
	$(BIN)/layoutbench run bench/scenarios/rfc_scale.yaml --engines hudi_cow,hudi_clustering --batches 100 --report \
		$(if $(KEEP_TABLES),--keep-tables)

# Every design on the S3-protocol store (moto on 127.0.0.1 behind the counting proxy), 20 ms first-byte
# latency; the report gets the requests section (requests per GB, per maintenance run, per query, in $).
bench-s3: $(STAMP)
	$(BIN)/layoutbench run bench/scenarios/s3.yaml --report

# The store at a size where small files add up (T18): 100 x 1 MB batches at 20 ms for append_only,
# option1_cbd and option2_sorted; the report gives the selective query's and the full scan's seconds and
# requests per run with intervals (10 interleaved rounds). Its measured times (idle and loaded, with their
# dates and commits): docs/stores.md.
bench-s3-scale: $(STAMP)
	$(BIN)/layoutbench validate bench/scenarios/s3_scale.yaml
	$(BIN)/layoutbench run bench/scenarios/s3_scale.yaml --report

# Continuous ingestion: freshness at a fixed rate, sustainable throughput, micro-batch slowdown while
# maintenance runs, per design (Structured Streaming).
bench-stream: $(STAMP)
	$(BIN)/layoutbench stream bench/scenarios/stream.yaml --report

bench-micro: $(STAMP)
	$(BIN)/pytest -q tests/benchmarks --benchmark-only --benchmark-autosave \
	  $$(ls .benchmarks/*/*.json >/dev/null 2>&1 && echo --benchmark-compare)

# The simulator's speed (T20's goal: sim_year_hourly within 30 s on the 2-core machine), timed as whole processes
# in turn: VS=REV's code first in each round (a temporary git worktree), then this checkout's serial replay, then
# its own choice (forked on an idle machine). PAIRS rounds; the record, with machine and commits, goes to
# results/sim-speed/; every results table is compared with the first run's. Measured: docs/simulator.md.
PAIRS ?= 2
bench-sim: $(STAMP)
	$(BIN)/python -m bench.sim_speed --pairs $(PAIRS) $(if $(VS),--vs $(VS))

bench-cluster: $(STAMP)
	$(BIN)/python -m bench.cluster run bench/scenarios/small.yaml

# Deterministic figures must equal bench/baselines/ci.json; a layout change updates it in the same commit:
#   .venv/bin/layoutbench perf-check --update-baseline --reason "why"
perf-check: $(STAMP)
	$(BIN)/layoutbench perf-check

lint: $(STAMP)
	$(BIN)/ruff check engines workloads bench reports runresults tests

clean:
	rm -rf $(VENV) results .pytest_cache .benchmarks

# The decision map at production ranges (bench/sweeps/rfc19_production.yaml: 1,152 points, batch 0.1-64 MB,
# small-file limit 32-512 MB, 1-10,000 partitions a year, update fraction 0 or 0.05, up to a year, local or S3) on the simulator's fast
# path, two processes; its time and load are in docs/benchmarks.md.
.PHONY: bench-map-production
bench-map-production: $(STAMP)
	$(BIN)/layoutbench sweep bench/sweeps/rfc19_production.yaml --workers 2
