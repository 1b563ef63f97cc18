"""``pixelrig/PandaStack-v0``: put one 5 cm cube on another and let go."""

from __future__ import annotations

import numpy as np

from pixelrig.envs.manipulation import CUBE_REST, FULL_TURN, PandaManipulationEnv, StackGoal
from pixelrig.tasks.lift import PandaLiftEnv

REGISTRATION = {"id": "pixelrig/PandaStack-v0", "entry_point": "PandaStackEnv", "max_episode_steps": 200}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaStackEnv(StackGoal, PandaManipulationEnv):
    """Put cube A on cube B and let go (``pixelrig/PandaStack-v0``).

    - Start: two 5 cm cubes on the table, any yaw: A (``cube_a``, red) at x ∈ [0.40, 0.60], y ∈ [-0.18, -0.06];
      B (``cube_b``, blue) at x ∈ [0.40, 0.60], y ∈ [0.06, 0.18]. The two ranges keep the cubes at least 12 cm
      apart across the fingers' closing direction, so the open gripper around one never touches the other (widen
      them into each other and the cubes may start inside one another).
    - Observation (float32, 50): the gripper, then ``cube_a_*`` and ``cube_b_*`` (as
      :class:`PandaManipulationEnv` lays them out), then ``target_pos`` (3): where A's centre rests on B, B's
      centre plus 0.05 m up.
    - Success, all of: A on B (A's centre within :attr:`xy_tolerance` (0.02 m) of B's across the table and
      0.05 ± :attr:`z_tolerance` (0.005) m above it); released (the gripper open wider than :attr:`open_width`
      (0.06 m), no link of the robot touching A, the gripper centre at least :attr:`clearance` (0.05 m) from A's
      centre); both cubes still (slower than 0.01 m/s and 0.1 rad/s). The episode then terminates. Registered
      with a 200-step time limit.
    - Dense stages: ``reach`` (0.2) to A as in PandaLift, ``grasp`` (0.2) both fingers on A, ``align`` (0.4)
      ``1 - tanh(10 d)`` of A's distance to ``target_pos``, ``release`` (0.2) A on B and released.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    - ``goal_obs=True``: the goal covers both cubes. Achieved: A's and B's centres (6); desired: A's place on B
      (``target_pos``) and B's centre, both where B is now (6). Their distance is A's distance to its place on B;
      success (and sparse reward 0) when it is below :attr:`distance_threshold` (0.02 m, the task's
      :attr:`xy_tolerance`). A goal is positions only, as panda-gym's Stack: the release and the stillness of the
      task's own success are not part of it. A relabelled goal (HER's, from a later achieved goal) asks for both
      cubes at given places.
    """

    xy_tolerance = 0.02
    z_tolerance = 0.005
    open_width = 0.06
    """Released: the gripper open wider than this (m)."""
    clearance = 0.05
    goal_size = 6
    distance_threshold = xy_tolerance
    cube_starts = ((0.5, -0.1), (0.5, 0.1))
    start_positions = {"cube_a": ((0.40, -0.18, CUBE_REST), (0.60, -0.06, CUBE_REST)),
                       "cube_b": ((0.40, 0.06, CUBE_REST), (0.60, 0.18, CUBE_REST))}
    start_yaws = {"cube_a": FULL_TURN, "cube_b": FULL_TURN}
    rig_target = (0.5, 0.0, 0.67)
    model_files = PandaLiftEnv.model_files

    def achieved_goal(self) -> np.ndarray:
        return np.concatenate([self.position("cube_a"), self.position("cube_b")])

    def desired_goal(self) -> np.ndarray:
        return np.concatenate([self.stack_target(), self.position("cube_b")])

    def let_go_open(self) -> bool:
        return self.opening() > self.open_width
