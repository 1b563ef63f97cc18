"""SB3's VecEnv over pixelrig's vector envs on a task whose step and reset infos differ (PandaReach: ``is_success``
and ``distance``), episodes ending both ways: terminated by success and truncated by the TimeLimit. Step for step
against SB3's own DummyVecEnv of the same envs: an ended episode's info is its last step's (``is_success`` True after
a successful reach, ``TimeLimit.truncated`` after a timeout, the last observation as ``terminal_observation``) and the
new episode's reset info goes to ``reset_infos``, never the other way round.

CartPole, which test_integrations_sb3.py steps, cannot tell them apart: its step and reset infos are both ``{}``.
"""

from __future__ import annotations

import numpy as np
import pytest

from pixelrig import Camera
from pixelrig.vector.factory import EnvFactory

from .conftest import assert_trees_equal

pytest.importorskip("stable_baselines3")

TASK = "pixelrig/PandaReach-v0"
CAM = Camera("c", width=12, height=12, eye=(1.2, 0.0, 1.1), target=(0.5, 0.0, 0.62), far=3.0,
             modalities=("rgb", "depth"))
N = 3
KW = {"max_episode_steps": 5}
GAIN = np.array([20.0, 0.2, 20.0])
"""Per env: a greedy reach (succeeds in 3-5 steps and terminates) and a dawdling one (truncated at 5 steps)."""


def run(venv, steps: int = 15) -> list:
    """seed(), reset() and a reach toward the target at each env's gain (seeded noise): everything SB3 sees, with
    ``reset_infos`` after every step."""
    venv.seed(4)
    obs = venv.reset()
    out = [({k: np.array(v) for k, v in obs.items()}, [dict(i) for i in venv.reset_infos])]
    for k in range(steps):
        state = obs["state"]
        noise = np.random.default_rng(k).uniform(-0.2, 0.2, (N, 3))
        actions = np.clip((state[:, 6:9] - state[:, 0:3]) * GAIN[:, None] + noise, -1, 1).astype(np.float32)
        obs, rewards, dones, infos = venv.step(actions)
        out.append(({k: np.array(v) for k, v in obs.items()}, np.array(rewards), np.array(dones), infos,
                    [dict(i) for i in venv.reset_infos]))
    return out


@pytest.fixture(scope="module")
def dummy() -> list:
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([EnvFactory(TASK, KW, (CAM,), renderer="tiny", worker=i) for i in range(N)])
    try:
        return run(venv)
    finally:
        venv.close()


def test_the_inputs_end_episodes_both_ways_with_infos_unlike_the_reset_ones(dummy: list) -> None:
    ended = [(info, reset) for step in dummy[1:] for info, reset, done in zip(step[3], step[4], step[2], strict=True)
             if done]
    assert any(info["is_success"] and not info["TimeLimit.truncated"] for info, _ in ended), "a reach must succeed"
    assert any(info["TimeLimit.truncated"] and not info["is_success"] for info, _ in ended), "one must time out"
    for info, reset in ended:
        assert not reset["is_success"] and reset["distance"] != info["distance"]


@pytest.mark.parametrize("mode", ["batched-1", "batched-2", "async", "sync"])
def test_equals_dummy_vec_env_on_a_panda_task(mode: str, dummy: list) -> None:
    from pixelrig.integrations.sb3 import make_sb3_vec

    kind, _, workers = mode.partition("-")
    ours = make_sb3_vec(TASK, N, cams=[CAM], renderer="tiny", env_kwargs=KW, vectorization_mode=kind,
                        **({"num_workers": int(workers)} if workers else {}))
    try:
        mine = run(ours)
    finally:
        ours.close()
    for step in mine[1:]:
        for info, reset, done in zip(step[3], step[4], step[2], strict=True):
            if done:
                assert info["is_success"] != info["TimeLimit.truncated"], "the ended episode's info, not the reset's"
                assert not reset["is_success"]
    assert_trees_equal(mine, dummy)


def test_indices_attributes_and_options_reach_the_right_envs() -> None:
    """SB3's ``indices=`` pick envs in get_attr, set_attr, env_method and env_is_wrapped (mutmut found them untested:
    every call before asked all envs), and per-env reset options that differ are refused, not half-applied."""
    import gymnasium as gym

    from pixelrig.integrations.sb3 import make_sb3_vec

    ours = make_sb3_vec("pixelrig/CartPole-v0", 3, cams=[CAM], renderer="tiny", env_kwargs={"max_episode_steps": 6})
    try:
        ours.set_attr("_max_episode_steps", 2, indices=[1])
        assert ours.get_attr("_max_episode_steps") == [6, 2, 6]
        assert ours.get_attr("_max_episode_steps", indices=[1, 2]) == [2, 6]
        assert ours.env_method("get_wrapper_attr", "_max_episode_steps", indices=[1]) == [2]
        assert ours.env_is_wrapped(gym.wrappers.TimeLimit, indices=[0, 2]) == [True, True]
        ours.set_options([{"a": 1}, {}, {}])
        with pytest.raises(ValueError, match="pass one options dict for every env"):
            ours.reset()
    finally:
        ours.close()
