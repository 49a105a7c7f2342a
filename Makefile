# The two commands of the README: `make audit` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: audit test lint install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

## Run the DP-SEP audit on the embedded default data; writes reports/out/.
audit: $(STAMP)
	$(BIN)/dpclaims audit --paper dpsep --budget quick --seed 0 --out reports/out

## Install and run the project's test suite (one worker per core; a test file's tests
## share a worker, so its session fixtures run once).
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples

clean:
	rm -rf $(VENV) reports/out .pytest_cache .hypothesis
