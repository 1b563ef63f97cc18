"""RobotEnv's observation terms against pybullet's own queries, the rotation forms against one another, contact
forces against the robot's weight; bodies moved by name (checked, in snapshots); body randomisation (seeded,
recorded, restored)."""

from __future__ import annotations

import copy
import pickle
import re

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig
from pixelrig import Randomization, RobotEnv, restore, snapshot
from pixelrig.control.rotations import (
    matrix_to_quat,
    matrix_to_rot6d,
    quat_to_matrix,
    rot6d_to_matrix,
    rpy_to_matrix,
    rpy_to_quat,
)
from pixelrig.envs.randomization import RANDOM_STREAMS
from pixelrig.envs.terms import BASE_TERMS, TERMS

from .conftest import assert_trees_equal, physics_state

ANT_LINKS = ("torso", "front_left_foot")
ANT_TERMS = ("q", "qd", *BASE_TERMS, *(f"link_pose:{n}" for n in ANT_LINKS), *(f"link_vel:{n}" for n in ANT_LINKS),
             "body_pose:ground", "contact_forces")


def connected_clients() -> list[int]:
    return [i for i in range(256) if p.isConnected(physicsClientId=i)]


def same_rotation(q1: np.ndarray, q2: np.ndarray) -> float:
    """Largest difference between two quaternions up to sign."""
    q1, q2 = np.asarray(q1, np.float64), np.asarray(q2, np.float64)
    return float(min(np.abs(q1 - q2).max(), np.abs(q1 + q2).max()))


@pytest.fixture(scope="module")
def ant() -> RobotEnv:
    env = gym.make("pixelrig/Robot-v0", source="mjcf/ant.xml", observation=list(ANT_TERMS), renderer="tiny")
    yield env.unwrapped
    env.close()


def expected_terms(env: RobotEnv) -> dict[str, np.ndarray]:
    """Every Ant term straight from pybullet's queries (float64)."""
    c, r = env.client, env.robot
    pos, orn = p.getBasePositionAndOrientation(r, physicsClientId=c)
    lin, ang = p.getBaseVelocity(r, physicsClientId=c)
    rot = np.array(p.getMatrixFromQuaternion(orn)).reshape(3, 3)
    states = p.getJointStates(r, [j.index for j in env.joints], physicsClientId=c)
    out = {
        "q": [s[0] for s in states], "qd": [s[1] for s in states], "base_pos": pos, "base_quat": orn,
        "base_rpy": p.getEulerFromQuaternion(orn), "base_rotmat": rot.reshape(-1),
        "base_rot6d": np.concatenate([rot[:, 0], rot[:, 1]]), "base_linvel": lin, "base_angvel": ang,
        "base_linvel_local": rot.T @ lin, "base_angvel_local": rot.T @ ang,
        "body_pose:ground": np.concatenate(p.getBasePositionAndOrientation(env.body_id("ground"), physicsClientId=c)),
    }
    # the Ant's base inertial frame is the identity, so its URDF frame is its centre-of-mass frame
    assert p.getDynamicsInfo(r, -1, physicsClientId=c)[3:5] == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))
    out["link_pose:torso"] = np.concatenate([pos, orn])
    out["link_vel:torso"] = np.concatenate([lin, ang])
    foot = env.link_indices["front_left_foot"]
    s = p.getLinkState(r, foot, computeLinkVelocity=1, computeForwardKinematics=1, physicsClientId=c)
    out["link_pose:front_left_foot"] = np.concatenate([s[4], s[5]])
    out["link_vel:front_left_foot"] = np.concatenate([s[6], s[7]])
    forces = np.zeros(p.getNumJoints(r, physicsClientId=c) + 1)
    for point in p.getContactPoints(bodyA=r, physicsClientId=c):
        forces[point[3] + 1] += point[9]
    out["contact_forces"] = forces
    return {k: np.asarray(v, np.float64) for k, v in out.items()}


EXACT = {"q", "qd", "base_pos", "base_quat", "base_linvel", "base_angvel", "link_pose:torso", "link_vel:torso",
         "link_pose:front_left_foot", "link_vel:front_left_foot", "body_pose:ground", "contact_forces"}
