"""Environments: the ``BulletEnv`` base and protocol, bundled tasks, and their registration."""

from pixelrig.envs.base import BulletEnv, BulletScene, CameraSpec, bullet_client_of
from pixelrig.envs.registration import ENV_SPECS, register_envs

__all__ = ["ENV_SPECS", "BulletEnv", "BulletScene", "CameraSpec", "bullet_client_of", "register_envs"]
