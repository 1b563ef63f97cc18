# pixelrig: `make test` and `make demo` set themselves up (system packages, a venv, the project).
# PYTHON picks the interpreter: python3.11 (the default; venv .venv), python3.12 or python3.13 (venvs .venv-3.12,
# .venv-3.13). pybullet has no wheels past 3.11: there the first install builds it from source with numpy
# (scripts/pybullet-wheel.sh, 6-17 min on 2 cores) and caches the wheel, once per machine.
PYTHON ?= python3.11
ASK_VERSION := $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null
PYVER := $(or $(patsubst python%,%,$(filter python3.%,$(notdir $(PYTHON)))),$(shell $(ASK_VERSION)))
ifeq ($(PYVER),)
$(error PYTHON=$(PYTHON) does not run: pass PYTHON=python3.11, python3.12 or python3.13)
endif
ifeq ($(PYVER),3.11)
VENV := .venv
NEW_VENV := $(PYTHON) -m venv
else
VENV := .venv-$(PYVER)
NEW_VENV := "$$(bash scripts/find-python.sh $(PYTHON))" -m venv
endif
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
NEWEST_PYTHON := python3.13
PYTEST_ARGS ?=
# The suite runs in TEST_JOBS processes (pytest-xdist; 0: in this one). Two halve it on CI's 2 cores; each test is
# its own (a process of its own per worker: its EGL client, Xvfb, temporary folders).
TEST_JOBS ?= 2

.PHONY: test test-newest test-gym gym-venv newest-venv test-long test-slow test-learning test-cluster test-gym-range test-mutants test-lerobot-env lerobot mutation demo bench golden lint clean

# torch==2.13.0 before anything that pulls torch: on 3.11 pip takes the CPU build on local disk; on 3.12+ it takes
# PyPI's default build (CUDA libraries, about 4 GB, which run on the CPU too), minus triton, which the CPU build
# lacks: triton's own LLVM segfaults the process when it loads after Mesa's (llvmpipe: the egl and gl renderers),
# as torch's optimizers load it (SB3, RLlib).
# $(call install_venv,VENV,WHAT): the venv VENV with torch, pybullet (built on 3.12+) and WHAT (pip's arguments).
VENV_DEPS := pyproject.toml scripts/setup-system.sh $(if $(filter 3.11,$(PYVER)),,scripts/pybullet-wheel.sh)
define install_venv
	bash scripts/setup-system.sh
	test -x $(1)/bin/python || $(NEW_VENV) $(1)
	$(1)/bin/python -m pip install -q --upgrade pip
	$(1)/bin/python -m pip install -q torch==2.13.0
	$(if $(filter 3.11,$(PYVER)),,bash scripts/pybullet-wheel.sh $(1)/bin/python)
	$(1)/bin/python -m pip install -q $(2)
	$(if $(filter 3.11,$(PYVER)),,$(1)/bin/python -m pip uninstall -q -y triton)
	touch $@
endef
MAIN_EXTRAS := -e '.[test,so101]'
$(STAMP): $(VENV_DEPS)
	$(call install_venv,$(VENV),$(MAIN_EXTRAS))

test: $(STAMP)
	$(PY) -m pytest -n $(TEST_JOBS) $(PYTEST_ARGS)

# CI: the newest Python pixelrig supports with the highest Gymnasium pyproject accepts (test-gym below; on a fresh
# machine pybullet's build comes first): the suite but for END_TO_END's files, which make test runs on 3.11.
# `make test PYTHON=python3.13` runs the whole suite there (with Ray, which pins another Gymnasium).
test-newest:
	$(MAKE) test-gym PYTHON=$(NEWEST_PYTHON) GYM=$(lastword $(GYM_RANGE)) \
		GYM_RUN="tests $(addprefix --ignore=,$(END_TO_END))"

# The long-run tests in TEST_JOBS processes too (10.5 min in one on 2 cores, 2026-12-03), each file's in one process
# and in order (its egl case before its gl case, as in one process).
test-long: $(STAMP)
	$(PY) -m pytest -n $(TEST_JOBS) --dist loadfile -m "slow and not learning and not ray_cluster and not sweep and not lerobot_env"

# A two-node Ray cluster started on this machine (two `ray start` processes): runners on both, one killed mid-run.
test-cluster: $(STAMP)
	$(PY) -m pytest -m ray_cluster

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

