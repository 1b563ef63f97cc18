"""``pixelrig/PandaPush-v0``: push a cube onto a target disc with the Panda."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from pixelrig.envs.goals import distance_reward_type
from pixelrig.envs.panda import TABLE_TOP, PandaEnv
from pixelrig.envs.terms import Term

REGISTRATION = {"id": "pixelrig/PandaPush-v0", "entry_point": "PandaPushEnv", "max_episode_steps": 100}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaPushEnv(PandaEnv):
    """Push a 5 cm cube onto a target disc on the table.

    - Observation (float32, 22): gripper position (3) and velocity (3), cube position (3), cube orientation as
      roll/pitch/yaw (3), cube linear (3) and angular (3) velocity, target position (3), and the cube's
      distance to the target in the table plane (1); then what ``control=`` / ``gripper=`` add (see
      :class:`~pixelrig.envs.panda.PandaEnv`). ``observation_layout`` names the terms: ``ee_pos``, ``ee_linvel``,
      ``cube_pos``, ``cube_rpy``, ``cube_linvel``, ``cube_angvel``, ``target_pos``, ``cube_target_distance``.
    - Reward: minus the cube's distance to the target in the table plane (m): dense, 0 is perfect.
    - Success (``info["is_success"]``): that distance < 0.05 m; the episode then terminates.
      Registered with a 100-step time limit.
    - Start: arm at its neutral pose; cube uniform in x ∈ [0.40, 0.60], y ∈ [-0.15, 0.15]; target uniform in
      x ∈ [0.40, 0.70], y ∈ [-0.20, 0.20], at least 0.10 m from the cube. The target is a green disc 8 cm across
      and 2 mm thick lying on the table, drawn only (no collision; it has a label id).
    - ``goal_obs=True``: ``Dict(observation=<the above>, achieved_goal=<the cube's x, y> (2),
      desired_goal=<the target's x, y> (2))``: the goals are in the table plane, where the success is measured;
      success (and sparse reward 0) when they are less than :attr:`distance_threshold` (0.05 m) apart, the task's
      own success. ``reward_type``: "sparse" (the default with goals, -1/0) or "dense" (minus the distance);
      without ``goal_obs`` the reward is always minus the distance and ``reward_type`` is refused.
    """

    success_distance = 0.05
    goal_size = 2
    distance_threshold = success_distance
    task_state = ("target_pos",)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf", "cube_small.urdf")

    def __init__(self, reward_type: str | None = None, **options: Any) -> None:
        self.reward_type = distance_reward_type(type(self).__name__, options.get("goal_obs", False), reward_type)
        super().__init__(**options)
        self.describe_observation()
        self.target_pos = np.array([0.6, 0.1, TABLE_TOP])

    def build_task_objects(self) -> None:
        c = self.client
        self.cube = self.load_body(
            "cube", p.loadURDF("cube_small.urdf", [0.5, 0.0, TABLE_TOP + 0.025], physicsClientId=c)
        )
        disc = p.createVisualShape(p.GEOM_CYLINDER, radius=0.04, length=0.002, rgbaColor=(0.1, 0.8, 0.2, 1.0),
                                   physicsClientId=c)
        self.target = self.load_body(
            "target", p.createMultiBody(0.0, -1, disc, [0.6, 0.1, TABLE_TOP + 0.001], physicsClientId=c)
        )

    def reset_task(self, options: dict[str, Any]) -> None:
        rng = self.np_random
        self.reset_arm()
        cube_xy = rng.uniform([0.40, -0.15], [0.60, 0.15])
        target_xy = rng.uniform([0.40, -0.20], [0.70, 0.20])
        while np.linalg.norm(target_xy - cube_xy) < 0.10:
            target_xy = rng.uniform([0.40, -0.20], [0.70, 0.20])
        c = self.client
        p.resetBasePositionAndOrientation(self.cube, [*cube_xy, TABLE_TOP + 0.025], (0, 0, 0, 1), physicsClientId=c)
        self.target_pos = np.array([*target_xy, TABLE_TOP + 0.001])
        p.resetBasePositionAndOrientation(self.target, self.target_pos.tolist(), (0, 0, 0, 1), physicsClientId=c)

    def cube_distance(self) -> float:
        pos, _ = p.getBasePositionAndOrientation(self.cube, physicsClientId=self.client)
        return float(np.linalg.norm(np.array(pos[:2]) - self.target_pos[:2]))

    def term_specs(self) -> list[Term]:
        return [Term(name, size) for name, size in (
            ("ee_pos", 3), ("ee_linvel", 3), ("cube_pos", 3), ("cube_rpy", 3), ("cube_linvel", 3),
            ("cube_angvel", 3), ("target_pos", 3), ("cube_target_distance", 1))] + self.extra_terms()

    def term_values(self) -> dict[str, Any]:
        c = self.client
        ee, ee_vel = self.ee_state()
        pos, orn = p.getBasePositionAndOrientation(self.cube, physicsClientId=c)
        lin, ang = p.getBaseVelocity(self.cube, physicsClientId=c)
        return {"ee_pos": ee, "ee_linvel": ee_vel, "cube_pos": pos, "cube_rpy": p.getEulerFromQuaternion(orn),
                "cube_linvel": lin, "cube_angvel": ang, "target_pos": self.target_pos,
                "cube_target_distance": [self.cube_distance()], **self.extra_values()}

    def achieved_goal(self) -> np.ndarray:
        return np.array(p.getBasePositionAndOrientation(self.cube, physicsClientId=self.client)[0][:2])

    def desired_goal(self) -> np.ndarray:
        return self.target_pos[:2]

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        return self.distance_evaluate(self.cube_distance(), self.success_distance)

    def reset_info(self) -> dict[str, Any]:
        return self.distance_reset_info(self.cube_distance())
