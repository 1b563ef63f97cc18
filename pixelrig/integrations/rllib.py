"""Ray RLlib glue: an env creator that gives each env runner pixelrig's batched vector env, and a PPO config whose
RLModule sees the images through CNNs.

Ray ships the creator to every env runner by reference (``pixelrig.integrations.rllib.env_creator``), so each
runner -- in its own process, on this machine or another node -- builds its own envs. With
``config.env_runners(gym_env_vectorize_mode="vector_entry_point")`` (what :func:`ppo_config` sets) RLlib asks the
creator for all of a runner's ``num_envs_per_env_runner`` envs at once, and gets
``make_vec(..., vectorization_mode="batched")``: the envs step one by one in the runner's process and their cameras
are drawn by gl together (one pass for up to 4 envs; above, one per quarter of them, each drawn while the next
envs step), the observations come back as one batched array per key per step (RLlib's episodes take views of it,
not copies), in next-step autoreset (RLlib's mode). :func:`ppo_config`'s RLModule is PPO's default one built by
:class:`pixelrig.integrations.rllib_model.PixelPPOCatalog`: a CNN per image key, an MLP for the rest.

``env_config`` keys (all optional; anything else is refused with the list):

- ``env_id``: a registered id (default "pixelrig/CartPole-v0");
- ``cams``: PixelObs cameras (``Camera`` objects or their dicts; default :data:`DEFAULT_CAMERA`; None: the env's
  default rig);
- ``pixels_only``: drop the "state" key (default True);
- ``renderer``: default gl where it gets a context on the runner's node (:func:`pixelrig.render.choice.probe_gl`),
  else tiny (``PIXELRIG_RENDERER`` on the node, when set, wins);
- ``frame_stack``: the last k observations merged along the channel axis (:class:`pixelrig.vector.stack.FrameStack`;
  default 1);
- ``gpu``: the CUDA device (an index into the runner's ``CUDA_VISIBLE_DEVICES``) whose EGL device gl or egl draws
  on; None (default): the runner's first visible GPU, which is the one Ray gave it with
  ``num_gpus_per_env_runner``;
- ``num_workers``: processes a runner spreads its envs over (make_vec's ``num_workers``; default 1: the runner's
  own);
- ``vectorization_mode``: make_vec's (default "batched"; "async" for egl, which allows one env per process);
- ``env_kwargs``: ``gym.make`` kwargs of every env.

Importing this module does not import Ray.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from pixelrig.vector.autoreset import NEXT_STEP

DEFAULT_CAMERA = {"name": "front", "width": 48, "height": 48, "eye": (0.0, -2.6, 0.45), "target": (0.0, 0.0, 0.35),
                  "near": 0.05, "far": 10.0, "modalities": ("rgb",)}
"""A world-fixed 48x48 RGB camera in front of CartPole-v0 (the default ``cams``)."""
TRACKING_CAMERA = {"name": "track", "width": 48, "height": 48, "fov": 50.0, "near": 0.05, "far": 10.0,
                   "mount": "cart", "follow": "position",
                   "offset": ((0.0, -1.6, 0.45), (-0.7071068, 0.0, 0.0, 0.7071068)), "modalities": ("rgb",)}
"""CartPole-v0's cart seen from 1.6 m in front, following it (examples/sb3_pixels.py's camera): the pole stays in
the middle of the 48x48 image, which is what PPO learns from in the learning tests."""
ENV_CONFIG_KEYS = ("env_id", "cams", "pixels_only", "renderer", "frame_stack", "gpu", "num_workers",
                   "vectorization_mode", "env_kwargs")
"""The ``env_config`` keys :func:`env_creator` reads."""
DEFAULT_ENV_ID = "pixelrig/CartPole-v0"
VF_CLIP = 1e6
"""PPO's value-loss clip: RLlib's default (10) stops the value function learning returns of a hundred or more,
which a balancing policy earns."""


def check_env_config(config: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming the fix for an ``env_config`` the creator cannot build: an unknown key, an id
    Gymnasium does not know, a frame stack below 1."""
    unknown = sorted(set(config) - set(ENV_CONFIG_KEYS) - {"num_envs"})
    if unknown:
        raise ValueError(f"env_config has unknown keys {unknown}: pixelrig's RLlib env creator reads "
                         f"{list(ENV_CONFIG_KEYS)} (and num_envs, from RLlib)")
    env_id = config.get("env_id", DEFAULT_ENV_ID)
    if env_id not in gym.registry and ":" not in str(env_id):
        ours = sorted(k for k in gym.registry if k.startswith("pixelrig/"))
        raise ValueError(f"env_config['env_id']={env_id!r} is not a registered Gymnasium id: pass one of pixelrig's "
                         f"({', '.join(ours)}), or 'module:Id-v0' for an id that module registers when imported")
    stack = config.get("frame_stack", 1)
    if isinstance(stack, bool) or not isinstance(stack, int) or stack < 1:
        raise ValueError(f"env_config['frame_stack']={stack!r} must be an integer >= 1 (1: no stacking)")


