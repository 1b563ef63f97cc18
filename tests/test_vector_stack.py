"""FrameStack (pixelrig.vector.stack): a vector env's last k observations merged along the channel axis equal
Gymnasium's FrameStackObservation inside each env, autoresets and partial resets included; every step gives new
arrays; bad input is refused with the fix."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, PixelObs, make_vec
from pixelrig.vector.autoreset import AutoresetMode
from pixelrig.vector.stack import FrameStack, stacked_space

from .conftest import assert_trees_equal

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
        assert ours.single_observation_space["front/rgb"].dtype == np.uint8
        assert ours.observation_space == gym.vector.utils.batch_space(ours.single_observation_space, n)
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
    """Each refusal names the fix, and leaves the vector env it refused open (a FrameStack that wrapped it first
    closed it when collected)."""
    venv = make_vec("pixelrig/CartPole-v0", 1, cams=[CAM], renderer="tiny", vectorization_mode="sync")
    try:
        for bad in (0, -1, True, 2.5, "2"):
            with pytest.raises(ValueError, match=re.escape(f"num_frames={bad!r} must be an integer >= 1 (1: no "
                                                           "stacking)")):
                FrameStack(venv, bad)  # type: ignore[arg-type]
        unreset = FrameStack(venv, 2)  # kept: a wrapper, once collected, closes the env it wraps
        with pytest.raises(gym.error.ResetNeeded, match=r"^FrameStack: call reset\(\) before step\(\)$"):
            unreset.step(np.zeros((1, 1), np.float32))
        one = FrameStack(venv, 1)  # one frame: the observations as they are
        assert one.single_observation_space == venv.single_observation_space
        assert one.observation_space == venv.observation_space
        obs, _ = one.reset(seed=0)
        assert_trees_equal(obs, venv.reset(seed=0)[0])
        venv.metadata = {k: v for k, v in venv.metadata.items() if k != "autoreset_mode"}  # as gymnasium 1.0's
        assert FrameStack(venv, 2)._mode == "NextStep"  # Gymnasium's default: next-step (then closes venv)
    finally:
        venv.close()
    if AutoresetMode is None:
        return  # gymnasium 1.0: no same-step mode to refuse
    same_step = make_vec("pixelrig/CartPole-v0", 1, cams=[CAM], renderer="tiny", vectorization_mode="sync",
                         autoreset_mode="SameStep")
    try:
        with pytest.raises(ValueError, match=re.escape("FrameStack needs next-step or disabled autoreset (same-step's "
                                                       "final_obs would go unstacked): build the vector env with "
                                                       "autoreset_mode='NextStep'")):
            FrameStack(same_step, 2)
    finally:
        same_step.close()
    box = gym.spaces.Box(0.0, 1.0, ())
    for space, named in ((gym.spaces.Dict({"a": gym.spaces.Discrete(3)}), gym.spaces.Discrete(3)), (box, box)):
        with pytest.raises(ValueError, match=re.escape("FrameStack stacks Box observations (or a Dict of them) along "
                                                       f"their last axis: got {named}")):
            stacked_space(space, 2)


@pytest.mark.skipif(AutoresetMode is None, reason="gymnasium 1.0 has next-step autoreset only")
def test_a_partial_reset_resets_only_the_masked_envs_and_their_stacks_go_on_from_it() -> None:
    """The mask reaches the vector env (the other envs go on where they were: their newest frames are those of the
    same envs stepped without FrameStack), a reset env's stack goes on from its reset observation, and a first reset
    may carry a mask."""
    kwargs = {"cams": [CAM], "renderer": "tiny", "vectorization_mode": "sync", "autoreset_mode": "Disabled"}
    ours = FrameStack(make_vec("pixelrig/CartPole-v0", 2, **kwargs), 2)
    plain = make_vec("pixelrig/CartPole-v0", 2, **kwargs)
    try:
        first, _ = ours.reset(seed=0, options={"reset_mask": np.array([True, True])})
        np.testing.assert_array_equal(first["state"], np.tile(plain.reset(seed=0)[0]["state"], 2))
        action = np.full((2, 1), 0.5, np.float32)
        ours.step(action)
        plain.step(action)
        mask = np.array([True, False])
        reset, _ = ours.reset(options={"reset_mask": mask})
        plain_reset, _ = plain.reset(options={"reset_mask": mask})
        np.testing.assert_array_equal(reset["state"][0, 4:], plain_reset["state"][0])
        stacked, *_ = ours.step(action)
        stepped, *_ = plain.step(action)
        np.testing.assert_array_equal(stacked["state"][:, 4:], stepped["state"])  # env 1 went on, not reset
        np.testing.assert_array_equal(stacked["state"][0, :4], plain_reset["state"][0])  # from its reset frame
    finally:
        ours.close()
        plain.close()


def test_a_box_observation_is_stacked_as_frame_stack_observation_does() -> None:
    """Envs without pixels (a Box observation, not a Dict) stack the same way."""
    n, k = 2, 3
    ours = FrameStack(make_vec("pixelrig/CartPole-v0", n, pixels=False, vectorization_mode="sync", env_kwargs=KW), k)
    theirs = gym.vector.SyncVectorEnv([
        lambda: gym.wrappers.FrameStackObservation(gym.make("pixelrig/CartPole-v0", renderer="tiny", **KW), k,
                                                   padding_type="reset") for _ in range(n)])
    try:
        assert ours.single_observation_space.shape == (4 * k,)
        a, _ = ours.reset(seed=1)
        b, _ = theirs.reset(seed=1)
        actions = np.random.default_rng(3).uniform(-1, 1, (9, n, 1)).astype(np.float32)
        for t, action in enumerate(actions):  # TimeLimit 4: autoresets included
            np.testing.assert_array_equal(a, merged(np.moveaxis(b, 1, 0)), err_msg=f"step {t}")
            a, *_ = ours.step(action)
            b, *_ = theirs.step(action)
    finally:
        ours.close()
        theirs.close()
