"""Task-space control and the gripper: differential IK tracking on three arms of different kinematics (Franka Panda,
kuka iiwa, xArm6), deltas in the world and end-effector frames, absolute poses, unreachable targets, bang-bang
actions, the null-space pull, a Panda grasp held through a shake, bit-exact snapshots mid-grasp, determinism, and
bad input; plus the pure functions behind them."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pybullet_data
import pytest

import pixelrig
from pixelrig import RobotEnv, restore, snapshot
from pixelrig.control.gripper import couple_gripper, gripper_names, gripper_positions
from pixelrig.control.registry import JointConfig
from pixelrig.control.rotations import (
    quat_conjugate,
    quat_multiply,
    quat_to_matrix,
    quat_to_rotvec,
    rotvec_to_quat,
)
from pixelrig.control.task_space import (
    EE_CONTROLS,
    LINK_FRAME,
    TaskSpaceConfig,
    TaskSpaceController,
    arm_chain,
    chain_to,
    default_ee_link,
    dls_step,
    hold_near,
    pose_error,
)
from pixelrig.envs.panda import FINGERS, PandaEnv
from pixelrig.envs.terms import gripper_contact

from .conftest import assert_restores_exactly, assert_trees_equal, bang_bang_action, physics_state
from .test_envs_robot import connected_clients

PANDA_Q0 = (0.0, 0.41, 0.0, -1.85, 0.0, 2.26, 0.79)
KUKA_Q0 = (0.0, 0.5, 0.0, -1.2, 0.0, 0.8, 0.0)
XARM_Q0 = (0.0, 0.3, -0.8, 0.0, 0.5, 0.0)
ARMS = {  # source, a bent start pose, options, the default end-effector link
    "panda": ("franka_panda/panda.urdf", PANDA_Q0, {"gripper": "panda"}, "panda_grasptarget"),
    "kuka": ("kuka_iiwa/model.urdf", KUKA_Q0, {}, "lbr_iiwa_link_7"),
    "xarm6": ("xarm/xarm6_robot.urdf", XARM_Q0, {}, "link6"),
}
SETTLE = 10
"""Steps (of 1/60 s) after a small delta before its target is checked. Measured on all three arms over 20 deltas
each: within 2 mm / 1° after 1-2 steps, within 0.2 mm / 0.1° after 4-7, within 0.06 mm / 0.004° after 10."""


def arm_env(arm: str, control: str, **kwargs) -> RobotEnv:
    """An arm in ``control``; ``kwargs``: TaskSpaceConfig's fields and RobotEnv's options."""
    source, q0, options, _ = ARMS[arm]
    fields = set(TaskSpaceConfig.__dataclass_fields__)
    settings = {k: v for k, v in kwargs.items() if k in fields}
    config = TaskSpaceConfig(control, **settings) if settings else control
    return RobotEnv(source, control=config, initial_qpos=q0,
                    **{**options, **{k: v for k, v in kwargs.items() if k not in fields}})


def errors(env: RobotEnv, target: np.ndarray) -> tuple[float, float]:
    """(mm, degrees) from the end effector's measured pose to ``target``."""
    now = env.controller.solver.measure(env.client)
    e = pose_error(target, now.pos, now.quat, np.inf, np.inf)
    return 1000 * float(np.linalg.norm(e[:3])), float(np.degrees(np.linalg.norm(e[3:])))


def zero(env: gym.Env) -> np.ndarray:
    return np.zeros(env.action_space.shape, np.float32)


def arm_action(env: RobotEnv, arm_part, gripper: float = 0.0) -> np.ndarray:
    """An action from its arm part, with the gripper's dimension appended when the env has one."""
    a = np.asarray(arm_part, np.float64)
    return (np.append(a, gripper) if env.gripper_joints else a).astype(np.float32)


# ---- the arm and its end effector -----------------------------------------------------------------------------------

@pytest.mark.parametrize("arm", list(ARMS))
def test_default_ee_link_is_the_last_link_of_the_arm_chain(arm: str) -> None:
    env = arm_env(arm, "ee_delta_pos")
    try:
        assert env.ee_link == ARMS[arm][3]
        # every actuated joint is the arm's
        assert env.controller.solver.chain.joints == tuple(j.index for j in env.joints)
        assert env.action_space.shape == (3 + bool(env.gripper_joints),)
    finally:
        env.close()


def test_panda_without_a_gripper_ends_at_the_hand_and_holds_its_fingers() -> None:
    """Without gripper=, the fingers are actuated joints that branch off the hand: the chain stops at panda_hand
    and the fingers hold their reset position."""
    env = RobotEnv("franka_panda/panda.urdf", control="ee_delta_pos", initial_qpos=(*PANDA_Q0, 0.02, 0.03))
    try:
        env.reset(seed=0)
        assert env.ee_link == "panda_hand" and len(env.controller.solver.chain.joints) == 7
        for _ in range(30):
            obs, *_ = env.step(np.array([0.5, 0.5, -0.5], np.float32))
        np.testing.assert_allclose(obs[7:9], [0.02, 0.03], atol=1e-4)
    finally:
        env.close()


def test_chain_to_is_the_path_from_the_base() -> None:
    # base -> 0 -> 1 -> {2, 3}; 3 -> 4: the joints to link 4, base first; the base's own path is empty
    assert chain_to([-1, 0, 1, 1, 3], 4) == [0, 1, 3, 4]
    assert chain_to([-1, 0, 1, 1, 3], 2) == [0, 1, 2]
    assert chain_to([-1, 0, 1, 1, 3], -1) == []


def test_default_ee_link_of_made_up_trees() -> None:
    # base -> 0 (actuated) -> 1 (actuated) -> 2 (fixed) -> {3 (fixed), 4 (fixed)}: two fixed children, stop at 2
    assert default_ee_link([-1, 0, 1, 2, 2], [False, False, True, True, True], [0, 1]) == 2
    # ... and one fixed child below it: follow it
    assert default_ee_link([-1, 0, 1, 2], [False, False, True, True], [0, 1]) == 3
    # two actuated branches at the base (a walker): the base
    assert default_ee_link([-1, -1, 0, 1], [False, False, False, False], [0, 1, 2, 3]) == -1
    # a gripper's prismatic fingers (not actuated arm joints) are not followed; the fixed grasp frame is
    assert default_ee_link([-1, 0, 1, 1, 1], [False, False, False, False, True], [0, 1]) == 4