def _env_id(config: Mapping[str, Any]) -> str:
    """The id, its module imported first when given as ``module:Id`` (as gym.make does)."""
    env_id = config.get("env_id", DEFAULT_ENV_ID)
    if isinstance(env_id, str) and ":" in env_id and env_id not in gym.registry:
        import importlib

        module, _, name = env_id.partition(":")
        importlib.import_module(module)
        return name
    return env_id


def default_renderer(config: Mapping[str, Any]) -> str | None:
    """The renderer a runner's envs use: ``env_config["renderer"]``, else ``PIXELRIG_RENDERER`` (None: make_vec reads
    it), else gl where pixelrig's gl renderer gets a context on this node, else tiny."""
    if config.get("renderer"):
        return config["renderer"]
    from pixelrig.render.choice import ENV_VAR, probe_gl

    if os.environ.get(ENV_VAR, "").strip():
        return None
    return "gl" if probe_gl().ok else "tiny"


def env_creator(config: Mapping[str, Any] | None = None) -> gym.Env | gym.vector.VectorEnv:
    """Build a runner's envs from an RLlib ``env_config`` (keys: see the module's docstring).

    With ``num_envs`` in the config (RLlib's ``gym_env_vectorize_mode="vector_entry_point"`` adds it: the
    runner's ``num_envs_per_env_runner``), a vector env of that many envs: ``make_vec(...,
    vectorization_mode="batched", autoreset_mode="NextStep")``, under :class:`~pixelrig.vector.stack.FrameStack`
    when ``frame_stack > 1``. Without it, one env under PixelObs (RLlib's other vectorize modes call the creator
    once per env; frame stacking needs the vector env then).

    Raises:
        ValueError: an unknown key, an unregistered id, ``num_envs`` or ``frame_stack`` below 1, or frame stacking
            asked of a single env; make_vec's own errors (renderer, cameras) as they are.
    """
    config = dict(config or {})
    check_env_config(config)
    stack = config.get("frame_stack", 1)
    cams = config.get("cams", [DEFAULT_CAMERA])
    kwargs = dict(config.get("env_kwargs") or {})
    renderer = default_renderer(config)
    if "num_envs" not in config:
        if stack > 1:
            raise ValueError("env_config['frame_stack'] > 1 needs the vector env: set config.env_runners("
                             "gym_env_vectorize_mode='vector_entry_point') (ppo_config does)")
        from pixelrig.wrappers.pixel_obs import PixelObs

        if config.get("gpu") is not None:
            kwargs["gpu"] = config["gpu"]
        env = gym.make(_env_id(config), renderer=renderer, **kwargs)
        return PixelObs(env, cams=cams, pixels_only=config.get("pixels_only", True))
    num_envs = config["num_envs"]
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs={num_envs!r}: RLlib's num_envs_per_env_runner must be an integer >= 1: "
                         "config.env_runners(num_envs_per_env_runner=N)")
    from pixelrig.vector.make import make_vec

    venv = make_vec(_env_id(config), num_envs, cams=cams, renderer=renderer,
                    vectorization_mode=config.get("vectorization_mode", "batched"),
                    pixels_only=config.get("pixels_only", True), gpu=config.get("gpu"),
                    num_workers=config.get("num_workers", 1), env_kwargs=kwargs, autoreset_mode=NEXT_STEP)
    if stack == 1:
        return venv
    from pixelrig.vector.stack import FrameStack

    venv.copy = False  # type: ignore[attr-defined]  # FrameStack concatenates every step into new arrays
    return FrameStack(venv, stack)


