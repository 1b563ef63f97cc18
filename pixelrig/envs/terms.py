"""The observation terms of :class:`pixelrig.RobotEnv` (``observation=("q", "base_rotmat", ...)``): their names,
sizes, bounds and values, each read from pybullet's own queries.

Frames and units (metres, radians, seconds, newtons):

- ``base_*`` terms describe the robot's base as pybullet reports it (``getBasePositionAndOrientation`` and
  ``getBaseVelocity``): the position of the base's centre of mass and the orientation of its inertial frame (for
  almost every model the same as the URDF base frame's), linear velocity of the centre of mass and angular
  velocity, in the world frame; the ``_local`` velocities are the same vectors in the base frame (``R.T @ v``).
- ``link_pose:<link>`` is the pose of the link's URDF frame (``getLinkState(...)[4:6]`` with forward kinematics;
  for the base link, the base's centre-of-mass pose times the inverse of its local inertial frame).
- ``link_vel:<link>`` is the velocity of the link's centre of mass and its angular velocity, world frame
  (``getLinkState(..., computeLinkVelocity=1)[6:8]``; ``getBaseVelocity`` for the base link).
- ``body_pose:<body>`` is what :meth:`pixelrig.envs.BulletEnv.body_pose` returns for a named body.
- ``contact_forces``: per robot link (base first, then links in joint order) the sum of the normal forces of its
  contact points this step (``getContactPoints(bodyA=robot)``; a contact between two of the robot's own links
  counts for both).
- ``gripper_opening`` (with a gripper of two or more joints): the distance (m) between the URDF frames of the first
  two gripper joints' child links; for the Franka Panda's fingers that is ``q1 + q2``, the gap between the finger
  pads (0 closed, 0.08 open).
- ``gripper_contact:<body>`` (with a gripper): 1.0 if a gripper link (a gripper joint's child link or any link
  below it) has a contact point with the named body this step, else 0.0.

Rotation forms follow :mod:`pixelrig.control.rotations`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.control.rotations import matrix_to_rot6d, matrix_to_rpy, quat_to_matrix

BASE_TERMS: dict[str, int] = {
    "base_pos": 3, "base_quat": 4, "base_rpy": 3, "base_rotmat": 9, "base_rot6d": 6, "base_linvel": 3,
    "base_angvel": 3, "base_linvel_local": 3, "base_angvel_local": 3,
}
"""Base terms and their sizes."""

NAMED_TERMS: dict[str, int] = {"link_pose": 7, "link_vel": 6, "body_pose": 7, "gripper_contact": 1}
"""Terms written ``"<kind>:<name>"`` (a robot link or a named body) and their sizes."""

GRIPPER_TERMS: tuple[str, ...] = ("gripper_opening", "gripper_contact")
"""The kinds of term that need a gripper (``RobotEnv(gripper=...)``)."""

TERMS: tuple[str, ...] = ("q", "qd", *BASE_TERMS, "link_pose:<link>", "link_vel:<link>", "body_pose:<body>",
                          "contact_forces", "gripper_opening", "gripper_contact:<body>")
"""Every term, as error messages list them."""

DEFAULT_TERMS: tuple[str, ...] = ("q", "qd")
"""RobotEnv's observation without ``observation=``."""

BASE_OBSERVATION_TERMS: tuple[str, ...] = ("q", "qd", "base_pos", "base_quat", "base_linvel", "base_angvel")
"""What ``base_observation=True`` means."""

_VALID = ", ".join(map(repr, TERMS))
_PI = math.pi
_BOUNDED: dict[str, tuple[list[float], list[float]]] = {
    "base_quat": ([-1.0] * 4, [1.0] * 4),
    "base_rpy": ([-_PI, -_PI / 2, -_PI], [_PI, _PI / 2, _PI]),
    "base_rotmat": ([-1.0] * 9, [1.0] * 9),
    "base_rot6d": ([-1.0] * 6, [1.0] * 6),
    "link_pose": ([-math.inf] * 3 + [-1.0] * 4, [math.inf] * 3 + [1.0] * 4),
    "body_pose": ([-math.inf] * 3 + [-1.0] * 4, [math.inf] * 3 + [1.0] * 4),
    "gripper_opening": ([0.0], [math.inf]),
    "gripper_contact": ([0.0], [1.0]),
}
"""Terms with mathematical bounds (unit quaternions, rotation matrices, angle ranges, a distance >= 0, a flag in
[0, 1]); the others are unbounded (pybullet's joint limits are soft) except ``contact_forces`` (>= 0)."""


