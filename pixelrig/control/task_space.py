"""Task-space control of robot arms (``ee_delta_pos``, ``ee_delta_pose``, ``ee_pose``): end-effector targets turned
into joint position targets by damped least squares on pybullet's own Jacobian.

The pure numpy functions, the solver that reads an arm from pybullet (:class:`TaskSpaceController`) and the
controller the envs build (:class:`TaskSpaceControl`).

How a step goes (:class:`TaskSpaceController`):

1. **Target.** The end-effector target is a pose ``(x, y, z, qx, qy, qz, qw)`` (world frame; the URDF frame of the
   end-effector link) that the env keeps as task state, so snapshots restore it exactly. Delta modes move the
   *last target*, not the measured pose: an arm sagging or lagging does not make a zero action drift. The moved
   target is clipped to the workspace box, then held within ``target_lead`` times the largest delta of the
   measured pose, so an arm that is blocked (a table, its reach, a joint limit) does not wind the target up and
   jump when released. ``ee_pose`` sets the target to the action's pose (position clipped to the workspace).
2. **Solve.** The pose error (position, and rotation as an axis-angle vector, world frame; each scaled down to
   :data:`SOLVE_STEP_POS` / :data:`SOLVE_STEP_ROT` if larger) is solved for a joint step by damped least squares,
   ``dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e``, on the 6 × n Jacobian pybullet computes at the measured joint positions
   (``calculateJacobian``). A null-space term (``nullspace_gain``, default 0.02; 0 turns it off) pulls the
   joints towards a rest pose without moving the end effector (to first order). The step is scaled down as a
   whole so that no joint moves faster than its velocity limit; joints the step would push past a limit are
   clamped at it and the step is solved again without them, once.
3. **Track.** ``q + dq`` is the target of pybullet's position controller (the env sends it with the effort
   limits); the next step solves again from where the arm got to, so the arm converges on the target over a few
   steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pybullet as p

from pixelrig.control.base import Controller, Motors
from pixelrig.control.rotations import quat_conjugate, quat_multiply, quat_to_matrix, quat_to_rotvec, rotvec_to_quat

EE_CONTROLS: tuple[str, ...] = ("ee_delta_pos", "ee_delta_pose", "ee_pose")
"""The task-space control modes: a position delta, a pose delta (position + axis-angle), an absolute pose."""

PITCH_ROLL_CONTROLS: tuple[str, ...] = ("ee_delta_pitch_roll",)
"""The task-space mode of a 5-joint arm (the SO-101): a position delta, then turns about the arm's pitch axis (its
second-to-last joint's axis) and roll axis (its last joint's axis); the sixth direction of a pose, which such an arm
cannot follow at a given position, is left free (see :func:`reachable_turn`)."""

TASK_SPACE_CONTROLS: tuple[str, ...] = (*EE_CONTROLS, *PITCH_ROLL_CONTROLS)
"""Every mode :class:`TaskSpaceControl` implements."""

EE_FRAMES: tuple[str, ...] = ("world", "ee")
"""Frames a delta can be expressed in: the world's axes, or the end-effector target's own axes."""

SOLVE_STEP_POS = 0.1
"""The largest position error (m) one solve linearises; a larger error (an ``ee_pose`` far away) is scaled down to
it, and the arm gets there over several steps."""

SOLVE_STEP_ROT = 0.5
"""The largest rotation error (rad) one solve linearises."""

LINK_FRAME = (0.0, 0.0, 0.0)
"""``calculateJacobian``'s ``localPosition`` for the link's URDF frame origin. pybullet's guide says the point is
"around its center of mass", but pybullet 3.2.7 takes it in the link's URDF frame: checked against finite
differences on the kuka iiwa's link 7, whose centre of mass is 2 cm off its frame (tests/test_envs_control.py)."""

MIN_QUAT_NORM = 1e-6
"""An ``ee_pose`` action quaternion shorter than this (zero or tiny: no direction to normalise) keeps the target's
orientation."""


# ---- pure functions -----------------------------------------------------------------------------------------------