"""Terms that are pybullet's numbers cast to float32: equal to the cast bit for bit."""


def test_every_term_matches_pybullet(ant: RobotEnv) -> None:
    """Ant on the ground, tilted and spun, under random torques: every term equals pybullet's own query (the
    computed ones -- rpy, matrix, 6D, local velocities -- to float32 rounding)."""
    assert list(ant.observation_layout) == list(ANT_TERMS)
    ant.reset(seed=0)
    ant.set_body_pose("ant", (0.1, -0.2, 0.9), p.getQuaternionFromEuler((0.4, -0.3, 2.5)))
    ant.set_body_velocity("ant", (0.5, -0.3, 0.2), (1.0, -2.0, 3.0))
    rng = np.random.default_rng(0)
    worst: dict[str, float] = {}
    for t in range(40):
        obs = ant.step(rng.uniform(ant.action_space.low, ant.action_space.high).astype(np.float32))[0] if t else \
            ant.observe()
        expected = expected_terms(ant)
        for term, span in ant.observation_layout.items():
            got, want = obs[span].astype(np.float64), expected[term]
            if term in EXACT:
                np.testing.assert_array_equal(obs[span], want.astype(np.float32), err_msg=term)
            else:
                np.testing.assert_allclose(got, want, rtol=0, atol=2e-6 * max(1.0, np.abs(want).max()), err_msg=term)
            scaled = float(np.abs(got - want).max()) / max(1.0, float(np.abs(want).max()))
            worst[term] = max(worst.get(term, 0.0), scaled)
    assert ant.observation_space.contains(obs)
    assert max(worst.values()) < 1e-6, worst  # float32 rounding: 6e-8 of the magnitude


def test_base_link_pose_is_the_urdf_frame() -> None:
    """``link_pose:<base link>`` is the base's URDF frame: where loadURDF put it, although the Kuka's base centre of
    mass is 0.1 m away (its inertial origin is (-0.1, 0, 0.07)); other links are getLinkState's link frames."""
    env = RobotEnv("kuka_iiwa/model.urdf", base_position=(0.3, -0.2, 0.1), renderer="tiny",
                   observation=("link_pose:lbr_iiwa_link_0", "link_pose:lbr_iiwa_link_7", "base_pos"))
    try:
        obs, _ = env.reset(seed=0)
        lay = env.observation_layout
        np.testing.assert_allclose(obs[lay["link_pose:lbr_iiwa_link_0"]], [0.3, -0.2, 0.1, 0, 0, 0, 1], atol=1e-7)
        np.testing.assert_allclose(obs[lay["base_pos"]], [0.2, -0.2, 0.17], atol=1e-7)  # the centre of mass
        state = p.getLinkState(env.robot, 6, computeForwardKinematics=1, physicsClientId=env.client)
        np.testing.assert_array_equal(obs[lay["link_pose:lbr_iiwa_link_7"]],
                                      np.concatenate([state[4], state[5]]).astype(np.float32))
    finally:
        env.close()


ORIENTATIONS = [(0.0, 0.0, 0.0), (0.4, -0.3, 2.5), (-3.0, 1.2, -0.1), (0.3, np.pi / 2, 0.5),
                (0.3, -np.pi / 2, 0.5), (np.pi, 0.0, 0.0), (0.0, 0.0, -np.pi)]


@pytest.mark.parametrize("rpy", ORIENTATIONS)
def test_rotation_forms_agree(ant: RobotEnv, rpy: tuple[float, float, float]) -> None:
    """base_quat, base_rpy, base_rotmat and base_rot6d describe the same rotation (gimbal lock and ±pi included):
    rpy -> matrix -> quaternion round trips, pybullet's getQuaternionFromEuler agrees, 6D -> matrix."""
    ant.reset(seed=0)
    ant.set_body_pose("ant", (0.0, 0.0, 2.0), p.getQuaternionFromEuler(rpy))
    obs = ant.observe().astype(np.float64)
    lay = ant.observation_layout
    quat, angles = obs[lay["base_quat"]], obs[lay["base_rpy"]]
    rot = obs[lay["base_rotmat"]].reshape(3, 3)
    np.testing.assert_allclose(rpy_to_matrix(angles), rot, atol=2e-6)
    assert same_rotation(matrix_to_quat(rot), quat) < 2e-6
    assert same_rotation(rpy_to_quat(angles), quat) < 2e-6
    assert same_rotation(p.getQuaternionFromEuler(angles), quat) < 2e-6
    np.testing.assert_allclose(quat_to_matrix(quat), rot, atol=2e-6)
    np.testing.assert_allclose(matrix_to_rot6d(rot), obs[lay["base_rot6d"]], atol=0)
    np.testing.assert_allclose(rot6d_to_matrix(obs[lay["base_rot6d"]]), rot, atol=2e-6)
    assert ant.observation_space.contains(ant.observe())  # angles within [-pi, pi] x [-pi/2, pi/2] x [-pi, pi]


