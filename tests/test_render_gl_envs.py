"""The gl renderer changes nothing but the pixels' speed: physics bitwise the same as with TinyRenderer, snapshots
exact with gl pixels, randomised colours and level of detail drawn like TinyRenderer draws them."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, restore, snapshot
from pixelrig.experts.push import PushExpert
from pixelrig.tools.bench.fidelity import agreement

from .conftest import assert_trees_equal, gl_or_skip, physics_state
from .test_render_gl import MAX_DEPTH_P99_M


@pytest.fixture(autouse=True)
def _gl_here() -> None:
    gl_or_skip()


def small_rig(env: gym.Env, size: int = 32) -> list[Camera]:
    return [dataclasses.replace(c, width=size, height=size) for c in env.unwrapped.default_cameras()]


def pushing(renderer: str, steps: int, **kwargs) -> tuple[list, list]:
    """The scripted pusher under the default rig: (state, reward, terminated, truncated, info, physics) per step
    and the pixels per step."""
    env = gym.make("pixelrig/PandaPush-v0", renderer=renderer, **kwargs)
    env = PixelObs(env, cams=small_rig(env))
    try:
        obs, _ = env.reset(seed=3)
        expert, trajectory, pixels = PushExpert(), [], []
        for _ in range(steps):
            obs, *rest = env.step(expert(obs["state"]))
            trajectory.append((obs["state"], *rest, physics_state(env.unwrapped.client)))
            pixels.append({k: v for k, v in obs.items() if k != "state"})
        return trajectory, pixels
    finally:
        env.close()


def test_physics_is_bitwise_the_same_as_with_tiny() -> None:
    tiny, tiny_pixels = pushing("tiny", 120)
    gl, gl_pixels = pushing("gl", 120)
    assert_trees_equal(tiny, gl)
    fidelity = agreement(tiny_pixels, gl_pixels)
    assert fidelity["label"] >= 0.99 and fidelity["depth"] <= 0.001 and fidelity["rgb"] <= 6.0, fidelity
    assert fidelity["depth_p99"] <= MAX_DEPTH_P99_M, fidelity


def test_same_seed_same_actions_same_gl_pixels() -> None:
    first, first_pixels = pushing("gl", 40)
    second, second_pixels = pushing("gl", 40)
    assert_trees_equal(first, second)
    assert_trees_equal(first_pixels, second_pixels)


def test_snapshot_restore_is_exact_with_gl_pixels() -> None:
    """A snapshot of a gl env restored into a fresh gl env: the next steps give the same pixels, bit for bit."""
    envs = []
    for _ in range(2):
        env = gym.make("pixelrig/PandaPush-v0", renderer="gl")
        envs.append(PixelObs(env, cams=small_rig(env)))
    source, target = envs
    try:
        obs, _ = source.reset(seed=5)
        target.reset(seed=99)
        expert = PushExpert()
        for _ in range(30):
            obs = source.step(expert(obs["state"]))[0]
        restore(target, pixelrig.Snapshot.from_bytes(snapshot(source).to_bytes()))
        actions = [expert(obs["state"])] + [np.array([0.2, 0.1, -0.3], np.float32)] * 25
        runs = [[e.step(a) for a in actions] for e in envs]
        assert_trees_equal(runs[0], runs[1])
    finally:
        for e in envs:
            e.close()


@pytest.mark.parametrize("detail", ["full", "simplified", "collision"])
def test_randomised_colors_and_every_detail_drawn_as_tiny_draws_them(detail: str) -> None:
    random = pixelrig.Randomization(link_colors=True, mass_scale=(0.8, 1.2))
    frames = {}
    for renderer in ("tiny", "gl"):
        env = gym.make("pixelrig/PandaPush-v0", renderer=renderer, randomize=random, visual_detail=detail)
        env = PixelObs(env, cams=small_rig(env, 48), pixels_only=True)
        try:
            obs, _ = env.reset(seed=4)
            env.action_space.seed(4)
            frames[renderer] = [obs] + [env.step(env.action_space.sample())[0] for _ in range(5)]
        finally:
            env.close()
    fidelity = agreement(frames["tiny"], frames["gl"])
    assert fidelity["label"] >= 0.99 and fidelity["depth"] <= 0.001 and fidelity["rgb"] <= 6.0, fidelity
    assert fidelity["depth_p99"] <= MAX_DEPTH_P99_M, fidelity
