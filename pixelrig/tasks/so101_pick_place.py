"""``pixelrig/SO101PickPlace-v0``: move a 2.5 cm cube to a target, on the table or in the air, with the SO-101."""

from __future__ import annotations

from pixelrig.envs.manipulation import PickPlaceGoal
from pixelrig.envs.so101 import SO101TaskEnv
from pixelrig.tasks.so101_lift import SO101LiftEnv

REGISTRATION = {"id": "pixelrig/SO101PickPlace-v0", "entry_point": "SO101PickPlaceEnv", "max_episode_steps": 200}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class SO101PickPlaceEnv(PickPlaceGoal, SO101TaskEnv):
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

    success_distance = 0.02
    target_low, target_high = (0.16, -0.10, 0.02), (0.26, 0.10, 0.04)
    target_separation = 0.06
    cube_start = (0.2, 0.0)
    start_positions, start_yaws = SO101LiftEnv.start_positions, SO101LiftEnv.start_yaws
