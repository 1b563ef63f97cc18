"""``pixelrig/Walker2d-v0``: walk forward on two legs without falling.
A port of pybullet_data's MJCF file (see :mod:`pixelrig.envs.locomotion`)."""

from __future__ import annotations

from pixelrig.tasks.hopper import HopperEnv

REGISTRATION = {"id": "pixelrig/Walker2d-v0", "entry_point": "Walker2dEnv", "max_episode_steps": 1000}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class Walker2dEnv(HopperEnv):
    """Walk forward on two legs (mjcf/walker2d.xml, planar, 6 motors, power 0.40).

    Reward: ``1.0 (while healthy) + 1.0 × forward velocity - 0.001 × sum(action²)``. Healthy: 0.8 < torso z < 2.0
    m and |pitch| < 1 rad; terminates when unhealthy. Observation (17): z, pitch, 6 joint angles, then the 9
    velocities clipped to ±10.
    """

    mjcf = "mjcf/walker2d.xml"
    power = 0.40
    healthy_z = (0.8, 2.0)
    healthy_pitch = (-1.0, 1.0)
