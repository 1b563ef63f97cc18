"""``pixelrig/SO101Reach-v0``: bring the SO-101's grasp centre to a point above the table."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from pixelrig.envs.so101 import GREEN, TABLE_TOP, SO101TaskEnv, closeness
from pixelrig.envs.terms import Term

REGISTRATION = {"id": "pixelrig/SO101Reach-v0", "entry_point": "SO101ReachEnv", "max_episode_steps": 100}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class SO101ReachEnv(SO101TaskEnv):
    """Bring the grasp centre (between the jaws) to a target point (``pixelrig/SO101Reach-v0``).

    - Start: the arm at its neutral pose; the target (a green sphere drawn only, 2 cm across) uniform in
      x ∈ [0.14, 0.28], y ∈ [-0.12, 0.12], 0.03-0.09 m above the table: where the jaws reach pointing
      down (higher, the wrist_flex joint meets its limit).
    - Observation (float32, 22): the arm (:class:`~pixelrig.envs.so101.SO101TaskEnv`), then ``target_pos`` (3) and
      ``target_rel_pos`` (3, target minus grasp centre).
    - Success: the grasp centre within :attr:`success_distance` (0.015 m) of the target; the episode then
      terminates. Registered with a 100-step (3.3 s) time limit.
    - Dense stage: ``reach`` (1.0) ``1 - tanh(10 d)`` of the distance.
    """

    task_state = ("target_pos",)
    success_distance = 0.015
    stage_weights = {"reach": 1.0}
    target_low = (0.14, -0.12, TABLE_TOP + 0.03)
    target_high = (0.28, 0.12, TABLE_TOP + 0.09)

    def __init__(self, **options: Any) -> None:
        self.target_pos = np.array([0.2, 0.0, TABLE_TOP + 0.08])
        """Where the grasp centre must go (m, world frame)."""
        super().__init__(**options)

    def build_task_objects(self) -> None:
        c = self.client
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.01, rgbaColor=GREEN, physicsClientId=c)
        self.load_body("target", p.createMultiBody(0.0, -1, ball, self.target_pos.tolist(), physicsClientId=c))

    def reset_task(self, options: dict[str, Any]) -> None:
        super().reset_task(options)
        self.target_pos = self.np_random.uniform(self.target_low, self.target_high)
        p.resetBasePositionAndOrientation(self.body_id("target"), self.target_pos.tolist(), (0, 0, 0, 1),
                                          physicsClientId=self.client)

    def goal_terms(self) -> list[Term]:
        return [Term("target_pos", 3), Term("target_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.target_pos, "target_rel_pos": self.target_pos - self.grasp_centre()}

    def distance(self) -> float:
        """The grasp centre's distance to the target (m)."""
        return float(np.linalg.norm(self.grasp_centre() - self.target_pos))

    def is_success(self) -> bool:
        return self.distance() < self.success_distance

    def stages(self) -> dict[str, float]:
        return {"reach": closeness(self.distance())}