def register(name: str = "pixelrig") -> str:
    """Register :func:`env_creator` in Ray's env registry under ``name``; returns the name."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def pixel_model_config(**overrides: Any) -> dict[str, Any]:
    """The model config :func:`ppo_config` gives PixelPPOCatalog: each image's CNN (``conv_filters`` None: NatureCNN
    from 36 pixels a side), a [64] MLP for flat keys, a [512] ReLU fusion layer, [64, 64] tanh heads, a learned log
    std per action (not a function of the observation, as SB3's), and one encoder for the policy and another for the
    value function (``vf_share_layers=False``: with one shared encoder, PPO from 48x48 pixels on CartPole-v0 stayed
    near random's return for 30k steps or more and collapsed back to it after reaching 100, the value loss steering
    the shared features; with two it passed 300 by 25k steps). ``overrides`` replace any key (RLlib's
    ``DefaultModelConfig`` names)."""
    return {"conv_filters": None, "conv_activation": "relu", "fcnet_hiddens": [64], "fcnet_activation": "tanh",
            "fusionnet_hiddens": [512], "fusionnet_activation": "relu", "head_fcnet_hiddens": [64, 64],
            "head_fcnet_activation": "tanh", "vf_share_layers": False, "free_log_std": True, **overrides}


def ppo_config(env_config: Mapping[str, Any] | None = None, env_runners: int = 2, envs_per_runner: int = 4, *,
               frame_stack: int | None = None, rollout: int = 64, minibatch: int = 256, epochs: int = 4,
               lr: float = 2.5e-4, model: Mapping[str, Any] | None = None, name: str = "pixelrig") -> Any:
    """PPO on pixelrig pixel envs (torch, one CPU learner in the driver): each of ``env_runners`` runners steps
    ``envs_per_runner`` batched envs and the RLModule is PPO's default one built by ``PixelPPOCatalog`` (a CNN per
    image key, an MLP for the rest). A starting point (its defaults learn CartPole-v0 from 48x48 pixels: see
    tests/test_integrations_rllib.py); change anything on the returned ``PPOConfig``.

    Args:
        env_config: the env creator's keys (module docstring); default ``{}`` (CartPole-v0, a front camera).
        env_runners: remote env runners (0: sample in the driver).
        envs_per_runner: envs per runner, all in the runner's process, drawn together.
        frame_stack: sets ``env_config["frame_stack"]`` (None: as env_config says, default 1).
        rollout: env steps per env per runner per iteration (the train batch is rollout x envs x runners).
        minibatch: SGD minibatch size. epochs: passes over each train batch. lr: Adam's learning rate.
        model: :func:`pixel_model_config` overrides.
        name: the name the creator is registered under in Ray's env registry.

    Raises:
        ValueError: ``envs_per_runner`` or ``env_runners`` out of range, or a bad env_config (see
            :func:`check_env_config`), before Ray starts anything.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from pixelrig.integrations.rllib_model import PixelPPOCatalog

    if isinstance(envs_per_runner, bool) or not isinstance(envs_per_runner, int) or envs_per_runner < 1:
        raise ValueError(f"envs_per_runner={envs_per_runner!r} must be an integer >= 1 (RLlib's "
                         "num_envs_per_env_runner)")
    if isinstance(env_runners, bool) or not isinstance(env_runners, int) or env_runners < 0:
        raise ValueError(f"env_runners={env_runners!r} must be an integer >= 0 (0: sample in the driver)")
    env_config = dict(env_config or {})
    if frame_stack is not None:
        env_config["frame_stack"] = frame_stack
    check_env_config(env_config)
    register(name)
    batch = rollout * envs_per_runner * max(env_runners, 1)
    return (
        PPOConfig()
        .environment(name, env_config=env_config)
        .framework("torch")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner,
                     gym_env_vectorize_mode="vector_entry_point", rollout_fragment_length=rollout,
                     num_cpus_per_env_runner=1)
        .training(train_batch_size_per_learner=batch, minibatch_size=min(minibatch, batch), num_epochs=epochs,
                  lr=lr, gamma=0.99, lambda_=0.95, clip_param=0.1, entropy_coeff=0.01, vf_loss_coeff=0.5,
                  vf_clip_param=VF_CLIP, use_kl_loss=False, grad_clip=0.5)
        .rl_module(rl_module_spec=RLModuleSpec(catalog_class=PixelPPOCatalog,
                                               model_config=pixel_model_config(**dict(model or {}))))
    )
