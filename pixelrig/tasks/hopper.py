"""``pixelrig/Hopper-v0``: hop forward on one leg without falling.
A port of pybullet_data's MJCF file (see :mod:`pixelrig.envs.locomotion`)."""

from __future__ import annotations

import numpy as np

from pixelrig.envs.locomotion import LocomotionEnv

REGISTRATION = {"id": "pixelrig/Hopper-v0", "entry_point": "HopperEnv", "max_episode_steps": 1000}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class HopperEnv(LocomotionEnv):
    """Hop forward without falling (mjcf/hopper.xml, planar, 3 motors, power 0.75).

    Reward: ``1.0 (while healthy) + 1.0 × forward velocity - 0.001 × sum(action²)``. Healthy: torso z > 0.7 m,
    |pitch| < 0.2 rad and every other position and velocity within ±100; terminates when unhealthy.
    Observation (11): z, pitch, 3 joint angles, then the 6 velocities clipped to ±10.
    """

    mjcf = "mjcf/hopper.xml"
    power = 0.75
    ctrl_cost_weight = 1e-3
    healthy_reward = 1.0
    reset_noise_scale = 5e-3
    terminates = True
    healthy_z = (0.7, np.inf)
    healthy_pitch = (-0.2, 0.2)

    def clip_velocities(self, qvel: np.ndarray) -> np.ndarray:
        return np.clip(qvel, -10.0, 10.0)

    def is_healthy(self) -> bool:
        qpos, qvel = self.qpos_qvel()
        z, pitch = qpos[1], qpos[2]
        rest = np.concatenate([qpos[3:], qvel])
        return bool(self.healthy_z[0] < z < self.healthy_z[1] and self.healthy_pitch[0] < pitch < self.healthy_pitch[1]
                    and np.all(np.abs(rest) < 100.0))