def test_jacobian_is_the_ee_link_frames() -> None:
    """The controller's Jacobian is the end-effector link's URDF frame's: finite differences of that frame agree
    (kuka's link 7 has its centre of mass 2 cm off the frame, where pybullet's guide says the point is taken)."""
    env = arm_env("kuka", "ee_delta_pose")
    try:
        env.reset(seed=0)
        chain, c, robot = env.controller.solver.chain, env.client, env.robot
        assert p.getDynamicsInfo(robot, chain.ee_link, physicsClientId=c)[3] == (0.0, 0.0, 0.02)
        q = np.array(KUKA_Q0) + np.linspace(0.1, 0.4, 7)

        def frame(qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            for j, v in zip(chain.joints, qs, strict=True):
                p.resetJointState(robot, j, float(v), physicsClientId=c)
            s = p.getLinkState(robot, chain.ee_link, computeForwardKinematics=1, physicsClientId=c)
            return np.array(s[4]), np.array(s[5])

        frame(q)
        lin, ang = p.calculateJacobian(robot, chain.ee_link, LINK_FRAME, q.tolist(), [0.0] * 7, [0.0] * 7,
                                       physicsClientId=c)
        h = 1e-3  # getLinkState's frames are float32: a step this size keeps their rounding under 1e-4
        for i in range(7):
            (pa, qa), (pb, qb) = frame(q + h * np.eye(7)[i]), frame(q - h * np.eye(7)[i])
            np.testing.assert_allclose((pa - pb) / (2 * h), np.array(lin)[:, i], atol=2e-4)
            np.testing.assert_allclose(quat_to_rotvec(quat_multiply(qa, [-qb[0], -qb[1], -qb[2], qb[3]])) / (2 * h),
                                       np.array(ang)[:, i], atol=2e-4)
    finally:
        env.close()


# ---- tracking -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("control", ["ee_delta_pos", "ee_delta_pose"])
@pytest.mark.parametrize("arm", list(ARMS))
def test_small_deltas_land_on_their_targets(arm: str, control: str) -> None:
    """Each delta moves the target by exactly action × max_delta (world frame) from the last target; after SETTLE
    steps of zero action the end effector is within 2 mm and 1° of it (ee_delta_pos: the start orientation)."""
    env = arm_env(arm, control)
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        s = env.control_config
        start = env.ee_target.copy()
        for _ in range(4):
            before = env.ee_target.copy()
            a = rng.uniform(-0.5, 0.5, 6 if control == "ee_delta_pose" else 3).astype(np.float32).astype(np.float64)
            env.step(arm_action(env, a))
            target = env.ee_target.copy()
            np.testing.assert_allclose(target[:3] - before[:3], a[:3] * s.max_delta_pos, atol=1e-15)
            turn = a[3:] * s.max_delta_rot if control == "ee_delta_pose" else np.zeros(3)
            np.testing.assert_allclose(quat_to_matrix(target[3:]), quat_to_matrix(rotvec_to_quat(turn)) @
                                       quat_to_matrix(before[3:]), atol=1e-12)
            for _ in range(SETTLE):
                env.step(zero(env))
            mm, deg = errors(env, target)
            assert mm < 2.0 and deg < 1.0, f"{arm} {control}: {mm:.3f} mm, {deg:.3f}° from the target"
        if control == "ee_delta_pos":
            np.testing.assert_array_equal(env.ee_target[3:], start[3:])
    finally:
        env.close()


@pytest.mark.parametrize("arm", list(ARMS))
def test_absolute_poses_are_reached(arm: str) -> None:
    """ee_pose: poses 12 cm and 25° from the start (the second 18 cm and 45° from the first), each reached within
    5 mm and 2° in 120 steps (2 s; measured: within 5 mm / 2° after 7-44 steps, the joints at their velocity
    limits; 0.2 mm / 0.005° after 120)."""
    env = arm_env(arm, "ee_pose")
    try:
        env.reset(seed=0)
        start = env.ee_target.copy()
        for offset, axis in (((0.08, -0.06, 0.07), (0.3, -0.5, 0.8)), ((-0.05, 0.1, 0.04), (-1.0, 0.2, 0.1))):
            turn = np.radians(25.0) * np.array(axis) / np.linalg.norm(axis)
            pose = np.concatenate([start[:3] + offset, quat_multiply(rotvec_to_quat(turn), start[3:])])
            for _ in range(120):
                env.step(arm_action(env, pose))
            mm, deg = errors(env, pose)
            assert mm < 5.0 and deg < 2.0, f"{arm}: {mm:.3f} mm, {deg:.3f}° from {pose}"
    finally:
        env.close()


@pytest.mark.parametrize("control", EE_CONTROLS)
@pytest.mark.parametrize("arm", list(ARMS))
def test_bang_bang_stays_finite_in_its_space_and_in_the_joint_limits(arm: str, control: str) -> None:
    """300 steps with every action at a bound: observations finite and in their space, joints inside their limits
    (commands are clamped to them) and no faster than their velocity limits allow (steps are scaled to them)."""
    env = arm_env(arm, control, observation=("q", "qd", f"link_pose:{ARMS[arm][3]}")
                  + (("gripper_opening",) if arm == "panda" else ()))
    try:
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        n = len(env.joints)
        lower, upper = np.array([j.lower for j in env.joints]), np.array([j.upper for j in env.joints])
        speed = np.array([j.velocity for j in env.joints])
        for t in range(300):
            obs, *_ = env.step(bang_bang_action(env.action_space, rng))
            assert np.isfinite(obs).all() and env.observation_space.contains(obs), f"step {t}: {obs}"
            q, qd = obs[:n].astype(np.float64), obs[n:2 * n].astype(np.float64)
            assert np.all(q >= lower - 0.01) and np.all(q <= upper + 0.01), f"step {t}: q {q} outside the limits"
            assert np.all(np.abs(qd) <= 1.2 * speed), f"step {t}: qd {qd} past the velocity limits {speed}"
    finally:
        env.close()


def test_singular_pose_is_solved_without_blowing_up() -> None:
    """The Panda's zero pose (arm straight up) is singular: J Jᵀ cannot be inverted. The damped solve still gives a
    bounded step: bang-bang from there stays finite, and the arm moves sideways as asked."""
    env = RobotEnv("franka_panda/panda.urdf", control="ee_delta_pos", gripper="panda")
    try:
        env.reset(seed=0)
        start = env.ee_target.copy()
        for _ in range(10):
            obs, *_ = env.step(arm_action(env, [1.0, 0.0, 0.0]))
            assert np.isfinite(obs).all()
        assert env.controller.solver.measure(env.client).pos[0] - start[0] > 0.05
        rng = np.random.default_rng(1)
        for _ in range(50):
            obs, *_ = env.step(bang_bang_action(env.action_space, rng))
            assert np.isfinite(obs).all()
    finally:
        env.close()


@pytest.mark.parametrize("control", ["ee_delta_pos", "ee_delta_pose"])
def test_a_delta_target_stays_in_the_workspace_box(control: str) -> None:
    """Deltas pushing past the workspace box (3 cm around the start, well inside the Panda's reach) stop the target
    at its faces, on both sides of every axis."""
    env = arm_env("panda", control)
    env.reset(seed=0)
    start = env.ee_target[:3].copy()
    box = (start - 0.03, start + 0.03)
    env.close()
    env = arm_env("panda", control, workspace=box)
    try:
        env.reset(seed=0)
        for sign in (1.0, -1.0):
            push = np.zeros(6 if control == "ee_delta_pose" else 3)
            push[:3] = sign
            for _ in range(25):
                env.step(arm_action(env, push))
            np.testing.assert_allclose(env.ee_target[:3], box[sign > 0], atol=1e-12)
    finally:
        env.close()


def test_a_target_out_of_reach_moves_as_far_as_it_can() -> None:
    """Pushing the kuka outward for 150 steps (1.5 m of deltas, orientation held) stretches it until its elbow is
    (nearly) straight, 20 cm out, with the target never more than target_lead deltas ahead; pulled back, it returns
    (the null-space pull has kept the elbow off the singular straight pose)."""
    env = arm_env("kuka", "ee_delta_pos")
    try:
        env.reset(seed=0)
        lead = env.control_config.target_lead * env.control_config.max_delta_pos
        x0 = env.ee_target[0]
        for _ in range(150):
            obs, *_ = env.step(np.array([1.0, 0.0, 0.0], np.float32))
            now = env.controller.solver.measure(env.client)
            assert np.isfinite(obs).all()
            assert np.linalg.norm(env.ee_target[:3] - now.pos) <= lead + 0.005  # + how far the arm moved since
        out = env.controller.solver.measure(env.client).pos[0]
        assert out - x0 > 0.18, f"the arm only got {out - x0:.3f} m out"
        assert abs(env.qpos_qvel()[0][3]) < 0.05, "the elbow is not straight: the arm could go further"
        for _ in range(30):
            env.step(np.array([-1.0, 0.0, 0.0], np.float32))
        assert out - env.controller.solver.measure(env.client).pos[0] > 0.1
    finally:
        env.close()


@pytest.mark.parametrize("arm", ["panda", "kuka"])
def test_a_blocked_arm_does_not_wind_up(arm: str) -> None:
    """Pushing down into the ground for 120 steps (1.2 m of deltas): the end effector stops at the ground and the
    target stays within target_lead deltas of it, so the arm lifts off within 5 steps of being asked to."""
    env = arm_env(arm, "ee_delta_pos")
    try:
        env.reset(seed=0)
        lead = env.control_config.target_lead * env.control_config.max_delta_pos
        for _ in range(120):
            env.step(arm_action(env, [0.0, 0.0, -1.0]))
        now = env.controller.solver.measure(env.client)
        assert now.pos[2] < 0.1 and np.linalg.norm(env.ee_target[:3] - now.pos) <= lead + 0.005
        for _ in range(5):
            env.step(arm_action(env, [0.0, 0.0, 1.0]))
        assert env.controller.solver.measure(env.client).pos[2] - now.pos[2] > 0.005
    finally:
        env.close()


def test_an_absolute_pose_out_of_reach_is_approached_and_stays_finite() -> None:
    """ee_pose far outside the workspace: the position is clipped to the workspace box (still out of reach), and
    the arm goes as far as it can towards it, finite and inside its limits."""
    env = arm_env("xarm6", "ee_pose")
    try:
        env.reset(seed=0)
        far = np.array([5.0, 5.0, 5.0, 0.0, 0.0, 0.0, 1.0])
        before = np.linalg.norm(env.controller.solver.high - env.controller.solver.measure(env.client).pos)
        for _ in range(120):
            obs, *_ = env.step(far.astype(np.float32))
            assert np.isfinite(obs).all()
        np.testing.assert_array_equal(env.ee_target[:3], env.controller.solver.high)
        after = np.linalg.norm(env.controller.solver.high - env.controller.solver.measure(env.client).pos)
        assert after < before - 0.2, (before, after)
        q = env.qpos_qvel()[0]
        assert all(j.lower - 0.01 <= v <= j.upper + 0.01 for j, v in zip(env.joints, q, strict=True))
    finally:
        env.close()


# ---- frames ---------------------------------------------------------------------------------------------------------

def test_ee_frame_deltas_move_along_the_end_effectors_axes() -> None:
    """The same action in ee_frame="ee" and "world": the ee target moves by R·Δ and turns by R·exp(ω) (R: the
    target's orientation), the world one by Δ and exp(ω)·R; after a rotation of the end effector, the same "ee"
    action goes somewhere else in the world. The arm follows both."""
    envs = {frame: arm_env("kuka", "ee_delta_pose", ee_frame=frame) for frame in ("world", "ee")}
    try:
        a = np.array([0.6, 0.0, 0.0, 0.0, 0.0, 0.8], np.float32)
        s = envs["ee"].control_config
        d, w = a[:3].astype(np.float64) * s.max_delta_pos, a[3:].astype(np.float64) * s.max_delta_rot
        moved = {}
        for frame, env in envs.items():
            env.reset(seed=0)
            before = env.ee_target.copy()
            r = quat_to_matrix(before[3:])
            assert np.linalg.norm(r @ [1.0, 0.0, 0.0] - [1.0, 0.0, 0.0]) > 0.5  # the frames differ a lot
            env.step(a)
            after = env.ee_target
            if frame == "ee":
                np.testing.assert_allclose(after[:3] - before[:3], r @ d, atol=1e-12)
                np.testing.assert_allclose(quat_to_matrix(after[3:]), r @ quat_to_matrix(rotvec_to_quat(w)),
                                           atol=1e-12)
            else:
                np.testing.assert_allclose(after[:3] - before[:3], d, atol=1e-12)
                np.testing.assert_allclose(quat_to_matrix(after[3:]), quat_to_matrix(rotvec_to_quat(w)) @ r,
                                           atol=1e-12)
            target = after.copy()
            for _ in range(SETTLE):
                env.step(zero(env))
            mm, deg = errors(env, target)
            assert mm < 2.0 and deg < 1.0
            moved[frame] = target[:3] - before[:3]
        assert np.linalg.norm(moved["ee"] - moved["world"]) > 0.005
        # turn the end effector 0.4 rad about its own x axis: the same ee action now goes another way
        env = envs["ee"]
        for _ in range(8):
            env.step(np.array([0, 0, 0, 1.0, 0, 0], np.float32))
        r2 = quat_to_matrix(env.ee_target[3:])
        before = env.ee_target[:3].copy()
        env.step(np.array([0, 0, 0.6, 0, 0, 0], np.float32))
        np.testing.assert_allclose(env.ee_target[:3] - before, r2 @ [0.0, 0.0, 0.006], atol=1e-12)
        assert np.linalg.norm(r2[:, 2] - quat_to_matrix(envs["world"].ee_target[3:])[:, 2]) > 0.3
    finally:
        for env in envs.values():
            env.close()


# ---- the null space -------------------------------------------------------------------------------------------------

def test_nullspace_pull_moves_the_elbow_to_the_rest_pose_without_moving_the_end_effector() -> None:
    """The kuka (7 joints) has one joint motion that leaves its end effector where it is. Pulled towards another
    rest pose for 2 s, it moves along it to a pose with its end effector unmoved; put there with its own rest pose
    (KUKA_Q0), it goes back: within 0.02 rad of the rest pose, the end effector within 2 mm and 1° of its target
    the whole time. Without the pull the joints stay where they are."""
    other = np.array(KUKA_Q0) + [0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0]
    env = arm_env("kuka", "ee_delta_pos", nullspace_gain=0.2, rest_pose=other)
    try:
        env.reset(seed=0)
        for _ in range(120):
            env.step(zero(env))
        turned = env.qpos_qvel()[0]
        assert np.linalg.norm(turned - KUKA_Q0) > 0.3
    finally:
        env.close()
    moved = {}
    for gain in (0.0, 0.2):
        env = arm_env("kuka", "ee_delta_pos", nullspace_gain=gain)
        try:
            env.reset(seed=0, options={"qpos": turned})
            target = env.ee_target.copy()
            for _ in range(120):
                env.step(zero(env))
                mm, deg = errors(env, target)
                assert mm < 2.0 and deg < 1.0, f"gain {gain}: the end effector moved {mm:.3f} mm, {deg:.3f}°"
            moved[gain] = np.abs(env.qpos_qvel()[0] - KUKA_Q0).max()
        finally:
            env.close()
    assert moved[0.2] < 0.02 and moved[0.0] > 0.3, moved


# ---- the gripper ----------------------------------------------------------------------------------------------------

def cube_on_the_floor(client: int) -> int:
    """A builder: the ground, a fixed Panda, a 5 cm, 0.1 kg cube (cube_small.urdf) in reach; returns the Panda."""
    p.loadURDF("plane.urdf", physicsClientId=client)
    robot = p.loadURDF("franka_panda/panda.urdf", useFixedBase=True, physicsClientId=client)
    p.loadURDF("cube_small.urdf", [0.55, 0.0, 0.025], physicsClientId=client)
    return robot


def test_gripper_terms_read_its_opening_and_its_contacts() -> None:
    """A RobotEnv gripper (builder scene): open at the start, closed on nothing, half open at 0, on a cube its width
    and a contact with the cube but not the ground; the closed fingers lift the cube."""
    env = RobotEnv(cube_on_the_floor, control="ee_delta_pos", gripper="panda", initial_qpos=PANDA_Q0,
                   observation=("q", "gripper_opening", "gripper_contact:cube.urdf", "gripper_contact:plane"))
    layout = env.observation_layout
    try:
        assert env.action_space.shape == (4,) and env.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
        low, high = env.observation_space.low, env.observation_space.high
        assert low[layout["gripper_opening"]] == 0.0 and high[layout["gripper_contact:plane"]] == 1.0
        obs, _ = env.reset(seed=0)
        assert obs[layout["gripper_opening"]] == pytest.approx(0.08, abs=1e-6)  # episodes start open
        assert obs[layout["gripper_contact:cube.urdf"]] == 0.0
        for _ in range(40):
            obs, *_ = env.step(np.array([0, 0, 0, -1.0], np.float32))
        assert obs[layout["gripper_opening"]] == pytest.approx(0.0, abs=1e-3)  # closed on nothing
        for _ in range(40):
            obs, *_ = env.step(np.array([0, 0, 0, 0.0], np.float32))
        assert obs[layout["gripper_opening"]] == pytest.approx(0.04, abs=1e-3)  # 0: half open
        cube = env.body_pose("cube.urdf")[0]
        while env.ee_target[2] > cube[2] + 1e-9:
            env.step(arm_action(env, np.clip((cube - env.ee_target[:3]) / 0.01, -1, 1), 1.0))
        for _ in range(30):
            obs, *_ = env.step(np.array([0, 0, 0, -1.0], np.float32))
        assert obs[layout["gripper_contact:cube.urdf"]] == 1.0 and obs[layout["gripper_contact:plane"]] == 0.0
        assert obs[layout["gripper_opening"]] == pytest.approx(0.05, abs=0.003)  # the cube's width
        for _ in range(15):  # lift it 10 cm: it comes along
            obs, *_ = env.step(np.array([0, 0, 1.0, -1.0], np.float32))
        assert obs[layout["gripper_contact:cube.urdf"]] == 1.0 and env.body_pose("cube.urdf")[0][2] > 0.1
    finally:
        env.close()


def test_coupled_gripper_joints_hold_the_same_fraction_of_their_ranges() -> None:
    """couple_gripper on ranges of different lengths whose lower ends are off 0 (the Panda's fingers, given made-up
    ranges): the constraint is the documented gear (ratio -range_0 / range_1, offset lower_0 - lower_1 * range_0 /
    range_1, erp 0.1, max_force), and the second finger, its motor off, follows the first at its fraction as the
    first is driven. Lengths that differ are refused before any constraint is made."""
    c = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        robot = p.loadURDF("franka_panda/panda.urdf", useFixedBase=True, physicsClientId=c)
        with pytest.raises(ValueError):
            couple_gripper(c, robot, [9, 10], [0.0], [0.04, 0.04], 25.0)
        assert p.getNumConstraints(physicsClientId=c) == 0
        lower, upper = [0.004, 0.01], [0.036, 0.026]  # ranges 0.032 and 0.016
        ids = couple_gripper(c, robot, [9, 10], lower, upper, 25.0)
        assert ids == [p.getConstraintUniqueId(0, physicsClientId=c)] and p.getNumConstraints(physicsClientId=c) == 1
        info = p.getConstraintInfo(ids[0], physicsClientId=c)
        assert info[1] == 9 and info[3] == 10 and info[4] == p.JOINT_GEAR
        np.testing.assert_allclose(info[10:15], (25.0, -2.0, 0, 0.004 - 0.01 * 2.0, 0.1), rtol=1e-12)
        p.setJointMotorControl2(robot, 10, p.VELOCITY_CONTROL, force=0.0, physicsClientId=c)
        for frac in (0.9, 0.2, 0.6):
            p.setJointMotorControl2(robot, 9, p.POSITION_CONTROL, targetPosition=lower[0] + frac * 0.032, force=20.0,
                                    physicsClientId=c)
            for _ in range(240):
                p.stepSimulation(physicsClientId=c)
            q = [p.getJointState(robot, j, physicsClientId=c)[0] for j in (9, 10)]
            np.testing.assert_allclose([(q[i] - lower[i]) / (upper[i] - lower[i]) for i in (0, 1)], frac, atol=0.02)
    finally:
        p.disconnect(c)


@pytest.mark.parametrize("gripper,message", [
    ("robotiq", "gripper='robotiq' is not a known gripper (['panda']); pass its joint names, e.g. "
     "gripper=('finger_joint_a', 'finger_joint_b')"),
    (42, "gripper=42 must be a preset name (['panda']) or distinct joint names (strings)"),
    ((), "gripper=() must be a preset name (['panda']) or distinct joint names (strings)"),
    (("finger_a", 3), "gripper=('finger_a', 3) must be a preset name (['panda']) or distinct joint names (strings)"),
    (("finger_a", "finger_a"),
     "gripper=('finger_a', 'finger_a') must be a preset name (['panda']) or distinct joint names (strings)"),
], ids=["unknown-preset", "not-a-sequence", "empty", "not-strings", "repeated"])
def test_gripper_names_refuse_what_is_not_a_preset_or_distinct_joint_names(gripper, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        gripper_names(gripper)


def test_gripper_names_take_none_a_preset_or_joint_names() -> None:
    assert gripper_names(None) == ()
    assert gripper_names("panda") == ("panda_finger_joint1", "panda_finger_joint2")
    assert gripper_names(["finger_a", "finger_b"]) == ("finger_a", "finger_b")


def grasp(env: gym.Env) -> list[np.ndarray]:
    """Drive a PandaPush env (ee_delta_pos, gripper) to grasp its cube and lift it 10 cm; returns the actions."""
    base = env.unwrapped
    actions = []

    def go(goal: np.ndarray, opening: float, steps: int) -> None:
        for _ in range(steps):
            a = np.append(np.clip((goal - base.ee_target[:3]) / base.max_step, -1, 1), opening).astype(np.float32)
            env.step(a)
            actions.append(a)

    cube = base.body_pose("cube")[0]
    go(cube + [0, 0, 0.1], 1.0, 15)
    go(cube, 1.0, 15)
    go(cube, -1.0, 10)
    go(cube + [0, 0, 0.1], -1.0, 10)
    return actions


def shake_actions(env: gym.Env) -> list[np.ndarray]:
    """One second of sinusoidal motion, 4 cm at 2 Hz sideways and 3 cm up and down, as deltas of the target."""
    base = env.unwrapped
    centre = base.ee_target[:3].copy()
    steps = round(1.0 / base.dt)
    out, target = [], centre.copy()
    for k in range(1, steps + 1):
        phase = np.sin(2 * np.pi * 2.0 * k * base.dt)
        goal = centre + [0.0, 0.04 * phase, 0.03 * phase]
        a = np.clip((goal - target) / base.max_step, -1, 1)
        target = target + a * base.max_step
        out.append(np.append(a, -1.0).astype(np.float32))
    return out


def hand_offset(env: gym.Env) -> np.ndarray:
    """The cube's centre in the gripper's frame (m)."""
    base = env.unwrapped
    s = p.getLinkState(base.panda, 11, computeForwardKinematics=1, physicsClientId=base.client)
    return quat_to_matrix(s[5]).T @ (base.body_pose("cube")[0] - np.array(s[4]))


def test_a_grasped_cube_holds_through_a_shake() -> None:
    """PandaPush with the gripper: the Panda grasps its 5 cm, 0.1 kg cube, lifts it 10 cm and shakes it for 1 s
    (4 cm at 2 Hz sideways, 3 cm up and down: up to 6 m/s²). The cube stays in contact with the fingers and within
    5 mm of where it sat in the hand (measured: 0.05 mm; without the fingers' coupling it slides ±15 mm)."""
    env = gym.make("pixelrig/PandaPush-v0", control="ee_delta_pos", gripper="panda", max_episode_steps=1000)
    try:
        env.reset(seed=3)
        base = env.unwrapped
        grasp(env)
        held = hand_offset(env)
        assert base.body_pose("cube")[0][2] > 0.7  # lifted off the table (top at 0.625)
        assert np.linalg.norm(held) < 0.01
        for a in shake_actions(env):
            obs, *_ = env.step(a)
            assert gripper_contact(base.client, base.panda, FINGERS, base.cube) == 1.0
            assert np.linalg.norm(hand_offset(env) - held) < 0.005, hand_offset(env) - held
            assert 0.045 < obs[-1] < 0.055  # the gap between the fingers: the cube's width
        assert base.body_pose("cube")[0][2] > 0.7
    finally:
        env.close()


def test_snapshots_restore_the_grasp_the_target_and_the_task_bit_exactly() -> None:
    """Mid-grasp (cube lifted), a snapshot; the shake's observations after restoring (in place, rebuilt, and into a
    fresh env from bytes) equal the first run's bit for bit, and so do the targets."""
    kwargs = {"control": "ee_delta_pos", "gripper": "panda", "max_episode_steps": 1000}
    env = gym.make("pixelrig/PandaPush-v0", **kwargs)
    fresh = gym.make("pixelrig/PandaPush-v0", **kwargs)
    try:
        env.reset(seed=3)
        grasp(env)
        snap = snapshot(env)
        target = env.unwrapped.ee_target.copy()
        actions = shake_actions(env)

        def run(e: gym.Env) -> list:
            return [e.step(a) for a in actions] + [e.unwrapped.ee_target.copy(), physics_state(e.unwrapped.client)]

        first = run(env)
        restore(env, snap)
        assert_trees_equal(env.unwrapped.ee_target, target)
        assert_trees_equal(run(env), first)
        assert_restores_exactly(env, fresh, snap, run)
    finally:
        env.close()
        fresh.close()


@pytest.mark.parametrize("kwargs", [
    {"source": "franka_panda/panda.urdf", "gripper": "panda",
     "initial_qpos": PANDA_Q0, "control": TaskSpaceConfig("ee_delta_pose", ee_frame="ee")},
    {"source": "xarm/xarm6_robot.urdf", "control": "ee_pose", "initial_qpos": XARM_Q0},
], ids=["panda_ee_delta_pose_gripper", "xarm6_ee_pose"])
def test_same_seed_and_actions_give_the_same_observations(kwargs: dict) -> None:
    envs = [gym.make("pixelrig/Robot-v0", **kwargs) for _ in range(2)]
    try:
        runs = []
        for env in envs:
            env.action_space.seed(5)
            out = [env.reset(seed=5)]
            out += [env.step(env.action_space.sample()) for _ in range(60)]
            runs.append(out + [env.unwrapped.ee_target])
        assert_trees_equal(runs[0], runs[1])
    finally:
        for env in envs:
            env.close()


# ---- the Panda tasks ------------------------------------------------------------------------------------------------

def test_panda_tasks_keep_their_controller_unless_asked() -> None:
    """By default the Panda tasks act as before (pybullet's IK, 3 actions, fingers closed, no extra observation, no
    constraint); control= and gripper= add the controller's actions and observations."""
    plain = gym.make("pixelrig/PandaPush-v0")
    opted = gym.make("pixelrig/PandaPush-v0", control="ee_pose", gripper="panda")
    reach = gym.make("pixelrig/PandaReach-v0", control="ee_delta_pose", ee_frame="ee")
    gripping = None
    try:
        assert plain.action_space == gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
        assert plain.observation_space.shape == (22,) and type(plain.unwrapped.controller).__name__ == "PybulletIK"
        plain.reset(seed=0)
        assert p.getNumConstraints(physicsClientId=plain.unwrapped.client) == 0
        assert plain.unwrapped.ee_target is None
        assert opted.action_space.shape == (8,) and opted.observation_space.shape == (27,)
        np.testing.assert_array_equal(opted.action_space.low[:3], PandaEnv.workspace_low.astype(np.float32))
        obs, _ = opted.reset(seed=0)
        assert obs[-1] == pytest.approx(0.08, abs=1e-6)  # open
        np.testing.assert_allclose(obs[22:26], opted.unwrapped.ee_target[3:], atol=1e-6)
        assert reach.action_space.shape == (6,) and reach.observation_space.shape == (14,)
        gripping = gym.make("pixelrig/PandaPush-v0", gripper="panda")  # pybullet's IK and the gripper
        assert gripping.action_space.shape == (4,) and gripping.observation_space.shape == (23,)
        gripping.reset(seed=0)
        for _ in range(10):
            obs, *_ = gripping.step(np.array([0.0, 0.0, 0.0, -1.0], np.float32))
        assert obs[-1] < 0.001  # closed
    finally:
        for env in (plain, opted, reach, gripping):
            if env is not None:
                env.close()


@pytest.mark.parametrize("control", ["ee_delta_pos", "ee_pose"])
def test_panda_reach_is_solved_with_task_space_control(control: str) -> None:
    env = gym.make("pixelrig/PandaReach-v0", control=control)
    try:
        for seed in range(3):
            obs, info = env.reset(seed=seed)
            for _ in range(50):
                if control == "ee_pose":
                    action = np.concatenate([obs[6:9], obs[10:14]])
                else:
                    action = np.clip((obs[6:9] - obs[0:3]) / 0.05, -1, 1)
                obs, reward, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    break
            assert info["is_success"], f"seed {seed}: {info}"
    finally:
        env.close()


# ---- bad input ------------------------------------------------------------------------------------------------------

BAD = [
    ({"source": "kuka_iiwa/model.urdf", "control": TaskSpaceConfig("ee_delta_pos", ee_link="tool0")},
     "ee_link='tool0' is not a link of the robot; its links: ['lbr_iiwa_link_0', 'lbr_iiwa_link_1'"),
    ({"source": "franka_panda/panda.urdf", "gripper": ("panda_finger_joint1", "finger3")},
     "gripper joints ['finger3'] are not movable joints of the robot; movable joints: ['panda_joint1'"),
    ({"source": "kuka_iiwa/model.urdf", "control": TaskSpaceConfig("ee_delta_pos", rest_pose=(0.0,) * 3)},
     "rest_pose has shape (3,), expected (7,) for joints ['lbr_iiwa_joint_1'"),
    ({"source": "kuka_iiwa/model.urdf", "gripper": "robotiq"}, "gripper='robotiq' is not a known gripper (['panda'])"),
    ({"source": "kuka_iiwa/model.urdf", "gripper_force": 30.0}, "gripper_force=30.0 needs a gripper"),
    ({"source": "franka_panda/panda.urdf", "gripper": "panda", "joints": ["panda_joint1", "panda_finger_joint1"]},
     "joints ['panda_finger_joint1'] are in both joints= and gripper="),
    ({"source": "kuka_iiwa/model.urdf", "observation": ("q", "gripper_opening")},
     "observation term 'gripper_opening' needs a gripper of two or more joints: pass gripper="),
    ({"source": "mjcf/ant.xml", "control": "ee_delta_pos"}, "task-space control needs a fixed base"),
    ({"source": "kuka_iiwa/model.urdf", "control": TaskSpaceConfig("ee_delta_pos", ee_link="lbr_iiwa_link_0")},
     "no actuated joint lies between the base and the end-effector link 'lbr_iiwa_link_0'"),
]


CONFIG_BAD = [
    (lambda: TaskSpaceConfig("ee_delta_pose", ee_frame="tool"), "ee_frame must be one of ('world', 'ee'): got 'tool'"),
    (lambda: TaskSpaceConfig("ee_pose", ee_frame="ee"),
     "ee_frame='ee' applies to the delta modes; control='ee_pose' takes an absolute pose"),
    (lambda: TaskSpaceConfig("ee_delta_pos", max_delta_pos=-0.1), "max_delta_pos=-0.1 must be a finite number > 0"),
    (lambda: TaskSpaceConfig("ee_delta_pos", workspace=((0, 0, 0), (1, -1, 1))),
     "workspace=((0, 0, 0), (1, -1, 1)) needs low < high on every axis"),
    (lambda: TaskSpaceConfig("ee_delta_pos", nullspace_gain=2.0), "nullspace_gain=2.0 must be a number in [0, 1]"),
    (lambda: TaskSpaceConfig("position"), "task-space control must be one of ('ee_delta_pos', 'ee_delta_pose'"),
    (lambda: JointConfig("ee_delta_pos"), "joint control must be one of ('torque', 'position', 'velocity'): got "
     "'ee_delta_pos'; task-space control takes TaskSpaceConfig"),
    (lambda: RobotEnv("kuka_iiwa/model.urdf", control="ik"), "control must be one of ('torque', 'position', "
     "'velocity', 'ee_delta_pos', 'ee_delta_pose', 'ee_pose'): got 'ik'"),
]


@pytest.mark.parametrize("make,message", CONFIG_BAD, ids=[b[1][:40] for b in CONFIG_BAD])
def test_bad_controller_configs_are_refused_by_name(make, message: str) -> None:
    """A controller's configuration checks itself where it is made: the message names the bad field and value."""
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


NUMBER = "must be a finite number > 0"
GAIN = "must be a number in [0, 1] (0: no pull to the rest pose)"
CORNERS = "must be (low, high), two corners (x, y, z) in metres"
THREE = "must be (low, high), two corners of 3 finite numbers (m)"
CONFIG_MESSAGES = [  # each check of TaskSpaceConfig and its whole message
    ({"control": "position"}, "task-space control must be one of ('ee_delta_pos', 'ee_delta_pose', 'ee_pose', "
     "'ee_delta_pitch_roll'): got 'position'"),
    ({"ee_frame": "tool"}, "ee_frame must be one of ('world', 'ee'): got 'tool'"),
    ({"control": "ee_pose", "ee_frame": "ee"}, "ee_frame='ee' applies to the delta modes; control='ee_pose' takes an "
     "absolute pose in the world frame: leave ee_frame out"),
    ({"max_delta_pos": True}, f"max_delta_pos=True {NUMBER}"),
    ({"max_delta_pos": 0}, f"max_delta_pos=0 {NUMBER}"),
    ({"max_delta_rot": "0.1"}, f"max_delta_rot='0.1' {NUMBER}"),
    ({"max_delta_rot": -0.5}, f"max_delta_rot=-0.5 {NUMBER}"),
    ({"ik_damping": float("nan")}, f"ik_damping=nan {NUMBER}"),
    ({"ik_damping": 0.0}, f"ik_damping=0.0 {NUMBER}"),
    ({"target_lead": float("inf")}, f"target_lead=inf {NUMBER}"),
    ({"target_lead": -1}, f"target_lead=-1 {NUMBER}"),
    ({"nullspace_gain": True}, f"nullspace_gain=True {GAIN}"),
    ({"nullspace_gain": "0.1"}, f"nullspace_gain='0.1' {GAIN}"),
    ({"nullspace_gain": -0.01}, f"nullspace_gain=-0.01 {GAIN}"),
    ({"nullspace_gain": 1.01}, f"nullspace_gain=1.01 {GAIN}"),
    ({"ee_link": 3}, "ee_link=3 must be a link name (a string)"),
    ({"workspace": 5}, f"workspace=5 {CORNERS}"),
    ({"workspace": ((0, 0, 0), ("a", 0, 0))}, f"workspace=((0, 0, 0), ('a', 0, 0)) {CORNERS}"),
    ({"workspace": ((0, 0, 0), (1, 1, 1), (2, 2, 2))}, f"workspace=((0, 0, 0), (1, 1, 1), (2, 2, 2)) {CORNERS}"),
    ({"workspace": ((0, 0), (1, 1, 1))}, f"workspace=((0, 0), (1, 1, 1)) {THREE}"),
    ({"workspace": ((0, 0, 0), (1, 1))}, f"workspace=((0, 0, 0), (1, 1)) {THREE}"),
    ({"workspace": ((0, 0, 0), (1, 1, np.inf))}, f"workspace=((0, 0, 0), (1, 1, inf)) {THREE}"),
    ({"workspace": ((np.nan, 0, 0), (1, 1, 1))}, f"workspace=((nan, 0, 0), (1, 1, 1)) {THREE}"),
    ({"workspace": ((0, 0, 0), (1, 0, 1))}, "workspace=((0, 0, 0), (1, 0, 1)) needs low < high on every axis"),
    ({"control": "ee_delta_pitch_roll", "ee_frame": "ee"}, "ee_frame='ee': control='ee_delta_pitch_roll' turns about "
     "the arm's own pitch and roll axes and moves in the world's axes; leave ee_frame out"),
    ({"ee_offset": (0.0, 0.1)}, "ee_offset=(0.0, 0.1) must be 3 finite numbers (m, in the link's frame)"),
    ({"ee_offset": (0.0, 0.1, 0.2, 0.3)}, "ee_offset=(0.0, 0.1, 0.2, 0.3) must be 3 finite numbers (m, in the link's "
     "frame)"),
    ({"ee_offset": (0.0, float("nan"), 0.2)}, "ee_offset=(0.0, nan, 0.2) must be 3 finite numbers (m, in the link's "
     "frame)"),
]


@pytest.mark.parametrize("kwargs,message", CONFIG_MESSAGES, ids=[m[:48] for _, m in CONFIG_MESSAGES])
def test_each_controller_setting_is_checked_with_its_whole_message(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        TaskSpaceConfig(**{"control": "ee_delta_pose", **kwargs})


def test_controller_settings_are_kept_as_floats() -> None:
    """Numbers given as ints (the boundaries included: a gain of 0 or 1) are kept as floats, the workspace as two
    tuples of floats; the frames each mode takes are accepted."""
    for gain in (0, 1):
        c = TaskSpaceConfig("ee_delta_pos", max_delta_pos=1, max_delta_rot=2, ik_damping=3, target_lead=4,
                            nullspace_gain=gain, workspace=([0, 0, 0], np.array([1, 2, 3])))
        values = (c.max_delta_pos, c.max_delta_rot, c.ik_damping, c.target_lead, c.nullspace_gain)
        assert values == (1.0, 2.0, 3.0, 4.0, gain) and all(type(v) is float for v in values)
        assert c.workspace == ((0.0, 0.0, 0.0), (1.0, 2.0, 3.0))
        assert all(type(v) is float for corner in c.workspace for v in corner)
        assert type(c.workspace) is tuple and all(type(corner) is tuple for corner in c.workspace)
    offset = TaskSpaceConfig("ee_delta_pos", ee_offset=np.array([0, 1, 2])).ee_offset
    assert offset == (0.0, 1.0, 2.0) and type(offset) is tuple and all(type(v) is float for v in offset)
    assert TaskSpaceConfig("ee_delta_pitch_roll", ee_frame="world").ee_frame == "world"
    assert TaskSpaceConfig("ee_pose", ee_frame="world").ee_frame == "world"  # ee_pose takes the world frame
    assert TaskSpaceConfig("ee_delta_pose", ee_frame="ee").ee_frame == "ee"


@pytest.mark.parametrize("kwargs,message", BAD, ids=[b[1][:40] for b in BAD])
def test_bad_options_are_refused_by_name_and_leave_nothing(kwargs: dict, message: str) -> None:
    before = connected_clients()
    with pytest.raises(ValueError, match=re.escape(message)):
        RobotEnv(**kwargs)
    assert connected_clients() == before


@pytest.mark.parametrize("kwargs,message", [
    ({"control": "ik"}, "control must be one of ('pybullet_ik', 'ee_delta_pos', 'ee_delta_pose', 'ee_pose')"),
    ({"gripper": "robotiq"}, "gripper must be None (fingers closed) or 'panda'"),
    ({"ee_frame": "ee"}, "ee_frame='ee' applies to control='ee_delta_pos' or 'ee_delta_pose'"),
])
def test_bad_panda_task_options_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        gym.make("pixelrig/PandaPush-v0", **kwargs)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_actions_are_refused_and_change_nothing(bad: float) -> None:
    env = gym.make("pixelrig/Robot-v0", source="franka_panda/panda.urdf", control="ee_delta_pose", gripper="panda",
                   initial_qpos=PANDA_Q0)
    try:
        env.reset(seed=0)
        for _ in range(5):
            env.step(np.array([0.5, 0, 0, 0, 0.3, 0, -1], np.float32))
        before = env.unwrapped.export_state()
        for index in (0, 4, 6):
            action = np.zeros(7, np.float32)
            action[index] = bad
            with pytest.raises(ValueError, match=re.escape(f"action contains NaN or inf at indices [{index}]")):
                env.step(action)
            assert_trees_equal(before, env.unwrapped.export_state())
    finally:
        env.close()


def test_zero_and_tiny_quaternions_keep_the_orientation() -> None:
    """ee_pose normalises its quaternion; one shorter than 1e-6 (zero, tiny) has no direction: the target keeps
    its orientation and takes the position. Nothing becomes NaN."""
    env = arm_env("kuka", "ee_pose")
    try:
        env.reset(seed=0)
        start = env.ee_target.copy()
        goal = start[:3] + [0.05, 0.0, -0.05]
        for quat in ([0.0, 0.0, 0.0, 0.0], [1e-30, 0.0, 0.0, 1e-30], [0.0, 0.0, 0.0, 9e-7]):
            obs, *_ = env.step(np.concatenate([goal, quat]).astype(np.float32))
            assert np.isfinite(obs).all()
            np.testing.assert_array_equal(env.ee_target[3:], start[3:])
            np.testing.assert_allclose(env.ee_target[:3], goal.astype(np.float32), atol=0)
        env.step(np.concatenate([goal, [0.0, 0.0, 0.0, 2.0]]).astype(np.float32))
        np.testing.assert_array_equal(env.ee_target[3:], [0.0, 0.0, 0.0, 1.0])
    finally:
        env.close()


# ---- pure functions -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rotvec", [(0.0, 0.0, 0.0), (1e-9, -2e-9, 3e-9), (0.3, -0.2, 0.9), (np.pi - 1e-9, 0.0, 0.0),
                                    (0.0, 2.5, -1.0)])
def test_axis_angle_round_trips_through_quaternions(rotvec: tuple) -> None:
    v = np.array(rotvec)
    q = rotvec_to_quat(v)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(quat_to_rotvec(q), v, atol=1e-12)
    np.testing.assert_allclose(quat_to_rotvec(-q), v, atol=1e-12)  # q and -q: the same rotation
    a, b = rotvec_to_quat([0.2, 0.1, -0.4]), q
    np.testing.assert_allclose(quat_to_matrix(quat_multiply(a, b)), quat_to_matrix(a) @ quat_to_matrix(b),
                               atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(q).reshape(-1), p.getMatrixFromQuaternion(q.tolist()), atol=1e-12)


def test_damped_step_is_bounded_where_the_jacobian_loses_rank() -> None:
    """A Jacobian with a zero row (a direction the arm cannot move in): the damped step is finite and at most
    |e| / (2 λ) long; it solves the other directions almost exactly."""
    jac = np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 0.0], [0.2, 1.0, 0.3]])
    error = np.array([0.01, 0.05, -0.02])
    dq = dls_step(jac, error, 0.05, np.ones(3))
    assert np.all(np.isfinite(dq)) and np.linalg.norm(dq) <= np.linalg.norm(error) / (2 * 0.05)
    np.testing.assert_allclose((jac @ dq)[[0, 2]], error[[0, 2]], atol=2e-3)
    frozen = dls_step(jac, error, 0.05, np.array([1.0, 0.0, 1.0]))
    assert frozen[1] == 0.0


