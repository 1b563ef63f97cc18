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

# The tests that lean on Gymnasium (wrappers, vector envs, snapshots of wrapper stacks, the env checker, SB3) on
# the lowest and the highest Gymnasium pyproject accepts (Ray, which pins one, is left out there). A whole-suite
# run on both ends passed when the range was set; CI's 90 minutes hold these files, not three whole suites.
GYM_RANGE := 1.0.0 1.4.0
GYM_TESTS ?= tests/test_gymnasium_internals.py tests/test_snapshot.py tests/test_vector.py tests/test_batched.py \
	tests/test_tasks_and_checkers.py tests/test_pixel_obs.py tests/test_video.py tests/test_training.py
test-gym-range: $(STAMP)
	set -e; for v in $(GYM_RANGE); do e=.venv-gym-$$v; test -x $$e/bin/python || $(PYTHON) -m venv $$e; \
	  $$e/bin/pip install -q --upgrade pip; $$e/bin/pip install -q torch==2.13.0; \
	  $$e/bin/pip install -q -e '.[test-core]' "gymnasium==$$v"; \
	  echo "== gymnasium $$v"; $$e/bin/python -m pytest -q -p no:cacheprovider $(GYM_TESTS); done

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