def chain_to(parents: Sequence[int], link: int) -> list[int]:
    """The joints on the path from the base to ``link``, base first.

    Args:
        parents: ``parents[j]`` is the parent link of joint ``j`` (pybullet: joint ``j``'s child is link ``j``;
            the base is link -1).
        link: a link index (-1: the base, whose path is empty).
    """
    path = []
    while link >= 0:
        path.append(link)
        link = parents[link]
    return path[::-1]


def default_ee_link(parents: Sequence[int], fixed: Sequence[bool], actuated: Sequence[int]) -> int:
    """The last link of the arm chain: where a walk from the base ends that goes down into the only child holding
    actuated joints, and, below the last of them, through the only fixed child.

    The walk stops where the actuated joints branch (two children hold some: the Panda's fingers when they are not
    a gripper stop it at the hand), or, below the last actuated joint, where a link has no fixed child or several.
    For the Franka Panda with its fingers as the gripper this is ``panda_grasptarget`` (between the finger tips),
    for the kuka iiwa ``lbr_iiwa_link_7``, for the xArm6 ``link6``.

    Args:
        parents: parent link of each joint (see :func:`chain_to`).
        fixed: whether each joint is fixed.
        actuated: the arm's actuated joints (a gripper's joints excluded).

    Returns:
        A link index; -1 (the base) when no actuated joint hangs below the base alone.
    """
    holds = [False] * len(parents)
    for joint in actuated:
        for j in chain_to(parents, joint):
            holds[j] = True
    children: dict[int, list[int]] = {}
    for j, parent in enumerate(parents):
        children.setdefault(parent, []).append(j)
    link = -1
    while True:
        below = children.get(link, [])
        active = [j for j in below if holds[j]]
        if len(active) > 1:
            return link
        if not active:
            active = [j for j in below if fixed[j]]
            if len(active) != 1:
                return link
        link = active[0]


def delta_target(target: np.ndarray, dpos: np.ndarray, drot: np.ndarray, frame: str) -> np.ndarray:
    """A target pose moved by ``dpos`` (m) and rotated by the axis-angle ``drot`` (rad).

    Args:
        target: (7,) position and unit quaternion xyzw.
        dpos, drot: (3,) each, in the world's axes (``frame="world"``: the rotation is about world axes through the
            target's position) or in the target's own axes (``frame="ee"``: ``dpos`` along the end effector's x, y,
            z; the rotation about its axes).
        frame: "world" or "ee".

    Returns:
        (7,) float64: the moved position and the rotated, renormalised quaternion (without a rotation, the
        quaternion as it was).
    """
    quat = target[3:]
    if frame == "ee":
        rot = quat_to_matrix(quat)
        dpos, drot = rot @ dpos, rot @ drot
    if not np.any(drot):  # the orientation is kept bit for bit
        return np.concatenate([target[:3] + dpos, quat])
    turned = quat_multiply(rotvec_to_quat(drot), quat)
    return np.concatenate([target[:3] + dpos, turned / np.linalg.norm(turned)])


def pose_target(target: np.ndarray, pose: np.ndarray) -> np.ndarray:
    """An ``ee_pose`` action as a target: ``pose`` (7,) position and quaternion xyzw of any length, normalised; a
    quaternion shorter than :data:`MIN_QUAT_NORM` keeps ``target``'s orientation."""
    norm = float(np.linalg.norm(pose[3:]))
    quat = pose[3:] / norm if norm >= MIN_QUAT_NORM else target[3:]
    return np.concatenate([pose[:3], quat])


def hold_near(target: np.ndarray, pos: np.ndarray, quat: np.ndarray, lead_pos: float, lead_rot: float) -> np.ndarray:
    """``target`` pulled back to within ``lead_pos`` metres and ``lead_rot`` radians of the measured pose
    (``pos``, ``quat``), along the straight line and the shortest rotation between them (anti-windup)."""
    offset = target[:3] - pos
    dist = float(np.linalg.norm(offset))
    new_pos = pos + offset * (lead_pos / dist) if dist > lead_pos else target[:3]
    turn = quat_to_rotvec(quat_multiply(target[3:], quat_conjugate(quat)))
    angle = float(np.linalg.norm(turn))
    new_quat = quat_multiply(rotvec_to_quat(turn * (lead_rot / angle)), quat) if angle > lead_rot else target[3:]
    return np.concatenate([new_pos, new_quat])


