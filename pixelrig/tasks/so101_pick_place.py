"""``pixelrig/SO101PickPlace-v0``: move a 2.5 cm cube to a target, on the table or in the air, with the SO-101."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from pixelrig.envs.so101 import CUBE_REST, GREEN, RED, SO101TaskEnv, closeness
from pixelrig.envs.terms import Term
from pixelrig.tasks.so101_lift import SO101LiftEnv

REGISTRATION = {"id": "pixelrig/SO101PickPlace-v0", "entry_point": "SO101PickPlaceEnv", "max_episode_steps": 200}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class SO101PickPlaceEnv(SO101TaskEnv):
    """Move a 2.5 cm cube to a target, on the table or in the air (``pixelrig/SO101PickPlace-v0``).

    - Start: the cube as in SO101Lift; the target (a green sphere drawn only, 1.5 cm across) is where the cube's
      centre must go: x ∈ [0.16, 0.26], y ∈ [-0.10, 0.10] and at least 0.06 m from the cube across the table; the
      seed puts it on the table (the cube resting there) or, with probability :attr:`air_probability` (0.5),
      0.02-0.04 m higher (where the jaws still point down with the cube held above it).
    - Observation (float32, 41): SO101Lift's, then ``target_pos`` (3) and ``target_rel_pos`` (3, target minus cube).
    - Success: the cube's centre within :attr:`success_distance` (0.02 m) of the target; the episode then
      terminates. The cube need not be let go. Registered with a 200-step (6.7 s) time limit.
    - Dense stages: ``reach`` (0.25) and ``grasp`` (0.25) as SO101Lift's, ``place`` (0.5) ``1 - tanh(10 d)`` of the
      cube's distance to the target.
    """

    objects = ("cube",)
    task_state = ("target_pos",)
    success_distance = 0.02
    air_probability = 0.5
    target_low, target_high = (0.16, -0.10), (0.26, 0.10)
    start_positions = SO101LiftEnv.start_positions
    start_yaws = SO101LiftEnv.start_yaws
    stage_weights = {"reach": 0.25, "grasp": 0.25, "place": 0.5}

    def __init__(self, **options: Any) -> None:
        self.target_pos = np.array([0.22, 0.06, CUBE_REST])
        """Where the cube's centre must go (m, world frame)."""
        super().__init__(**options)

    def build_task_objects(self) -> None:
        c = self.client
        self.load_cube("cube", RED, (0.2, 0.0))
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.0075, rgbaColor=GREEN, physicsClientId=c)
        self.load_body("target", p.createMultiBody(0.0, -1, ball, self.target_pos.tolist(), physicsClientId=c))

    def goal_terms(self) -> list[Term]:
        return [Term("target_pos", 3), Term("target_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.target_pos, "target_rel_pos": self.target_pos - self.position("cube")}

    def reset_task(self, options: dict[str, Any]) -> None:
        super().reset_task(options)
        rng = self.np_random
        cube = self.position("cube")[:2]
        xy = rng.uniform(self.target_low, self.target_high)
        while np.linalg.norm(xy - cube) < 0.06:
            xy = rng.uniform(self.target_low, self.target_high)
        height = rng.uniform(0.02, 0.04) if rng.random() < self.air_probability else 0.0
        self.target_pos = np.array([*xy, CUBE_REST + height])
        p.resetBasePositionAndOrientation(self.body_id("target"), self.target_pos.tolist(), (0, 0, 0, 1),
                                          physicsClientId=self.client)

    def distance(self) -> float:
        """The cube's centre's distance to the target (m)."""
        return float(np.linalg.norm(self.position("cube") - self.target_pos))

    def is_success(self) -> bool:
        return self.distance() < self.success_distance

    def stages(self) -> dict[str, float]:
        return {"reach": self.reach_stage("cube"), "grasp": float(self.grasped("cube")),
                "place": closeness(self.distance())}
