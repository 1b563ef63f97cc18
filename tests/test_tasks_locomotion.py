"""CartPole and the locomotion tasks as their docstrings document them: CartPole's termination limits on both sides,
its force scaled by the action and ``force_mag``, and its start; Hopper's and Walker2d's healthy ranges (height,
pitch, the other positions and velocities) with their termination and healthy reward, Hopper's observed velocities
clipped to ±10; Ant's healthy height, its contact cost and its start velocities. States are set directly (no
stepping), then the task's checks are read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig  # noqa: F401 (registers the ids)


def made(env_id: str, seed: int = 0):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env, env.unwrapped


# ---- CartPole ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("joint, limit", [(0, 2.4), (1, 0.2)])
def test_cartpole_terminates_past_its_limits_on_either_side(joint: int, limit: float) -> None:
    """Terminates when |x| > 2.4 m or |theta| > 0.2 rad; +1 per step either way."""
    env, base = made("pixelrig/CartPole-v0")
    try:
        for value, done in ((0.99 * limit, False), (1.01 * limit, True), (-0.99 * limit, False),
                            (-1.01 * limit, True)):
            p.resetJointState(base.cartpole, joint, value, 0.0, physicsClientId=base.client)
            p.resetJointState(base.cartpole, 1 - joint, 0.0, 0.0, physicsClientId=base.client)
            assert base.evaluate(np.zeros(1, np.float32)) == (1.0, done, {}), (joint, value)
        low, high = env.observation_space.low, env.observation_space.high
        assert low[joint] == -2 * limit and high[joint] == 2 * limit  # twice the limit, as Gymnasium's CartPole
    finally:
        env.close()


def test_cartpole_pushes_the_cart_with_the_action_times_10_newtons_and_starts_near_upright() -> None:
    env, base = made("pixelrig/CartPole-v0")
    try:
        starts = []
        for seed in range(30):
            obs, _ = env.reset(seed=seed)
            assert np.all(np.abs(obs) <= 0.05)
            starts.append(obs)
        starts = np.array(starts)
        assert np.all(starts.min(axis=0) < -0.03) and np.all(starts.max(axis=0) > 0.03)  # each variable drawn
        assert len({tuple(s) for s in starts[:, [0, 2]]}) == 30  # x and x_dot drawn apart
        def first_step(env, action: float) -> np.ndarray:
            env.reset(seed=0)
            for j in (0, 1):
                p.resetJointState(env.unwrapped.cartpole, j, 0.0, 0.0, physicsClientId=env.unwrapped.client)
            obs, reward, *_ = env.step(np.array([action], np.float32))
            assert reward == 1.0
            return obs

        strong = gym.make("pixelrig/CartPole-v0", force_mag=20.0)
        try:
            full, half = first_step(env, 1.0), first_step(env, -0.5)
            assert full[2] > 0.05 and half[2] == pytest.approx(-full[2] / 2, rel=0.02)  # the force scales the push
            np.testing.assert_array_equal(first_step(strong, 0.5), full)  # 0.5 x 20 N is 1 x 10 N
        finally:
            strong.close()
    finally:
        env.close()


# ---- Hopper, Walker2d --------------------------------------------------------------------------------------------

def set_planar(base, z: float | None = None, pitch: float | None = None) -> None:
    """Put the torso at height ``z`` and pitch ``pitch`` by the root's slide and hinge joints (1 and 2)."""
    c = base.client
    if pitch is not None:
        p.resetJointState(base.robot, 2, pitch, physicsClientId=c)
    if z is not None:
        q1 = p.getJointState(base.robot, 1, physicsClientId=c)[0]
        p.resetJointState(base.robot, 1, q1 + z - base.torso_position()[2], physicsClientId=c)
        assert base.torso_position()[2] == pytest.approx(z)


@pytest.mark.parametrize("env_id, z_range, pitch", [("pixelrig/Hopper-v0", (0.7, None), 0.2),
                                                    ("pixelrig/Walker2d-v0", (0.8, 2.0), 1.0)])
