"""RobotEnv: every kind of source in every control mode, position tracking, options, plug-in tasks, and every
bad input with its message (nothing half-built left behind)."""

from __future__ import annotations

import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pybullet_data
import pytest

import pixelrig
from pixelrig import PixelObs, RobotEnv

from .conftest import assert_trees_equal, physics_state

SDF_FIX = {"effort_limits": 50.0, "velocity_limits": 5.0,
           "position_limits": {"gripper_to_arm": (-3.14, 3.14)}}


def two_link_builder(client: int) -> int:
    """A builder that makes its own scene: a floor box and a two-link pendulum arm; returns the arm."""
    floor = p.createCollisionShape(p.GEOM_BOX, halfExtents=[2, 2, 0.05], physicsClientId=client)
    p.createMultiBody(0, floor, p.createVisualShape(p.GEOM_BOX, halfExtents=[2, 2, 0.05], physicsClientId=client),
                      [0, 0, -0.05], physicsClientId=client)
    link = p.createCollisionShape(p.GEOM_CAPSULE, radius=0.04, height=0.3, physicsClientId=client)
    vis = p.createVisualShape(p.GEOM_CAPSULE, radius=0.04, length=0.3, rgbaColor=(0.2, 0.5, 0.9, 1),
                              physicsClientId=client)
    return p.createMultiBody(
        baseMass=0, baseCollisionShapeIndex=link, baseVisualShapeIndex=vis, basePosition=[0, 0, 1.0],
        linkMasses=[1.0, 1.0], linkCollisionShapeIndices=[link, link], linkVisualShapeIndices=[vis, vis],
        linkPositions=[[0, 0, -0.2], [0, 0, -0.4]], linkOrientations=[[0, 0, 0, 1]] * 2,
        linkInertialFramePositions=[[0, 0, -0.2]] * 2, linkInertialFrameOrientations=[[0, 0, 0, 1]] * 2,
        linkParentIndices=[0, 1], linkJointTypes=[p.JOINT_REVOLUTE] * 2, linkJointAxis=[[1, 0, 0]] * 2,
        physicsClientId=client,
    )


BUILDER_LIMITS = {"effort_limits": 20.0, "velocity_limits": 3.0, "position_limits": (-2.0, 2.0)}

SOURCES = {
    "kuka_urdf": ("kuka_iiwa/model.urdf", {}),
    "panda_urdf": ("franka_panda/panda.urdf", {}),
    "ant_mjcf": ("mjcf/ant.xml", {"velocity_limits": 8.0, "base_observation": True}),
    "kuka_sdf": ("kuka_iiwa/kuka_with_gripper2.sdf", SDF_FIX),
    "builder": (two_link_builder, BUILDER_LIMITS),
}


@pytest.mark.parametrize("control", ["torque", "position", "velocity"])
@pytest.mark.parametrize("source", list(SOURCES))
def test_every_source_in_every_control_mode(source: str, control: str) -> None:
    src, kwargs = SOURCES[source]
    env = gym.make("pixelrig/Robot-v0", source=src, control=control, **kwargs)
    try:
        obs, info = env.reset(seed=0)
        env.action_space.seed(0)
        base = env.unwrapped
        n = len(base.joint_names)
        assert n >= 2 and env.action_space.shape == (n,)
        assert obs.shape == (2 * n + (13 if kwargs.get("base_observation") else 0),)
        assert env.observation_space.contains(obs)
        for _ in range(10):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert reward == 0.0 and not terminated
        assert np.all(np.isfinite(obs))
    finally:
        env.close()


@pytest.mark.parametrize("source", ["kuka_iiwa/model.urdf", "franka_panda/panda.urdf"])
def test_position_mode_reaches_commanded_target(source: str) -> None:
    """Joints settle on a commanded target: within 1e-3 rad (or m) after 2 s (120 steps of 1/60 s)."""
    env = RobotEnv(source, control="position")
    try:
        env.reset(seed=0)
        low, high = env.action_space.low, env.action_space.high
        target = (low + 0.3 * (high - low)).astype(np.float32)
        for _ in range(120):
            obs, *_ = env.step(target)
        err = np.abs(obs[: len(target)] - target).max()
        assert err < 1e-3, f"max joint error {err}"
    finally:
        env.close()


