"""SB3's VecEnv over pixelrig's batched vector env (pixelrig.integrations.sb3): SB3's own DummyVecEnv of the same
envs step for step, PPO collecting on it with a bitwise sequential replay, and the refusal of a vector env whose
autoreset SB3 cannot use."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, make_vec
from pixelrig.vector.factory import EnvFactory

from .conftest import assert_trees_equal, gl_or_skip
from .test_integrations_training import _replay, _Transitions

pytest.importorskip("stable_baselines3")

CAM = Camera("front", width=24, height=24, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth"))
KW = {"max_episode_steps": 6}


def factories(n: int) -> list[EnvFactory]:
    return [EnvFactory("pixelrig/CartPole-v0", KW, (CAM,), renderer="tiny", worker=i) for i in range(n)]


def sb3_run(venv, steps: int = 20) -> list:
    """seed(), reset() and seeded random actions: everything SB3 sees, as copies."""
    venv.seed(11)
    out = [{k: np.array(v) for k, v in venv.reset().items()}]
    actions = np.random.default_rng(5).uniform(-1, 1, (steps, venv.num_envs, 1)).astype(np.float32)
    for a in actions:
        obs, rewards, dones, infos = venv.step(a)
        out.append(({k: np.array(v) for k, v in obs.items()}, np.array(rewards), np.array(dones),
                    [{k: v for k, v in info.items() if k != "episode"} for info in infos]))
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_equals_sb3s_own_dummy_vec_env(workers: int) -> None:
    from stable_baselines3.common.vec_env import DummyVecEnv

    from pixelrig.integrations.sb3 import make_sb3_vec

    ours = make_sb3_vec("pixelrig/CartPole-v0", 3, cams=[CAM], renderer="tiny", env_kwargs=KW, num_workers=workers)
    theirs = DummyVecEnv(factories(3))
    try:
        assert ours.observation_space == theirs.observation_space and ours.action_space == theirs.action_space
        a, b = sb3_run(ours), sb3_run(theirs)
        ended = sum(int(step[2].sum()) for step in b[1:])
        assert ended >= 3, "episodes must end to test SB3's terminal observations"
        assert_trees_equal(a, b)
        assert ours.reset_infos == theirs.reset_infos
        assert ours.env_is_wrapped(gym.wrappers.TimeLimit) == [True] * 3
        assert ours.get_attr("elapsed_steps") == theirs.get_attr("elapsed_steps")
    finally:
        ours.close()
        theirs.close()


BIG = Camera("front", width=48, height=48, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth"))  # NatureCNN needs at least 36 pixels a side


def test_ppo_collects_on_batched_envs_and_a_sequential_replay_gives_the_same_steps() -> None:
    """PPO's MultiInputPolicy on 4 batched envs in this process; a sequential replay of the recorded actions on lone
    envs gives the recorded observations (pixels included) and rewards bit for bit, autoresets included."""
    from stable_baselines3 import PPO

    from pixelrig.integrations.sb3 import make_sb3_vec

    venv = make_sb3_vec("pixelrig/CartPole-v0", 4, cams=[BIG], renderer="tiny", env_kwargs=KW)
    try:
        model = PPO("MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, verbose=0)
        transitions = _Transitions(limit=64)
        model.learn(total_timesteps=128, callback=transitions.callback)
    finally:
        venv.close()
    local = [EnvFactory("pixelrig/CartPole-v0", KW, (BIG,), renderer="tiny")() for _ in range(4)]
    try:
        assert _replay(local, transitions.steps, seeds=[0, 1, 2, 3]) >= 4
    finally:
        for env in local:
            env.close()


def test_ppo_trains_on_batched_gl_envs() -> None:
    """The default: 4 envs batched in this process, their rigs drawn in one gl pass; PPO collects real images."""
    gl_or_skip()
    from stable_baselines3 import PPO

    from pixelrig.integrations.sb3 import make_sb3_vec

    venv = make_sb3_vec("pixelrig/CartPole-v0", 4, cams=[BIG], env_kwargs=KW)
    try:
        assert venv.get_attr("render_backend")[0].name == "gl"
        model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, verbose=0)
        transitions = _Transitions(limit=32)
        model.learn(total_timesteps=128, callback=transitions.callback)
        rgb = np.stack([step[1]["front/rgb"] for step in transitions.steps])
        assert rgb.std() > 5 and len(transitions.steps) == 32
    finally:
        venv.close()


def test_a_vector_env_that_autoresets_next_step_is_refused() -> None:
    from pixelrig.integrations.sb3 import PixelVecEnv

    venv = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="tiny", vectorization_mode="batched")
    try:
        with pytest.raises(ValueError, match=re.escape("PixelVecEnv needs a vector env with same-step autoreset")):
            PixelVecEnv(venv)
    finally:
        venv.close()