def pose_error(target: np.ndarray, pos: np.ndarray, quat: np.ndarray, max_pos: float = SOLVE_STEP_POS,
               max_rot: float = SOLVE_STEP_ROT) -> np.ndarray:
    """The error from the measured pose to ``target``: (6,) float64, position (m) then rotation as an axis-angle
    vector (rad), world frame (``R_target = exp(e_rot) R_measured``); each part scaled down to at most
    ``max_pos`` / ``max_rot`` in length."""
    e_pos = target[:3] - pos
    e_rot = quat_to_rotvec(quat_multiply(target[3:], quat_conjugate(quat)))
    for part, limit in ((e_pos, max_pos), (e_rot, max_rot)):
        length = float(np.linalg.norm(part))
        if length > limit:
            part *= limit / length
    return np.concatenate([e_pos, e_rot])


def reachable_turn(rotvec: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """The part of a rotation vector (3,) an arm can turn through about ``axes`` (k, 3), world frame: its
    least-squares projection onto their span, ``Aᵀ (A Aᵀ)⁻¹ A r`` (float64, (3,))."""
    return axes.T @ np.linalg.solve(axes @ axes.T, axes @ rotvec)


def dls_step(jac: np.ndarray, error: np.ndarray, damping: float, weights: np.ndarray,
             pull: np.ndarray | None = None) -> np.ndarray:
    """A damped-least-squares joint step: ``dq = n + W Jᵀ (J W Jᵀ + λ² I)⁻¹ (e - J n)``.

    Args:
        jac: (m, n) Jacobian (rows: task coordinates; columns: joints).
        error: (m,) task error.
        damping: λ > 0: keeps the step bounded near singular poses (a direction the arm can barely move in gets a
            step of at most ``|e| / (2 λ)`` instead of an unbounded one).
        weights: (n,) diagonal of W; 0 freezes a joint.
        pull: (n,) joint motion ``n`` wanted besides the task (the null-space pull), already weighted; the solve
            cancels its effect on the task (exactly as λ → 0).

    Returns:
        (n,) float64 joint step.
    """
    jw = jac * weights
    gram = jw @ jac.T
    gram.flat[:: len(gram) + 1] += damping * damping  # the diagonal
    if pull is None:
        return jw.T @ np.linalg.solve(gram, error)
    return pull + jw.T @ np.linalg.solve(gram, error - jac @ pull)


def capped(step: np.ndarray, max_step: np.ndarray | None) -> np.ndarray:
    """``step`` scaled down as a whole (its direction kept) so that no joint moves more than ``max_step`` (n,)
    (inf: no cap); unchanged when within the caps or ``max_step`` is None."""
    if max_step is None:
        return step
    ratio = float(np.max(np.abs(step) / max_step, initial=0.0))
    return step / ratio if ratio > 1.0 else step


def joint_step(jac: np.ndarray, q: np.ndarray, error: np.ndarray, lower: np.ndarray, upper: np.ndarray,
               damping: float, pull: np.ndarray | None = None, max_step: np.ndarray | None = None) -> np.ndarray:
    """Joint position targets ``q + dq`` for a task error, inside the joint limits.

    One :func:`dls_step`, scaled down as a whole to the joints' largest steps (:func:`capped`); the joints it would
    push past a limit are clamped at the limit and the step is solved again for the remaining error without them
    (weight 0), once; the result is clipped to the limits.

    Args:
        jac: (m, n) Jacobian at ``q``.
        q: (n,) measured joint positions.
        error: (m,) task error.
        lower, upper: (n,) joint limits (-inf / inf for a joint without).
        damping: λ of :func:`dls_step`.
        pull: (n,) null-space joint motion (see :func:`dls_step`), or None.
        max_step: (n,) the largest step of each joint (velocity limit × control period; inf: none), or None.

    Returns:
        (n,) float64 joint position targets within ``[lower, upper]``.
    """
    weights = np.ones(len(q))
    target = q + capped(dls_step(jac, error, damping, weights, pull), max_step)
    over = (target < lower) | (target > upper)
    if over.any():
        fixed = np.where(over, np.clip(target, lower, upper) - q, 0.0)
        weights[over] = 0.0
        rest = dls_step(jac, error - jac @ fixed, damping, weights, None if pull is None else pull * weights)
        target = q + fixed + capped(rest, max_step)
    return np.clip(target, lower, upper)


# ---- settings, the arm, the controller -----------------------------------------------------------------------------

def _positive_number(what: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what}={value!r} must be a finite number > 0")
    return float(value)


@dataclass(frozen=True)
class TaskSpaceConfig:
    """The configuration of a task-space controller, validated on creation (``control=`` of RobotEnv takes it).

    Attributes:
        control: one of :data:`EE_CONTROLS`.
        ee_link: the end-effector link's name, or None for :func:`default_ee_link`.
        ee_offset: the controlled point in the end-effector link's frame (m), or None for the frame's origin: a
            point between a jaw gripper's jaws on an arm whose last link frame is elsewhere (the SO-101).
        rest_pose: the rest pose of the actuated joints for the null-space pull (RobotEnv: default its
            ``initial_qpos``).
        position_gain, velocity_gain: PD gains of the position controller that tracks the joint targets (one
            number or one per actuated joint; default 0.2 and 1.0 in RobotEnv).
        ee_frame: "world" or "ee": the axes of a delta (see :func:`delta_target`); ``ee_pose`` takes "world" only.
        max_delta_pos: metres per step that an action of 1 moves the target (delta modes).
        max_delta_rot: radians per step that an action of 1 turns the target (``ee_delta_pose``).
        workspace: ``(low, high)`` corners (m, world frame) of the box the target is kept in, or None for the
            box of the arm's reach around its first joint (:func:`reach_box`).
        ik_damping: λ of the damped least squares (m or rad): larger is smoother and slower near singular poses.
        target_lead: how far a delta mode's target may lead the measured end-effector pose, in largest deltas
            (``max_delta_pos`` metres, ``max_delta_rot`` radians). It must exceed what the arm lags at full speed,
            or it caps the speed: with RobotEnv's task-space gains (position_gain 0.2, 4 physics steps per step)
            the Panda, the kuka iiwa and the xArm6 lag 0.8-0.9 deltas at full speed. A blocked arm's target stops
            there instead of winding up: released, the arm moves at most that far.
        nullspace_gain: fraction in [0, 1] of the way to the rest pose the null-space term asks for per step
            (0: off). The default, 0.02, keeps a redundant arm's elbow from drifting, and bends an arm that was
            stretched straight (a singular pose, from which a first-order solve barely moves it back) towards a
            bent rest pose: the kuka iiwa (RobotEnv's defaults) pulled back from full stretch returns 25 cm in
            30 steps with it, 16 cm without; the xArm6 7 cm and 3 cm.
    """

    control: str
    ee_frame: str = "world"
    max_delta_pos: float = 0.01
    max_delta_rot: float = 0.05
    workspace: tuple[tuple[float, float, float], tuple[float, float, float]] | None = None
    ik_damping: float = 0.05
    target_lead: float = 2.0
    nullspace_gain: float = 0.02
    ee_link: str | None = None
    ee_offset: tuple[float, float, float] | None = None
    rest_pose: tuple[float, ...] | None = None
    position_gain: float | tuple[float, ...] | None = None
    velocity_gain: float | tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if self.control not in TASK_SPACE_CONTROLS:
            raise ValueError(f"task-space control must be one of {TASK_SPACE_CONTROLS}: got {self.control!r}")
        if self.ee_frame not in EE_FRAMES:
            raise ValueError(f"ee_frame must be one of {EE_FRAMES}: got {self.ee_frame!r}")
        if self.control == "ee_pose" and self.ee_frame != "world":
            raise ValueError(f"ee_frame={self.ee_frame!r} applies to the delta modes; control='ee_pose' takes an "
                             "absolute pose in the world frame: leave ee_frame out")
        object.__setattr__(self, "max_delta_pos", _positive_number("max_delta_pos", self.max_delta_pos))
        object.__setattr__(self, "max_delta_rot", _positive_number("max_delta_rot", self.max_delta_rot))
        object.__setattr__(self, "ik_damping", _positive_number("ik_damping", self.ik_damping))
        object.__setattr__(self, "target_lead", _positive_number("target_lead", self.target_lead))
        gain = self.nullspace_gain
        if isinstance(gain, bool) or not isinstance(gain, int | float) or not 0.0 <= gain <= 1.0:
            raise ValueError(f"nullspace_gain={gain!r} must be a number in [0, 1] (0: no pull to the rest pose)")
        object.__setattr__(self, "nullspace_gain", float(gain))
        if self.workspace is not None:
            object.__setattr__(self, "workspace", _box(self.workspace))
        if self.control in PITCH_ROLL_CONTROLS and self.ee_frame != "world":
            raise ValueError(f"ee_frame={self.ee_frame!r}: control={self.control!r} turns about the arm's own pitch "
                             "and roll axes and moves in the world's axes; leave ee_frame out")
        if self.ee_offset is not None:
            offset = np.asarray(self.ee_offset, dtype=np.float64)
            if offset.shape != (3,) or not np.all(np.isfinite(offset)):
                raise ValueError(f"ee_offset={self.ee_offset!r} must be 3 finite numbers (m, in the link's frame)")
            object.__setattr__(self, "ee_offset", tuple(offset.tolist()))
        if self.ee_link is not None and not isinstance(self.ee_link, str):
            raise ValueError(f"ee_link={self.ee_link!r} must be a link name (a string)")


def _box(workspace: Any) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """A ``workspace=(low, high)`` value checked: two corners of 3 finite numbers, low < high on each axis."""
    try:
        low, high = (np.asarray(c, dtype=np.float64) for c in workspace)
    except (TypeError, ValueError):
        raise ValueError(f"workspace={workspace!r} must be (low, high), two corners (x, y, z) in metres") from None
    if low.shape != (3,) or high.shape != (3,) or not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ValueError(f"workspace={workspace!r} must be (low, high), two corners of 3 finite numbers (m)")
    if not np.all(low < high):
        raise ValueError(f"workspace={workspace!r} needs low < high on every axis")
    return tuple(low.tolist()), tuple(high.tolist())  # type: ignore[return-value]


@dataclass(frozen=True)
class ArmChain:
    """The joints a task-space controller moves and the point it controls, as pybullet indexes them.

    Attributes:
        robot: body id.
        movable: every movable joint of the body, in index order (the columns of pybullet's Jacobian).
        joints: the arm joints the controller commands: the actuated joints on the path from the base to
            ``ee_link``, base first.
        columns: the positions of ``joints`` in ``movable``.
        lower, upper: (n,) float64 limits of ``joints`` (-inf / inf for a joint without a range).
        speed: (n,) float64 velocity limits of ``joints`` (rad/s or m/s; inf where the model gives none).
        ee_link: the end-effector link's index.
    """

    robot: int
    movable: tuple[int, ...]
    joints: tuple[int, ...]
    columns: tuple[int, ...]
    lower: np.ndarray
    upper: np.ndarray
    speed: np.ndarray
    ee_link: int


def arm_chain(client: int, robot: int, ee_link: str | None, actuated: Sequence[int],
              limits: dict[int, tuple[float, float, float]], owner: str) -> ArmChain:
    """Read the arm of ``robot`` from pybullet.

    Args:
        client: pybullet client id.
        robot: body id (fixed base, revolute / prismatic / fixed joints only).
        ee_link: the end-effector link's name, or None for :func:`default_ee_link`.
        actuated: the actuated joints (a gripper's excluded); those on the path to the end effector are the arm.
        limits: ``{joint: (lower, upper, velocity)}`` as the env uses them (lower >= upper: no range; velocity
            NaN or <= 0: none).
        owner: what to name in messages (the env's class and robot).

    Raises:
        ValueError: a floating base, a spherical or planar joint, an unknown ``ee_link`` (the message lists the
            links), or no actuated joint between the base and the end effector.
    """
    count = p.getNumJoints(robot, physicsClientId=client)
    infos = [p.getJointInfo(robot, j, physicsClientId=client) for j in range(count)]
    if p.getDynamicsInfo(robot, -1, physicsClientId=client)[0] != 0.0:
        raise ValueError(f"{owner}: task-space control needs a fixed base (the robot's base moves): pass "
                         "fixed_base=True or load the robot with useFixedBase=True")
    odd = [i[1].decode() for i in infos if i[2] not in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC, p.JOINT_FIXED)]
    if odd:
        raise ValueError(f"{owner}: task-space control handles revolute, prismatic and fixed joints; joints {odd} "
                         "are spherical or planar")
    parents = [int(i[16]) for i in infos]
    links = {p.getBodyInfo(robot, physicsClientId=client)[0].decode(errors="replace"): -1}
    links.update({i[12].decode(errors="replace"): j for j, i in enumerate(infos)})
    if ee_link is None:
        link = default_ee_link(parents, [i[2] == p.JOINT_FIXED for i in infos], actuated)
    elif ee_link in links:
        link = links[ee_link]
    else:
        raise ValueError(f"{owner}: ee_link={ee_link!r} is not a link of the robot; its links: {list(links)}")
    name = next(n for n, j in links.items() if j == link)
    on_arm = set(actuated)
    arm = [j for j in chain_to(parents, link) if j in on_arm]
    if not arm:
        raise ValueError(f"{owner}: no actuated joint lies between the base and the end-effector link {name!r}; "
                         f"pass ee_link= one of the links below the arm's joints: {list(links)}")
    movable = tuple(j for j, i in enumerate(infos) if i[2] != p.JOINT_FIXED)
    lower = np.array([limits[j][0] if limits[j][1] > limits[j][0] else -np.inf for j in arm])
    upper = np.array([limits[j][1] if limits[j][1] > limits[j][0] else np.inf for j in arm])
    speed = np.array([limits[j][2] if limits[j][2] > 0 else np.inf for j in arm])  # NaN > 0 is False
    return ArmChain(robot, movable, tuple(arm), tuple(movable.index(j) for j in arm), lower, upper, speed, link)


