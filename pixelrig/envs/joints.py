"""What RobotEnv reads of a robot's joints: the robot body among a file's, its actuated, passive and gripper joints
with their limits (after the user's overrides), and the gripper's links."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.control.base import JointSpec
from pixelrig.control.task_space import chain_to
from pixelrig.envs.robot_files import mjcf_motors
from pixelrig.envs.terms import GripperLinks

Limit = float | Mapping[str, float]
RangeLimit = tuple[float, float] | Mapping[str, tuple[float, float]]
Overrides = tuple[Limit | None, Limit | None, RangeLimit | None]
"""``(effort_limits, velocity_limits, position_limits)`` as RobotEnv takes them."""


def pick_robot(client: int, bodies: list[int], wanted: str | None, where: Path | None) -> int:
    """The robot among a file's ``bodies``: the one named ``wanted`` (model or base link name), else the first with
    a movable joint, else the first."""

    def names(b: int) -> tuple[str, str]:
        base, model = p.getBodyInfo(b, physicsClientId=client)
        return model.decode(errors="replace"), base.decode(errors="replace")

    if wanted is not None:
        hits = [b for b in bodies if wanted in names(b)]
        if not hits:
            listing = ", ".join(f"{m!r} (base link {b!r})" for m, b in map(names, bodies))
            raise ValueError(f"robot={wanted!r} is not a body of {where}; bodies: {listing}")
        return hits[0]
    for b in bodies:
        if any(p.getJointInfo(b, j, physicsClientId=client)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC)
               for j in range(p.getNumJoints(b, physicsClientId=client))):
            return b
    return bodies[0]


def actuated_joints(client: int, robot: int, grip: Sequence[str], wanted: list[str] | None, mjcf: Path | None,
                    overrides: Overrides, robot_name: str) -> tuple[list[JointSpec], list[int]]:
    """The actuated joints (model order, limits after ``overrides``) and the passive ones' indices.

    Args:
        client: pybullet client id.
        robot: body id.
        grip: the gripper's joint names (never actuated here).
        wanted: ``joints=`` names, or None: an MJCF file's motors (``mjcf``), else every movable joint.
        mjcf: the MJCF file whose motors are the default joints, or None.
        overrides: the user's limit overrides.
        robot_name: what to call the robot in messages.
    """
    movable = {}
    for j in range(p.getNumJoints(robot, physicsClientId=client)):
        info = p.getJointInfo(robot, j, physicsClientId=client)
        if info[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC):
            movable[info[1].decode()] = info
    unknown = [n for n in grip if n not in movable]
    if unknown:
        raise ValueError(f"gripper joints {unknown} are not movable joints of the robot; movable joints: "
                         f"{list(movable)}")
    both = [n for n in wanted or () if n in grip]
    if both:
        raise ValueError(f"joints {both} are in both joints= and gripper=: the gripper's action dimension drives "
                         "them; leave them out of joints=")
    motors = {}
    if wanted is None and mjcf is not None:
        motors = {m.joint: m.effort for m in mjcf_motors(mjcf) if m.joint in movable and m.joint not in grip}
        wanted = list(motors) if motors else None
    if wanted is None:
        wanted = [n for n in movable if n not in grip]
    unknown = [n for n in wanted if n not in movable]
    if unknown:
        raise ValueError(f"joints {unknown} are not movable joints of the robot; movable joints: {list(movable)}")
    if not wanted:
        raise ValueError(f"the robot body {robot_name!r} has no movable (revolute or prismatic) joints to control")
    order = sorted(wanted, key=lambda n: movable[n][0])  # model joint order
    specs = []
    for n in order:
        info = movable[n]
        effort = motors.get(n, info[10])
        specs.append(JointSpec(info[0], n, float(info[8]), float(info[9]),
                               float(effort) if effort > 0 else math.nan,
                               float(info[11]) if info[11] > 0 else math.nan))
    passive = [info[0] for n, info in movable.items() if n not in wanted and n not in grip]
    return apply_overrides(specs, overrides), passive


def gripper_joints(client: int, robot: int, names: Sequence[str], force: float | None) -> list[JointSpec]:
    """The gripper's joints with their range and force limit (``force`` or the file's effort)."""
    specs = []
    index = {p.getJointInfo(robot, j, physicsClientId=client)[1].decode(): j
             for j in range(p.getNumJoints(robot, physicsClientId=client))}
    for name in names:
        info = p.getJointInfo(robot, index[name], physicsClientId=client)
        lower, upper = float(info[8]), float(info[9])
        if not upper > lower:
            raise ValueError(f"gripper joint {name!r} has no position range ({lower}, {upper}) to open and close "
                             "over; a gripper joint needs lower < upper limits in the model")
        limit = force if force is not None else float(info[10])
        if not limit > 0:
            raise ValueError(f"gripper joint {name!r} has no effort limit: pass gripper_force=<N per joint>")
        specs.append(JointSpec(info[0], name, lower, upper, limit, float(info[11])))
    return specs


def finger_links(client: int, robot: int, grip: list[JointSpec]) -> GripperLinks | None:
    """The gripper's links for the observation terms: its joints' child links and every link below them."""
    if not grip:
        return None
    parents = [int(p.getJointInfo(robot, j, physicsClientId=client)[16])
               for j in range(p.getNumJoints(robot, physicsClientId=client))]
    fingers = tuple(j.index for j in grip)
    below = {link for link in range(len(parents)) if set(chain_to(parents, link)) & set(fingers)}
    return GripperLinks(fingers, frozenset(below))


def per_joint(value: Any, names: Sequence[str], what: str) -> dict[str, Any]:
    """Expand an override: a mapping {joint name: value} (names checked) or one value for every joint."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"{what}: unknown joints {unknown}; actuated joints are {list(names)}")
        return dict(value)
    return {n: value for n in names}


