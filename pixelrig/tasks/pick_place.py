"""``pixelrig/PandaPickPlace-v0``: move a 5 cm cube to a target, in the air or on the table."""

from __future__ import annotations

import numpy as np

from pixelrig.envs.manipulation import PandaManipulationEnv, PickPlaceGoal
from pixelrig.tasks.lift import PandaLiftEnv

REGISTRATION = {"id": "pixelrig/PandaPickPlace-v0", "entry_point": "PandaPickPlaceEnv", "max_episode_steps": 150}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaPickPlaceEnv(PickPlaceGoal, PandaManipulationEnv):
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

    success_distance = 0.03
    goal_size = 3
    distance_threshold = success_distance
    target_low, target_high = (0.40, -0.20, 0.05), (0.65, 0.20, 0.20)
    target_separation = 0.10
    cube_start = (0.5, 0.0)
    start_positions, start_yaws = PandaLiftEnv.start_positions, PandaLiftEnv.start_yaws
    rig_target = (0.52, 0.0, 0.72)
    model_files = PandaLiftEnv.model_files

    def achieved_goal(self) -> np.ndarray:
        return self.position("cube")

    def desired_goal(self) -> np.ndarray:
        return self.target_pos
