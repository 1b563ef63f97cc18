"""The autoreset bookkeeping (pixelrig.vector.batched.EnvBatch under BatchedVectorEnv) under Hypothesis: drawn
sequences of terminated/truncated flags per env, and drawn partial resets (``options={"reset_mask": mask}``), in all
three of Gymnasium's autoreset modes, checked against a tiny model of Gymnasium's documented semantics written here
(https://farama.org/Vector-Autoreset-Mode) and against Gymnasium's own SyncVectorEnv, result for result.

The env is scripted: its action is the step's ``(terminated, truncated)``; its observation ``(episode, t)`` and
reward ``10 * episode + t`` say which episode and step produced them, and its reset info (``phase`` 0, ``seeded``,
a ``draw`` from the env's generator, which shows the seed it got) and step info (``phase`` 1, ``t``) differ in
values and in keys, so a reset's info can never pass for a step's.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig.vector.autoreset import DISABLED, MODES, NEXT_STEP, SAME_STEP, AutoresetMode
from pixelrig.vector.batched import BatchedVectorEnv

from .conftest import assert_trees_equal

pytestmark = pytest.mark.skipif(AutoresetMode is None, reason="gymnasium 1.0 has next-step autoreset only")


class Scripted(gym.Env):
    """An env whose action is its step's ``(terminated, truncated)`` (see the module docstring)."""

    observation_space = spaces.Box(0.0, 1e6, (2,), np.float32)
    action_space = spaces.MultiBinary(2)

    def __init__(self) -> None:
        self.episode = -1
        self.t = 0

    def obs(self) -> np.ndarray:
        return np.array([self.episode, self.t], np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.episode += 1
        self.t = 0
        return self.obs(), {"phase": 0, "episode": self.episode, "seeded": seed is not None,
                            "draw": int(self.np_random.integers(1 << 30))}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return (self.obs(), float(10 * self.episode + self.t), bool(action[0]), bool(action[1]),
                {"phase": 1, "episode": self.episode, "t": self.t})


# ---- the model: Gymnasium's documented semantics, one env at a time ----------------------------------------------

class Model:
    """What a vector env in ``mode`` returns, per env: (obs, reward, terminated, truncated, info) with same-step's
    ``final_obs`` / ``final_info`` inside the ended env's info."""

    def __init__(self, n: int, mode: str) -> None:
        self.envs = [Scripted() for _ in range(n)]
        self.mode = mode
        self.ended = [False] * n
        self.obs: list[np.ndarray] = [np.zeros(2, np.float32)] * n

    def reset(self, seed: int | None, mask: list[bool]) -> list[dict | None]:
        """Reset the masked envs (seed + i); the others keep their observation and give no info (None)."""
        infos: list[dict | None] = []
        for i, env in enumerate(self.envs):
            if mask[i]:
                self.obs[i], info = env.reset(seed=None if seed is None else seed + i)
                self.ended[i] = False
                infos.append(info)
            else:
                infos.append(None)
        return infos

    def step(self, flags: list[tuple[bool, bool]]) -> list[tuple]:
        out = []
        for i, (env, action) in enumerate(zip(self.envs, flags, strict=True)):
            if self.mode == NEXT_STEP and self.ended[i]:  # the step after an end resets: reward 0, not done
                obs, info = env.reset()
                result = (obs, 0.0, False, False, info)
            else:
                assert not (self.mode == DISABLED and self.ended[i])
                obs, reward, term, trunc, info = env.step(np.array(action, np.int8))
                if self.mode == SAME_STEP and (term or trunc):  # this step resets: the ended episode in final_*
                    final_obs, final_info = obs, info
                    obs, info = env.reset()
                    info = {**info, "final_obs": final_obs, "final_info": final_info}
                result = (obs, reward, term, trunc, info)
            self.ended[i] = bool(result[2] or result[3]) and self.mode != SAME_STEP
            self.obs[i] = result[0]
            out.append(result)
        return out


def per_env(infos: dict[str, Any], i: int) -> dict[str, Any] | None:
    """Env ``i``'s info out of Gymnasium's batched infos (arrays with ``"_key"`` masks); None when it has none."""
    out = {}
    for key, value in infos.items():
        if key.startswith("_") or not infos[f"_{key}"][i]:
            continue
        out[key] = per_env(value, i) if isinstance(value, dict) else value[i]
    return out or None


def assert_matches_model(got: tuple, want: list[tuple], n: int) -> None:
    obs, reward, term, trunc, infos = got
    for i in range(n):
        w_obs, w_reward, w_term, w_trunc, w_info = want[i]
        assert obs[i].tolist() == w_obs.tolist() and reward[i] == w_reward, f"env {i}"
        assert (bool(term[i]), bool(trunc[i])) == (w_term, w_trunc), f"env {i}"
        info = per_env(infos, i)
        if "final_obs" in w_info:
            assert info is not None and info["final_obs"].tolist() == w_info["final_obs"].tolist(), f"env {i}"
            assert info["final_info"] == w_info["final_info"], f"env {i}: final_info is the ended episode's"
            info = {k: v for k, v in info.items() if k != "final_obs"}
            w_info = {k: v for k, v in w_info.items() if k != "final_obs"}
        assert info == w_info, f"env {i}"


# ---- the property --------------------------------------------------------------------------------------------------

@st.composite
def scripts(draw: st.DrawFn) -> tuple[int, str, int, list]:
    """A number of envs, a mode, a first seed, and steps: each env's flags and a drawn partial reset after it."""
    n = draw(st.integers(1, 3))
    mode = draw(st.sampled_from(MODES))
    seed = draw(st.integers(0, 1000))  # not None: each env's generator would draw from the OS
    flags = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=n, max_size=n)
    resets = st.lists(st.booleans(), min_size=n, max_size=n)
    steps = draw(st.lists(st.tuples(flags, resets | st.just([False] * n)), min_size=1, max_size=10))
    return n, mode, seed, steps


