"""Observations stay in their declared space under hard use: bang-bang actions (every action at a bound of its
Box) on every bundled id and on every robot file in pybullet_data that loads as a ``Robot-v0``."""

from __future__ import annotations

import glob
import os

import gymnasium as gym
import numpy as np
import pybullet_data
import pytest

import pixelrig  # noqa: F401  (registers the ids)
from tests.conftest import bang_bang_action

DATA = pybullet_data.getDataPath()
PYBULLET_CRASHES = {
    # pybullet 3.2.7 itself dies with SIGSEGV in loadSDF on this file (reproduced with a bare p.loadSDF).
    "gripper/wsg50_one_motor_gripper_free_base.sdf",
}


def robot_files() -> list[str]:
    """Every URDF, SDF and MJCF file shipped in pybullet_data, but its 1000 random single-body objects."""
    files = glob.glob(f"{DATA}/**/*.urdf", recursive=True) + glob.glob(f"{DATA}/**/*.sdf", recursive=True)
    files += glob.glob(f"{DATA}/mjcf/*.xml")
    rel = sorted(os.path.relpath(f, DATA) for f in files if "/random_urdfs/" not in f)
    return [f for f in rel if f not in PYBULLET_CRASHES]


MAX_JOINT_SPEED = 100.0
"""pybullet's default maximum joint velocity (``changeDynamics(maxJointVelocity=)``: 100 rad/s or m/s), which it
enforces whatever the joint limits say: kuka's and reacher's fastest joints reach exactly 100.0 under bang-bang."""
MAGNITUDE = 1e3
"""No entry of these observations but contact forces (SI units) comes near it in 300 steps: measured largest 38.7
(r2d2's wheel angle, which winds), 20.3 (HalfCheetah's joint speeds), 100 for a capped joint speed; a garbage state
(3e38) does not."""


def check_physical(env: gym.Env, obs: np.ndarray, q0: np.ndarray | None, elapsed: float, where: str) -> None:
    """What an observation must satisfy beyond ``contains()`` of a mostly infinite box: finite and of a physical
    magnitude; for a RobotEnv, joint speeds within pybullet's cap, joint positions no further from the episode's
    start than that cap allows in ``elapsed`` seconds, and unit quaternions and rotation matrices."""
    assert env.observation_space.contains(obs), (
        f"{where}: observation leaves its space at indices "
        f"{np.flatnonzero((obs < env.observation_space.low) | (obs > env.observation_space.high)).tolist()}")
    assert np.isfinite(obs).all(), f"{where}: {obs}"
    layout = getattr(env.unwrapped, "observation_layout", None) or {}
    kinematic = np.ones(obs.shape, bool)
    for term, span in layout.items():
        kinematic[span] = term != "contact_forces"  # newtons: a tumbling ant's feet take thousands
    assert np.abs(obs[kinematic]).max(initial=0.0) < MAGNITUDE, f"{where}: {obs}"
    if not layout:
        return
    o = obs.astype(np.float64)
    if "qd" in layout:
        assert np.abs(o[layout["qd"]]).max() <= MAX_JOINT_SPEED * (1 + 1e-6), f"{where}: qd {o[layout['qd']]}"
    if "q" in layout and q0 is not None:
        moved = np.abs(o[layout["q"]] - q0).max()
        assert moved <= MAX_JOINT_SPEED * elapsed + 1e-3, f"{where}: q moved {moved} in {elapsed} s"
    for term, span in layout.items():
        kind = term.partition(":")[0]
        if kind in ("base_quat", "link_pose", "body_pose"):
            quat = o[span][-4:]
            assert abs(np.linalg.norm(quat) - 1.0) < 1e-5, f"{where}: {term} quaternion {quat} is not unit"
        elif kind == "base_rotmat":
            r = o[span].reshape(3, 3)
            np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-5, err_msg=f"{where}: {term}")
        elif kind == "base_rot6d":
            x, y = o[span][:3], o[span][3:]
            np.testing.assert_allclose([x @ x, y @ y, x @ y], [1.0, 1.0, 0.0], atol=1e-5, err_msg=f"{where}: {term}")


class EpisodeClock:
    """The start of the current episode's joint positions and the seconds since, for :func:`check_physical`."""

    def __init__(self, env: gym.Env) -> None:
        self.env = env
        layout = getattr(env.unwrapped, "observation_layout", None) or {}
        self.q_span = layout.get("q")
        self.period = env.unwrapped.time_step * env.unwrapped.frame_skip

    def start(self, obs: np.ndarray) -> None:
        self.q0 = None if self.q_span is None else obs[self.q_span].astype(np.float64)
        self.steps = 0

    def check(self, obs: np.ndarray, where: str, stepped: bool = True) -> None:
        self.steps += stepped
        check_physical(self.env, obs, self.q0, self.steps * self.period, where)


