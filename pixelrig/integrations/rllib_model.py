"""RLlib models for pixelrig's Dict observations: a CNN per image key, an MLP for the flat keys, their outputs
concatenated and fused by an MLP, through RLlib's catalog API (``PixelPPOCatalog``: PPO's default RLModule with
this encoder in place of RLlib's, which takes no Dict).

Each image key (a Box with three axes: ``(H, W, C)``, channels last, stacked frames merged into C) goes through
RLlib's own CNN (``CNNEncoderConfig``); every other key is flattened, concatenated and goes through RLlib's MLP
(``MLPEncoderConfig``); the fusion MLP maps both to the latent the policy and value heads take. Images are scaled
inside the model: uint8 to [0, 1], float images with finite bounds (depth) by their bounds to [0, 1], others as
they are, so observations travel as the env gives them (uint8: four times smaller than floats).

Model config keys read (RLlib's ``DefaultModelConfig`` names): ``conv_filters`` (every image's CNN; default
:func:`default_filters`), ``conv_activation``, ``fcnet_hiddens`` / ``fcnet_activation`` (the flat keys' MLP),
``fusionnet_hiddens`` / ``fusionnet_activation`` (after the concatenation; empty: the concatenation itself).

Importing this module imports Ray's RLlib and torch (``pip install 'ray[rllib]' torch``); the library never
imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

try:
    import torch
    from ray.rllib.algorithms.ppo.ppo_catalog import PPOCatalog
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.base import ENCODER_OUT, Encoder
    from ray.rllib.core.models.configs import CNNEncoderConfig, MLPEncoderConfig, ModelConfig
    from ray.rllib.core.models.torch.base import TorchModel
    from torch import nn
except ImportError as exc:  # pragma: no cover (the test extra installs both)
    raise gym.error.DependencyNotInstalled(
        f"pixelrig.integrations.rllib_model needs Ray RLlib and torch ({exc}): pip install 'ray[rllib]' torch (on a "
        "CPU machine, torch's CPU wheel)") from None

NATURE_CNN = [[32, 8, 4, "valid"], [64, 4, 2, "valid"], [64, 3, 1, "valid"]]
"""DQN's CNN (SB3's NatureCNN): for images of at least 36 pixels a side (48² -> 2x2x64)."""
SMALL_CNN = [[16, 3, 2], [32, 3, 2], [64, 3, 2]]
"""For smaller images: three 3x3 stride-2 convolutions, padded ("same")."""
HIDDEN_GAIN = float(np.sqrt(2.0))


def default_filters(shape: tuple[int, ...]) -> list[list[Any]]:
    """The CNN filters (RLlib's ``conv_filters`` form) of an image of ``shape`` (H, W, C) when the model config
    names none: :data:`NATURE_CNN` from 36 pixels a side, else :data:`SMALL_CNN`."""
    return NATURE_CNN if min(shape[:2]) >= 36 else SMALL_CNN


def is_image(space: gym.Space) -> bool:
    """Whether a Dict entry goes through a CNN: a Box with three axes (H, W, C)."""
    return isinstance(space, gym.spaces.Box) and len(space.shape) == 3


def image_range(space: gym.spaces.Box) -> tuple[float, float] | None:
    """The (low, high) an image's values are mapped from onto [0, 1]: (0, 255) for uint8, a float Box's finite
    bounds, else None (fed as they are: integer labels, unbounded floats)."""
    if space.dtype == np.uint8:
        return 0.0, 255.0
    if np.issubdtype(space.dtype, np.floating) and np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high)):
        low, high = float(np.min(space.low)), float(np.max(space.high))
        return (low, high) if high > low else None
    return None


def _mlp(input_dim: int, hiddens: list[int], activation: str) -> MLPEncoderConfig:
    return MLPEncoderConfig(input_dims=(input_dim,), hidden_layer_dims=list(hiddens[:-1]),
                            hidden_layer_activation=activation, output_layer_dim=hiddens[-1],
                            output_layer_activation=activation)


@dataclass
class PixelEncoderConfig(ModelConfig):
    """An encoder for a Dict of images and flat entries (see the module's docstring); build it with
    :func:`pixel_encoder_config` from a space and a model config.

    Attributes:
        images: image key -> RLlib's CNN encoder config for it.
        ranges: image key -> (low, high) mapped onto [0, 1] (keys left out: fed as they are).
        flat_keys: the other keys, flattened and concatenated in this order.
        flat: the MLP over them (None when there are none).
        fusion: the MLP over every encoder's output, concatenated (None: the concatenation is the latent).
    """

    images: dict[str, CNNEncoderConfig] = field(default_factory=dict)
    ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    flat_keys: tuple[str, ...] = ()
    flat: MLPEncoderConfig | None = None
    fusion: MLPEncoderConfig | None = None

    @property
    def concat_dim(self) -> int:
        """The width of the encoders' outputs, concatenated."""
        return sum(c.output_dims[0] for c in self.images.values()) + (self.flat.output_dims[0] if self.flat else 0)

    @property
    def output_dims(self) -> tuple[int, ...]:
        return self.fusion.output_dims if self.fusion is not None else (self.concat_dim,)

    def build(self, framework: str = "torch") -> Encoder:
        if framework != "torch":
            raise ValueError(f"PixelEncoderConfig builds torch models only: got framework={framework!r}")
        return TorchPixelEncoder(self)


def pixel_encoder_config(space: gym.spaces.Dict, model_config: dict[str, Any]) -> PixelEncoderConfig:
    """The encoder of a Dict observation space: a CNN per image key, an MLP over the rest, a fusion MLP.

    Args:
        space: the (single-env) Dict observation space.
        model_config: RLlib's model config dict (``DefaultModelConfig``'s keys; see the module's docstring).

    Raises:
        ValueError: an entry that is not a Box, or an image too small for the filters.
    """
    wrong = {k: s for k, s in space.spaces.items() if not isinstance(s, gym.spaces.Box)}
    if wrong:
        raise ValueError(f"the pixel encoder takes a Dict of Boxes: {wrong} are not Boxes")
    images, ranges = {}, {}
    for key, sub in space.spaces.items():
        if is_image(sub):
            filters = model_config.get("conv_filters") or default_filters(sub.shape)
            cnn = CNNEncoderConfig(input_dims=tuple(sub.shape), cnn_filter_specifiers=filters,
                                   cnn_activation=model_config.get("conv_activation", "relu"))
            if min(cnn.output_dims) < 1:
                raise ValueError(f"the CNN of {key!r} ({sub.shape}) shrinks it to nothing with filters {filters}: pass "
                                 "model_config={'conv_filters': [...]} that fit, or larger images")
            images[key] = cnn
            if (span := image_range(sub)) is not None:
                ranges[key] = span
    flat_keys = tuple(k for k, s in space.spaces.items() if not is_image(s))
    flat = None
    if flat_keys:
        width = sum(int(np.prod(space.spaces[k].shape)) for k in flat_keys)
        flat = _mlp(width, list(model_config.get("fcnet_hiddens") or [64]), model_config.get("fcnet_activation",
                                                                                               "tanh"))
    config = PixelEncoderConfig(images=images, ranges=ranges, flat_keys=flat_keys, flat=flat)
    fusion = list(model_config.get("fusionnet_hiddens") or [])
    if fusion:
        config.fusion = _mlp(config.concat_dim, fusion, model_config.get("fusionnet_activation", "relu"))
    return config


class TorchPixelEncoder(TorchModel, Encoder):
    """The torch model of a :class:`PixelEncoderConfig`: ``cnns`` (one per image key, RLlib's ``TorchCNNEncoder``),
    ``flat`` (RLlib's ``TorchMLPEncoder`` or None) and ``fusion`` (the same, or None)."""

    def __init__(self, config: PixelEncoderConfig) -> None:
        TorchModel.__init__(self, config)
        Encoder.__init__(self, config)
        self.image_keys = sorted(config.images)
        self.names = {key: key.replace(".", "_") for key in self.image_keys}  # nn.ModuleDict refuses dots
        self.cnns = nn.ModuleDict({self.names[k]: config.images[k].build(framework="torch") for k in self.image_keys})
        self.ranges = dict(config.ranges)
        self.flat_keys = list(config.flat_keys)
        self.flat = config.flat.build(framework="torch") if config.flat is not None else None
        self.fusion = config.fusion.build(framework="torch") if config.fusion is not None else None

    def _forward(self, inputs: dict, **kwargs: Any) -> dict:
        obs = inputs[Columns.OBS]
        parts = []
        for key in self.image_keys:
            x = obs[key].float()
            if key in self.ranges:
                low, high = self.ranges[key]
                x = (x - low) / (high - low)
            parts.append(self.cnns[self.names[key]]({Columns.OBS: x})[ENCODER_OUT])
        if self.flat is not None:
            flat = torch.cat([obs[k].float().reshape(obs[k].shape[0], -1) for k in self.flat_keys], dim=-1)
            parts.append(self.flat({Columns.OBS: flat})[ENCODER_OUT])
        out = torch.cat(parts, dim=-1)
        if self.fusion is not None:
            out = self.fusion({Columns.OBS: out})[ENCODER_OUT]
        return {ENCODER_OUT: out}


def orthogonal_init(model: nn.Module, gain: float, last_gain: float | None = None) -> nn.Module:
    """Initialise every convolution and linear layer of ``model`` orthogonally with ``gain`` (the last linear layer
    with ``last_gain`` when given), biases at zero, as SB3's PPO does; returns ``model``."""
    layers = [m for m in model.modules() if isinstance(m, nn.Conv2d | nn.Linear)]
    for i, layer in enumerate(layers):
        last = i == len(layers) - 1 and isinstance(layer, nn.Linear) and last_gain is not None
        nn.init.orthogonal_(layer.weight, gain=last_gain if last else gain)
        if layer.bias is not None:
            nn.init.zeros_(layer.bias)
    return model


class PixelPPOCatalog(PPOCatalog):
    """PPO's catalog with the pixel encoder for Dict observations (RLlib's own encoders for anything else): use it
    as ``RLModuleSpec(catalog_class=PixelPPOCatalog)`` (what :func:`pixelrig.integrations.rllib.ppo_config`
    does).

    Its models start as SB3's PPO does (which learns from pixels within the SB3 learning test's budget): orthogonal
    weights, gain sqrt(2) in the encoder and the heads' hidden layers, 0.01 for the policy's output (actions start
    near zero, their spread set by the log std alone) and 1 for the value's, biases zero.
    """

    @classmethod
    def _get_encoder_config(cls, observation_space: gym.Space, model_config_dict: dict,
                            action_space: gym.Space = None) -> ModelConfig:
        if isinstance(observation_space, gym.spaces.Dict):
            return pixel_encoder_config(observation_space, model_config_dict)
        return super()._get_encoder_config(observation_space=observation_space, model_config_dict=model_config_dict,
                                           action_space=action_space)

    def build_actor_critic_encoder(self, framework: str) -> Encoder:
        return orthogonal_init(super().build_actor_critic_encoder(framework), HIDDEN_GAIN)

    def build_pi_head(self, framework: str) -> Any:
        return orthogonal_init(super().build_pi_head(framework), HIDDEN_GAIN, last_gain=0.01)

    def build_vf_head(self, framework: str) -> Any:
        return orthogonal_init(super().build_vf_head(framework), HIDDEN_GAIN, last_gain=1.0)