def apply_overrides(specs: list[JointSpec], overrides: Overrides) -> list[JointSpec]:
    """``specs`` with the user's limits: a mapping replaces a joint's limit, one value fills joints lacking one."""
    effort, velocity, position = overrides
    names = [s.name for s in specs]
    out = []
    given = (("effort_limits", effort), ("velocity_limits", velocity), ("position_limits", position))
    per = {k: per_joint(v, names, k) for k, v in given}
    fill = {k: not isinstance(v, Mapping) for k, v in given}
    for s in specs:
        e, v, lo, hi = s.effort, s.velocity, s.lower, s.upper
        if s.name in per["effort_limits"] and (not fill["effort_limits"] or math.isnan(e)):
            e = positive("effort_limits", s.name, per["effort_limits"][s.name])
        if s.name in per["velocity_limits"] and (not fill["velocity_limits"] or math.isnan(v)):
            v = positive("velocity_limits", s.name, per["velocity_limits"][s.name])
        if s.name in per["position_limits"] and (not fill["position_limits"] or not s.has_range):
            lo, hi = interval("position_limits", s.name, per["position_limits"][s.name])
        out.append(JointSpec(s.index, s.name, lo, hi, e, v))
    return out


def positive(what: str, joint: str, value: Any) -> float:
    """``value`` as a positive finite number, or a ValueError naming ``what[joint]``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a positive number") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a positive number")
    return v


def interval(what: str, joint: str, value: Any) -> tuple[float, float]:
    """``value`` as a finite ``(low, high)`` with low < high, or a ValueError naming ``what[joint]``."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a (low, high) pair") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{what}[{joint!r}]={value!r} needs finite low < high")
    return lo, hi


def joint_vector(what: str, value: Any, names: Sequence[str]) -> np.ndarray:
    """``value`` as one finite float64 per joint of ``names``.

    Raises:
        ValueError: not numeric, the wrong length, or NaN / inf (naming ``what`` and the joints).
    """
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what}={value!r} is not numeric; expected {len(names)} values for {list(names)}") \
            from None
    if v.shape != (len(names),):
        raise ValueError(f"{what} has shape {v.shape}, expected ({len(names)},) for joints {list(names)}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{what} contains NaN or inf: {v.tolist()}")
    return v


def joint_gains(what: str, value: Any, default: float, names: Sequence[str]) -> np.ndarray:
    """PD gains, one per joint of ``names``: ``default`` for None, a number for all, or one value per joint.

    Raises:
        ValueError: the wrong length, or a gain that is not finite and >= 0.
    """
    n = len(names)
    if value is None:
        return np.full(n, default)
    g = np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)) if np.ndim(value) == 0 else \
        joint_vector(what, value, names)
    if not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"{what}={value!r} must be finite and >= 0")
    return np.array(g, dtype=np.float64)


def check_robot_options(gripper: Sequence[str], gripper_force: Any, reward_fn: Any, terminated_fn: Any,
                        reset_noise_scale: Any) -> None:
    """Refuse RobotEnv options that cannot work, naming the fix.

    Raises:
        ValueError: a gripper force without a gripper or not a finite number > 0, a reward or termination function
            that is not callable, a reset noise that is not a finite number >= 0.
    """
    if gripper_force is not None and not gripper:
        raise ValueError(f"gripper_force={gripper_force!r} needs a gripper: pass gripper=(joint names) or "
                         "gripper='panda'")
    if gripper_force is not None and (isinstance(gripper_force, bool) or not isinstance(gripper_force, int | float)
                                      or not math.isfinite(gripper_force) or gripper_force <= 0):
        raise ValueError(f"gripper_force={gripper_force!r} must be a finite number > 0 (N per gripper joint)")
    for name, fn in (("reward_fn", reward_fn), ("terminated_fn", terminated_fn)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} must be a callable taking the env: got {fn!r}")
    if not (isinstance(reset_noise_scale, int | float) and math.isfinite(reset_noise_scale)
            and reset_noise_scale >= 0):
        raise ValueError(f"reset_noise_scale={reset_noise_scale!r} must be a finite number >= 0")


def robot_aabb(client: int, robot: int) -> tuple[np.ndarray, np.ndarray]:
    """World axis-aligned bounding box of a body (all its links), as (min, max)."""
    lows, highs = [], []
    for link in range(-1, p.getNumJoints(robot, physicsClientId=client)):
        lo, hi = p.getAABB(robot, link, physicsClientId=client)
        lows.append(lo)
        highs.append(hi)
    return np.min(lows, axis=0), np.max(highs, axis=0)


def framing_camera(lo: np.ndarray, hi: np.ndarray) -> dict[str, Any]:
    """A world-fixed camera's view (a dict of Camera's fields, no size) that frames the box ``lo``-``hi`` from the front
    left, above."""
    centre = (lo + hi) / 2.0
    radius = max(float(np.linalg.norm(hi - lo)) / 2.0, 0.25)
    fov = 50.0
    distance = 1.15 * radius / math.sin(math.radians(fov) / 2.0)
    direction = np.array([1.0, -1.0, 0.6]) / np.linalg.norm([1.0, -1.0, 0.6])
    eye = centre + direction * distance
    return {"eye": tuple(eye.tolist()), "target": tuple(centre.tolist()), "fov": fov,
            "near": 0.02, "far": float(distance + 4 * radius + 5.0)}