def test_local_velocities_are_in_the_base_frame(ant: RobotEnv) -> None:
    """A base yawed +90°: world +x is the base's -y. In general, local = R.T @ world."""
    ant.reset(seed=0)
    ant.set_body_pose("ant", (0.0, 0.0, 2.0), p.getQuaternionFromEuler((0.0, 0.0, np.pi / 2)))
    ant.set_body_velocity("ant", (1.0, 0.0, 0.0), (0.0, 0.0, 2.0))
    obs, lay = ant.observe(), ant.observation_layout
    np.testing.assert_allclose(obs[lay["base_linvel_local"]], [0.0, -1.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(obs[lay["base_angvel_local"]], [0.0, 0.0, 2.0], atol=1e-7)
    ant.set_body_pose("ant", (0.0, 0.0, 2.0), p.getQuaternionFromEuler((0.7, -0.4, 1.9)))
    obs = ant.observe()
    rot = obs[lay["base_rotmat"]].reshape(3, 3).astype(np.float64)
    for local, world in (("base_linvel_local", "base_linvel"), ("base_angvel_local", "base_angvel")):
        np.testing.assert_allclose(obs[lay[local]], rot.T @ obs[lay[world]], atol=1e-6)


def test_contact_forces_of_an_ant_at_rest_add_up_to_its_weight(ant: RobotEnv) -> None:
    """mjcf/ant.xml settled for 1 s (60 steps of 1/60 s) with zero torque: the normal forces on its links add up to
    its weight (sum of link masses × 9.81) within 10% (measured: 0.001%), and only the four feet touch."""
    ant.reset(seed=0)
    for _ in range(60):
        obs = ant.step(np.zeros(ant.action_space.shape, np.float32))[0]
    c, r = ant.client, ant.robot
    links = range(-1, p.getNumJoints(r, physicsClientId=c))
    mass = sum(p.getDynamicsInfo(r, link, physicsClientId=c)[0] for link in links)
    forces = obs[ant.observation_layout["contact_forces"]].astype(np.float64)
    weight = mass * 9.81
    assert abs(forces.sum() - weight) < 0.1 * weight, (forces.sum(), weight)
    touching = {name for name, i in ant.link_indices.items() if forces[i + 1] > 0}
    assert touching == {"front_left_foot", "front_right_foot", "left_back_foot", "right_back_foot"}


def self_touching_builder(client: int) -> int:
    """A fixed box with a 2 kg block (on two sliders) resting on it: a contact between the robot's own links."""
    box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.05, 0.05, 0.05], physicsClientId=client)
    return p.createMultiBody(
        0, box, -1, [0, 0, 1], linkMasses=[1, 2], linkCollisionShapeIndices=[box, box],
        linkVisualShapeIndices=[-1, -1], linkPositions=[[0.3, 0, 0], [-0.3, 0, 0.15]],
        linkOrientations=[[0, 0, 0, 1]] * 2, linkInertialFramePositions=[[0, 0, 0]] * 2,
        linkInertialFrameOrientations=[[0, 0, 0, 1]] * 2, linkParentIndices=[0, 1],
        linkJointTypes=[p.JOINT_PRISMATIC] * 2, linkJointAxis=[[0, 0, 1], [1, 0, 0]],
        flags=p.URDF_USE_SELF_COLLISION, physicsClientId=client,
    )


