"""``pixelrig/PandaPickPlace-v0``: move a 5 cm cube to a target, in the air or on the table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from pixelrig.envs.manipulation import CUBE_REST, GREEN, RED, PandaManipulationEnv, closeness
from pixelrig.envs.terms import Term
from pixelrig.tasks.lift import PandaLiftEnv

REGISTRATION = {"id": "pixelrig/PandaPickPlace-v0", "entry_point": "PandaPickPlaceEnv", "max_episode_steps": 150}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaPickPlaceEnv(PandaManipulationEnv):
    """Move a 5 cm cube to a target, in the air or on the table (``pixelrig/PandaPickPlace-v0``).

    - Start: the cube as in PandaLift; the target (a green sphere drawn only, 3 cm across) is where the cube's
      centre must go: x ∈ [0.40, 0.65], y ∈ [-0.20, 0.20] and at least 0.10 m from the cube across the table; the
      seed puts it on the table (the cube resting there, centre 0.025 m above the top) or, with probability
      :attr:`air_probability` (0.5), 0.05-0.20 m higher, in the air.
    - Observation (float32, 35): PandaLift's, then ``target_pos`` (3) and ``target_rel_pos`` (3, target minus cube).
    - Success: the cube's centre within :attr:`success_distance` (0.03 m) of the target; the episode then
      terminates. The cube need not be let go. Registered with a 150-step time limit.
    - Dense stages: ``reach`` (0.25) and ``grasp`` (0.25) as PandaLift's, ``place`` (0.5) ``1 - tanh(10 d)`` of the
      cube's distance to the target.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    - ``goal_obs=True``: the achieved goal is the cube's centre (3), the desired goal the target (3); success (and
      sparse reward 0) when they are less than :attr:`distance_threshold` (0.03 m) apart: the task's own success.
    """

    objects = ("cube",)
    task_state = ("target_pos",)
    success_distance = 0.03
    goal_size = 3
    distance_threshold = success_distance
    air_probability = 0.5
    start_positions = PandaLiftEnv.start_positions
    start_yaws = PandaLiftEnv.start_yaws
    stage_weights = {"reach": 0.25, "grasp": 0.25, "place": 0.5}
    rig_target = (0.52, 0.0, 0.72)
    model_files = PandaLiftEnv.model_files

    def __init__(self, **options: Any) -> None:
        self.target_pos = np.array([0.55, 0.1, CUBE_REST])
        """Where the cube's centre must go (m, world frame)."""
        super().__init__(**options)

    def build_task_objects(self) -> None:
        c = self.client
        self.load_cube("cube", RED, (0.5, 0.0))
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.015, rgbaColor=GREEN, physicsClientId=c)
        self.load_body("target", p.createMultiBody(0.0, -1, ball, self.target_pos.tolist(), physicsClientId=c))

    def goal_terms(self) -> list[Term]:
        return [Term("target_pos", 3), Term("target_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.target_pos, "target_rel_pos": self.target_pos - self.position("cube")}

    def reset_task(self, options: dict[str, Any]) -> None:
        super().reset_task(options)
        rng = self.np_random
        cube = self.position("cube")[:2]
        xy = rng.uniform([0.40, -0.20], [0.65, 0.20])
        while np.linalg.norm(xy - cube) < 0.10:
            xy = rng.uniform([0.40, -0.20], [0.65, 0.20])
        height = rng.uniform(0.05, 0.20) if rng.random() < self.air_probability else 0.0
        self.target_pos = np.array([*xy, CUBE_REST + height])
        p.resetBasePositionAndOrientation(self.body_id("target"), self.target_pos.tolist(), (0, 0, 0, 1),
                                          physicsClientId=self.client)

    def distance(self) -> float:
        """The cube's centre's distance to the target (m)."""
        return float(np.linalg.norm(self.position("cube") - self.target_pos))

    def is_success(self) -> bool:
        return self.distance() < self.success_distance

    def achieved_goal(self) -> np.ndarray:
        return self.position("cube")

    def desired_goal(self) -> np.ndarray:
        return self.target_pos

    def stages(self) -> dict[str, float]:
        return {"reach": closeness(float(np.linalg.norm(self.position("cube") - self.grasp_centre()))),
                "grasp": float(self.grasped("cube")), "place": closeness(self.distance())}
