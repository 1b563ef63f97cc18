"""``pixelrig/SO101Lift-v0``: lift a 2.5 cm cube 5 cm above the table with the SO-101's jaw."""

from __future__ import annotations

import numpy as np

from pixelrig.envs.so101 import CUBE_REST, FULL_TURN, RED, SO101TaskEnv

REGISTRATION = {"id": "pixelrig/SO101Lift-v0", "entry_point": "SO101LiftEnv", "max_episode_steps": 150}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class SO101LiftEnv(SO101TaskEnv):
    """Lift a 2.5 cm cube 5 cm above the table (``pixelrig/SO101Lift-v0``).

    - Start: a red 2.5 cm, 30 g cube on the table, x ∈ [0.16, 0.26], y ∈ [-0.08, 0.08], any yaw.
    - Observation (float32, 35): the arm and the cube, as :class:`~pixelrig.envs.so101.SO101TaskEnv` lays them out.
    - Success: the cube's bottom at least :attr:`lift_height` (0.05 m) above the table; the episode then
      terminates. Registered with a 150-step (5 s) time limit.
    - Dense stages: ``reach`` (0.25) ``1 - tanh(10 d)`` of the grasp centre's distance to the cube, ``grasp``
      (0.25) both jaws touch it, ``lift`` (0.5) its height over 0.05 m, clipped to [0, 1], counted while grasped.
    - Control: ``ee_delta_pitch_roll`` with the jaw (6 actions), or ``so101_follower``.
    """

    objects = ("cube",)
    lift_height = 0.05
    """How high the cube's bottom must be above the table (m)."""
    start_positions = {"cube": ((0.16, -0.08, CUBE_REST), (0.26, 0.08, CUBE_REST))}
    start_yaws = {"cube": FULL_TURN}
    stage_weights = {"reach": 0.25, "grasp": 0.25, "lift": 0.5}

    def build_task_objects(self) -> None:
        self.load_cube("cube", RED, (0.2, 0.0))

    def lifted(self) -> float:
        """How far the cube's centre is above its resting height (m)."""
        return float(self.position("cube")[2] - CUBE_REST)

    def is_success(self) -> bool:
        return self.lifted() >= self.lift_height

    def stages(self) -> dict[str, float]:
        grasp = float(self.grasped("cube"))
        return {"reach": self.reach_stage("cube"), "grasp": grasp,
                "lift": grasp * float(np.clip(self.lifted() / self.lift_height, 0.0, 1.0))}
