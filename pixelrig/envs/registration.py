"""Registration of environment ids with gymnasium: the machinery, and the framework's own id (``pixelrig/Robot-v0``).
The tasks' ids come from :mod:`pixelrig.tasks`, each module declaring its own."""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym

FRAMEWORK_SPECS: dict[str, dict] = {
    "pixelrig/Robot-v0": {"entry_point": "pixelrig.envs.robot:RobotEnv", "max_episode_steps": 1000},
}
"""The ids of the framework's own envs with their ``gym.register`` arguments."""


def register(specs: Mapping[str, Mapping]) -> None:
    """Register each ``{id: gym.register arguments}`` not registered yet (idempotent)."""
    for env_id, kwargs in specs.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, **kwargs)
