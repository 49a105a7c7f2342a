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

## Build the API reference from the docstrings (Sphinx, docs/) into docs/_build/html;
## every warning is an error (-W), all of them reported (--keep-going), fresh each time (-E).
.PHONY: docs
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test,docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -E -q -b html docs docs/_build/html

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples

clean:
	rm -rf $(VENV) reports/out .pytest_cache .hypothesis
