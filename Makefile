# The README's two commands: `make run` starts a server with the examples, `make test` runs every check.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := src tests bench

.PHONY: run test lint bench java postgres maven chromium sandbox clean

run: java sandbox $(VENV)/.installed-run
	$(BIN)/streamjobs admin bootstrap
	$(BIN)/streamjobs server --load-examples examples

test: java sandbox postgres maven chromium $(VENV)/.installed-dev lint
	$(BIN)/python scripts/resolve-jars.py
	$(BIN)/pytest
	$(BIN)/python -m bench.run --quick

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/mypy src/streamjobs/domain src/streamjobs/store src/streamjobs/services src/streamjobs/supervisor src/streamjobs/launch
	$(BIN)/lint-imports

# The benchmark figures (bench/README.md): rewrites bench/REPORT.md and its charts. Not part of
# `make test`, which is to run only the smoke run `python -m bench.run --quick`.
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

sandbox:
	@scripts/ensure-sandbox.sh

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed-run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