def test_hold_near_pulls_a_target_back_along_the_straight_line() -> None:
    pos, quat = np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0])
    target = np.concatenate([[0.3, 0.4, 0.0], rotvec_to_quat([0.0, 0.0, 1.0])])
    held = hold_near(target, pos, quat, 0.1, 0.2)
    np.testing.assert_allclose(held[:3], [0.06, 0.08, 0.0], atol=1e-15)
    np.testing.assert_allclose(quat_to_rotvec(held[3:]), [0.0, 0.0, 0.2], atol=1e-12)
    near = np.concatenate([[0.01, 0.0, 0.0], rotvec_to_quat([0.1, 0.0, 0.0])])
    np.testing.assert_array_equal(hold_near(near, pos, quat, 0.1, 0.2), near)


def test_gripper_commands_map_to_the_joint_ranges() -> None:
    lower, upper = np.array([0.0, -0.5]), np.array([0.04, 0.5])
    np.testing.assert_array_equal(gripper_positions(-1.0, lower, upper), lower)
    np.testing.assert_array_equal(gripper_positions(1.0, lower, upper), upper)
    np.testing.assert_allclose(gripper_positions(0.0, lower, upper), [0.02, 0.0])
    np.testing.assert_array_equal(gripper_positions(7.0, lower, upper), upper)


