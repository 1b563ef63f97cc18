"""Registration of pixelrig's environment ids with gymnasium (runs on ``import pixelrig``)."""

from __future__ import annotations

import gymnasium as gym

ENV_SPECS: dict[str, dict] = {
    "pixelrig/CartPole-v0": {"entry_point": "pixelrig.envs.cartpole:CartPoleEnv", "max_episode_steps": 500},
    "pixelrig/PandaPush-v0": {"entry_point": "pixelrig.envs.panda:PandaPushEnv", "max_episode_steps": 100},
    "pixelrig/PandaReach-v0": {"entry_point": "pixelrig.envs.panda:PandaReachEnv", "max_episode_steps": 50},
    "pixelrig/PandaLift-v0": {"entry_point": "pixelrig.envs.manipulation:PandaLiftEnv", "max_episode_steps": 100},
    "pixelrig/PandaPickPlace-v0": {"entry_point": "pixelrig.envs.manipulation:PandaPickPlaceEnv",
                                   "max_episode_steps": 150},
    "pixelrig/PandaStack-v0": {"entry_point": "pixelrig.envs.manipulation:PandaStackEnv", "max_episode_steps": 200},
    "pixelrig/PandaPegInsert-v0": {"entry_point": "pixelrig.envs.peg:PandaPegInsertEnv", "max_episode_steps": 200},
    "pixelrig/PandaPickObject-v0": {"entry_point": "pixelrig.envs.objects:PandaPickObjectEnv",
                                    "max_episode_steps": 100},
    "pixelrig/Robot-v0": {"entry_point": "pixelrig.envs.robot:RobotEnv", "max_episode_steps": 1000},
    "pixelrig/HalfCheetah-v0": {"entry_point": "pixelrig.envs.locomotion:HalfCheetahEnv", "max_episode_steps": 1000},
    "pixelrig/Hopper-v0": {"entry_point": "pixelrig.envs.locomotion:HopperEnv", "max_episode_steps": 1000},
    "pixelrig/Walker2d-v0": {"entry_point": "pixelrig.envs.locomotion:Walker2dEnv", "max_episode_steps": 1000},
    "pixelrig/Ant-v0": {"entry_point": "pixelrig.envs.locomotion:AntEnv", "max_episode_steps": 1000},
}
"""Every registered id with its ``gym.register`` arguments."""


def register_envs() -> None:
    """Register every pixelrig id (idempotent)."""
    for env_id, kwargs in ENV_SPECS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, **kwargs)
