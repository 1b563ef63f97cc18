"""PandaReach and PandaPush as their docstrings document them: the start (the documented ranges filled, the cube resting
flat on the table, the target drawn where it is, Push's target at least 10 cm from the cube), the drawn targets' shape
and colour, success and reward at the documented distance on both sides, and two envs open at once each reading and
moving its own bodies (pybullet's default client is another env's)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig.control.rotations import quat_to_matrix
from pixelrig.envs.panda import TABLE_TOP

SEEDS = range(40)
GREEN = (0.1, 0.8, 0.2, 1.0)


def visual(base, name: str) -> tuple[int, tuple[float, ...], tuple[float, ...]]:
    """(geometry type, dimensions, rgba) of the body's one visual shape."""
    shape = p.getVisualShapeData(base.body_id(name), physicsClientId=base.client)
    assert len(shape) == 1
    return shape[0][2], tuple(shape[0][3]), tuple(np.round(shape[0][7], 6))  # pybullet keeps colours as float32


def assert_fills(points: np.ndarray, ranges: list[tuple[float, float]], what: str) -> None:
    """Every point inside the ranges, and the points reaching within a fifth of each range's ends."""
    for axis, (lo, hi) in enumerate(ranges):
        values = points[:, axis]
        # strictly inside: a continuous draw never lands on an end, a collapsed range always does
        assert lo < values.min() and values.max() < hi, (what, axis, values.min(), values.max())
        span = hi - lo
        assert values.min() < lo + 0.2 * span and values.max() > hi - 0.2 * span, (what, axis)
    assert len({tuple(x) for x in points}) == len(points), f"{what}: two seeds drew the same start"


def test_push_starts_as_documented() -> None:
    """Cube uniform in x ∈ [0.40, 0.60], y ∈ [-0.15, 0.15], resting flat on the table; target uniform in
    x ∈ [0.40, 0.70], y ∈ [-0.20, 0.20], at least 0.10 m from the cube, the disc lying on the table there."""
    env = gym.make("pixelrig/PandaPush-v0")
    base = env.unwrapped
    try:
        kind, (length, radius, _), rgba = visual(base, "target")
        assert (kind, length, radius, rgba) == (p.GEOM_CYLINDER, 0.002, 0.04, GREEN)  # 8 cm across, 2 mm thick
        assert p.getCollisionShapeData(base.body_id("target"), -1, physicsClientId=base.client) == ()
        cubes, targets = [], []
        for seed in SEEDS:
            obs, info = env.reset(seed=seed)
            cube, quat = base.body_pose("cube")
            disc, disc_quat = base.body_pose("target")
            assert cube[2] == pytest.approx(TABLE_TOP + 0.025, abs=1e-9) and np.allclose(quat, [0, 0, 0, 1])
            np.testing.assert_allclose(disc, base.target_pos, atol=1e-12)
            assert disc[2] - length / 2 == pytest.approx(TABLE_TOP, abs=1e-9)  # lying on the table top
            assert np.allclose(quat_to_matrix(disc_quat)[:, 2], [0.0, 0.0, 1.0])  # flat, not on its edge
            distance = float(np.linalg.norm(base.target_pos[:2] - cube[:2]))
            assert distance >= 0.10 and info["distance"] == distance and not info["is_success"]
            cubes.append(cube[:2])
            targets.append(base.target_pos[:2])
        assert_fills(np.array(cubes), [(0.40, 0.60), (-0.15, 0.15)], "cube")
        assert_fills(np.array(targets), [(0.40, 0.70), (-0.20, 0.20)], "target")
    finally:
        env.close()


