"""The tasks room: one module per task, each declaring the id it registers; registration, ``ENV_SPECS`` and the
experts' table derived from the modules; every task's observation a layout of named terms."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import pixelrig
from pixelrig.experts import EXPERTS, Expert, LiftExpert, PushExpert
from pixelrig.tasks import ENV_SPECS, TASK_SPECS, declared, register_envs, task_specs

TASKS = Path(pixelrig.__file__).parent / "tasks"


def test_every_task_module_declares_one_registered_id() -> None:
    modules = sorted(p.stem for p in TASKS.glob("*.py") if p.stem != "__init__")
    assert modules == ["ant", "cartpole", "half_cheetah", "hopper", "lift", "peg_insert", "pick_object",
                       "pick_place", "push", "reach", "so101_lift", "so101_pick_place", "so101_reach", "so101_stack",
                       "stack", "walker2d"]
    for stem in modules:
        entry = declared(TASKS / f"{stem}.py")
        module = importlib.import_module(f"pixelrig.tasks.{stem}")
        assert entry == module.REGISTRATION, stem
        spec = gym.spec(entry["id"])
        assert spec.entry_point == f"pixelrig.tasks.{stem}:{entry['entry_point']}"
        assert spec.max_episode_steps == entry["max_episode_steps"]
        assert getattr(module, entry["entry_point"]).__module__ == module.__name__
    assert set(ENV_SPECS) == set(TASK_SPECS) | {"pixelrig/Robot-v0"}
    assert {i for i in gym.registry if i.startswith("pixelrig/")} == set(ENV_SPECS)


def test_the_specs_are_read_again_from_the_modules_as_gym_registers_them() -> None:
    """``task_specs()`` called now (not the table computed at import) gives each module's own declaration, with the
    entry point's module path and step limit; ``__init__`` declares none; registering again changes nothing."""
    expected = {}
    for path in sorted(TASKS.glob("*.py")):
        if path.stem == "__init__":
            continue
        module = importlib.import_module(f"pixelrig.tasks.{path.stem}")
        reg = module.REGISTRATION
        expected[reg["id"]] = {"entry_point": f"pixelrig.tasks.{path.stem}:{reg['entry_point']}",
                               "max_episode_steps": reg["max_episode_steps"]}
    specs = task_specs()
    assert specs == expected == TASK_SPECS and list(specs) == list(TASK_SPECS)
    assert len(specs) == 16 and specs["pixelrig/PandaLift-v0"] == {
        "entry_point": "pixelrig.tasks.lift:PandaLiftEnv", "max_episode_steps": 100}
    assert ENV_SPECS == {**TASK_SPECS, "pixelrig/Robot-v0": ENV_SPECS["pixelrig/Robot-v0"]}
    before = {i: gym.spec(i) for i in ENV_SPECS}
    register_envs()
    assert {i: gym.spec(i) for i in ENV_SPECS} == before


def test_declared_finds_the_top_level_literal_wherever_it_stands(tmp_path: Path) -> None:
    """The declaration is found after other statements (a tuple target, a chained assignment), and only at the top
    level under its own name: a module without one, or with one inside a function or under another name, declares
    none."""
    reg = {"id": "pixelrig/X-v0", "entry_point": "XEnv", "max_episode_steps": 7}
    cases = {
        f"import os\nA, B = 1, 2\nC = D = 3\nREGISTRATION = {reg!r}\nE = 4\n": reg,
        f"REGISTRATION = {reg!r}\n": reg,
        "X = 1\n": None,
        f"def f():\n    REGISTRATION = {reg!r}\n": None,
        f"OTHER = {reg!r}\n": None,
        f"REGISTRATION, OTHER = {reg!r}, 1\n": None,
    }
    for i, (source, want) in enumerate(cases.items()):
        path = tmp_path / f"m{i}.py"
        path.write_text(source, encoding="utf-8")
        assert declared(path) == want, source


def test_the_declarations_are_read_as_utf_8_whatever_the_locale(tmp_path: Path) -> None:
    """The task modules hold non-ASCII text (units, signs); registration reads them as UTF-8 even where the locale's
    encoding is ASCII (the C locale with Python's coercion and UTF-8 mode off, as some containers run)."""
    assert any(not (TASKS / f).read_bytes().isascii() for f in ("ant.py", "lift.py"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8"))
           # mutmut's stats pass counts calls in its own process: a child importing its trampolines then fails
           and (k, v) != ("MUTANT_UNDER_TEST", "stats")}
    here = str(Path(pixelrig.__file__).resolve().parents[1])  # the pixelrig under test, wherever it is
    env.update(LC_ALL="C", PYTHONCOERCECLOCALE="0", PYTHONUTF8="0",
               PYTHONPATH=os.pathsep.join([here, env.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", "import locale, pixelrig.tasks as t; "
                          "print(locale.getpreferredencoding(False), len(t.task_specs()))"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ANSI_X3.4-1968", "16"]


def test_registration_reads_the_modules_without_importing_them(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, pixelrig; print(sorted(m for m in sys.modules if "
                          "m.startswith('pixelrig.tasks.') or m == 'pybullet'))"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_experts_are_derived_from_the_tasks_they_name() -> None:
    assert set(EXPERTS) == {"pixelrig/PandaPush-v0", "pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0",
                            "pixelrig/PandaStack-v0", "pixelrig/PandaPegInsert-v0", "pixelrig/PandaPickObject-v0",
                            "pixelrig/SO101Reach-v0", "pixelrig/SO101Lift-v0", "pixelrig/SO101PickPlace-v0",
                            "pixelrig/SO101Stack-v0"}
    for env_id, cls in EXPERTS.items():
        assert cls.task == env_id and env_id in gym.registry
        assert getattr(pixelrig.experts, cls.__name__) is cls
    assert EXPERTS["pixelrig/PandaLift-v0"] is LiftExpert and EXPERTS["pixelrig/PandaPush-v0"] is PushExpert
    assert Expert.task == ""


def test_the_experts_docstring_example_runs() -> None:
    """``EXPERTS[id](env)`` makes an expert (it was a class name, and raised TypeError)."""
    env = gym.make("pixelrig/PandaLift-v0", renderer="tiny")
    try:
        expert = EXPERTS["pixelrig/PandaLift-v0"](env)
        obs, info = env.reset(seed=0)
        expert.reset()
        obs, *_ = env.step(expert(obs))
        assert env.observation_space.contains(obs)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", sorted(TASK_SPECS))
def test_each_task_lays_its_observation_out_in_named_terms(env_id: str) -> None:
    env = gym.make(env_id, renderer="tiny")
    try:
        layout = env.unwrapped.observation_layout
        spans = list(layout.values())
        assert spans[0].start == 0 and spans[-1].stop == env.observation_space.shape[0]
        assert all(a.stop == b.start for a, b in zip(spans, spans[1:], strict=False))
        obs, _ = env.reset(seed=0)
        assert obs.dtype == env.observation_space.dtype and obs.shape == env.observation_space.shape
    finally:
        env.close()