def reach_box(client: int, chain: ArmChain) -> tuple[np.ndarray, np.ndarray]:
    """The default workspace: the box around the arm's first joint whose half-size is the arm's reach.

    The reach is the length of the chain from the first arm joint to the end-effector link (the distances between
    consecutive link frames on it, which revolute joints do not change) plus the travel of its prismatic joints.
    """
    parents = [int(p.getJointInfo(chain.robot, j, physicsClientId=client)[16])
               for j in range(p.getNumJoints(chain.robot, physicsClientId=client))]
    path = chain_to(parents, chain.ee_link)
    path = path[path.index(chain.joints[0]):]
    states = p.getLinkStates(chain.robot, path, computeForwardKinematics=1, physicsClientId=client)
    frames = np.array([s[4] for s in states])
    reach = float(np.linalg.norm(np.diff(frames, axis=0), axis=1).sum())
    for j in path:
        info = p.getJointInfo(chain.robot, j, physicsClientId=client)
        if info[2] == p.JOINT_PRISMATIC and info[9] > info[8]:
            reach += info[9] - info[8]
    return frames[0] - reach, frames[0] + reach


class Measured(NamedTuple):
    """The arm as it is: every movable joint's position (pybullet's Jacobian needs them all) and the end-effector
    link's URDF frame (position (3,) of its controlled point, quaternion xyzw (4,), world frame); with
    ``ee_delta_pitch_roll`` the pitch and roll axes now ((2, 3), world frame), else None."""

    q: list[float]
    pos: np.ndarray
    quat: np.ndarray
    axes: np.ndarray | None = None