def test_a_contact_between_two_robot_links_counts_for_both() -> None:
    env = RobotEnv(self_touching_builder, effort_limits=1.0, observation=("contact_forces",), renderer="tiny")
    try:
        env.reset(seed=0)
        for _ in range(120):
            obs = env.step(np.zeros(2, np.float32))[0]
        weight = 3.0 * 9.81  # both sliding links rest on the base through the upper block
        np.testing.assert_allclose(obs, [weight, 0.0, weight], rtol=1e-3)
    finally:
        env.close()


def test_default_and_base_observation_are_these_terms() -> None:
    env = RobotEnv("mjcf/ant.xml", renderer="tiny")
    twin = RobotEnv("mjcf/ant.xml", base_observation=True, renderer="tiny")
    try:
        assert env.observation_terms == ("q", "qd") and list(env.observation_layout) == ["q", "qd"]
        assert twin.observation_terms == ("q", "qd", "base_pos", "base_quat", "base_linvel", "base_angvel")
        assert twin.observation_space.shape == (2 * 8 + 13,)
        a, _ = env.reset(seed=0)
        b, _ = twin.reset(seed=0)
        np.testing.assert_array_equal(a, b[:16])
    finally:
        env.close()
        twin.close()


VALID = ", ".join(map(repr, TERMS))
BAD_TERMS = [
    (("q", "base_quaternion"), f"unknown observation term 'base_quaternion'; terms: {VALID}"),
    (("link_pose",), "unknown observation term 'link_pose' (link_pose needs a name: 'link_pose:<name>')"),
    (("q", "q"), "observation terms ['q'] are given more than once"),
    ("q", "observation='q' must be a list or tuple of term names"),
    ((), "observation=() has no terms"),
    (("link_pose:hand",), "observation term 'link_pose:hand': robot 'ant' has no link 'hand'; its links: "
                          "['torso', 'front_left_leg', 'link0_3'"),
    (("link_vel:hand",), "observation term 'link_vel:hand': robot 'ant' has no link 'hand'"),
    (("body_pose:cube",), "observation term 'body_pose:cube': there is no body 'cube'; bodies: ['ground', 'ant']"),
]


@pytest.mark.parametrize("terms,message", BAD_TERMS, ids=[str(t) for t, _ in BAD_TERMS])
def test_bad_terms_are_errors_listing_the_valid_ones(terms, message) -> None:
    before = connected_clients()
    with pytest.raises(ValueError, match=re.escape(message)):
        gym.make("pixelrig/Robot-v0", source="mjcf/ant.xml", observation=terms, renderer="tiny")
    assert connected_clients() == before, "a pybullet client was left connected"


def test_observation_and_base_observation_together_are_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("pass observation=... or base_observation=True, not both")):
        RobotEnv("mjcf/ant.xml", observation=("q",), base_observation=True)


# ---- bodies by name --------------------------------------------------------------------------------------------

@pytest.fixture
def push() -> gym.Env:
    env = gym.make("pixelrig/PandaPush-v0", renderer="tiny")
    env.reset(seed=0)
    yield env
    env.close()


def test_body_pose_round_trips_and_keeps_velocity(push: gym.Env) -> None:
    env = push.unwrapped
    env.set_body_velocity("cube", (0.1, 0.2, 0.0), (0.0, 0.0, 1.0))
    env.set_body_pose("cube", (0.5, 0.1, 0.7), (0.0, 0.0, 2.0, 0.0))  # normalised to (0, 0, 1, 0)
    pos, orn = env.body_pose("cube")
    assert pos.dtype == orn.dtype == np.float64
    np.testing.assert_array_equal(pos, [0.5, 0.1, 0.7])
    np.testing.assert_allclose(orn, [0, 0, 1, 0], atol=1e-15)
    lin, ang = p.getBaseVelocity(env.body_id("cube"), physicsClientId=env.client)
    assert lin == (0.1, 0.2, 0.0) and ang == (0.0, 0.0, 1.0)
    env.set_body_pose("cube", (0.4, 0.0, 0.8))  # orientation kept
    np.testing.assert_allclose(env.body_pose("cube")[1], [0, 0, 1, 0], atol=1e-15)
    env.set_body_pose("target", (0.6, 0.2, 0.7))  # static bodies move too
    np.testing.assert_array_equal(env.body_pose("target")[0], [0.6, 0.2, 0.7])


