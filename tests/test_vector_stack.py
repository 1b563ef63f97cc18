"""FrameStack (pixelrig.vector.stack): a vector env's last k observations merged along the channel axis equal
Gymnasium's FrameStackObservation inside each env, autoresets and partial resets included; every step gives new
arrays; bad input is refused with the fix."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, PixelObs, make_vec
from pixelrig.vector.autoreset import AutoresetMode
from pixelrig.vector.stack import FrameStack, stacked_space

CAM = Camera("front", width=16, height=16, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth"))
KW = {"max_episode_steps": 4}


def merged(stacked: np.ndarray) -> np.ndarray:
    """FrameStackObservation's (k, ..., C) as FrameStack lays it out: (..., k*C), oldest frame first."""
    moved = np.moveaxis(stacked, 0, -2)
    return moved.reshape(*moved.shape[:-2], -1)


def reference(n: int, k: int) -> gym.vector.SyncVectorEnv:
    def make() -> gym.Env:
        env = PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny", **KW), cams=[CAM])
        return gym.wrappers.FrameStackObservation(env, k, padding_type="reset")

    return gym.vector.SyncVectorEnv([make for _ in range(n)])


@pytest.mark.parametrize("mode", ["sync", "batched"])
def test_equals_frame_stack_observation_in_each_env_through_autoresets(mode: str) -> None:
    n, k = 3, 3
    ours = FrameStack(make_vec("pixelrig/CartPole-v0", n, cams=[CAM], renderer="tiny", vectorization_mode=mode,
                               env_kwargs=KW), k)
    theirs = reference(n, k)
    try:
        assert ours.single_observation_space == stacked_space(ours.env.single_observation_space, k)
        assert ours.single_observation_space["front/rgb"].shape == (16, 16, 9)
        assert ours.single_observation_space["state"].shape == (12,)
        rng = np.random.default_rng(0)
        a, _ = ours.reset(seed=5)
        b, _ = theirs.reset(seed=5)
        earlier = []
        for t in range(11):  # TimeLimit 4: two autoresets of every env (next-step)
            for key in a:
                np.testing.assert_array_equal(a[key], merged(np.moveaxis(b[key], 1, 0)), err_msg=f"step {t} {key}")
                assert all(a[key] is not e and not np.shares_memory(a[key], e) for e in earlier)
            earlier += list(a.values())
            actions = rng.uniform(-1, 1, (n, 1)).astype(np.float32)
            a, ra, ta, ua, _ = ours.step(actions)
            b, rb, tb, ub, _ = theirs.step(actions)
            np.testing.assert_array_equal(ra, rb)
            np.testing.assert_array_equal(ta | ua, tb | ub)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.skipif(AutoresetMode is None, reason="gymnasium 1.0 has next-step autoreset only")
def test_a_partial_reset_restarts_only_the_masked_stacks() -> None:
    ours = FrameStack(make_vec("pixelrig/CartPole-v0", 2, cams=[CAM], renderer="tiny", vectorization_mode="sync",
                               autoreset_mode="Disabled"), 2)
    try:
        ours.reset(seed=0)
        before, *_ = ours.step(np.full((2, 1), 0.5, np.float32))
        after, _ = ours.reset(options={"reset_mask": np.array([True, False])})
        state = after["state"]
        np.testing.assert_array_equal(state[0, :4], state[0, 4:])  # env 0 restarted: its reset state twice
        np.testing.assert_array_equal(state[1], before["state"][1])  # env 1 kept its stack
    finally:
        ours.close()


def test_bad_input_is_refused_with_the_fix() -> None:
    venv = make_vec("pixelrig/CartPole-v0", 1, cams=[CAM], renderer="tiny", vectorization_mode="sync")
    try:
        with pytest.raises(ValueError, match="num_frames=0 must be an integer >= 1"):
            FrameStack(venv, 0)
        with pytest.raises(gym.error.ResetNeeded, match="reset"):
            FrameStack(venv, 2).step(np.zeros((1, 1), np.float32))
    finally:
        venv.close()
    if AutoresetMode is None:
        return  # gymnasium 1.0: no same-step mode to refuse
    same_step = make_vec("pixelrig/CartPole-v0", 1, cams=[CAM], renderer="tiny", vectorization_mode="sync",
                         autoreset_mode="SameStep")
    try:
        with pytest.raises(ValueError, match="autoreset_mode='NextStep'"):
            FrameStack(same_step, 2)
    finally:
        same_step.close()
    with pytest.raises(ValueError, match="Box observations"):
        stacked_space(gym.spaces.Dict({"a": gym.spaces.Discrete(3)}), 2)
