"""The controller interface every control family implements, and the joints and motors a controller drives."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pybullet as p

MotorCommand = Callable[..., None]
"""``send(body, joints, mode, **arrays)``: how a command reaches pybullet (``BulletEnv.motor_command``, which
remembers it for snapshots)."""


@dataclass(frozen=True)
class JointSpec:
    """An actuated joint as the env sees it (limits after overrides; NaN where the model gives none)."""

    index: int
    name: str
    lower: float
    upper: float
    effort: float
    velocity: float

    @property
    def has_range(self) -> bool:
        return self.upper > self.lower


@dataclass(frozen=True)
class Motors:
    """The joints a controller drives and how their commands are sent.

    Attributes:
        robot: body id.
        joints: joint indices, in command order.
        forces: each joint's force limit for position and velocity commands.
        send: the env's ``motor_command``.
        position_gains, velocity_gains: (n,) PD gains sent with every position / velocity command, or None to
            leave pybullet's defaults (both None or both given).
    """

    robot: int
    joints: tuple[int, ...]
    forces: tuple[float, ...]
    send: MotorCommand
    position_gains: np.ndarray | None = None
    velocity_gains: np.ndarray | None = None

    @classmethod
    def of(cls, robot: int, joints: Sequence[JointSpec], send: MotorCommand, position_gains: np.ndarray | None,
           velocity_gains: np.ndarray | None) -> Motors:
        """Motors for ``joints`` with their effort limits as forces (1e6 where a joint has none)."""
        return cls(robot, tuple(j.index for j in joints),
                   tuple(j.effort if not math.isnan(j.effort) else 1e6 for j in joints), send,
                   position_gains, velocity_gains)

    def _pick(self, values: Sequence[float] | np.ndarray | None, subset: Sequence[int] | None) -> Any:
        if values is None or subset is None:
            return values
        return np.asarray(values)[list(subset)]

    def torque(self, torques: Sequence[float]) -> None:
        """Joint torques for the next physics step."""
        self.send(self.robot, self.joints, p.TORQUE_CONTROL, forces=torques)

    def velocity(self, targets: Sequence[float]) -> None:
        """Velocity targets, force-limited, with the velocity gains."""
        arrays: dict[str, Any] = {"targetVelocities": targets, "forces": self.forces}
        if self.velocity_gains is not None:
            arrays["velocityGains"] = self.velocity_gains
        self.send(self.robot, self.joints, p.VELOCITY_CONTROL, **arrays)

    def position(self, targets: Sequence[float], subset: Sequence[int] | None = None) -> None:
        """Position targets, force-limited, with the PD gains; ``subset``: positions in :attr:`joints` the
        targets are for (default all)."""
        joints = self.joints if subset is None else [self.joints[i] for i in subset]
        arrays: dict[str, Any] = {"targetPositions": targets, "forces": self._pick(self.forces, subset)}
        if self.position_gains is not None:
            arrays["positionGains"] = self._pick(self.position_gains, subset)
            arrays["velocityGains"] = self._pick(self.velocity_gains, subset)
        self.send(self.robot, joints, p.POSITION_CONTROL, **arrays)


class Controller(ABC):
    """One control family behind one interface: its action space, applying an action, and its state.

    A controller is built with the world (it is bound to a body) and holds configuration only. Its per-episode
    state (a task-space target; None for families without one) is the env's: :meth:`start` gives its first value
    once the episode's world is final, :meth:`apply` takes it and returns the next, and the env keeps it in its
    declared task state (``ee_target``) so that snapshots carry it.
    """

    families: ClassVar[tuple[str, ...]] = ()
    """The ``control=`` names this class implements."""

    @abstractmethod
    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` float64 of the controller's part of the action."""

    @abstractmethod
    def apply(self, action: np.ndarray, state: np.ndarray | None) -> np.ndarray | None:
        """Send ``action`` (within :meth:`action_bounds`) as motor commands; returns the new state."""

    def hold(self, qpos: np.ndarray) -> None:
        """Command the motors to keep the joints where they were just put (``qpos``; nothing by default)."""
        return None

    def start(self, client: int) -> np.ndarray | None:
        """The state at the start of an episode (None by default)."""
        return None