def test_mjcf_motors_give_torque_limits_and_actuated_joints() -> None:
    env = RobotEnv("mjcf/ant.xml")
    try:
        assert env.joint_names == ["hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4"]
        np.testing.assert_array_equal(env.action_space.high, np.full(8, 150.0, np.float32))  # gear 150 x ctrl 1
    finally:
        env.close()


def test_reset_options_and_set_qpos_qvel() -> None:
    env = RobotEnv("kuka_iiwa/model.urdf", control="position")
    try:
        q = np.linspace(-0.5, 0.5, 7)
        qd = np.linspace(0.1, 0.7, 7)
        obs, _ = env.reset(seed=0, options={"qpos": q, "qvel": qd})
        np.testing.assert_allclose(obs[:7], q, atol=1e-6)
        np.testing.assert_allclose(obs[7:], qd, atol=1e-6)
        env.set_qpos_qvel(q * 0.5)
        np.testing.assert_allclose(env.qpos_qvel()[0], q * 0.5, atol=1e-9)
        for _ in range(30):
            obs, *_ = env.step(q.astype(np.float32) * 0.5)  # position targets follow set_qpos
        np.testing.assert_allclose(obs[:7], q * 0.5, atol=1e-3)
    finally:
        env.close()


def test_reset_noise_is_seeded() -> None:
    env = RobotEnv("kuka_iiwa/model.urdf", reset_noise_scale=0.1)
    try:
        a, _ = env.reset(seed=3)
        b, _ = env.reset(seed=3)
        c, _ = env.reset(seed=4)
        assert_trees_equal(a, b)
        assert not np.array_equal(a, c) and np.abs(a[:7]).max() <= 0.1 + 1e-6
    finally:
        env.close()


def test_reward_and_termination_plug_in() -> None:
    def reward(env: RobotEnv) -> float:
        return -float(np.abs(env.qpos_qvel()[0]).sum())

    def too_fast(env: RobotEnv) -> bool:
        return bool(np.abs(env.qpos_qvel()[1]).max() > 0.5)

    env = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf", reward_fn=reward, terminated_fn=too_fast)
    try:
        env.reset(seed=0)
        terminated, rewards = False, []
        for _ in range(50):
            _, r, terminated, _, _ = env.step(env.action_space.high)
            rewards.append(r)
            if terminated:
                break
        assert terminated and rewards[-1] < 0
    finally:
        env.close()


def test_render_frames_the_robot() -> None:
    env = PixelObs(RobotEnv("kuka_iiwa/model.urdf", render_mode="rgb_array"))
    try:
        obs, _ = env.reset(seed=0)
        frame = env.render()
        assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.std() > 10
        robot = env.unwrapped.robot
        share = float(np.mean(obs["main/label"] == robot))
        assert 0.05 < share < 0.8, f"robot covers {share:.1%} of the default camera"
        assert env.label_names[robot] == "lbr_iiwa"
    finally:
        env.close()


def test_builder_scene_and_names() -> None:
    env = RobotEnv(two_link_builder, control="position", **BUILDER_LIMITS)
    try:
        assert env.ground is False and len(env.joint_names) == 2
        env.reset(seed=0)
        obs, *_ = env.step(np.array([0.5, -0.5], np.float32))
        assert obs.shape == (4,)
    finally:
        env.close()


def connected_clients() -> list[int]:
    return [i for i in range(256) if p.isConnected(physicsClientId=i)]