def test_registered_robot_takes_the_controller_options() -> None:
    env = gym.make("pixelrig/Robot-v0", source="xarm/xarm6_robot.urdf", initial_qpos=XARM_Q0,
                   control=TaskSpaceConfig("ee_delta_pose", ee_frame="ee", max_delta_pos=0.02, max_delta_rot=0.1,
                                           workspace=((0.0, -0.5, 0.0), (0.8, 0.5, 0.8))))
    try:
        env.reset(seed=0)
        assert env.unwrapped.ee_link == "link6"
        np.testing.assert_array_equal(env.unwrapped.controller.solver.low, [0.0, -0.5, 0.0])
        assert pixelrig.snapshot(env).to_bytes()
    finally:
        env.close()


def _link(name: str) -> str:
    return (f'<link name="{name}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" '
            f'ixz="0" iyz="0"/></inertial></link>')


def _joint(name: str, kind: str, parent: str, child: str, z: float, axis: str, limits: tuple[float, float]) -> str:
    xyz = "0.2 -0.1 0.1" if parent == "base" else f"0 0 {z}"
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>'
            f'<limit lower="{limits[0]}" upper="{limits[1]}" effort="100" velocity="2"/></joint>')


@contextlib.contextmanager
def a_world_made_before() -> Iterator[int]:
    """A pybullet world connected before the env under test, holding the ground and a cube without joints under the
    body ids an arm gets: a call that forgets its world's ``physicsClientId`` reads pybullet's first world, this one
    or an older one, never the env's own, and fails."""
    other = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=other)
        p.loadURDF("plane.urdf", physicsClientId=other)
        p.loadURDF("cube_small.urdf", physicsClientId=other)
        yield other
    finally:
        p.disconnect(other)