@dataclass(frozen=True)
class GripperLinks:
    """The robot links the gripper terms read.

    Attributes:
        fingers: the child links of the gripper's joints, in the gripper's order (``gripper_opening`` measures
            between the first two).
        links: the fingers and every link below them (``gripper_contact`` looks for their contacts).
    """

    fingers: tuple[int, ...]
    links: frozenset[int]


def split_term(term: str) -> tuple[str, str | None]:
    """``"link_pose:hand"`` -> ``("link_pose", "hand")``; ``"q"`` -> ``("q", None)``."""
    kind, sep, name = term.partition(":")
    return (kind, name) if sep else (term, None)


def parse_terms(observation: Any) -> tuple[str, ...]:
    """Check the syntax of an ``observation=`` value; returns it as a tuple of term names.

    Raises:
        ValueError: not a sequence of strings, empty, an unknown term (the message lists the valid ones) or a
            term given twice.
    """
    if isinstance(observation, str | bytes) or not isinstance(observation, Sequence):
        raise ValueError(f"observation={observation!r} must be a list or tuple of term names, e.g. "
                         f"observation=('q', 'qd', 'base_quat'); terms: {_VALID}")
    terms = tuple(observation)
    if not terms:
        raise ValueError(f"observation=() has no terms; terms: {_VALID}")
    for term in terms:
        if not isinstance(term, str):
            raise ValueError(f"observation term {term!r} is not a string; terms: {_VALID}")
        kind, name = split_term(term)
        simple = name is None and (kind in BASE_TERMS or kind in ("q", "qd", "contact_forces", "gripper_opening"))
        if not simple and not (kind in NAMED_TERMS and name):
            hint = f" ({kind} needs a name: '{kind}:<name>')" if kind in NAMED_TERMS else ""
            raise ValueError(f"unknown observation term {term!r}{hint}; terms: {_VALID}")
    repeated = sorted({t for t in terms if terms.count(t) > 1})
    if repeated:
        raise ValueError(f"observation terms {repeated} are given more than once in {terms}")
    return terms


def observation_names(observation: Any, base_observation: bool) -> tuple[str, ...]:
    """RobotEnv's terms from its ``observation=`` (checked by :func:`parse_terms`) or ``base_observation=True``
    (:data:`BASE_OBSERVATION_TERMS`); :data:`DEFAULT_TERMS` without either.

    Raises:
        ValueError: both given, or a bad ``observation``.
    """
    if observation is not None and base_observation:
        raise ValueError(
            f"pass observation=... or base_observation=True, not both: base_observation=True means "
            f"observation={BASE_OBSERVATION_TERMS}; add the base terms you want to observation={observation!r}"
        )
    if observation is not None:
        return parse_terms(observation)
    return BASE_OBSERVATION_TERMS if base_observation else DEFAULT_TERMS


def check_gripper_terms(terms: Sequence[str], gripper_joints: int) -> None:
    """Refuse a gripper term without a gripper (``gripper_opening`` needs two joints or more).

    Raises:
        ValueError: naming the term and the fix.
    """
    for term in terms:
        kind, _ = split_term(term)
        if kind in GRIPPER_TERMS and gripper_joints < (2 if kind == "gripper_opening" else 1):
            raise ValueError(f"observation term {term!r} needs a gripper"
                             f"{' of two or more joints' if kind == 'gripper_opening' else ''}: pass "
                             "gripper=(joint names) or gripper='panda'")