BAD_BODY_CALLS = [
    ("set_body_pose", ("box", (0, 0, 1)), "PandaPushEnv: there is no body named 'box'; bodies: 'ground', 'table', "
                                           "'panda', 'cube', 'target'"),
    ("body_pose", ("box",), "there is no body named 'box'"),
    ("set_body_velocity", ("box", (0, 0, 0), (0, 0, 0)), "there is no body named 'box'"),
    ("set_body_pose", ("cube", (0, 1)), "set_body_pose('cube'): position=(0, 1) has shape (2,); pass 3 numbers"),
    ("set_body_pose", ("cube", (0, np.nan, 1)), "set_body_pose('cube'): position=[0.0, nan, 1.0] contains NaN"),
    ("set_body_pose", ("cube", (0, 0, 1), (0, 0, 0)), "orientation=(0, 0, 0) has shape (3,); pass 4 numbers"),
    ("set_body_pose", ("cube", (0, 0, 1), (0, 0, 0, 0)), "orientation=[0.0, 0.0, 0.0, 0.0] has zero length"),
    ("set_body_pose", ("cube", "here"), "position='here' is not numeric; pass 3 numbers"),
    ("set_body_velocity", ("cube", (0, 0, 1), (0, 0, np.inf)), "set_body_velocity('cube'): angular=[0.0, 0.0, inf] "
                                                               "contains NaN or inf"),
    ("set_body_velocity", ("table", (0, 0, 1), (0, 0, 0)), "body 'table' is static (fixed base or zero base mass)"),
]


@pytest.mark.parametrize("method,args,message", BAD_BODY_CALLS, ids=[m for _, _, m in BAD_BODY_CALLS])
def test_bad_body_calls_change_nothing(push: gym.Env, method: str, args: tuple, message: str) -> None:
    env = push.unwrapped
    before = physics_state(env.client)
    with pytest.raises(ValueError, match=re.escape(message)):
        getattr(env, method)(*args)
    assert_trees_equal(before, physics_state(env.client))


def test_moved_bodies_are_in_snapshots_exactly() -> None:
    """Bodies moved and set moving by name (a dynamic cube, the static target and table) restore bit-exactly into
    a fresh env, whose next steps equal the original's."""
    env, fresh = (gym.make("pixelrig/PandaPush-v0", renderer="tiny") for _ in range(2))
    try:
        env.reset(seed=0)
        base = env.unwrapped
        base.set_body_pose("cube", (0.55, 0.05, 0.7), p.getQuaternionFromEuler((0.3, 0.2, 1.0)))
        base.set_body_velocity("cube", (0.2, -0.1, 0.5), (3.0, 1.0, -2.0))
        base.set_body_pose("target", (0.45, -0.1, 0.63))
        base.set_body_pose("table", (0.52, 0.01, 0.0), p.getQuaternionFromEuler((0.0, 0.0, 0.05)))
        moved = [base.body_pose(n) for n in ("cube", "target", "table")]
        snap = snapshot(env)
        actions = [np.array([0.3, -0.2, -0.5], np.float32)] * 10
        reference = [env.step(a) for a in actions] + [physics_state(base.client)]
        fresh.reset(seed=7)
        restore(fresh, snap)
        assert_trees_equal([fresh.unwrapped.body_pose(n) for n in ("cube", "target", "table")], moved)
        assert_trees_equal(reference, [fresh.step(a) for a in actions] + [physics_state(fresh.unwrapped.client)])
    finally:
        env.close()
        fresh.close()


def test_moved_robot_restores_with_the_same_terms() -> None:
    """An Ant (every term) thrown by name, snapshotted mid-flight: a fresh env restored from the bytes gives the
    same observations, contact forces included, bit for bit."""
    env, fresh = (gym.make("pixelrig/Robot-v0", source="mjcf/ant.xml", observation=list(ANT_TERMS), renderer="tiny")
                  for _ in range(2))
    try:
        env.reset(seed=0)
        env.unwrapped.set_body_pose("ant", (0.3, 0.2, 0.8), p.getQuaternionFromEuler((0.5, 0.2, -1.0)))
        env.unwrapped.set_body_velocity("ant", (1.0, 0.0, 0.5), (0.0, 4.0, 1.0))
        for _ in range(20):
            env.step(np.full(8, 0.5, np.float32))
        snap = pixelrig.Snapshot.from_bytes(snapshot(env).to_bytes())
        actions = [np.full(8, (-1) ** i * 0.7, np.float32) for i in range(30)]
        reference = [env.step(a) for a in actions]
        assert np.abs(np.array([r[0] for r in reference])[:, -21:]).max() > 0  # contacts happened
        fresh.reset(seed=5)
        restore(fresh, snap)
        assert_trees_equal(reference, [fresh.step(a) for a in actions])
    finally:
        env.close()
        fresh.close()