BAD = [
    (("no/such/robot.urdf",), {}, FileNotFoundError,
     "robot file 'no/such/robot.urdf' not found; looked in: "),
    (("kuka_iiwa",), {}, ValueError, "robot file 'kuka_iiwa' is a directory"),
    (("kuka_iiwa/meshes/link_0.stl",), {}, ValueError, "has extension '.stl'; pixelrig loads .urdf, .sdf"),
    (("kuka_iiwa/model.urdf",), {"control": "effort"}, ValueError,
     "control must be one of ('torque', 'position', 'velocity', 'ee_delta_pos', 'ee_delta_pose', 'ee_pose'): "
     "got 'effort'"),
    (("kuka_iiwa/kuka_with_gripper2.sdf",), {}, ValueError,
     "torque control needs effort limits, but joints ['gripper_to_arm', 'left_base_tip_joint', "
     "'right_base_tip_joint'] of "),
    (("mjcf/ant.xml",), {"control": "velocity"}, ValueError, "velocity control needs velocity limits"),
    (("kuka_iiwa/model.urdf",), {"effort_limits": {"elbow": 3.0}}, ValueError,
     "effort_limits: unknown joints ['elbow']; actuated joints are ['lbr_iiwa_joint_1'"),
    (("kuka_iiwa/model.urdf",), {"joints": ["nope"]}, ValueError, "joints ['nope'] are not movable joints"),
    (("kuka_iiwa/kuka_with_gripper2.sdf",), {"robot": "r2d2", **SDF_FIX}, ValueError,
     "robot='r2d2' is not a body of"),
    (("kuka_iiwa/model.urdf",), {"initial_qpos": [0.0, 1.0]}, ValueError,
     "initial_qpos has shape (2,), expected (7,) for joints ['lbr_iiwa_joint_1'"),
    (("kuka_iiwa/model.urdf",), {"reward_fn": 3}, ValueError, "reward_fn must be a callable taking the env"),
    ((lambda client: 99,), {}, ValueError, "returned 99, which is not a body in its client"),
    ((lambda client: None,), {}, ValueError, "returned None, which is not a body in its client"),
]


@pytest.mark.parametrize("args,kwargs,exc,message", BAD, ids=[b[3][:40] for b in BAD])
def test_bad_construction_is_clear_and_leaves_nothing(args, kwargs, exc, message) -> None:
    before = connected_clients()
    with pytest.raises(exc, match=re.escape(message)):
        RobotEnv(*args, **kwargs)
    assert connected_clients() == before, "a pybullet client was left connected"


