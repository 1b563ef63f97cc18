"""Bundled tasks and checkers: gymnasium's and SB3's env checkers on every registered id (bare and under
PixelObs), task success with scripted policies, and seeded domain randomisation."""

from __future__ import annotations

import re
import warnings

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from gymnasium.utils.env_checker import check_env

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import Camera, PixelObs, Randomization
from pixelrig.experts.push import PushExpert
from pixelrig.tasks import ENV_SPECS

from .conftest import assert_trees_equal

MAKE_KWARGS = {"pixelrig/Robot-v0": {"source": "kuka_iiwa/model.urdf"}}


def small(env: gym.Env) -> list[Camera]:
    import dataclasses

    return [dataclasses.replace(Camera.from_dict(c), width=24, height=24) for c in env.unwrapped.default_cameras()]


@pytest.mark.parametrize("env_id", list(ENV_SPECS))
def test_gymnasium_check_env_bare_and_pixels(env_id: str) -> None:
    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds are reported as warnings, as for MuJoCo envs
        check_env(env.unwrapped, skip_render_check=True)
        wrapped = PixelObs(env, cams=small(env))
        check_env(wrapped, skip_render_check=True)
    wrapped.close()


@pytest.mark.parametrize("env_id", list(ENV_SPECS))
def test_sb3_check_env_bare_and_pixels(env_id: str) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(env.unwrapped)
        wrapped = PixelObs(env, cams=small(env))
        sb3_check_env(wrapped)
    wrapped.close()


def test_every_registered_env_has_a_default_rig_that_sees_something() -> None:
    for env_id in ENV_SPECS:
        env = PixelObs(gym.make(env_id, **MAKE_KWARGS.get(env_id, {})))
        obs, _ = env.reset(seed=0)
        for cam in env.rig.cameras:
            assert obs[f"{cam.name}/rgb"].std() > 5, (env_id, cam.name)
        env.close()


def test_panda_reach_is_solved_by_a_proportional_policy() -> None:
    env = gym.make("pixelrig/PandaReach-v0")
    try:
        successes = 0
        for seed in range(3):
            obs, info = env.reset(seed=seed)
            assert not info["is_success"]
            for _ in range(50):
                action = np.clip((obs[6:9] - obs[0:3]) / 0.05, -1, 1)
                obs, reward, terminated, truncated, info = env.step(action)
                assert reward == pytest.approx(-info["distance"])
                if terminated or truncated:
                    break
            successes += info["is_success"]
        assert successes == 3
    finally:
        env.close()


def test_panda_push_is_solved_by_the_scripted_expert() -> None:
    env = gym.make("pixelrig/PandaPush-v0")
    try:
        successes = 0
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            expert = PushExpert()
            for _ in range(100):
                obs, reward, terminated, truncated, info = env.step(expert(obs))
                if terminated or truncated:
                    break
            successes += info["is_success"]
        assert successes >= 3, f"the expert pushed the cube home in {successes}/4 episodes"
    finally:
        env.close()


def test_randomisation_is_seeded_applied_and_kept() -> None:
    rnd = Randomization(mass_scale=(0.5, 1.5), lateral_friction=(0.3, 1.2), restitution=(0.0, 0.3),
                        link_colors=True, joint_noise=0.05, camera_position=0.02, camera_rotation=0.05)
    env = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf", randomize=rnd)
    base = env.unwrapped
    try:
        env.reset(seed=1)
        first = base.randomization_values
        assert first["mass"] and first["lateral_friction"] and first["rgba"] and first["camera_seed"] is not None
        body, link, mass = first["mass"][0]
        assert p.getDynamicsInfo(body, link, physicsClientId=base.client)[0] == pytest.approx(mass)
        body, link, mu = first["lateral_friction"][-1]
        assert p.getDynamicsInfo(body, link, physicsClientId=base.client)[1] == pytest.approx(mu)
        env.reset(seed=1)
        assert_trees_equal(first, base.randomization_values)
        env.reset(seed=2)
        assert base.randomization_values["mass"] != first["mass"]
    finally:
        env.close()


def test_camera_jitter_moves_cameras_per_episode_and_is_seeded() -> None:
    rnd = Randomization(camera_position=0.05, camera_rotation=0.05)
    env = PixelObs(gym.make("pixelrig/CartPole-v0"), pixels_only=True)
    jittered = PixelObs(gym.make("pixelrig/Robot-v0", source="cartpole.urdf", fixed_base=True, randomize=rnd,
                                 effort_limits=10.0, position_limits={"cart_to_pole": (-3.14, 3.14)}),
                        cams=[Camera("c", eye=(0, -3, 0.5), target=(0, 0, 0.4), modalities=("rgb",))])
    try:
        a = jittered.reset(seed=5)[0]["c/rgb"]
        b = jittered.reset(seed=5)[0]["c/rgb"]
        c = jittered.reset(seed=6)[0]["c/rgb"]
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    finally:
        env.close()
        jittered.close()


@pytest.mark.parametrize("kwargs,message", [
    ({"mass_scale": (2.0, 1.0)}, "Randomization: mass_scale=(2.0, 1.0) needs finite 1e-06 <= low <= high"),
    ({"lateral_friction": 0.5}, "Randomization: lateral_friction=0.5 must be a (low, high) pair or None"),
    ({"joint_noise": -1.0}, "Randomization: joint_noise=-1.0 must be a finite number >= 0"),
    ({"camera_rotation": float("nan")}, "Randomization: camera_rotation=nan must be a finite number >= 0"),
])
def test_bad_randomisation_specs(kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Randomization(**kwargs)
