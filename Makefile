# pixelrig: `make test` and `make demo` set themselves up (system packages, a venv under .venv, the project).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-long test-slow test-learning test-gym-range demo bench golden lint clean

$(STAMP): pyproject.toml scripts/setup-system.sh
	bash scripts/setup-system.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0  # the CPU build on local disk, before anything that pulls torch
	$(PY) -m pip install -q -e '.[test]'
	touch $@

test: $(STAMP)
	$(PY) -m pytest

test-long: $(STAMP)
	$(PY) -m pytest -m "slow and not learning"

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

test-learning: $(STAMP)
	$(PY) -m pytest -m ci_learning

# The suite on the lowest and the highest Gymnasium pyproject accepts (Ray, which pins one, is left out there).
GYM_RANGE := 1.0.0 1.4.0
test-gym-range: $(STAMP)
	set -e; for v in $(GYM_RANGE); do e=.venv-gym-$$v; test -x $$e/bin/python || $(PYTHON) -m venv $$e; \
	  $$e/bin/pip install -q --upgrade pip; $$e/bin/pip install -q torch==2.13.0; \
	  $$e/bin/pip install -q -e '.[test-core]' "gymnasium==$$v"; \
	  echo "== gymnasium $$v"; $$e/bin/python -m pytest -q -p no:cacheprovider; done

demo: $(STAMP)
	$(PY) -m pixelrig demo --out out

bench: $(STAMP)
	$(PY) -m pixelrig bench

golden: $(STAMP)
	$(PY) -m tests.golden --update

lint: $(STAMP)
	$(VENV)/bin/ruff check pixelrig tests benchmarks examples

clean:
	rm -rf $(VENV) .venv-gym-* build out .pytest_cache