# LeRobot's env plugin (plugins/lerobot_env_pixelrig): a venv of its own on Python 3.13 with LeRobot 0.6.1, pixelrig
# and the plugin (scripts/lerobot-env-venv.sh: ~10 min and 5.6 GB once, cached by its stamp; LEROBOT_ENV_VENV moves
# it). Not the readers' venv (scripts/lerobot-venv.sh, LEROBOT_VENV).
LEROBOT_ENV_VENV ?= .venv-lerobot-env
lerobot:
	LEROBOT_ENV_VENV=$(LEROBOT_ENV_VENV) bash scripts/lerobot-env-venv.sh

# The plugin in LeRobot: its features against a collected dataset, lerobot-eval of a fresh ACT on 2 envs, the docs'
# collect/lerobot-train/lerobot-eval lines (tests/test_plugins_lerobot_env_venv.py); an SO-101 dataset's features
# against lerobot-record's for a so101_follower, and LeRobot's aggregation of both (tests/test_datasets_so101_features.py);
# LeRobot's reader on an augmented dataset (tests/test_datasets_augment.py).
test-lerobot-env: $(STAMP) lerobot
	LEROBOT_ENV_VENV=$(LEROBOT_ENV_VENV) $(PY) -m pytest -m lerobot_env tests/test_plugins_lerobot_env_venv.py \
		tests/test_datasets_so101_features.py tests/test_datasets_augment.py

# The mutation smoke: each mutant of tests/mutants.py breaks one feature in a copy of the tree; its tests must fail.
test-mutants: $(STAMP)
	$(PY) -m tests.mutants

# Mutation testing with mutmut over the third round's modules (tests/mutation.py; hours on 2 cores, not in CI):
# writes docs/mutation.json and the table of docs/mutation.md. GROUPS=lens noise ... runs some.
mutation: $(STAMP)
	$(PY) -m tests.mutation $(GROUPS)

test-learning: $(STAMP)
	$(PY) -m pytest -m ci_learning

# The tests that lean on Gymnasium (wrappers, vector envs, snapshots of wrapper stacks, the env checker, SB3) on
# the lowest Gymnasium pyproject accepts; the highest is test-newest's. Ray, which pins one, is left out of both.
GYM_RANGE := 1.0.0 1.4.0
GYM_TESTS ?= tests/test_snapshots_gymnasium_internals.py tests/test_snapshots.py tests/test_vector.py tests/test_vector_batched.py \
	tests/test_vector_autoreset.py tests/test_vector_stack.py \
	tests/test_envs_tasks_and_checkers.py tests/test_wrappers_pixel_obs.py tests/test_wrappers_video_recorder.py tests/test_integrations_training.py
# End-to-end files: whole commands, scripts and browsers in subprocesses (the README's blocks, collect, replay, augment,
# eval and the study, the CLI, layout's installs), 40% of the suite's time; make test runs them, test-newest does not.
END_TO_END := tests/test_readme.py tests/test_datasets_collect.py tests/test_wrappers_browser_view.py \
	tests/test_evaluation_augment_study.py tests/test_datasets_replay.py tests/test_tools_cli.py tests/test_datasets_augment.py \
	tests/test_evaluation_run.py tests/test_layout.py tests/test_integrations_rllib.py
test-gym-range:
	$(MAKE) test-gym GYM=$(firstword $(GYM_RANGE)) GYM_RUN="$(GYM_TESTS)"

# GYM_RUN (pytest's arguments) with gymnasium==GYM, in a venv of their own (.venv-gym-GYM, -pyX.Y past 3.11; the
# venv alone: make gym-venv GYM=...).
GYM_VENV = .venv-gym-$(GYM)$(if $(filter 3.11,$(PYVER)),,-py$(PYVER))
GYM_STAMP = $(GYM_VENV)/.installed-stamp
GYM_EXTRAS = -e '.[test-core,so101]' "gymnasium==$(GYM)"
$(GYM_STAMP): $(VENV_DEPS)
	$(call install_venv,$(GYM_VENV),$(GYM_EXTRAS))
gym-venv: $(GYM_STAMP)
test-gym: $(GYM_STAMP)
	@echo "== gymnasium $(GYM), Python $(PYVER)"
	$(GYM_VENV)/bin/python -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) $(GYM_RUN)
# test-newest's venv alone (CI builds it first, then LeRobot's plugin venv beside test-newest's tests).
newest-venv:
	$(MAKE) gym-venv PYTHON=$(NEWEST_PYTHON) GYM=$(lastword $(GYM_RANGE))

demo: $(STAMP)
	$(PY) -m pixelrig demo --out out

bench: $(STAMP)
	$(PY) -m pixelrig bench

golden: $(STAMP)
	$(PY) -m tests.golden --update

lint: $(STAMP)
	$(VENV)/bin/ruff check pixelrig tests benchmarks examples plugins

clean:
	rm -rf $(VENV) .venv-gym-* build out .pytest_cache
