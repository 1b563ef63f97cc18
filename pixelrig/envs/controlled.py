"""What every env driven by a controller of :mod:`pixelrig.control` shares: the controller's state as task state,
an action split between the controller and the gripper, and the start of an episode."""

from __future__ import annotations

from typing import Any

import numpy as np

from pixelrig.control.base import Controller
from pixelrig.control.gripper import Gripper


class Controlled:
    """Mixin of a :class:`~pixelrig.envs.base.BulletEnv` with a ``controller`` (built with the world) and an optional
    ``gripper``: the action is the controller's part, then the gripper's opening when :attr:`gripper_in_action`.
    The controller's state is ``ee_target`` (declared task state: snapshots carry it)."""

    task_state = ("ee_target",)
    controller: Controller
    gripper: Gripper | None
    ee_target: np.ndarray | None
    client: int

    @property
    def gripper_in_action(self) -> bool:
        """Whether the action's last value is the gripper's opening (default: with a gripper)."""
        return self.gripper is not None

    @property
    def gripper_rest(self) -> float:
        """The gripper's command when the action holds none: closed."""
        return -1.0

    def start_episode(self) -> None:
        self.ee_target = self.controller.start(self.client)

    def apply_action(self, action: Any) -> None:
        a = np.asarray(action, dtype=np.float64)
        grip = self.gripper_in_action
        self.ee_target = self.controller.apply(a[:-1] if grip else a, self.ee_target)
        if self.gripper is not None:
            self.gripper.command(a[-1] if grip else self.gripper_rest)
