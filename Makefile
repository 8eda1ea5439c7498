# The README's two commands: `make run` starts a server with the examples, `make test` runs every check.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := src tests bench

.PHONY: run test lint bench java postgres maven chromium prometheus sandbox clean

# Every step that can take more than a few seconds says what it does first (`step`; no commas in
# its text, they would split the call's arguments), and pip shows its downloads and builds: a
# first run builds pyspark for about a minute, which must not look hung.
step = @printf '\n==> %s\n' $(1)
PIP_INSTALL := $(BIN)/pip install --progress-bar on

run: java sandbox maven $(VENV)/.installed-run
	$(call step,"Preparing the store in .streamjobs (migrating it when needed) and the admin")
	$(BIN)/streamjobs admin bootstrap
	$(call step,"Resolving the examples' connector jars (the first time downloads them from Maven Central)")
	$(BIN)/streamjobs admin resolve-jars --no-fail examples
	$(call step,"Starting the server with the examples")
	$(BIN)/streamjobs server --load-examples examples

# Spark's classes as a driver loads them, which the tests' drivers map instead of loading
# (streamjobs.devtools.class_data): made again whenever the virtualenv is.
CLASS_DATA := $(VENV)/spark-classes.jsa
$(CLASS_DATA): $(VENV)/.installed-dev
	$(call step,"Writing the tests' class-data archive of Spark's classes (a short Spark run)")
	$(BIN)/python -m streamjobs.devtools.class_data $@

# The tests run in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them, so a
# file's module fixtures start once; each process starts its own session services (Spark,
# PostgreSQL, Kafka). On two cores two took 52 minutes against 68 in one (38.5 once drivers map
# $(CLASS_DATA)): a Spark test takes about twice as long beside another, the lighter tests fill
# the gaps. One process: TEST_WORKERS=0.
TEST_WORKERS ?= 2
test: java sandbox postgres maven chromium prometheus $(VENV)/.installed-dev lint $(CLASS_DATA)
	$(BIN)/python scripts/resolve-jars.py
	$(BIN)/pytest --numprocesses=$(TEST_WORKERS) --dist=loadfile
	$(BIN)/python -m bench.run --quick

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/mypy src/streamjobs/domain src/streamjobs/store src/streamjobs/services src/streamjobs/supervisor src/streamjobs/launch src/streamjobs/notify
	$(BIN)/lint-imports

# The benchmark figures (bench/README.md): rewrites bench/REPORT.md and its charts, which are
# committed on a release or a change of method, not after every run. `make test` runs the bench's
# own tests (tests/bench, marker `bench`) with the rest and the smoke run `bench.run --quick`.
# Some figures only: `make bench BENCH_ARGS="--figures 1"`.
BENCH_ARGS ?=
bench: java sandbox maven $(VENV)/.installed-dev
	$(BIN)/python scripts/resolve-jars.py
	$(BIN)/python -m bench.run $(BENCH_ARGS)

java:
	@scripts/check-java.sh

postgres:
	@scripts/ensure-postgres.sh

maven:
	@scripts/ensure-maven.sh

chromium:
	@scripts/ensure-chromium.sh

prometheus:
	@scripts/ensure-prometheus.sh

sandbox:
	@scripts/ensure-sandbox.sh

$(VENV)/bin/python:
	$(call step,"Creating the virtual environment $(VENV)")
	$(PYTHON) -m venv $(VENV)
	$(call step,"Upgrading pip")
	$(PIP_INSTALL) --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(call step,"Installing streamjobs and pyspark (the first time building pyspark takes a minute or two)")
	$(PIP_INSTALL) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(call step,"Installing streamjobs with its test tools (the first time building pyspark takes a minute or two)")
	$(PIP_INSTALL) -e '.[dev]'
	touch $@ $(VENV)/.installed-run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
