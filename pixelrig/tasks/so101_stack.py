"""``pixelrig/SO101Stack-v0``: put one 2.5 cm cube on another with the SO-101 and let go."""

from __future__ import annotations

from pixelrig.envs.manipulation import StackGoal
from pixelrig.envs.so101 import CUBE_REST, FULL_TURN, SO101TaskEnv

REGISTRATION = {"id": "pixelrig/SO101Stack-v0", "entry_point": "SO101StackEnv", "max_episode_steps": 250}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class SO101StackEnv(StackGoal, SO101TaskEnv):
    """Put cube A on cube B and let go (``pixelrig/SO101Stack-v0``).

    - Start: two 2.5 cm, 30 g cubes on the table, any yaw: A (``cube_a``, red) at x ∈ [0.16, 0.26],
      y ∈ [-0.08, -0.04]; B (``cube_b``, blue) at x ∈ [0.16, 0.26], y ∈ [0.04, 0.08] (SO101Lift's range, split):
      at least 8 cm apart across the table, so the half-open jaw around one never touches the other.
    - Observation (float32, 55): the arm as SO101Lift's, then ``cube_a_*`` and ``cube_b_*`` (as
      :class:`~pixelrig.envs.so101.SO101TaskEnv` lays them out), then ``target_pos`` (3): where A's centre rests on
      B, B's centre plus 0.025 m up.
    - Success, all of: A on B (A's centre within :attr:`xy_tolerance` (0.01 m) of B's across the table and
      0.025 ± :attr:`z_tolerance` (0.004) m above it); released (the jaw open past :attr:`open_percent` (40, in
      ``gripper.pos``'s 0-100), no link of the arm touching A, the grasp centre at least :attr:`clearance`
      (0.03 m) from A's centre); both cubes still (slower than 0.01 m/s and 0.1 rad/s). The episode then
      terminates. Registered with a 250-step (8.3 s) time limit.
    - Dense stages: ``reach`` (0.2) to A as in SO101Lift, ``grasp`` (0.2) both jaws on A, ``align`` (0.4)
      ``1 - tanh(10 d)`` of A's distance to ``target_pos``, ``release`` (0.2) A on B and released.
    """

    xy_tolerance = 0.01
    z_tolerance = 0.004
    open_percent = 40.0
    """Released: the jaw open past this, in ``gripper.pos``'s units (0 closed, 100 open)."""
    clearance = 0.03
    cube_starts = ((0.2, -0.06), (0.2, 0.06))
    start_positions = {"cube_a": ((0.16, -0.08, CUBE_REST), (0.26, -0.04, CUBE_REST)),
                       "cube_b": ((0.16, 0.04, CUBE_REST), (0.26, 0.08, CUBE_REST))}
    start_yaws = {"cube_a": FULL_TURN, "cube_b": FULL_TURN}

    def let_go_open(self) -> bool:
        return bool(self.joint_pos()[5] > self.open_percent)