def test_missing_file_names_both_places(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as err:
        RobotEnv("robots/arm.urdf")
    msg = str(err.value)
    assert str(Path("robots/arm.urdf").resolve()) in msg
    assert str(Path(pybullet_data.getDataPath()) / "robots/arm.urdf") in msg


def test_unparsable_urdf_carries_the_parser_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.urdf"
    bad.write_text("<robot name='x'><link name='a'></link><joint></robot>")
    before = connected_clients()
    with pytest.raises(ValueError, match=re.escape(f"pybullet could not parse {bad} as URDF: Cannot load URDF")) \
            as err:
        RobotEnv(bad)
    assert "XML_ERROR" in str(err.value)
    assert connected_clients() == before


@pytest.mark.parametrize("action,message", [
    (np.zeros(3), "RobotEnv: action has shape (3,), expected (7,)"),
    (np.array([np.nan] + [0.0] * 6), "RobotEnv: action contains NaN or inf at indices [0]"),
    (np.array([0.0] * 6 + [np.inf]), "RobotEnv: action contains NaN or inf at indices [6]"),
    ("push", "RobotEnv: action 'push' is not numeric; expected shape (7,)"),
])
def test_bad_action_is_refused_and_changes_nothing(action, message) -> None:
    env = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf")
    try:
        env.reset(seed=0)
        env.step(np.full(7, 5.0, np.float32))
        before = physics_state(env.unwrapped.client)
        with pytest.raises(ValueError, match=re.escape(message)):
            env.step(action)
        assert_trees_equal(before, physics_state(env.unwrapped.client))
        env.step(np.zeros(7, np.float32))  # still usable
    finally:
        env.close()


def test_bad_qpos_is_refused_and_changes_nothing() -> None:
    env = RobotEnv("kuka_iiwa/model.urdf")
    try:
        env.reset(seed=0)
        before = physics_state(env.client)
        with pytest.raises(ValueError, match=re.escape("qpos has shape (3,), expected (7,) for joints")):
            env.set_qpos_qvel([0.0, 0.1, 0.2])
        with pytest.raises(ValueError, match=re.escape("qvel contains NaN or inf")):
            env.set_qpos_qvel(np.zeros(7), [np.nan] * 7)
        assert_trees_equal(before, physics_state(env.client))
        with pytest.raises(ValueError, match=re.escape("qpos has shape (8,), expected (7,)")):
            env.reset(seed=0, options={"qpos": np.zeros(8)})
        with pytest.raises(ValueError, match=re.escape("unknown reset options ['q']")):
            env.reset(seed=0, options={"q": np.zeros(7)})
    finally:
        env.close()


def test_step_before_reset_is_refused() -> None:
    env = RobotEnv("kuka_iiwa/model.urdf")
    try:
        with pytest.raises(gym.error.ResetNeeded, match=re.escape("call reset() before step()")):
            env.step(np.zeros(7, np.float32))
    finally:
        env.close()


def test_rejected_reset_options_leave_the_env_exactly_as_it_was() -> None:
    """A reset refused for its options (bad shape, NaN, non-numeric, unknown key) changes nothing: not the world,
    not the seed's random stream, not the episode; the next steps equal those of a twin that never tried."""
    bad = [
        ({"qpos": np.zeros(8)}, "qpos has shape (8,), expected (7,)"),
        ({"qpos": [np.nan] * 7}, "qpos contains NaN or inf"),
        ({"qvel": ["a"] * 7}, "qvel=['a', 'a', 'a', 'a', 'a', 'a', 'a'] is not numeric"),
        ({"q": np.zeros(7)}, "unknown reset options ['q']; RobotEnv takes 'qpos' and 'qvel'"),
        ("qpos", "options must be a dict or None: got 'qpos'"),
    ]
    kwargs = {"reset_noise_scale": 0.1, "randomize": pixelrig.Randomization(mass_scale=(0.5, 1.5))}
    env, twin = RobotEnv("kuka_iiwa/model.urdf", **kwargs), RobotEnv("kuka_iiwa/model.urdf", **kwargs)
    try:
        acts = np.random.default_rng(1).uniform(-50, 50, (20, 7)).astype(np.float32)
        for e in (env, twin):
            e.reset(seed=3)
            for a in acts[:5]:
                e.step(a)
        before = env.export_state()
        for options, message in bad:
            with pytest.raises(ValueError, match=re.escape(message)):
                env.reset(seed=99, options=options)
            assert_trees_equal(before, env.export_state(), str(options))
        assert_trees_equal([env.step(a) for a in acts[5:]], [twin.step(a) for a in acts[5:]])
    finally:
        env.close()
        twin.close()


@pytest.mark.parametrize("env_id", ["pixelrig/CartPole-v0", "pixelrig/PandaReach-v0"])
def test_a_randomization_of_nothing_draws_the_starts_of_none(env_id: str) -> None:
    """``randomize=Randomization()`` randomises nothing, so the same seed gives the same start and steps as
    ``randomize=None`` (issue 34: it used to consume a number of ``np_random`` and start elsewhere)."""
    from pixelrig.envs import Randomization

    runs = []
    for randomize in (None, Randomization()):
        env = gym.make(env_id, randomize=randomize)
        try:
            obs, _ = env.reset(seed=3)
            env.action_space.seed(3)
            steps = [env.step(env.action_space.sample())[0] for _ in range(5)]
            runs.append((obs, steps))
        finally:
            env.close()
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for a, b in zip(runs[0][1], runs[1][1], strict=True):
        np.testing.assert_array_equal(a, b)


def test_render_size_is_an_option_of_every_env() -> None:
    """``render_width=`` / ``render_height=`` set render()'s frame size (320x240 unless given), and a bad size is
    refused naming the value."""
    env = gym.make("pixelrig/CartPole-v0", render_mode="rgb_array", render_width=64, render_height=48)
    try:
        env.reset(seed=0)
        assert env.render().shape == (48, 64, 3)
    finally:
        env.close()
    with pytest.raises(ValueError, match=re.escape("render_width=0 must be a whole number of pixels in [1, 16384]")):
        gym.make("pixelrig/CartPole-v0", render_width=0)
