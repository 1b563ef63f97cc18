"""pybullet's own inverse kinematics as a controller: an action moves the end effector from where it is, with a
fixed orientation, through ``calculateInverseKinematics``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pybullet as p

from pixelrig.control.base import Controller, Motors


class PybulletIK(Controller):
    """``control="pybullet_ik"``: Δxyz in [-1, 1]³ × ``max_step`` from the measured end-effector position, clipped
    to the workspace box, solved by ``calculateInverseKinematics`` (``iterations``, the joint limits, the rest
    pose) for ``orientation``, and tracked by the position controller. Stateless.

    Args:
        client: pybullet client id.
        motors: the arm's motors (the first ``len(motors.joints)`` movable joints).
        ee_link: the end-effector link's index.
        orientation: the quaternion xyzw the end effector is held at.
        lower, upper: limits of every movable joint (pybullet's IK takes them all).
        rest: the rest pose of the arm's joints.
        max_step: metres per step of an action of 1.
        workspace: ``(low, high)`` corners of the box the target is kept in (m).
        iterations: ``maxNumIterations`` of the solver.
    """

    families = ("pybullet_ik",)

    def __init__(self, client: int, motors: Motors, ee_link: int, orientation: Sequence[float],
                 lower: Sequence[float], upper: Sequence[float], rest: Sequence[float], max_step: float,
                 workspace: tuple[np.ndarray, np.ndarray], iterations: int = 50) -> None:
        self.client, self.motors, self.ee_link = client, motors, ee_link
        self.orientation = tuple(orientation)
        self.lower, self.upper = list(lower), list(upper)
        self.rest = list(rest) + [0.0] * (len(self.lower) - len(rest))
        self.max_step = max_step
        self.low, self.high = workspace
        self.iterations = iterations

    def action_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return -np.ones(3), np.ones(3)

    def solve(self, target: np.ndarray) -> list[float]:
        """The arm's joint targets that put the end effector at ``target`` (m) in :attr:`orientation`."""
        q = p.calculateInverseKinematics(
            self.motors.robot, self.ee_link, target.tolist(), self.orientation,
            lowerLimits=self.lower, upperLimits=self.upper,
            jointRanges=[u - lo for lo, u in zip(self.lower, self.upper, strict=True)],
            restPoses=self.rest, maxNumIterations=self.iterations, physicsClientId=self.client,
        )
        return list(q[: len(self.motors.joints)])

    def apply(self, action: np.ndarray, state: np.ndarray | None) -> None:
        s = p.getLinkState(self.motors.robot, self.ee_link, computeLinkVelocity=True, computeForwardKinematics=True,
                           physicsClientId=self.client)
        ee = np.array(s[4], dtype=np.float64)
        target = np.clip(ee + action * self.max_step, self.low, self.high)
        self.motors.position(self.solve(target))
        return None

    def hold(self, qpos: np.ndarray) -> None:
        self.motors.position(list(qpos))
