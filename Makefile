# pixelrig: `make test` and `make demo` set themselves up (system packages, a venv under .venv, the project).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-long test-slow demo bench golden lint clean

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

demo: $(STAMP)
	$(PY) -m pixelrig demo --out out

bench: $(STAMP)
	$(PY) -m pixelrig bench

golden: $(STAMP)
	$(PY) -m tests.golden --update

lint: $(STAMP)
	$(VENV)/bin/ruff check pixelrig tests benchmarks examples

clean:
	rm -rf $(VENV) build out .pytest_cache