def check_names(terms: Sequence[str], links: Mapping[str, int], bodies: Sequence[str], robot: str) -> None:
    """Check that the links and bodies the terms name exist.

    Args:
        terms: from :func:`parse_terms`.
        links: the robot's link names -> link index (the base link is -1).
        bodies: the env's body names.
        robot: the robot's body name (for messages).

    Raises:
        ValueError: an unknown link or body, listing the ones there are.
    """
    for term in terms:
        kind, name = split_term(term)
        if kind in ("link_pose", "link_vel") and name not in links:
            raise ValueError(f"observation term {term!r}: robot {robot!r} has no link {name!r}; its links: "
                             f"{list(links)}")
        if kind in ("body_pose", "gripper_contact") and name not in bodies:
            raise ValueError(f"observation term {term!r}: there is no body {name!r}; bodies: {list(bodies)}")


def term_size(term: str, num_joints: int, num_links: int) -> int:
    """Number of values of ``term`` for a robot with ``num_joints`` actuated joints and ``num_links`` links
    (the base included)."""
    kind, _ = split_term(term)
    if kind in ("q", "qd"):
        return num_joints
    if kind == "contact_forces":
        return num_links
    if kind == "gripper_opening":
        return 1
    return BASE_TERMS.get(kind) or NAMED_TERMS[kind]


@dataclass(frozen=True)
class Term:
    """One named part of a flat observation: its size and its bounds (one number for every value, or one per value).

    Every env of pixelrig describes its observation as a list of terms (:class:`Observed`): RobotEnv's from
    ``observation=`` (:func:`robot_terms`), each task's from its own list.
    """

    name: str
    size: int
    low: float | tuple[float, ...] = -math.inf
    high: float | tuple[float, ...] = math.inf


def term_layout(terms: Sequence[Term]) -> dict[str, slice]:
    """``{term: slice}`` of each term in the flat observation, in order."""
    out, start = {}, 0
    for term in terms:
        out[term.name] = slice(start, start + term.size)
        start += term.size
    return out