def drive(env: gym.Env, steps: int, seed: int, action) -> int:
    """Step with ``action(t)`` (resetting when an episode ends), checking every observation; returns the steps."""
    clock = EpisodeClock(env)
    obs, _ = env.reset(seed=seed)
    clock.start(obs)
    clock.check(obs, "reset", stepped=False)
    for t in range(steps):
        obs, _, terminated, truncated, _ = env.step(action(t))
        clock.check(obs, f"step {t}")
        if terminated or truncated:
            obs, _ = env.reset()
            clock.start(obs)
            clock.check(obs, f"reset after step {t}", stepped=False)
    return steps


def bang_bang(env: gym.Env, steps: int, seed: int = 0) -> int:
    """Step with actions at the bounds, checking every observation against its space and :func:`check_physical`."""
    rng = np.random.default_rng(seed)
    return drive(env, steps, seed, lambda t: bang_bang_action(env.action_space, rng))


BUNDLED = ["pixelrig/CartPole-v0", "pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0", "pixelrig/HalfCheetah-v0",
           "pixelrig/Hopper-v0", "pixelrig/Walker2d-v0", "pixelrig/Ant-v0"]


@pytest.mark.parametrize("env_id", BUNDLED)
def test_bundled_ids_stay_in_their_space_under_bang_bang(env_id: str) -> None:
    env = gym.make(env_id, renderer="tiny")
    try:
        bang_bang(env, 300)
    finally:
        env.close()


@pytest.mark.parametrize("source", ["kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "mjcf/reacher.xml",
                                    "r2d2.urdf"])
def test_robot_files_that_left_their_space_stay_in_it(source: str) -> None:
    """The files that left their declared space before (kuka q[4] at step ~30, the Panda's finger at step 1,
    reacher at ~54, r2d2 at 0)."""
    env = gym.make("pixelrig/Robot-v0", source=source, control="torque", effort_limits=20.0, renderer="tiny")
    try:
        bang_bang(env, 300)
    finally:
        env.close()


@pytest.mark.slow
def test_every_robot_file_in_pybullet_data_stays_in_its_space() -> None:
    """Every robot file in pybullet_data that loads as a Robot-v0 (torque control, missing effort limits filled
    with 20 N·m): 300 bang-bang steps each. Files that do not make a Robot-v0 must say why with a ValueError."""
    loaded, refused = [], {}
    for source in robot_files():
        try:
            env = gym.make("pixelrig/Robot-v0", source=source, control="torque", effort_limits=20.0,
                           renderer="tiny")
        except ValueError as exc:
            refused[source] = str(exc)
            continue
        try:
            bang_bang(env, 300)
            loaded.append(source)
        finally:
            env.close()
    assert len(loaded) >= 60, (len(loaded), sorted(refused))  # 65 with pybullet 3.2.7's data


def random_actions(env: gym.Env, steps: int, seed: int = 0) -> None:
    """Uniformly random actions, checking every observation as :func:`bang_bang` does."""
    env.action_space.seed(seed)
    drive(env, steps, seed, lambda t: env.action_space.sample())


ANT_BASE_TERMS = ("q", "qd", "base_pos", "base_quat", "base_rpy", "base_rotmat", "base_rot6d", "base_linvel",
                  "base_angvel", "base_linvel_local", "base_angvel_local", "link_pose:torso", "link_vel:torso",
                  "body_pose:ground", "contact_forces")
KUKA_LINK_TERMS = ("q", "qd", "link_pose:lbr_iiwa_link_0", "link_pose:lbr_iiwa_link_7", "link_vel:lbr_iiwa_link_7",
                   "link_vel:lbr_iiwa_link_3", "contact_forces")


@pytest.mark.parametrize("drive", [bang_bang, random_actions], ids=["bang_bang", "random"])
@pytest.mark.parametrize("source,terms", [("mjcf/ant.xml", ANT_BASE_TERMS), ("kuka_iiwa/model.urdf", KUKA_LINK_TERMS)],
                         ids=["ant_base_terms", "kuka_link_terms"])
def test_observation_terms_stay_in_their_space(source: str, terms: tuple[str, ...], drive) -> None:
    """Every term's bounds hold (quaternions and rotation matrices in [-1, 1], angles, forces >= 0) over 300
    steps of bang-bang and of random actions: the Ant tumbles, the Kuka flails."""
    env = gym.make("pixelrig/Robot-v0", source=source, control="torque", effort_limits=20.0, renderer="tiny",
                   observation=list(terms))
    try:
        drive(env, 300)
    finally:
        env.close()
