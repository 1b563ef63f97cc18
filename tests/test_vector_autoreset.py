"""Gymnasium's three autoreset modes in every vectorization mode, step for step against Gymnasium's own
SyncVectorEnv of the same envs: observations (pixels included), rewards, flags and infos (``final_obs`` /
``final_info`` in same-step mode), with episodes ending often."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera
from pixelrig.vector import EnvFactory, make_vec
from pixelrig.vector.autoreset import DISABLED, MODES, NEXT_STEP, SAME_STEP, AutoresetMode, autoreset_name

from .conftest import assert_trees_equal

pytestmark = pytest.mark.skipif(AutoresetMode is None, reason="gymnasium 1.0 has next-step autoreset only")

CAM = Camera("c", width=16, height=16, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth", "label"))
N = 3
STEPS = 14
KW = {"max_episode_steps": 4}  # CartPole under random actions also terminates early at times


def reference(mode: str) -> gym.vector.SyncVectorEnv:
    """Gymnasium's SyncVectorEnv of the same envs (tiny renderer, PixelObs)."""
    factories = [EnvFactory("pixelrig/CartPole-v0", KW, (CAM,), renderer="tiny") for _ in range(N)]
    return gym.vector.SyncVectorEnv(factories, autoreset_mode=AutoresetMode(mode))


def run(venv: gym.vector.VectorEnv, mode: str) -> list:
    """Seeded random actions; with autoreset disabled, ended envs are reset by mask before the next step."""
    actions = np.random.default_rng(3).uniform(-1, 1, (STEPS, N, 1)).astype(np.float32)
    out = [venv.reset(seed=7)]
    for a in actions:
        obs, reward, terminated, truncated, info = venv.step(a)
        out.append((obs, reward, terminated, truncated, info))
        done = terminated | truncated
        if mode == DISABLED and done.any():
            out.append(venv.reset(options={"reset_mask": done}))
    return out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("vectorization", ["sync", "async", "batched-1", "batched-2"])
def test_every_mode_matches_gymnasiums_sync_vector_env(vectorization: str, mode: str) -> None:
    kind, _, workers = vectorization.partition("-")
    venv = make_vec("pixelrig/CartPole-v0", N, cams=[CAM], renderer="tiny", vectorization_mode=kind,
                    env_kwargs=KW, autoreset_mode=mode, **({"num_workers": int(workers)} if workers else {}))
    ref = reference(mode)
    try:
        assert venv.metadata["autoreset_mode"] == AutoresetMode(mode)
        ours, theirs = run(venv, mode), run(ref, mode)
        ends = sum(int((step[2] | step[3]).sum()) for step in theirs[1:] if len(step) == 5)
        assert ends >= N, f"episodes must end during the run to test autoreset ({ends} ended)"
        if mode == SAME_STEP:
            assert any("final_obs" in step[4] for step in theirs[1:] if len(step) == 5)
        assert_trees_equal(ours, theirs)
    finally:
        venv.close()
        ref.close()


def test_disabled_autoreset_refuses_to_step_an_ended_env_and_changes_nothing() -> None:
    venv = make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="tiny", vectorization_mode="batched",
                    env_kwargs={"max_episode_steps": 1}, autoreset_mode="Disabled")
    try:
        venv.reset(seed=0)
        venv.step(np.zeros((2, 1), np.float32))  # both episodes end (TimeLimit 1)
        state = venv.call("elapsed_steps")
        with pytest.raises(RuntimeError, match=re.escape("autoreset is disabled and the episodes of envs [0, 1] "
                                                         "ended: reset them first with reset(options={'reset_mask'")):
            venv.step(np.zeros((2, 1), np.float32))
        assert venv.call("elapsed_steps") == state
        venv.reset(options={"reset_mask": np.array([True, True])})
        venv.step(np.zeros((2, 1), np.float32))
    finally:
        venv.close()


def test_mode_names() -> None:
    assert [autoreset_name(m) for m in ("next_step", "SameStep", AutoresetMode.DISABLED)] == [NEXT_STEP, SAME_STEP,
                                                                                              DISABLED]
    with pytest.raises(ValueError, match=re.escape("autoreset_mode must be one of ('NextStep', 'SameStep', "
                                                   "'Disabled') (or gymnasium.vector.AutoresetMode): got 'later'")):
        make_vec("pixelrig/CartPole-v0", 2, autoreset_mode="later")
