"""Ray RLlib glue: an env creator for Ray's env registry and a small PPO config for pixel observations.

Ray ships the creator to every env runner by reference (``pixelrig.integrations.rllib.env_creator``), so each
runner -- in its own process, on this machine or another node -- builds its own pixelrig env, and the one-EGL-
client-per-process rule holds by construction. Importing this module does not import Ray.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

DEFAULT_CAMERA = {"name": "front", "width": 48, "height": 48, "eye": (0.0, -2.6, 0.45), "target": (0.0, 0.0, 0.35),
                  "near": 0.05, "far": 10.0, "modalities": ("rgb",)}


def env_creator(config: Mapping[str, Any] | None = None) -> gym.Env:
    """Build a pixelrig env under PixelObs from an RLlib ``env_config``.

    Keys (all optional): ``env_id`` (default "pixelrig/CartPole-v0"), ``cams`` (camera dicts; default a 48x48
    RGB front camera), ``pixels_only`` (default True), ``renderer`` (default "auto"), ``env_kwargs``.
    With ``renderer="egl"`` and GPUs given to the runner by Ray (CUDA_VISIBLE_DEVICES), the runner renders on
    its GPU (``gpu=0``: the first CUDA device it sees).
    """
    from pixelrig.wrappers.pixel_obs import PixelObs

    config = dict(config or {})
    kwargs = dict(config.get("env_kwargs", {}))
    if config.get("renderer") == "egl" and config.get("gpu", None) is not None:
        kwargs["gpu"] = config["gpu"]
    env = gym.make(config.get("env_id", "pixelrig/CartPole-v0"), renderer=config.get("renderer"), **kwargs)
    return PixelObs(env, cams=config.get("cams", [DEFAULT_CAMERA]), pixels_only=config.get("pixels_only", True))


def register(name: str = "pixelrig") -> str:
    """Register :func:`env_creator` in Ray's env registry under ``name``; returns the name."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def flatten_connector(env: Any = None, spaces: Any = None, device: Any = None) -> Any:
    """RLlib env-to-module connector that flattens the Dict of images for the default MLP RLModule."""
    from ray.rllib.connectors.env_to_module import FlattenObservations

    return FlattenObservations()


def ppo_config(env_config: Mapping[str, Any] | None = None, env_runners: int = 2, batch: int = 256,
               name: str = "pixelrig") -> Any:
    """A small PPO config on a pixelrig pixel env (torch, CPU learner): a starting point, not a tuned one."""
    from ray.rllib.algorithms.ppo import PPOConfig

    register(name)
    return (
        PPOConfig()
        .environment(name, env_config=dict(env_config or {"renderer": "tiny"}))
        .framework("torch")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1,
                     rollout_fragment_length=max(batch // max(env_runners, 1), 1),
                     env_to_module_connector=flatten_connector)
        .training(train_batch_size_per_learner=batch, minibatch_size=64, num_epochs=1, lr=3e-4)
        .rl_module(model_config={"fcnet_hiddens": [64, 64]})
    )
