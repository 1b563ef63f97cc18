"""The environments' framework: the ``BulletEnv`` base and protocol, ``RobotEnv``, observation terms, robot files,
looks and randomisation, the Panda's world, and the registration machinery (the tasks are :mod:`pixelrig.tasks`).

Importing this package is light; the names below load their modules, and
pybullet with them, on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    "HasBulletClient",
    "Randomization",
    "RobotEnv",
    "bullet_client_of",
]