class TaskSpaceController:
    """Differential inverse kinematics for one arm: an action moves the end-effector target, and
    :meth:`joint_targets` turns the target into joint position targets (see the module docstring).

    Stateless: the target is the caller's (env) state; the controller holds configuration only.

    Args:
        chain: the arm (:func:`arm_chain`).
        settings: the mode and its parameters.
        workspace: ``(low, high)`` corners of the box targets are kept in (world frame, m).
        dt: the control period (s): a joint's step per solve is at most its velocity limit × ``dt``.
    """

    def __init__(self, chain: ArmChain, settings: TaskSpaceConfig, workspace: tuple[np.ndarray, np.ndarray],
                 dt: float) -> None:
        self.chain = chain
        self.settings = settings
        self.low = np.asarray(workspace[0], dtype=np.float64)
        self.high = np.asarray(workspace[1], dtype=np.float64)
        self.max_step = chain.speed * dt
        """(n,) the largest step of each arm joint per solve (inf where the model gives no velocity limit)."""
        self._zeros = [0.0] * len(chain.movable)
        self.pitch_roll = settings.control in PITCH_ROLL_CONTROLS
        """Whether the rotation is pitch and roll only (the arm's last two joints' axes)."""
        if self.pitch_roll and len(chain.joints) < 2:
            raise ValueError(f"control={settings.control!r} needs an arm of at least two joints (pitch, roll)")
        self.offset = None if settings.ee_offset is None else np.array(settings.ee_offset)
        """The controlled point in the end-effector link's frame, or None for its origin."""

    @property
    def action_size(self) -> int:
        """3 (``ee_delta_pos``), 5 (``ee_delta_pitch_roll``), 6 (``ee_delta_pose``) or 7 (``ee_pose``)."""
        return {"ee_delta_pos": 3, "ee_delta_pitch_roll": 5, "ee_delta_pose": 6, "ee_pose": 7}[self.settings.control]

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float64 of the arm's action: [-1, 1] for deltas (scaled by ``max_delta_pos`` /
        ``max_delta_rot``); for ``ee_pose`` the workspace box then [-1, 1] for the quaternion."""
        n = self.action_size
        if self.settings.control != "ee_pose":
            return -np.ones(n), np.ones(n)
        return np.concatenate([self.low, -np.ones(4)]), np.concatenate([self.high, np.ones(4)])

    def command(self, client: int, target: np.ndarray, action: np.ndarray,
                rest: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One control step: :meth:`measure`, :meth:`next_target`, :meth:`joint_targets`.

        Returns:
            ``(new target (7,), joint position targets of chain.joints (n,))``, both float64.
        """
        now = self.measure(client)
        new = self.next_target(target, action, now)
        return new, self.joint_targets(client, new, now, rest)

    def pose_now(self, client: int) -> np.ndarray:
        """The end effector's pose now as a target: (7,) position and unit quaternion xyzw (float64)."""
        now = self.measure(client)
        return np.concatenate([now.pos, now.quat / np.linalg.norm(now.quat)])

    def measure(self, client: int) -> Measured:
        """The arm's joint positions and end-effector pose now."""
        chain = self.chain
        states = p.getJointStates(chain.robot, chain.movable, physicsClientId=client)
        link = p.getLinkState(chain.robot, chain.ee_link, computeForwardKinematics=1, physicsClientId=client)
        if self.offset is None and not self.pitch_roll:
            return Measured([s[0] for s in states], np.array(link[4]), np.array(link[5]))
        pos = np.array(link[4])
        if self.offset is not None:
            pos = pos + quat_to_matrix(link[5]) @ self.offset
        axes = None
        if self.pitch_roll:  # a joint's axis is given in its child link's URDF frame
            joints = chain.joints[-2:]
            frames = p.getLinkStates(chain.robot, joints, computeForwardKinematics=1, physicsClientId=client)
            axes = np.array([quat_to_matrix(f[5]) @ np.array(p.getJointInfo(chain.robot, j, physicsClientId=client)[13])
                             for f, j in zip(frames, joints, strict=True)])
        return Measured([s[0] for s in states], pos, np.array(link[5]), axes)

    def next_target(self, target: np.ndarray, action: np.ndarray, now: Measured) -> np.ndarray:
        """The target after ``action`` (the arm's part, within :meth:`action_bounds`): (7,) float64.

        Delta modes move ``target`` (not the measured pose), clip it to the workspace and hold it within
        ``target_lead`` deltas of ``now``; ``ee_pose`` takes the action's pose, position clipped to the
        workspace (see :func:`pose_target` for a zero quaternion).
        """
        s = self.settings
        if s.control == "ee_pose":
            new = pose_target(target, action)
            new[:3] = np.clip(new[:3], self.low, self.high)
            return new
        if self.pitch_roll:
            return self.pitch_roll_target(target, action, now)
        drot = action[3:6] * s.max_delta_rot if s.control == "ee_delta_pose" else np.zeros(3)
        new = delta_target(target, action[:3] * s.max_delta_pos, drot, s.ee_frame)
        new[:3] = np.clip(new[:3], self.low, self.high)
        return hold_near(new, now.pos, now.quat, s.target_lead * s.max_delta_pos, s.target_lead * s.max_delta_rot)

    def pitch_roll_target(self, target: np.ndarray, action: np.ndarray, now: Measured) -> np.ndarray:
        """``ee_delta_pitch_roll``'s next target: the position moved by Δxyz × ``max_delta_pos`` and clipped to the
        workspace; the orientation turned by Δpitch and Δroll × ``max_delta_rot`` about the pitch and roll axes
        now, then kept where the arm can follow it: the measured orientation turned by the part of the remaining
        turn that lies in the span of the two axes (:func:`reachable_turn`), so that the direction the arm cannot
        turn in never winds up. Then held within ``target_lead`` deltas of the measured pose."""
        s, axes = self.settings, now.axes
        pos = np.clip(target[:3] + action[:3] * s.max_delta_pos, self.low, self.high)
        turned = quat_multiply(rotvec_to_quat(axes[0] * (action[3] * s.max_delta_rot)),
                               quat_multiply(rotvec_to_quat(axes[1] * (action[4] * s.max_delta_rot)), target[3:]))
        rest = reachable_turn(quat_to_rotvec(quat_multiply(turned, quat_conjugate(now.quat))), axes)
        quat = quat_multiply(rotvec_to_quat(rest), now.quat)
        new = np.concatenate([pos, quat / np.linalg.norm(quat)])
        return hold_near(new, now.pos, now.quat, s.target_lead * s.max_delta_pos, s.target_lead * s.max_delta_rot)

    def joint_targets(self, client: int, target: np.ndarray, now: Measured,
                      rest: np.ndarray | None = None) -> np.ndarray:
        """Position targets of the arm's joints (``chain.joints`` order) that move the end effector towards
        ``target``: one :func:`joint_step` on pybullet's Jacobian at ``now``.

        Args:
            client: pybullet client id.
            target: (7,) pose.
            now: from :meth:`measure`.
            rest: (n,) rest pose of the arm's joints for the null-space pull (used when ``nullspace_gain`` > 0).
        """
        chain, s = self.chain, self.settings
        point = LINK_FRAME if self.offset is None else tuple(self.offset.tolist())
        lin, ang = p.calculateJacobian(chain.robot, chain.ee_link, point, now.q, self._zeros, self._zeros,
                                       physicsClientId=client)
        q = np.array(now.q)[list(chain.columns)]
        error = pose_error(target, now.pos, now.quat)
        if self.pitch_roll:  # position, then the turn about the pitch and roll axes only
            jac = np.vstack([np.array(lin), now.axes @ np.array(ang)])[:, chain.columns]
            error = np.concatenate([error[:3], now.axes @ error[3:]])
        else:
            jac = np.array((*lin, *ang))[:, chain.columns]
        pull = s.nullspace_gain * (rest - q) if rest is not None and s.nullspace_gain > 0.0 else None
        return joint_step(jac, q, error, chain.lower, chain.upper, s.ik_damping, pull, self.max_step)


class TaskSpaceControl(Controller):
    """``ee_delta_pos`` / ``ee_delta_pose`` / ``ee_pose``: the solver of :class:`TaskSpaceController` behind the
    controller interface. Its state is the end-effector target (7,).

    Args:
        client: pybullet client id.
        solver: the bound solver (chain, settings, workspace, control period).
        motors: the motors of the actuated joints; the arm's are at ``arm`` in them.
        arm: positions of the solver's arm joints in ``motors.joints``.
        rest: (n,) rest pose of the arm joints for the null-space pull.
    """

    families = TASK_SPACE_CONTROLS

    def __init__(self, client: int, solver: TaskSpaceController, motors: Motors, arm: Sequence[int],
                 rest: np.ndarray) -> None:
        self.client, self.solver, self.motors = client, solver, motors
        self.arm = list(arm)
        self.rest = rest

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.solver.action_bounds()

    def apply(self, action: np.ndarray, state: np.ndarray | None) -> np.ndarray:
        target, q = self.solver.command(self.client, state, action, self.rest)
        self.motors.position(q, self.arm)
        return target

    def hold(self, qpos: np.ndarray) -> None:
        self.motors.position(qpos)

    def start(self, client: int) -> np.ndarray:
        return self.solver.pose_now(client)