def test_planar_walkers_are_healthy_within_their_documented_ranges(env_id: str, z_range, pitch: float) -> None:
    env, base = made(env_id)
    action = np.full(env.action_space.shape, 0.5, np.float32)
    ctrl = 1e-3 * float(np.sum(np.square(action)))
    try:
        start = base.torso_position()[2]
        cases = [(dict(z=z_range[0] + 0.01), True), (dict(z=z_range[0] - 0.01), False)]
        if z_range[1] is not None:
            cases += [(dict(z=z_range[1] - 0.01), True), (dict(z=z_range[1] + 0.01), False)]
        cases += [(dict(pitch=0.98 * pitch), True), (dict(pitch=1.02 * pitch), False),
                  (dict(pitch=-0.98 * pitch), True), (dict(pitch=-1.02 * pitch), False)]
        for state, healthy in cases:
            set_planar(base, **{"z": start, "pitch": 0.0, **state})
            base.last_x = float(base.torso_position()[0])  # no forward reward
            assert base.is_healthy() is healthy, state
            reward, terminated, _ = base.evaluate(action)
            assert terminated is (not healthy) and reward == pytest.approx((1.0 if healthy else 0.0) - ctrl), state
    finally:
        env.close()


def test_hopper_needs_every_other_position_and_velocity_within_100_and_observes_velocities_clipped_to_10() -> None:
    env, base = made("pixelrig/Hopper-v0")
    c = base.client
    joint = base.motor_joints[0]
    try:
        for rate, healthy in ((99.0, True), (100.5, False), (-100.5, False), (-101.0, False)):
            p.resetJointState(base.robot, joint, 0.0, rate, physicsClientId=c)
            assert base.is_healthy() is healthy, rate
        for angle, healthy in ((99.0, True), (-101.0, False)):  # the joint positions too
            p.resetJointState(base.robot, joint, angle, 0.0, physicsClientId=c)
            assert base.is_healthy() is healthy, angle
        p.resetJointState(base.robot, 0, 0.0, -101.0, physicsClientId=c)  # the forward velocity counts too
        p.resetJointState(base.robot, joint, 0.0, 0.0, physicsClientId=c)
        assert not base.is_healthy()
        p.resetJointState(base.robot, 0, 0.0, 0.0, physicsClientId=c)
        assert base.is_healthy()
        for rate in (50.0, -50.0, 3.0):
            p.resetJointState(base.robot, joint, 0.0, rate, physicsClientId=c)
            assert base.term_values()["joint_vel"][0] == np.clip(rate, -10.0, 10.0)
    finally:
        env.close()


# ---- Ant -----------------------------------------------------------------------------------------------------------

def test_ant_is_healthy_between_20_cm_and_1_m_and_pays_for_its_contacts() -> None:
    env, base = made("pixelrig/Ant-v0")
    c = base.client
    try:
        orn = p.getBasePositionAndOrientation(base.robot, physicsClientId=c)[1]
        for z, healthy in ((0.21, True), (0.19, False), (0.99, True), (1.01, False)):
            p.resetBasePositionAndOrientation(base.robot, (0.0, 0.0, z), orn, physicsClientId=c)
            assert base.is_healthy() is healthy, z
        p.resetBasePositionAndOrientation(base.robot, (0.0, 0.0, 0.75), orn, physicsClientId=c)
        for _ in range(30):
            env.step(np.zeros(8, np.float32))  # standing on its legs: contacts with the ground
        forces = [pt[9] for pt in p.getContactPoints(bodyA=base.robot, physicsClientId=c)]
        assert forces and max(forces) > 2.0  # clipped at 1
        assert base.extra_costs() == pytest.approx(5e-4 * sum(min(max(f, 0.0), 1.0) ** 2 for f in forces), rel=1e-12)
        p.resetBasePositionAndOrientation(base.robot, (0.0, 0.0, 3.0), orn, physicsClientId=c)
        p.stepSimulation(physicsClientId=c)  # in the air: no contacts, no cost
        assert base.extra_costs() == 0.0
    finally:
        env.close()


