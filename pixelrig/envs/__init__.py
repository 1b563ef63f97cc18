"""Environments: the ``BulletEnv`` base and protocol, ``RobotEnv``, bundled tasks, and their registration.

Importing this package is light (the registration needs gymnasium only); the names below load their modules, and
pybullet with them, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelrig.envs.registration import ENV_SPECS, register_envs
from pixelrig.system.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "BulletEnv": "pixelrig.envs.base",
    "CameraSpec": "pixelrig.envs.base",
    "HasBulletClient": "pixelrig.envs.base",
    "Randomization": "pixelrig.envs.randomization",
    "RobotEnv": "pixelrig.envs.robot",
    "bullet_client_of": "pixelrig.envs.base",
}

if TYPE_CHECKING:
    from pixelrig.envs.base import BulletEnv, CameraSpec, HasBulletClient, bullet_client_of
    from pixelrig.envs.randomization import Randomization
    from pixelrig.envs.robot import RobotEnv


__getattr__, __dir__ = lazy_exports("pixelrig.envs", _EXPORTS, globals())

__all__ = [
    "BulletEnv",
    "CameraSpec",
    "ENV_SPECS",
    "HasBulletClient",
    "Randomization",
    "RobotEnv",
    "bullet_client_of",
    "register_envs",
]
