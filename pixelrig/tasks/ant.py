"""``pixelrig/Ant-v0``: walk forward on four legs without falling.
A port of pybullet_data's MJCF file (see :mod:`pixelrig.envs.locomotion`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pybullet as p

from pixelrig.cameras.spec import Camera
from pixelrig.envs.locomotion import LocomotionEnv

REGISTRATION = {"id": "pixelrig/Ant-v0", "entry_point": "AntEnv", "max_episode_steps": 1000}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class AntEnv(LocomotionEnv):
    """Walk forward on four legs (mjcf/ant.xml, floating torso, 8 motors, power 2.5).

    Reward: ``1.0 (while healthy) + 1.0 × forward velocity - 0.5 × sum(action²) - 5e-4 × sum(clip(contact
    normal force, 0, 1)²)`` over the ant's contacts. Healthy: 0.2 < torso z < 1.0 m; terminates when unhealthy.
    Observation (27): z, quaternion (xyzw), 8 joint angles, then linear and angular torso velocity and the 8
    joint rates.
    """

    mjcf = "mjcf/ant.xml"
    power = 2.5
    planar = False
    track_height = 0.5
    ctrl_cost_weight = 0.5
    healthy_reward = 1.0
    terminates = True
    contact_cost_weight = 5e-4

    def is_healthy(self) -> bool:
        z = float(self.torso_position()[2])
        return 0.2 < z < 1.0

    def extra_costs(self) -> float:
        forces = [c[9] for c in p.getContactPoints(bodyA=self.robot, physicsClientId=self.client)]
        return self.contact_cost_weight * float(np.sum(np.square(np.clip(forces, 0.0, 1.0)))) if forces else 0.0

    def reset_task(self, options: dict[str, Any]) -> None:
        super().reset_task(options)
        c, rng, s = self.client, self.np_random, self.reset_noise_scale
        pos, orn = p.getBasePositionAndOrientation(self.robot, physicsClientId=c)
        p.resetBaseVelocity(self.robot, rng.uniform(-s, s, 3).tolist(), rng.uniform(-s, s, 3).tolist(),
                            physicsClientId=c)
        self.last_x = float(pos[0])

    def default_cameras(self) -> list[Camera]:
        cams = super().default_cameras()
        cams[0] = dataclasses.replace(cams[0], eye=(2.5, -2.5, 2.2), target=(0.0, 0.0, 0.4))
        return cams