def test_ant_pays_for_its_own_contacts_only_each_clipped_at_1() -> None:
    """The contact cost sums the Ant's own contacts (not those of other bodies in its world: a box on the ground
    away from it), each force clipped to [0, 1] N and squared: a light ball resting on its torso adds its small
    force squared, not 1."""
    env, base = made("pixelrig/Ant-v0")
    c = base.client
    try:
        for _ in range(30):
            env.step(np.zeros(8, np.float32))
        torso = p.getBasePositionAndOrientation(base.robot, physicsClientId=c)[0]
        ball = p.createMultiBody(0.01, p.createCollisionShape(p.GEOM_SPHERE, radius=0.03, physicsClientId=c),
                                 basePosition=(torso[0], torso[1], torso[2] + 0.3), physicsClientId=c)
        box = p.createMultiBody(5.0, p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.2] * 3, physicsClientId=c),
                                basePosition=(3.0, 3.0, 0.2), physicsClientId=c)
        for _ in range(60):
            p.stepSimulation(physicsClientId=c)
        own = [pt[9] for pt in p.getContactPoints(bodyA=base.robot, physicsClientId=c)]
        light = [pt[9] for pt in p.getContactPoints(bodyA=base.robot, bodyB=ball, physicsClientId=c)]
        assert light and 0.0 < max(light) < 1.0, light  # the ball rests on the Ant
        assert p.getContactPoints(bodyA=box, physicsClientId=c)  # the box on the ground, away from the Ant
        assert not p.getContactPoints(bodyA=base.robot, bodyB=box, physicsClientId=c)
        assert base.extra_costs() == pytest.approx(5e-4 * sum(min(max(f, 0.0), 1.0) ** 2 for f in own), rel=1e-12)
    finally:
        env.close()


def test_ant_starts_with_small_random_torso_velocities() -> None:
    env = gym.make("pixelrig/Ant-v0")
    base = env.unwrapped
    try:
        velocities = []
        for seed in range(20):
            _, info = env.reset(seed=seed)
            lin, ang = p.getBaseVelocity(base.robot, physicsClientId=base.client)
            velocities.append([*lin, *ang])
            assert info["x_position"] == base.last_x == base.torso_position()[0]
        v = np.array(velocities)
        assert np.all(np.abs(v) <= base.reset_noise_scale) and np.all(v.min(axis=0) < -0.05)
        assert np.all(v.max(axis=0) > 0.05) and len({tuple(r) for r in v}) == 20
    finally:
        env.close()


# ---- every task of the room: its spaces, its bodies and its first steps -------------------------------------------

ROOM = ("pixelrig/CartPole-v0", "pixelrig/Ant-v0", "pixelrig/Hopper-v0", "pixelrig/Walker2d-v0",
        "pixelrig/HalfCheetah-v0")
FIRST_STEPS = Path(__file__).resolve().parents[1] / "golden" / "first_steps.json"
"""Each task's observation after ``reset(seed=0)``, its first 10 steps under fixed uniform actions (with each step's
reward and termination) and the start of the next, unseeded episode, as recorded (``python -m
tests.test_tasks_locomotion`` writes it again)."""