def test_body_methods_exist_on_every_env() -> None:
    env = gym.make("pixelrig/CartPole-v0", renderer="tiny")
    try:
        env.reset(seed=0)
        names = list(env.unwrapped.body_ids())
        pos, _ = env.unwrapped.body_pose(names[-1])
        env.unwrapped.set_body_pose(names[-1], pos + [0.0, 0.0, 0.1])
        np.testing.assert_allclose(env.unwrapped.body_pose(names[-1])[0], pos + [0.0, 0.0, 0.1])
    finally:
        env.close()


# ---- body randomisation ----------------------------------------------------------------------------------------

CUBE_BOX = ((0.45, -0.1, 0.66), (0.55, 0.1, 0.68))
CUBE_YAW = (-1.0, 1.0)
RANDOM = Randomization(body_position={"cube": CUBE_BOX}, body_yaw={"cube": CUBE_YAW}, mass_scale=(0.8, 1.2))


def test_body_randomisation_is_seeded_in_range_recorded_and_restored() -> None:
    env, twin = (gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=RANDOM) for _ in range(2))
    try:
        env.reset(seed=3)
        twin.reset(seed=3)
        values = env.unwrapped.randomization_values
        assert_trees_equal(values, twin.unwrapped.randomization_values)
        cube = env.unwrapped.body_id("cube")
        ((body, link, *xyz),) = values["body_position"]
        ((body2, _, yaw),) = values["body_yaw"]
        assert body == body2 == cube and link == -1
        assert np.all(np.array(CUBE_BOX[0]) <= xyz) and np.all(xyz <= np.array(CUBE_BOX[1]))
        assert CUBE_YAW[0] <= yaw <= CUBE_YAW[1]
        pos, orn = env.unwrapped.body_pose("cube")  # applied after the task placed the cube
        np.testing.assert_array_equal(pos, xyz)
        assert same_rotation(orn, p.getQuaternionFromEuler((0.0, 0.0, yaw))) < 1e-12
        draws = []
        for seed in (4, 5):
            env.reset(seed=seed)
            draws.append(env.unwrapped.randomization_values["body_position"][0][2:])
        assert draws[0] != draws[1] != xyz
        env.reset(seed=3)
        assert_trees_equal(values, env.unwrapped.randomization_values)
        snap = snapshot(env)
        reference = [env.step(np.array([0.2, 0.1, -0.3], np.float32)) for _ in range(5)]
        twin.reset(seed=99)
        restore(twin, snap)
        assert_trees_equal(values, twin.unwrapped.randomization_values)
        assert_trees_equal(reference, [twin.step(np.array([0.2, 0.1, -0.3], np.float32)) for _ in range(5)])
    finally:
        env.close()
        twin.close()


def test_body_draws_do_not_shift_the_other_draws() -> None:
    """New kinds of draw have their own streams (appended), so the masses drawn are the same with or without
    body randomisation, and one body's draws do not depend on which other bodies are randomised."""
    assert RANDOM_STREAMS[:5] == ("mass", "lateral_friction", "restitution", "rgba", "camera")
    kinds = [Randomization(mass_scale=(0.8, 1.2)), RANDOM,
             Randomization(mass_scale=(0.8, 1.2), body_position={"cube": CUBE_BOX, "target": CUBE_BOX})]
    values = []
    for spec in kinds:
        env = gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=spec)
        try:
            env.reset(seed=11)
            values.append(env.unwrapped.randomization_values)
        finally:
            env.close()
    assert values[0]["mass"] == values[1]["mass"] == values[2]["mass"]
    assert values[1]["body_position"][0] == values[2]["body_position"][0]  # the cube's