def reach_arm(travel: tuple[float, float]) -> str:
    """A made-up arm: j1 at (0.2, -0.1, 0.1) on the base, links 0.3, 0.25 and 0.2 m apart at its zero pose, the third
    joint prismatic from ``travel[0]`` to ``travel[1]`` (m; pybullet reads upper below lower as no limits) and the
    second revolute with limits (its qIndex is 1, pybullet's JOINT_PRISMATIC)."""
    return ("<robot name='reach_arm'>" + "".join(_link(n) for n in ("base", "l1", "l2", "l3", "l4"))
            + _joint("j1", "revolute", "base", "l1", 0.0, "0 0 1", (-3.0, 3.0))
            + _joint("j2", "revolute", "l1", "l2", 0.3, "0 1 0", (-1.5, 1.5))
            + _joint("j3", "prismatic", "l2", "l3", 0.25, "0 0 1", travel)
            + _joint("j4", "revolute", "l3", "l4", 0.2, "0 1 0", (-1.5, 1.5)) + "</robot>")


@pytest.mark.parametrize("travel, reach", [((-0.05, 0.15), 0.95), ((0.0, -1.0), 0.75)])
def test_the_default_workspace_is_the_reach_around_the_first_joint(tmp_path: Path, travel, reach: float) -> None:
    """docs/manipulation.md: the target is kept in the workspace box, by default "the arm's reach around its first
    joint": the box centred on the first arm joint's frame whose half-size is the chain's length from it to the
    end-effector link (0.75 m here) plus the travel of its prismatic joints (0.2 m; none for one without limits).
    ``ee_pose`` actions are bounded by it. Made in a pybullet world other than the first one, whose body of the same
    id is another robot."""
    urdf = tmp_path / "reach_arm.urdf"
    urdf.write_text(reach_arm(travel))
    with a_world_made_before() as other:
        env = RobotEnv(str(urdf), control="ee_pose")
        try:
            assert env.client != other
            centre = np.array([0.2, -0.1, 0.1])
            low, high = env.action_space.low[:3], env.action_space.high[:3]
            np.testing.assert_allclose(low, centre - reach, atol=1e-6)
            np.testing.assert_allclose(high, centre + reach, atol=1e-6)
            env.reset(seed=0)  # measured and solved in its own world too
            action = np.concatenate([centre + [0.1, 0.1, 0.5], [0.0, 0.0, 0.0, 1.0]]).astype(np.float32)
            for _ in range(3):
                obs, *_ = env.step(action)
            assert np.isfinite(obs).all()
        finally:
            env.close()