def first_steps(env_id: str) -> list[list[float]]:
    env = gym.make(env_id)
    try:
        obs, _ = env.reset(seed=0)
        rng = np.random.default_rng(0)
        rows = [[float(v) for v in obs]]
        for _ in range(10):
            obs, reward, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.action_space.shape)
                                                             .astype(np.float32))
            rows.append([*map(float, obs), float(reward), float(terminated), float(truncated)])
        obs, _ = env.reset()  # the next episode starts from the same stream, unseeded
        rows.append([float(v) for v in obs])
        return rows
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ROOM)
def test_the_first_steps_are_the_recorded_ones(env_id: str) -> None:
    """The scene as built (bodies, where they stand, damping, the motors let go), the step (time step, frame skip,
    forces) and the reward, all at once: ten steps from a seeded reset under fixed actions give the recorded
    observations, rewards and flags (to 1e-6: a pybullet built elsewhere may round differently, a changed world
    moves them by far more). The next episode's start holds what the start draws from the env's stream: a draw more
    or fewer moves it."""
    recorded = json.loads(FIRST_STEPS.read_text())[env_id]
    got = first_steps(env_id)
    assert [len(r) for r in got] == [len(r) for r in recorded]
    for i, (row, want) in enumerate(zip(got, recorded, strict=True)):
        np.testing.assert_allclose(row, want, rtol=1e-6, atol=1e-6, err_msg=f"{env_id} step {i}")


def test_each_cartpole_draws_its_pole_in_the_documented_orange_in_its_own_world() -> None:
    """The pole is drawn in the RGBA CartPoleEnv's docstring states (orange, not white on the white ground), in each
    env's own pybullet world: of two CartPoles in one process the second's world is not pybullet's default one.
    ``render()`` shows it: the pole's pixels are that colour under the light, their channels in its proportions."""
    from pixelrig.tasks.cartpole import CartPoleEnv

    found = re.search(r"RGBA ([\d.]+), ([\d.]+), ([\d.]+), ([\d.]+)\)", " ".join(CartPoleEnv.__doc__.split()))
    assert found, "CartPoleEnv's docstring states the pole's colour"
    rgba = tuple(float(v) for v in found.groups())
    envs = [gym.make("pixelrig/CartPole-v0", render_mode="rgb_array", renderer="tiny") for _ in range(2)]
    try:
        for env in envs:
            env.reset(seed=0)
        for env in envs:
            base = env.unwrapped
            (pole,) = [v for v in p.getVisualShapeData(base.cartpole, physicsClientId=base.client) if v[1] == 1]
            assert pole[7] == pytest.approx(rgba)
            frame = env.render().astype(float)
            r, g, b = np.moveaxis(frame, -1, 0)
            drawn = frame[(r > g) & (g > b) & (b < 60)]
            assert len(drawn) > 100, "the pole is in view"
            mr, mg, mb = np.median(drawn, axis=0)
            assert mg / mr == pytest.approx(rgba[1] / rgba[0], abs=0.012)
            assert mb / mr == pytest.approx(rgba[2] / rgba[0], abs=0.012)
    finally:
        for env in envs:
            env.close()


def test_cartpole_acts_in_one_unit_force_and_names_its_bodies() -> None:
    """CartPole's action is one float32 in [-1, 1] (times ``force_mag``), its bodies are called ``ground`` and
    ``cartpole`` (what rigs and looks name them by), its step is 0.02 s (0.01 s twice), and the pole swings freely,
    no motor holding it (damping shows in the recorded first steps: pybullet does not report it)."""
    env, base = made("pixelrig/CartPole-v0")
    try:
        space = env.action_space
        assert (space.shape, space.dtype, float(space.low[0]), float(space.high[0])) == ((1,), np.float32, -1.0, 1.0)
        assert set(base.body_ids()) == {"ground", "cartpole"} and base.body_id("cartpole") == base.cartpole
        assert base.dt == pytest.approx(0.02)
        p.resetJointState(base.cartpole, 0, 0.0, 0.0, physicsClientId=base.client)
        p.resetJointState(base.cartpole, 1, 0.1, 0.0, physicsClientId=base.client)
        env.step(np.zeros(1, np.float32))
        theta, omega = p.getJointState(base.cartpole, 1, physicsClientId=base.client)[:2]
        assert omega > 0.01 and theta > 0.1  # a tilted pole falls on, unheld
    finally:
        env.close()


def write_first_steps() -> None:
    FIRST_STEPS.write_text(json.dumps({env_id: first_steps(env_id) for env_id in ROOM}, indent=0) + "\n")


if __name__ == "__main__":
    pixelrig.register_envs()
    write_first_steps()