def term_bounds(terms: Sequence[Term]) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` float64 arrays of the flat observation of ``terms``."""
    low = np.concatenate([np.broadcast_to(np.asarray(t.low, np.float64), (t.size,)) for t in terms] or [[]])
    high = np.concatenate([np.broadcast_to(np.asarray(t.high, np.float64), (t.size,)) for t in terms] or [[]])
    return low, high


def flatten(values: Mapping[str, Any], layout: Mapping[str, slice]) -> np.ndarray:
    """The flat float32 observation: each term's value (in ``layout``'s order) as float64, joined, then rounded."""
    return np.concatenate([np.asarray(values[term], np.float64) for term in layout]).astype(np.float32)


GOAL_TASKS: tuple[str, ...] = ("pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0", "pixelrig/PandaLift-v0",
                                "pixelrig/PandaPickPlace-v0", "pixelrig/PandaStack-v0")
"""The tasks that take ``goal_obs=True`` (:class:`pixelrig.envs.goals.GoalObserved`; a test holds the list)."""


class Observed:
    """What an env with a flat observation of named terms has: :meth:`term_specs` (the list, once the world is
    built) and :meth:`term_values` (each term's value now); :meth:`describe_observation` sets
    ``observation_layout`` ({term: slice}) and ``observation_space`` from the list, and :meth:`observe` joins the
    values (:func:`flatten`).

    It takes ``goal_obs`` (default False) for every env: a task with goals (a
    :class:`~pixelrig.envs.goals.GoalObserved` with a ``goal_size``) then observes them; any other env refuses True.

    Raises:
        ValueError: ``goal_obs`` is not a bool, or True on an env without goals (naming :data:`GOAL_TASKS`).
    """

    observation_layout: dict[str, slice]
    goal_size: int = 0
    """The size of the task's goals; 0: the task has none."""

    def __init__(self, *args: Any, goal_obs: bool = False, **kwargs: Any) -> None:
        name = type(self).__name__
        if not isinstance(goal_obs, bool | np.bool_):
            raise ValueError(f"{name}: goal_obs={goal_obs!r} must be True or False")
        if goal_obs and not self.goal_size:
            raise ValueError(f"{name} has no goal observation: goal_obs=True is for {', '.join(GOAL_TASKS)}")
        self.goal_obs = bool(goal_obs)
        """Whether the observation is a goal ``Dict`` (see :class:`~pixelrig.envs.goals.GoalObserved`)."""
        super().__init__(*args, **kwargs)

    def term_specs(self) -> list[Term]:
        """The observation's terms, in order."""
        raise NotImplementedError

    def term_values(self) -> dict[str, Any]:
        """Each term's value now, by name."""
        raise NotImplementedError

    def describe_observation(self) -> None:
        """Set ``observation_layout`` and ``observation_space`` (a float32 Box) from :meth:`term_specs`."""
        terms = self.term_specs()
        self.observation_layout = term_layout(terms)
        low, high = term_bounds(terms)
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    def observe(self) -> np.ndarray:
        return flatten(self.term_values(), self.observation_layout)


def robot_terms(terms: Sequence[str], num_joints: int, num_links: int) -> list[Term]:
    """RobotEnv's ``observation=`` names as :class:`Term` s for a robot with ``num_joints`` actuated joints and
    ``num_links`` links (the base included): infinite bounds but where a term is bounded mathematically (quaternion
    and rotation-matrix entries in [-1, 1], angles, forces >= 0)."""
    out = []
    for term in terms:
        kind, _ = split_term(term)
        size = term_size(term, num_joints, num_links)
        if kind in _BOUNDED:
            out.append(Term(term, size, tuple(_BOUNDED[kind][0]), tuple(_BOUNDED[kind][1])))
        elif kind == "contact_forces":
            out.append(Term(term, size, 0.0))
        else:
            out.append(Term(term, size))
    return out


def robot_links(client: int, robot: int) -> dict[str, int]:
    """The robot's link names -> link index, the base link (``getBodyInfo``'s first name) as -1."""
    base = p.getBodyInfo(robot, physicsClientId=client)[0].decode("utf-8", errors="replace")
    links = {base: -1}
    for j in range(p.getNumJoints(robot, physicsClientId=client)):
        links.setdefault(p.getJointInfo(robot, j, physicsClientId=client)[12].decode("utf-8", errors="replace"), j)
    return links


def base_frame_pose(client: int, body: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """World pose of a body's base URDF frame: its centre-of-mass pose times the inverse local inertial frame."""
    pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=client)
    local_pos, local_orn = p.getDynamicsInfo(body, -1, physicsClientId=client)[3:5]
    if tuple(local_pos) == (0.0, 0.0, 0.0) and tuple(local_orn) == (0.0, 0.0, 0.0, 1.0):
        return pos, orn  # the usual case, exactly
    inv_pos, inv_orn = p.invertTransform(local_pos, local_orn)
    return p.multiplyTransforms(pos, orn, inv_pos, inv_orn)


def _unit(values: Sequence[float]) -> np.ndarray:
    """Entries bounded by 1 mathematically, with float rounding (at most 1 ulp) stripped."""
    return np.clip(np.asarray(values, dtype=np.float64), -1.0, 1.0)


def read_terms(terms: Sequence[str], client: int, robot: int, joints: Sequence[int], links: Mapping[str, int],
               body_id: Callable[[str], int], gripper: GripperLinks | None = None) -> np.ndarray:
    """The flat float32 observation of ``terms`` (see the module docstring for each term's frame).

    Args:
        terms: from :func:`parse_terms`, names checked with :func:`check_names`.
        client: pybullet client id.
        robot: the robot's body id.
        joints: joint indices of the actuated joints (``q`` and ``qd`` order).
        links: from :func:`robot_links`.
        body_id: name -> body id of the env's named bodies.
        gripper: the gripper's links (needed by the gripper terms only).
    """
    cache: dict[str, Any] = {}

    def base_pose() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if "pose" not in cache:
            pos, orn = p.getBasePositionAndOrientation(robot, physicsClientId=client)
            cache["pose"] = np.array(pos), np.array(orn), quat_to_matrix(orn)
        return cache["pose"]

    def base_velocity() -> tuple[np.ndarray, np.ndarray]:
        if "vel" not in cache:
            lin, ang = p.getBaseVelocity(robot, physicsClientId=client)
            cache["vel"] = np.array(lin), np.array(ang)
        return cache["vel"]

    def joint_states() -> list:
        if "joints" not in cache:
            cache["joints"] = p.getJointStates(robot, list(joints), physicsClientId=client)
        return cache["joints"]

    values: dict[str, Any] = {}
    for term in terms:
        kind, name = split_term(term)
        if kind == "q":
            value: Any = [s[0] for s in joint_states()]
        elif kind == "qd":
            value = [s[1] for s in joint_states()]
        elif kind == "base_pos":
            value = base_pose()[0]
        elif kind == "base_quat":
            value = _unit(base_pose()[1])
        elif kind == "base_rpy":
            value = matrix_to_rpy(base_pose()[2])
        elif kind == "base_rotmat":
            value = _unit(base_pose()[2].reshape(-1))
        elif kind == "base_rot6d":
            value = _unit(matrix_to_rot6d(base_pose()[2]))
        elif kind in ("base_linvel", "base_angvel"):
            value = base_velocity()[kind == "base_angvel"]
        elif kind in ("base_linvel_local", "base_angvel_local"):
            value = base_pose()[2].T @ base_velocity()[kind == "base_angvel_local"]
        elif kind == "link_pose":
            index = links[name]
            if index < 0:
                pos, orn = base_frame_pose(client, robot)
            else:
                pos, orn = p.getLinkState(robot, index, computeForwardKinematics=1, physicsClientId=client)[4:6]
            value = np.concatenate([pos, _unit(orn)])
        elif kind == "link_vel":
            index = links[name]
            if index < 0:
                value = np.concatenate(base_velocity())
            else:
                state = p.getLinkState(robot, index, computeLinkVelocity=1, computeForwardKinematics=1,
                                       physicsClientId=client)
                value = np.concatenate([state[6], state[7]])
        elif kind == "body_pose":
            pos, orn = p.getBasePositionAndOrientation(body_id(name), physicsClientId=client)
            value = np.concatenate([pos, _unit(orn)])
        elif kind == "gripper_opening":
            value = [gripper_opening(client, robot, gripper)]
        elif kind == "gripper_contact":
            value = [gripper_contact(client, robot, gripper, body_id(name))]
        else:  # contact_forces
            value = contact_forces(client, robot)
        values[term] = value
    return flatten(values, dict.fromkeys(terms))


def contact_forces(client: int, robot: int) -> np.ndarray:
    """Total normal contact force (N) on each link of ``robot`` this step, base first: float64 array with one
    entry per link (``getNumJoints + 1``)."""
    forces = np.zeros(p.getNumJoints(robot, physicsClientId=client) + 1)
    for point in p.getContactPoints(bodyA=robot, physicsClientId=client):
        if point[1] == robot:
            forces[point[3] + 1] += point[9]
        if point[2] == robot:
            forces[point[4] + 1] += point[9]
    return forces


def gripper_opening(client: int, robot: int, gripper: GripperLinks | None) -> float:
    """The distance (m) between the URDF frames of the gripper's first two finger links (see the module docstring).

    Raises:
        ValueError: no gripper, or one of fewer than two joints.
    """
    if gripper is None or len(gripper.fingers) < 2:
        raise ValueError("gripper_opening needs a gripper of two or more joints (RobotEnv(gripper=...))")
    a, b = p.getLinkStates(robot, gripper.fingers[:2], computeForwardKinematics=1, physicsClientId=client)
    return math.dist(a[4], b[4])


def gripper_contact(client: int, robot: int, gripper: GripperLinks | None, body: int) -> float:
    """1.0 if a gripper link of ``robot`` has a contact point with ``body`` this step, else 0.0.

    Raises:
        ValueError: no gripper.
    """
    if gripper is None:
        raise ValueError("gripper_contact needs a gripper (RobotEnv(gripper=...))")
    points = p.getContactPoints(bodyA=robot, bodyB=body, physicsClientId=client)
    return 1.0 if any(point[3] in gripper.links for point in points) else 0.0