def test_arm_chain_reads_the_limits_it_is_given_as_documented() -> None:
    """``limits`` as arm_chain documents them: lower >= upper is no range (-inf, inf), a velocity NaN or <= 0 is
    none (inf); the others are kept as given."""
    c = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        kuka = p.loadURDF("kuka_iiwa/model.urdf", useFixedBase=True, physicsClientId=c)
        limits = {0: (0.0, -1.0, 1.0), 1: (-1.0, 1.0, 0.5), 2: (0.3, 0.3, 0.0), 3: (-2.0, 2.0, float("nan")),
                  4: (-2.0, 2.0, 2.0), 5: (-2.0, 2.0, -1.0), 6: (-2.5, 2.5, 3.0)}
        chain = arm_chain(c, kuka, None, list(range(7)), limits, "test")
        inf = np.inf
        assert chain.lower.tolist() == [-inf, -1.0, -inf, -2.0, -2.0, -2.0, -2.5]
        assert chain.upper.tolist() == [inf, 1.0, inf, 2.0, 2.0, 2.0, 2.5]
        assert chain.speed.tolist() == [1.0, 0.5, inf, inf, 2.0, inf, 3.0]
    finally:
        p.disconnect(c)


def test_arm_chain_refuses_a_moving_base_and_odd_joints_by_name(tmp_path: Path) -> None:
    c = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)
        arm = tmp_path / "arm.urdf"
        arm.write_text(reach_arm((-0.05, 0.15)))
        free = p.loadURDF(str(arm), physicsClientId=c)  # its base has a mass: it moves
        with pytest.raises(ValueError) as info:
            arm_chain(c, free, None, list(range(4)), {}, "RobotEnv('arm')")
        assert str(info.value) == ("RobotEnv('arm'): task-space control needs a fixed base (the robot's base moves): "
                                   "pass fixed_base=True or load the robot with useFixedBase=True")
        urdf = tmp_path / "ball.urdf"
        urdf.write_text("<robot name='ball'>" + _link("base") + _link("l1") + _link("l2")
                        + _joint("j1", "revolute", "base", "l1", 0.0, "0 0 1", (-1.0, 1.0))
                        + _joint("ball", "spherical", "l1", "l2", 0.3, "0 0 1", (-1.0, 1.0)) + "</robot>")
        ball = p.loadURDF(str(urdf), useFixedBase=True, physicsClientId=c)
        with pytest.raises(ValueError) as info:
            arm_chain(c, ball, None, [0], {0: (-1.0, 1.0, 1.0)}, "RobotEnv('ball')")
        assert str(info.value) == ("RobotEnv('ball'): task-space control handles revolute, prismatic and fixed joints; "
                                   "joints ['ball'] are spherical or planar")
        fixed = p.loadURDF(str(arm), useFixedBase=True, physicsClientId=c)
        with pytest.raises(ValueError) as info:  # the base named as the end effector: no joint lies before it
            arm_chain(c, fixed, "base", list(range(4)), {}, "RobotEnv('arm')")
        assert str(info.value) == ("RobotEnv('arm'): no actuated joint lies between the base and the end-effector "
                                   "link 'base'; pass ee_link= one of the links below the arm's joints: ['base', 'l1', "
                                   "'l2', 'l3', 'l4']")
    finally:
        p.disconnect(c)


