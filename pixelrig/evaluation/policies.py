"""Policy specs of an evaluation: ``random``, ``expert`` (the task's scripted expert), ``module:attr`` (a callable
building a policy from the env) and an SB3 ``.zip``; each built into a policy called with one env's observation."""

from __future__ import annotations

import copy
import importlib
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

SB3_ALGORITHMS = ("PPO", "SAC", "TD3", "A2C", "DDPG", "DQN")
"""The stable-baselines3 classes a ``.zip`` is loaded with, the first that loads it."""


def expert_class(env_id: str) -> type:
    """The scripted expert class of a task (:data:`pixelrig.experts.EXPERTS`).

    Raises:
        ValueError: the task has no scripted expert (the message lists those that do).
    """
    import pixelrig.experts

    experts = pixelrig.experts.EXPERTS
    if env_id not in experts:
        raise ValueError(f"--policy expert: {env_id!r} has no scripted expert; tasks with one: {sorted(experts)}")
    return experts[env_id]


class RandomPolicy:
    """Uniform random actions from a generator seeded by each episode's seed (the same actions in any process)."""

    def __init__(self, env: gym.Env) -> None:
        self.space = copy.deepcopy(env.action_space)  # its own: policies built from one env never share a generator
        self.rng = np.random.default_rng(0)

    def reset(self, seed: int | None = None) -> None:
        """Start an episode; ``seed`` seeds its actions."""
        self.rng = np.random.default_rng(seed)
        self.space.seed(int(self.rng.integers(2**31)))

    def __call__(self, obs: Any) -> Any:
        return self.space.sample()


class SB3Policy:
    """A stable-baselines3 model acting deterministically on the observation keys it was trained on."""

    def __init__(self, model: Any) -> None:
        self.model = model
        space = getattr(model, "observation_space", None)
        self.keys = list(space.spaces) if isinstance(space, gym.spaces.Dict) else None

    def __call__(self, obs: Any) -> Any:
        if self.keys is not None and isinstance(obs, dict):
            obs = {key: obs[key] for key in self.keys}
        action, _ = self.model.predict(obs, deterministic=True)
        return action


def load_sb3(path: Path) -> Any:
    """An SB3 model from a ``.zip`` (imports stable-baselines3 here only).

    Raises:
        ValueError: stable-baselines3 is not installed, or no known algorithm loads the file.
    """
    try:
        import stable_baselines3
    except ImportError:
        raise ValueError(f"--policy {str(path)!r} is an SB3 model, which needs stable-baselines3: pip install "
                         "'pixelrig[sb3]'") from None
    errors = []
    for name in SB3_ALGORITHMS:
        try:
            return getattr(stable_baselines3, name).load(str(path), device="cpu")
        except Exception as exc:  # noqa: BLE001 - try the next algorithm, report all
            errors.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
    raise ValueError(f"--policy {str(path)!r}: none of {SB3_ALGORITHMS} loads it ({'; '.join(errors)})")


def policy_builder(spec: Any, env_id: str) -> Callable[[gym.Env], Any]:
    """What builds one policy from an env, for a policy spec.

    Args:
        spec: ``"random"``, ``"expert"``, ``"module:attr"`` (a callable taking the env and returning a policy), a
            path to an SB3 ``.zip``, or a callable taking the env.
        env_id: the task (for ``"expert"``).

    Raises:
        ValueError: an unknown spec, a module or attribute that does not exist, a missing ``.zip`` (each names the
            spec and the forms there are).
    """
    forms = "'random', 'expert', 'module:attr' (a callable taking the env) or the path of an SB3 .zip"
    if callable(spec):
        return spec
    if not isinstance(spec, str | os.PathLike) or not str(spec):
        raise ValueError(f"policy={spec!r}: give {forms}")
    text = str(spec)
    if text == "random":
        return RandomPolicy
    if text == "expert":
        return expert_class(env_id)
    if text.endswith(".zip"):
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"policy={text!r}: no such SB3 model file; give {forms}")
        model = load_sb3(path)
        return lambda env: SB3Policy(model)
    if ":" in text:
        module_name, _, attr = text.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ValueError(f"policy={text!r}: cannot import {module_name!r} ({exc}); give {forms}") from None
        target: Any = module
        for part in attr.split("."):
            if not hasattr(target, part):
                raise ValueError(f"policy={text!r}: {module_name} has no attribute {attr!r}; give {forms}")
            target = getattr(target, part)
        if not callable(target):
            raise ValueError(f"policy={text!r} is not callable: give a callable that takes the env and returns a "
                             "policy")
        return target
    raise ValueError(f"policy={text!r} is not a policy spec: give {forms}")


def reset_policy(policy: Any, seed: int) -> None:
    """Call the policy's ``reset`` (with ``seed=`` when it takes one), if it has one."""
    reset = getattr(policy, "reset", None)
    if reset is None:
        return
    try:
        takes_seed = "seed" in inspect.signature(reset).parameters
    except (TypeError, ValueError):
        takes_seed = False
    reset(seed=seed) if takes_seed else reset()
