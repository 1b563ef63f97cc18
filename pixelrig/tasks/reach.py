"""``pixelrig/PandaReach-v0``: bring the Panda's gripper centre to a point above the table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from pixelrig.envs.goals import distance_reward_type
from pixelrig.envs.panda import TABLE_TOP, PandaEnv
from pixelrig.envs.terms import Term

REGISTRATION = {"id": "pixelrig/PandaReach-v0", "entry_point": "PandaReachEnv", "max_episode_steps": 50}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaReachEnv(PandaEnv):
    """Bring the gripper centre to a target point above the table.

    - Observation (float32, 10): gripper position (3) and velocity (3), target position (3), distance (1); then
      what ``control=`` / ``gripper=`` add (see :class:`~pixelrig.envs.panda.PandaEnv`). ``observation_layout``
      names the terms: ``ee_pos``, ``ee_linvel``, ``target_pos``, ``distance``.
    - Reward: minus the gripper's distance to the target (m). Success (``info["is_success"]``): distance
      < 0.05 m; the episode then terminates. Registered with a 50-step time limit.
    - Start: arm at its neutral pose; target uniform in x ∈ [0.35, 0.65], y ∈ [-0.2, 0.2],
      z ∈ [0.05, 0.35] m above the table. The target is a green sphere 4 cm across, drawn only (no collision; it has
      a label id).
    - ``goal_obs=True``: ``Dict(observation=<the above>, achieved_goal=<gripper centre> (3), desired_goal=<target>
      (3))``; success (and sparse reward 0) when they are less than :attr:`distance_threshold` (0.05 m) apart, the
      task's own success. ``reward_type``: "sparse" (the default with goals, -1/0) or "dense" (minus the distance);
      without ``goal_obs`` the reward is always minus the distance and ``reward_type`` is refused.
    """

    success_distance = 0.05
    goal_size = 3
    distance_threshold = success_distance
    task_state = ("target_pos",)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf")

    def __init__(self, reward_type: str | None = None, **options: Any) -> None:
        self.reward_type = distance_reward_type(type(self).__name__, options.get("goal_obs", False), reward_type)
        super().__init__(**options)
        self.describe_observation()
        self.target_pos = np.array([0.5, 0.0, TABLE_TOP + 0.2])

    def build_task_objects(self) -> None:
        c = self.client
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.02, rgbaColor=(0.1, 0.8, 0.2, 1.0), physicsClientId=c)
        self.target = self.load_body(
            "target", p.createMultiBody(0.0, -1, ball, [0.5, 0.0, TABLE_TOP + 0.2], physicsClientId=c)
        )

    def reset_task(self, options: dict[str, Any]) -> None:
        self.reset_arm()
        xyz = self.np_random.uniform([0.35, -0.2, TABLE_TOP + 0.05], [0.65, 0.2, TABLE_TOP + 0.35])
        self.target_pos = xyz
        p.resetBasePositionAndOrientation(self.target, xyz.tolist(), (0, 0, 0, 1), physicsClientId=self.client)

    def distance(self) -> float:
        ee, _ = self.ee_state()
        return float(np.linalg.norm(ee - self.target_pos))

    def term_specs(self) -> list[Term]:
        return [Term("ee_pos", 3), Term("ee_linvel", 3), Term("target_pos", 3), Term("distance", 1),
                *self.extra_terms()]

    def term_values(self) -> dict[str, Any]:
        ee, ee_vel = self.ee_state()
        return {"ee_pos": ee, "ee_linvel": ee_vel, "target_pos": self.target_pos,
                "distance": [np.linalg.norm(ee - self.target_pos)], **self.extra_values()}

    def achieved_goal(self) -> np.ndarray:
        return self.ee_state()[0]

    def desired_goal(self) -> np.ndarray:
        return self.target_pos

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        return self.distance_evaluate(self.distance(), self.success_distance)

    def reset_info(self) -> dict[str, Any]:
        return self.distance_reset_info(self.distance())