def test_the_controlled_point_is_the_offset_one() -> None:
    """``ee_offset`` moves the controlled point in the end-effector link's frame: the target starts there (the link's
    origin plus its rotation times the offset, read from pybullet here) and small deltas bring that point, not the
    link's origin, onto the target."""
    offset = np.array([0.02, -0.03, 0.1])
    env = arm_env("panda", "ee_delta_pos", ee_offset=tuple(offset))
    try:
        env.reset(seed=0)
        c, robot, link = env.client, env.robot, env.controller.solver.chain.ee_link

        def point() -> np.ndarray:
            s = p.getLinkState(robot, link, computeForwardKinematics=1, physicsClientId=c)
            return np.array(s[4]) + quat_to_matrix(s[5]) @ offset

        np.testing.assert_allclose(env.ee_target[:3], point(), atol=1e-6)
        assert abs(np.linalg.norm(env.ee_target[3:]) - 1.0) < 1e-12  # the measured orientation, normalised
        for _ in range(30):
            env.step(arm_action(env, [0.3, -0.2, 0.2]) if _ < 5 else zero(env))
        assert np.linalg.norm(env.ee_target[:3] - point()) < 0.002
    finally:
        env.close()


def test_ee_delta_pos_in_the_ee_frame_moves_along_its_axes_and_keeps_the_orientation() -> None:
    env = arm_env("kuka", "ee_delta_pos", ee_frame="ee")
    try:
        env.reset(seed=0)
        before = env.ee_target.copy()
        env.step(np.array([0.6, -0.4, 0.2], np.float32))
        d = np.array([0.6, -0.4, 0.2], np.float32).astype(np.float64) * env.control_config.max_delta_pos
        np.testing.assert_allclose(env.ee_target[:3] - before[:3], quat_to_matrix(before[3:]) @ d, atol=1e-12)
        assert np.array_equal(env.ee_target[3:], before[3:])
    finally:
        env.close()


