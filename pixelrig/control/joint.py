"""Joint-space control: an action is each actuated joint's torque, position target or velocity target."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from pixelrig.control.base import Controller, JointSpec, Motors


class JointController(Controller):
    """Torque, position (PD) or velocity control of every actuated joint.

    Args:
        family: "torque", "position" or "velocity".
        joints: the actuated joints (their limits bound the action).
        motors: their motors.
        where: what to name in messages (the model file).

    Raises:
        ValueError: a joint lacks the limit the family's action bounds need, naming the keyword that supplies it.
    """

    families = ("torque", "position", "velocity")

    LIMITS: ClassVar[dict[str, tuple[str, str, Callable[[JointSpec], bool], Callable[[JointSpec], tuple]]]] = {
        "torque": ("effort limits", "effort_limits=<N·m for all> or effort_limits={joint: N·m}",
                   lambda j: not math.isnan(j.effort), lambda j: (-j.effort, j.effort)),
        "position": ("joint limits (continuous joints have none)",
                     "position_limits=(low, high) or {joint: (low, high)}",
                     lambda j: j.has_range, lambda j: (j.lower, j.upper)),
        "velocity": ("velocity limits", "velocity_limits=<rad/s for all> or velocity_limits={joint: rad/s}",
                     lambda j: not math.isnan(j.velocity), lambda j: (-j.velocity, j.velocity)),
    }
    """Per family: what its action bounds need, the keyword that supplies it, the test, the bounds."""

    def __init__(self, family: str, joints: list[JointSpec], motors: Motors, where: str) -> None:
        if family not in self.families:
            raise ValueError(f"joint control must be one of {self.families}: got {family!r}")
        what, keyword, has_limit, limits = self.LIMITS[family]
        missing = [j.name for j in joints if not has_limit(j)]
        if missing:
            raise ValueError(f"{family} control needs {what}, but joints {missing} of {where} have none; "
                             f"pass {keyword}")
        self.family = family
        self.motors = motors
        self.low, self.high = (np.array(b) for b in zip(*(limits(j) for j in joints), strict=True))

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self.low, self.high

    def apply(self, action: np.ndarray, state: np.ndarray | None) -> None:
        if self.family == "torque":
            self.motors.torque(action)
        elif self.family == "velocity":
            self.motors.velocity(action)
        else:
            self.motors.position(action)
        return None

    def hold(self, qpos: np.ndarray) -> None:
        """Velocity control stops the joints, position control holds ``qpos``, torque control leaves them."""
        if self.family == "velocity":
            self.motors.velocity(np.zeros(len(self.motors.joints)))
        elif self.family == "position":
            self.motors.position(qpos)