def test_randomised_robot_base_is_seen_by_the_task() -> None:
    """Randomising the Ant's own base: its reset_task sees the drawn pose (``last_x``, the forward reward's
    reference, is the drawn x) and the velocity it gives the base is kept (equal to a twin's that randomises only its
    colours: the body draws take nothing from ``np_random`` but the one seed every randomisation takes; an empty
    ``Randomization()`` takes none, as ``None``)."""
    spec = Randomization(body_position={"ant": ((-1.0, -1.0, 0.8), (1.0, 1.0, 0.9))}, body_yaw={"ant": (-3.0, 3.0)})
    env = gym.make("pixelrig/Ant-v0", randomize=spec, renderer="tiny")
    twin = gym.make("pixelrig/Ant-v0", randomize=Randomization(link_colors=True), renderer="tiny")
    try:
        env.reset(seed=0)
        twin.reset(seed=0)
        base = env.unwrapped
        ((_, _, *xyz),) = base.randomization_values["body_position"]
        ((_, _, yaw),) = base.randomization_values["body_yaw"]
        pos, orn = base.body_pose("ant")
        np.testing.assert_array_equal(pos, xyz)
        assert base.last_x == xyz[0]
        assert abs(p.getEulerFromQuaternion(orn)[2] - yaw) < 1e-9
        velocity = p.getBaseVelocity(base.robot, physicsClientId=base.client)
        assert velocity == p.getBaseVelocity(twin.unwrapped.robot, physicsClientId=twin.unwrapped.client)
        assert np.abs(velocity[0]).max() > 0
    finally:
        env.close()
        twin.close()


BAD_SPECS = [
    ({"body_position": {"cube": (0.1, 0.2)}}, "Randomization: body_position['cube']=(0.1, 0.2) must be ((x, y, z) low, "
                                              "(x, y, z) high) in metres"),
    ({"body_position": {"cube": ((0, 0, 1), (1, 1, 0))}}, "needs finite low <= high in every coordinate"),
    ({"body_position": [("cube", CUBE_BOX)]}, "Randomization: body_position=[('cube', ((0.45, -0.1, 0.66), (0.55, "
                                              "0.1, 0.68)))] must be a dict {body name: ((x, y, z) low"),
    ({"body_yaw": {"cube": (1.0, -1.0)}}, "Randomization: body_yaw['cube']=(1.0, -1.0) needs finite low <= high"),
    ({"body_yaw": {"cube": (0.0, np.nan)}}, "Randomization: body_yaw['cube']=(0.0, nan) needs finite low <= high"),
    ({"body_yaw": {"cube": 1.0}}, "Randomization: body_yaw['cube']=1.0 must be (low, high) in radians"),
    ({"body_yaw": {3: (0.0, 1.0)}}, "Randomization: body_yaw key 3 must be a body name (a non-empty str)"),
]


@pytest.mark.parametrize("kwargs,message", BAD_SPECS, ids=[m[:40] for _, m in BAD_SPECS])
def test_bad_body_randomisation_is_refused(kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Randomization(**kwargs)


def test_unknown_randomised_body_is_refused_at_construction() -> None:
    before = connected_clients()
    with pytest.raises(ValueError, match=re.escape(
            "PandaPushEnv: Randomization(body_yaw=...) names bodies ['box'] that this env does not have; bodies: "
            "['ground', 'table', 'panda', 'cube', 'target']")):
        gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=Randomization(body_yaw={"box": (0.0, 1.0)}))
    assert connected_clients() == before


def test_randomization_with_bodies_is_frozen_and_hashable() -> None:
    spec = Randomization(body_position={"cube": CUBE_BOX})
    assert spec == Randomization(body_position={"cube": [list(CUBE_BOX[0]), list(CUBE_BOX[1])]})
    assert hash(spec) == hash(Randomization(body_position={"cube": CUBE_BOX}))
    with pytest.raises(TypeError):
        spec.body_position["cube"] = CUBE_BOX  # type: ignore[index]
    assert pickle.loads(pickle.dumps(spec)) == spec == copy.deepcopy(spec)  # for vector envs' workers
    assert Randomization(body_position={}).body_position is None
    assert pixelrig.Randomization is Randomization