def test_reach_starts_as_documented() -> None:
    """Target uniform in x ∈ [0.35, 0.65], y ∈ [-0.2, 0.2], z ∈ [0.05, 0.35] m above the table, the sphere drawn
    there."""
    env = gym.make("pixelrig/PandaReach-v0")
    base = env.unwrapped
    try:
        kind, (radius, *_), rgba = visual(base, "target")
        assert (kind, radius, rgba) == (p.GEOM_SPHERE, 0.02, GREEN)  # 4 cm across
        assert p.getCollisionShapeData(base.body_id("target"), -1, physicsClientId=base.client) == ()
        targets = []
        for seed in SEEDS:
            obs, _ = env.reset(seed=seed)
            ball, quat = base.body_pose("target")
            np.testing.assert_allclose(ball, base.target_pos, atol=1e-12)
            assert np.allclose(quat, [0, 0, 0, 1])
            targets.append(base.target_pos - [0.0, 0.0, TABLE_TOP])
            layout = base.observation_layout  # the observed distance is the gripper's to the target
            gap = obs[layout["target_pos"]] - obs[layout["ee_pos"]]
            np.testing.assert_allclose(obs[layout["distance"]], [np.linalg.norm(gap)], rtol=1e-6)
        assert_fills(np.array(targets), [(0.35, 0.65), (-0.2, 0.2), (0.05, 0.35)], "target")
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0"])
def test_success_and_reward_at_the_documented_distance(env_id: str) -> None:
    """Reward minus the distance (Push's in the table plane), success below 0.05 m: on both sides, along a
    diagonal (a per-axis check would call 1.02 × 0.05 a success), and Push's height not counted."""
    env = gym.make(env_id)
    base = env.unwrapped
    try:
        env.reset(seed=0)
        diagonal = np.array([1.0, -1.0, 0.0]) / math.sqrt(2)
        for scale, success in ((0.98, True), (1.02, False)):
            offset = diagonal * 0.05 * scale
            if env_id.endswith("Reach-v0"):
                base.target_pos = base.ee_state()[0] + offset
            else:
                cube = base.body_pose("cube")[0]
                base.target_pos = cube + offset + [0.0, 0.0, 0.2]  # the height is not part of the distance
            reward, terminated, info = base.evaluate(np.zeros(env.action_space.shape))
            assert reward == pytest.approx(-0.05 * scale, abs=1e-12) and info["distance"] == -reward
            assert terminated is success and info["is_success"] is success
            assert base.reset_info() == {"is_success": False, "distance": info["distance"]}
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0"])
def test_two_envs_open_at_once_each_keep_their_own_bodies(env_id: str) -> None:
    """Two goal envs of the same task, reset with different seeds: each draws its target where its own target is,
    and Push's achieved goal is its own cube."""
    envs = [gym.make(env_id, goal_obs=True) for _ in range(2)]
    try:
        for seed, env in enumerate(envs):
            env.reset(seed=seed)
        for env in envs:
            base = env.unwrapped
            np.testing.assert_allclose(base.body_pose("target")[0], base.target_pos, atol=1e-12)
            if env_id.endswith("Push-v0"):
                np.testing.assert_array_equal(base.achieved_goal(), base.body_pose("cube")[0][:2])
        assert not np.allclose(envs[0].unwrapped.target_pos, envs[1].unwrapped.target_pos)
    finally:
        for env in envs:
            env.close()


class RandomActions:
    """Uniform actions from a seeded generator (PandaReach has no scripted expert)."""

    def __init__(self, space: gym.spaces.Box) -> None:
        self.space, self.rng = space, np.random.default_rng(0)

    def __call__(self, obs: object) -> np.ndarray:
        return self.rng.uniform(self.space.low, self.space.high).astype(np.float32)


@pytest.mark.parametrize("env_id", ["pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0"])
def test_the_target_is_seen_in_every_env_where_the_goal_is_and_never_felt(env_id: str) -> None:
    """The target marks the goal: drawn in each of two envs open at once (its shape made in its own env's world),
    lying where ``target_pos`` says, unturned (a flat disc for Push, a ball for Reach), and still there after the
    expert has run (it has no mass to fall with); nothing ever touches it (no collision shape: it is seen, never
    felt, so the cube slides over Push's disc)."""
    from pixelrig import PixelObs
    from pixelrig.experts import EXPERTS

    envs = [PixelObs(gym.make(env_id, renderer="tiny")) for _ in range(2)]  # the task's own front and side cameras
    try:
        for seed, env in zip((3, 5), envs, strict=True):  # seeds whose target the front camera sees
            env.reset(seed=seed)
        for env in envs:
            base = env.unwrapped
            seen = {env.label_names.get(int(i)) for i in np.unique(env.render_rig()["front/label"])}
            assert "target" in seen, seen
            expert, touched = EXPERTS[env_id](env) if env_id in EXPERTS else RandomActions(env.action_space), set()
            obs, info = env.reset(seed=7)
            target = base.body_id("target")
            for _ in range(40):
                obs, _, terminated, truncated, info = env.step(expert(obs))
                touched |= {c[2] for c in p.getContactPoints(bodyA=target, physicsClientId=base.client)}
                if terminated or truncated:
                    break
            position, orientation = p.getBasePositionAndOrientation(target, physicsClientId=base.client)
            np.testing.assert_allclose(position, base.target_pos, atol=1e-12)
            assert orientation == (0.0, 0.0, 0.0, 1.0) and not touched
            assert p.getCollisionShapeData(target, -1, physicsClientId=base.client) == ()
    finally:
        for env in envs:
            env.close()
