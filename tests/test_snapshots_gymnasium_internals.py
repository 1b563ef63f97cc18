"""The private Gymnasium attributes pixelrig relies on, where Gymnasium has no public API for what it needs
(pixelrig/snapshots.py: the state of TimeLimit, OrderEnforcing and PassiveEnvChecker). A Gymnasium release that
renames one fails here first, naming it; CI runs the suite on the lowest and the highest Gymnasium that pyproject
accepts."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

from pixelrig.snapshots import _WRAPPERS, PASSIVE_CHECKER_FLAGS, _qualname


class _Counter(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.zeros(1, np.float32), 0.0, False, False, {}


def test_wrapper_internals_used_by_snapshots() -> None:
    env = TimeLimit(_Counter(), max_episode_steps=5)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    assert _WRAPPERS[_qualname(env)][0](env) == {"elapsed_steps": 2}
    _WRAPPERS[_qualname(env)][1](env, {"elapsed_steps": 4})
    assert env.step(0)[3] is True  # the restored count is the one TimeLimit truncates by

    order = OrderEnforcing(_Counter())
    get, put = _WRAPPERS[_qualname(order)]
    assert get(order) == {"has_reset": False}
    put(order, {"has_reset": True})
    order.step(0)  # would raise ResetNeeded if the flag were not OrderEnforcing's own

    checker = PassiveEnvChecker(_Counter())
    _WRAPPERS[_qualname(checker)][1](checker, {})
    present = [flag for flag in PASSIVE_CHECKER_FLAGS if hasattr(checker, flag)]
    assert {"checked_reset", "checked_step", "checked_render"} <= set(present)
    assert all(getattr(checker, flag) is True for flag in present)
