"""The gripper: one opening command in [-1, 1] for a set of joints, driven as one motor drives a parallel gripper."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as p

from pixelrig.control.base import MotorCommand

GRIPPER_PRESETS: dict[str, tuple[str, ...]] = {"panda": ("panda_finger_joint1", "panda_finger_joint2")}
"""Named grippers for ``gripper=``: their joint names (the Franka Panda's two fingers in franka_panda/panda.urdf)."""


def gripper_positions(command: float, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Each gripper joint's position target for an opening command in [-1, 1]: -1 its lower limit (closed), 1 its
    upper limit (open), linear in between; every joint gets the same fraction of its range."""
    return lower + (float(np.clip(command, -1.0, 1.0)) + 1.0) / 2.0 * (upper - lower)


def couple_gripper(client: int, robot: int, joints: Sequence[int], lower: Sequence[float], upper: Sequence[float],
                   max_force: float) -> list[int]:
    """Gear constraints that make every gripper joint follow the first at the same fraction of its range, as one
    motor drives both fingers of a parallel gripper; returns the constraint ids.

    Each constraint holds ``q_0 + ratio * q_i = offset`` with ``ratio = -range_0 / range_i`` and
    ``offset = lower_0 - lower_i * range_0 / range_i`` (pybullet's ``JOINT_GEAR``, ``erp`` 0.1, at most
    ``max_force``): for the Panda's fingers, ``q1 = q2``. Without it, two fingers each pushing at their force limit
    leave a grasped object free to slide along the closing direction (measured: ±15 mm in a 2 Hz shake).
    """
    ids = []
    for j, lo, hi in zip(joints[1:], lower[1:], upper[1:], strict=True):
        scale = (upper[0] - lower[0]) / (hi - lo)
        cid = p.createConstraint(robot, joints[0], robot, j, p.JOINT_GEAR, (1.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                                 (0.0, 0.0, 0.0), physicsClientId=client)
        p.changeConstraint(cid, gearRatio=-scale, relativePositionTarget=lower[0] - lo * scale, erp=0.1,
                           maxForce=max_force, physicsClientId=client)
        ids.append(cid)
    return ids


def gripper_names(gripper: object) -> tuple[str, ...]:
    """``gripper=`` as joint names: None -> (), a preset name (:data:`GRIPPER_PRESETS`) -> its joints, or the
    names given (checked: strings, at least one, no repeats)."""
    if gripper is None:
        return ()
    if isinstance(gripper, str):
        if gripper not in GRIPPER_PRESETS:
            raise ValueError(f"gripper={gripper!r} is not a known gripper ({sorted(GRIPPER_PRESETS)}); pass its joint "
                             "names, e.g. gripper=('finger_joint_a', 'finger_joint_b')")
        return GRIPPER_PRESETS[gripper]
    names = tuple(gripper) if isinstance(gripper, Sequence) else ()
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"gripper={gripper!r} must be a preset name ({sorted(GRIPPER_PRESETS)}) or distinct joint "
                         "names (strings)")
    return names


class Gripper:
    """A gripper: its joints get the same fraction of their range as force-limited position targets.

    Args:
        client: pybullet client id.
        robot: body id.
        joints: the gripper joints' indices.
        lower, upper: their ranges (closed .. open).
        forces: each joint's force limit.
        send: the env's ``motor_command``.
    """

    def __init__(self, client: int, robot: int, joints: Sequence[int], lower: Sequence[float],
                 upper: Sequence[float], forces: Sequence[float], send: MotorCommand) -> None:
        self.client, self.robot, self.joints = client, robot, tuple(joints)
        self.lower, self.upper = np.array(lower, dtype=np.float64), np.array(upper, dtype=np.float64)
        self.forces = list(forces)
        self.send = send

    def couple(self) -> list[int]:
        """Gear constraints holding every joint at the first's fraction (:func:`couple_gripper`), for two or more
        joints."""
        if len(self.joints) < 2:
            return []
        return couple_gripper(self.client, self.robot, self.joints, self.lower.tolist(), self.upper.tolist(),
                              max(self.forces))

    def command(self, opening: float) -> None:
        """The opening command (-1 closed .. 1 open) sent to every joint, force-limited."""
        self.send(self.robot, self.joints, p.POSITION_CONTROL,
                  targetPositions=gripper_positions(opening, self.lower, self.upper), forces=self.forces)
