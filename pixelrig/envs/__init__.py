"""Environments: the ``BulletEnv`` base and protocol, ``RobotEnv``, bundled tasks, and their registration."""

from pixelrig.envs.base import BulletEnv, CameraSpec, HasBulletClient, bullet_client_of
from pixelrig.envs.randomization import Randomization
from pixelrig.envs.registration import ENV_SPECS, register_envs
from pixelrig.envs.robot import RobotEnv

__all__ = [
    "ENV_SPECS",
    "BulletEnv",
    "HasBulletClient",
    "CameraSpec",
    "Randomization",
    "RobotEnv",
    "bullet_client_of",
    "register_envs",
]