def test_next_target_keeps_the_workspace_and_the_lead_in_every_mode() -> None:
    """The controller's next target, asked directly: an ``ee_pose`` far below the workspace is clipped to its low
    corner; a delta target far from the measured pose (position and orientation) is held within ``target_lead``
    deltas of it, in ``ee_delta_pose`` and in the SO-101's ``ee_delta_pitch_roll``, whose position is clipped to the
    workspace too."""
    env = arm_env("panda", "ee_pose")
    try:
        env.reset(seed=0)
        solver = env.controller.solver
        now = solver.measure(env.client)
        out = solver.next_target(env.ee_target, np.array([-9.0, -9.0, -9.0, 0.0, 0.0, 0.0, 1.0]), now)
        np.testing.assert_array_equal(out[:3], solver.low)
    finally:
        env.close()
    with a_world_made_before() as other:
        for env in (arm_env("panda", "ee_delta_pose"), gym.make("pixelrig/SO101Reach-v0").unwrapped):
            try:
                assert env.client != other
                env.reset(seed=0)
                solver, s = env.controller.solver, env.control_config
                now = solver.measure(env.client)
                axis = now.axes[0] if now.axes is not None else np.array([1.0, 0.0, 0.0])  # one the arm can turn about
                far = np.concatenate([now.pos + [0.3, 0.0, 0.0], quat_multiply(rotvec_to_quat(axis), now.quat)])
                out = solver.next_target(env.ee_target, np.zeros(solver.action_size), now)
                assert abs(np.linalg.norm(out[3:]) - 1.0) < 1e-12  # a unit quaternion
                out = solver.next_target(far, np.zeros(solver.action_size), now)
                assert np.linalg.norm(out[:3] - now.pos) == pytest.approx(s.target_lead * s.max_delta_pos)
                turn = quat_to_rotvec(quat_multiply(out[3:], quat_conjugate(now.quat)))
                assert np.linalg.norm(turn) == pytest.approx(s.target_lead * s.max_delta_rot, abs=1e-9)
                if solver.pitch_roll:
                    solver.low, solver.high = now.pos - 0.001, now.pos + 0.001  # a workspace of 2 mm around it
                    for sign in (1.0, -1.0):
                        out = solver.next_target(env.ee_target, np.full(solver.action_size, sign), now)
                        np.testing.assert_array_equal(out[:3], solver.high if sign > 0 else solver.low)
            finally:
                env.close()


def test_a_turn_is_solved_about_the_offset_point() -> None:
    """With ``ee_offset`` the solve's Jacobian is the offset point's: one joint step for a 0.05 rad turn with the
    point held turns the end effector about that point (it moves by under 1.5 mm, second order in the angle; solved
    about the link's origin it would swing by the angle times the 15 cm offset, 7.5 mm)."""
    env = arm_env("panda", "ee_delta_pose", ee_offset=(0.0, 0.0, 0.15))
    try:
        env.reset(seed=0)
        solver, c = env.controller.solver, env.client
        now = solver.measure(c)
        target = np.concatenate([now.pos, quat_multiply(rotvec_to_quat([0.05, 0.0, 0.0]), now.quat)])
        q = solver.joint_targets(c, target, now)
        for j, v in zip(solver.chain.joints, q, strict=True):
            p.resetJointState(env.robot, j, float(v), physicsClientId=c)
        after = solver.measure(c)
        assert np.linalg.norm(after.pos - now.pos) < 0.0015
        turned = np.linalg.norm(quat_to_rotvec(quat_multiply(after.quat, quat_conjugate(now.quat))))
        assert 0.03 < turned <= 0.05  # most of the turn (the damped solve falls short of it)
    finally:
        env.close()


def test_pitch_and_roll_needs_an_arm_of_two_joints(tmp_path: Path) -> None:
    """``ee_delta_pitch_roll`` turns about the arm's last two joints' axes: an arm of one joint is refused by name, an
    arm of two is taken."""
    c = p.connect(p.DIRECT)
    try:
        urdf = tmp_path / "short.urdf"
        urdf.write_text("<robot name='short'>" + _link("base") + _link("l1") + _link("l2")
                        + _joint("j1", "revolute", "base", "l1", 0.0, "0 0 1", (-1.0, 1.0))
                        + _joint("j2", "revolute", "l1", "l2", 0.3, "0 1 0", (-1.0, 1.0)) + "</robot>")
        robot = p.loadURDF(str(urdf), useFixedBase=True, physicsClientId=c)
        limits = {0: (-1.0, 1.0, 1.0), 1: (-1.0, 1.0, 1.0)}
        config, box = TaskSpaceConfig("ee_delta_pitch_roll"), ((-1.0, -1.0, -1.0), (1.0, 1.0, 1.0))
        one = arm_chain(c, robot, "l1", [0, 1], limits, "test")
        with pytest.raises(ValueError) as info:
            TaskSpaceController(one, config, box, 0.05)
        assert str(info.value) == ("control='ee_delta_pitch_roll' needs an arm of at least two joints (pitch, "
                                   "roll)")
        assert TaskSpaceController(arm_chain(c, robot, "l2", [0, 1], limits, "test"), config, box, 0.05).pitch_roll
    finally:
        p.disconnect(c)
