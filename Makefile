# The two commands of the README: `make audit` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Exactly the versions CI tested (CPython 3.11), with hashes; `make lock` rewrites it.
LOCK   := requirements.lock
UV     := uv==0.13.9

.PHONY: audit test test-install test-quick test-d3p d3p-venv lint install lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

## Run the DP-SEP audit on the embedded default data; writes reports/audit-dpsep/, the
## default folder of `dpclaims audit --paper dpsep` (a rerun replaces the report there; a
## folder holding anything else is refused). The audit's exit code says what it found
## (0 nothing refuted, 1 a claim refuted, 3 a claim not checkable): each is a finished
## report, so make succeeds; bad input (2), a Dask cluster or a worker process lost
## mid-run (69), an internal error (70), an interrupt (130) or a SIGTERM (143, e.g.
## timeout or a cancelled CI job) fail.
audit: $(STAMP)
	@$(BIN)/dpclaims audit --paper dpsep --budget quick --seed 0; \
	code=$$?; case $$code in \
	  0) echo "make audit: report written to reports/audit-dpsep/; no claim refuted (exit 0)";; \
	  1) echo "make audit: report written to reports/audit-dpsep/; a claim is refuted (exit 1): see reports/audit-dpsep/report.html";; \
	  3) echo "make audit: report written to reports/audit-dpsep/; a claim is not checkable (exit 3)";; \
	  *) exit $$code;; \
	esac; \
	echo "make audit: to type dpclaims yourself, run: source $(VENV)/bin/activate"

## Install and run the project's test suite (one worker per core; a test file's tests
## share a worker, so its session fixtures run once; the files in the order
## tests/conftest.py gives them, the longest first). Each worker runs its BLAS and OpenMP
## on one thread: with one worker per core, more threads only wait for a busy core
## (libgomp's threads spin while they wait). Measured (docs/benchmarks.md): a
## gradient-boosting audit test 53.5 -> 0.9 CPU-s, the Adult VIPS test 41.3 -> 3.6.
TEST_THREADS := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
test: $(STAMP)
	$(TEST_THREADS) $(BIN)/python -m pytest -q -n auto --dist loadfile --no-loadscope-reorder

## Build the API reference from the docstrings (Sphinx, docs/) into docs/_build/html;
## every warning is an error (-W), all of them reported (--keep-going), fresh each time (-E).
.PHONY: docs
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/sphinx-build -W --keep-going -E -q -b html docs docs/_build/html

## Build the wheel and install it in fresh venvs beside the lowest supported stack
## (tests/test_packaging.py; needs PyPI; 1 to 5 minutes here, by the load).
test-install: $(STAMP)
	$(BIN)/python -m pytest -q -p no:xdist -m install tests/test_packaging.py

## Every paper's quick-budget verdicts against tests/data/quick_verdicts_seed0.json
## (tests/test_quick_verdicts.py; several minutes on 2 cores).
test-quick: $(STAMP)
	$(BIN)/python -m pytest -q -p no:xdist -m quick_verdicts tests/test_quick_verdicts.py

## Rewrite requirements.lock from pyproject.toml with uv (a dev tool, installed here
## only). Locked versions that still satisfy pyproject.toml are kept; UPGRADE=1 takes
## the newest.
lock: $(BIN)/python
	$(BIN)/python -m pip install --quiet "$(UV)"
	$(BIN)/uv pip compile pyproject.toml --extra test --generate-hashes --python-version 3.11 \
		--quiet $(if $(UPGRADE),--upgrade) -o $(LOCK)

## The d3p example (examples/d3p_dpvi) and the JAX tests (tests/needs_jax) in their own venv,
## .venv-d3p: dpclaims' lock plus the JAX stack d3p 0.2.0 runs on, pinned with hashes in
## examples/d3p_dpvi/requirements-d3p.txt and installed with --no-deps (jax-chacha-prng
## declares numpy < 2; pip's resolver would downgrade numpy and take a jax d3p cannot
## import). From a clean clone 1.9 min at load 2-3, 6.3 at load 7-10 (docs/benchmarks.md).
D3P_VENV  := .venv-d3p
D3P_BIN   := $(D3P_VENV)/bin
D3P_REQ   := examples/d3p_dpvi/requirements-d3p.txt
D3P_STAMP := $(D3P_VENV)/.installed

$(D3P_STAMP): pyproject.toml $(LOCK) $(D3P_REQ) examples/d3p_dpvi/pyproject.toml
	$(PYTHON) -m venv $(D3P_VENV)
	$(D3P_BIN)/python -m pip install --quiet --upgrade pip
	$(D3P_BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(D3P_BIN)/python -m pip install --quiet --no-deps --require-hashes -r $(D3P_REQ)
	$(D3P_BIN)/python -m pip install --quiet --no-deps -e . -e examples/d3p_dpvi
	touch $(D3P_STAMP)

d3p-venv: $(D3P_STAMP)

test-d3p: $(D3P_STAMP)
	$(D3P_BIN)/python -m pytest -q -p no:xdist tests/needs_jax examples/d3p_dpvi/tests

## jax_privacy 2.0 in a venv of its own (.venv-jaxpriv), for the jax_privacy column of
## benchmarks/one_run.py (not in the lock: its JAX stack is its own).
.PHONY: venv-jax-privacy
venv-jax-privacy:
	$(PYTHON) -m venv .venv-jaxpriv
	.venv-jaxpriv/bin/python -m pip install --quiet "jax-privacy==2.0.0"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples

clean:
	rm -rf $(VENV) $(D3P_VENV) reports/audit-dpsep .pytest_cache .hypothesis docs/_build