def drive(venv: gym.vector.VectorEnv, n: int, mode: str, seed: int | None, steps: list,
          model: Model | None = None) -> list:
    """Reset, then each step followed by its drawn reset (with disabled autoreset also of every env that ended);
    everything the vector env returned, each result checked against ``model`` as it comes."""
    out: list = []
    obs, info = venv.reset(seed=seed)
    out.append((obs, info))
    if model is not None:
        want = model.reset(seed, [True] * n)
        for i in range(n):
            assert obs[i].tolist() == model.obs[i].tolist() and per_env(info, i) == want[i]
    for flags, extra in steps:
        result = venv.step(np.array(flags, np.int8))
        out.append(result)
        if model is not None:
            assert_matches_model(result, model.step(flags), n)
        done = result[2] | result[3]
        mask = np.array(extra, np.bool_) | (done if mode == DISABLED else np.zeros(n, np.bool_))
        if mask.any():
            obs, info = venv.reset(options={"reset_mask": mask.copy()})  # Gymnasium pops the mask from options
            out.append((obs, info))
            if model is not None:
                want = model.reset(None, mask.tolist())
                for i in range(n):
                    assert obs[i].tolist() == model.obs[i].tolist() and per_env(info, i) == want[i], f"env {i}"
    return out


@settings(max_examples=150, deadline=None)
@given(scripts())
def test_bookkeeping_follows_gymnasiums_semantics(script: tuple[int, str, int, list]) -> None:
    n, mode, seed, steps = script
    ours = BatchedVectorEnv([Scripted] * n, autoreset_mode=mode)
    theirs = gym.vector.SyncVectorEnv([Scripted] * n, autoreset_mode=AutoresetMode(mode))
    try:
        got = drive(ours, n, mode, seed, steps, Model(n, mode))
        assert_trees_equal(got, drive(theirs, n, mode, seed, steps))
    finally:
        ours.close()
        theirs.close()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=3))
def test_disabled_refuses_a_step_while_an_ended_env_waits_for_its_reset(n: int, script: list) -> None:
    """With autoreset disabled, a step while an ended env waits raises and steps nothing; Gymnasium's model asserts
    the same precondition."""
    venv = BatchedVectorEnv([Scripted] * n, autoreset_mode=DISABLED)
    try:
        venv.reset(seed=0)
        ended = np.zeros(n, np.bool_)
        for term, trunc in script:
            flags = np.array([[term, trunc]] * n, np.int8)
            if ended.any():
                before = venv.get_attr("t")
                with pytest.raises(RuntimeError, match=re.escape(
                        f"autoreset is disabled and the episodes of envs {list(range(n))} ended: reset them first with "
                        "reset(options={'reset_mask': mask}) (nothing was stepped)")):
                    venv.step(flags)
                assert venv.get_attr("t") == before
                break
            _, _, terminated, truncated, _ = venv.step(flags)
            ended = terminated | truncated
    finally:
        venv.close()


@pytest.mark.parametrize("bad", [[1], {"mode": 1}, 3, None])
def test_a_mode_that_is_no_name_is_refused_naming_it(bad: Any) -> None:
    """Not a mode, nor even a string (a list cannot be looked up among the aliases): the same ValueError naming the
    value and the modes, never a TypeError."""
    import re

    from pixelrig.vector.autoreset import autoreset_name

    with pytest.raises(ValueError, match=re.escape(f"autoreset_mode must be one of {MODES} "
                                                   f"(or gymnasium.vector.AutoresetMode): got {bad!r}")):
        autoreset_name(bad)
