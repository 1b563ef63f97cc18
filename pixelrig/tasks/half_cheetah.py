"""``pixelrig/HalfCheetah-v0``: run forward on two legs, a planar cheetah.
A port of pybullet_data's MJCF file (see :mod:`pixelrig.envs.locomotion`)."""

from __future__ import annotations

from pixelrig.envs.locomotion import LocomotionEnv

REGISTRATION = {"id": "pixelrig/HalfCheetah-v0", "entry_point": "HalfCheetahEnv", "max_episode_steps": 1000}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class HalfCheetahEnv(LocomotionEnv):
    """Run forward (mjcf/half_cheetah.xml, planar, 6 motors, power 0.90).

    Reward: ``1.0 × forward velocity - 0.1 × sum(action²)``. Never terminates (1000-step limit).
    Observation (17): z, pitch, 6 joint angles, then the 9 velocities.
    """

    mjcf = "mjcf/half_cheetah.xml"
    power = 0.90
    track_height = 0.3
