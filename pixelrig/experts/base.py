"""The machinery of pixelrig's scripted experts: reading a task's state observation by the layout its env publishes,
and turning a wanted gripper pose into the task's delta action.

An expert is a policy over observations: it reads the env once when it is made (the observation's layout, the
action's scale, the task's documented parameters) and afterwards only what it is called with. It imports nothing
of pixelrig's (the ``experts`` room sits below ``envs``): everything it knows of a task arrives through the env's
public attributes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

DELTA_CONTROLS: tuple[str, ...] = ("ee_delta_pos", "ee_delta_pose")
"""The control modes the experts act in: Δxyz (and a rotation), then the gripper."""

OPEN, CLOSED = 1.0, -1.0
"""The gripper's action: fully open, fully closed."""


def yaw_of(quat: np.ndarray) -> float:
    """The heading (rad) of a quaternion's x axis in the table plane: ``atan2(R10, R00)``."""
    x, y, z, w = (float(v) for v in quat)
    return math.atan2(2.0 * (x * y + w * z), 1.0 - 2.0 * (y * y + z * z))


def wrap(angle: float, period: float = 2.0 * math.pi) -> float:
    """``angle`` wrapped into [-period/2, period/2)."""
    return (angle + period / 2.0) % period - period / 2.0


def state_of(obs: Any) -> np.ndarray:
    """The state vector of an observation: the env's own, a goal env's ``obs["observation"]`` (``goal_obs=True``),
    or PixelObs' ``obs["state"]``."""
    if isinstance(obs, Mapping):
        if "state" not in obs and "observation" in obs:
            return np.asarray(obs["observation"], np.float64)
        if "state" not in obs:
            raise ValueError("the expert reads the env's state observation: wrap the env in PixelObs without "
                             f"pixels_only=True, so that obs['state'] exists; got keys {sorted(obs)}")
        return np.asarray(obs["state"], np.float64)
    return np.asarray(obs, np.float64)


class Expert:
    """A scripted policy for one task: call it with an observation, get an action; :meth:`reset` per episode.

    Subclasses set :attr:`phases` (the first is where an episode starts) and implement :meth:`act`, which reads
    ``self.o`` (the observation by term) and returns :meth:`move`'s action, switching ``self.phase`` as the task
    progresses. An expert is deterministic: the same observations give the same actions.

    Args:
        env: the task's env (any wrapper stack): its ``unwrapped`` gives ``observation_layout``, ``control``,
            ``max_step`` and ``max_rot_step``, read once here.

    Raises:
        ValueError: the env's control mode is not one the expert acts in (:data:`DELTA_CONTROLS`).
    """

    task: str = ""
    """The env id of the task the expert solves (:data:`pixelrig.experts.EXPERTS` is derived from it)."""

    phases: tuple[str, ...] = ("start",)

    controls: tuple[str, ...] = DELTA_CONTROLS
    """The control modes the expert acts in."""

    def __init__(self, env: Any) -> None:
        base = env.unwrapped
        control = getattr(base, "control", None)
        if control not in self.controls:
            names = " or ".join(repr(c) for c in self.controls)
            raise ValueError(f"{type(self).__name__} acts in control {self.controls}: make the env with "
                             f"control={names} (got control={control!r})")
        self.layout: dict[str, slice] = dict(base.observation_layout)
        self.rotates = control == "ee_delta_pose"
        self.max_step = float(base.max_step)
        self.max_rot = float(base.max_rot_step)
        self.o: dict[str, np.ndarray] = {}
        self.phase = self.phases[0]
        self.steps_in_phase = 0
        self.memory: dict[str, Any] = {}
        """What the expert keeps from earlier observations this episode (a grasp height, a heading, ...)."""

    def reset(self) -> None:
        """Start a new episode."""
        self.phase, self.steps_in_phase, self.memory = self.phases[0], 0, {}

    def __call__(self, obs: Any) -> np.ndarray:
        """The action for ``obs`` (the env's state vector, a goal env's dict holding it as ``"observation"``, or a
        PixelObs dict holding it as ``"state"``)."""
        state = state_of(obs)
        self.o = {term: state[span] for term, span in self.layout.items()}
        phase = self.phase
        action = self.act()
        self.steps_in_phase = 0 if self.phase != phase else self.steps_in_phase + 1
        return action

    def act(self) -> np.ndarray:
        """The action for ``self.o``; may switch ``self.phase``."""
        raise NotImplementedError

    def go(self, phase: str) -> None:
        """Switch to ``phase`` (one of :attr:`phases`)."""
        if phase not in self.phases:
            raise ValueError(f"{type(self).__name__}: unknown phase {phase!r}; phases: {self.phases}")
        self.phase = phase

    def move(self, goal: np.ndarray, gripper: float, speed: float = 1.0, turn: float = 0.0) -> np.ndarray:
        """The action that moves the gripper centre towards ``goal`` (m, world frame) and sets the gripper.

        Args:
            goal: (3,) where the gripper centre should go.
            gripper: the gripper's action in [-1, 1] (-1 closed, 1 open).
            speed: the largest step, as a fraction of the action's full scale (``max_step`` metres).
            turn: with ``ee_delta_pose``, radians to turn about the world's vertical this step (clipped to the
                rotation's full scale); ignored otherwise.
        """
        step = (np.asarray(goal, np.float64) - self.o["ee_pos"]) / self.max_step
        norm = float(np.linalg.norm(step))
        if norm > speed:
            step *= speed / norm
        parts = [np.clip(step, -1.0, 1.0)]
        if self.rotates:
            parts.append([0.0, 0.0, float(np.clip(turn / self.max_rot, -1.0, 1.0))])
        return np.concatenate([*parts, [gripper]]).astype(np.float32)

    def near(self, goal: np.ndarray, tolerance: float, axes: slice = slice(0, 3)) -> bool:
        """Whether the gripper centre is within ``tolerance`` (m) of ``goal`` along ``axes``."""
        return float(np.linalg.norm((self.o["ee_pos"] - np.asarray(goal))[axes])) < tolerance

    def slow(self, speed: float = 0.05) -> bool:
        """Whether the gripper centre moves slower than ``speed`` (m/s)."""
        return float(np.linalg.norm(self.o["ee_linvel"])) < speed

    def holds(self, body: str) -> bool:
        """Whether both fingers touch ``body`` (its ``<body>_contacts`` term)."""
        return bool(np.all(self.o[f"{body}_contacts"] > 0.5))
