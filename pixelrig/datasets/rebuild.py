"""The env a dataset was recorded from, made again for replay from its stored id and kwargs."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from pixelrig.datasets.info import DatasetInfo

MakeEnv = Callable[[], gym.Env]
"""A function returning the env a dataset was recorded from (the stack under PixelObs), for replay."""


def rebuild_kwargs(described: Mapping[str, Any]) -> dict[str, Any]:
    """Turn stored env kwargs (as snapshots describe them) back into arguments for ``gym.make``.

    Plain JSON values are taken as they are; pixelrig dataclasses (``Randomization``) are rebuilt, their lists
    turned back into tuples.

    Raises:
        ValueError: a kwarg cannot be rebuilt (a function, or an object that is not a pixelrig dataclass); the
            message names it and the fix (``make_env=``).
    """
    return {key: _rebuild(value, key) for key, value in described.items()}


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _rebuild(value: Any, where: str) -> Any:
    if isinstance(value, list):
        return [_rebuild(v, where) for v in value]
    if not isinstance(value, dict):
        return value
    if "__dataclass__" in value:
        module, _, qualname = str(value["__dataclass__"]).partition(":")
        if not module.startswith("pixelrig."):
            raise ValueError(f"env kwarg {where!r} is a {value['__dataclass__']} object, which a dataset cannot "
                             "rebuild: pass make_env=lambda: gym.make(...) to replay")
        cls = getattr(importlib.import_module(module), qualname)
        fields = {k: _tuples(_rebuild(v, where)) for k, v in value.items() if k != "__dataclass__"}
        return cls(**fields)
    if "__callable__" in value or "__repr__" in value:
        what = value.get("__callable__") or value.get("__repr__")
        raise ValueError(f"env kwarg {where!r} was {what}, which a dataset cannot rebuild: pass "
                         "make_env=lambda: gym.make(...) (the same id and kwargs) to replay")
    return {k: _rebuild(v, where) for k, v in value.items()}


def make_recorded_env(info: DatasetInfo, renderer: str | None) -> gym.Env:
    """A fresh env like the one a dataset was recorded from (the stack under PixelObs), for replay.

    Args:
        info: the dataset's description.
        renderer: the backend to draw with; None keeps the recorded one.

    Raises:
        ValueError: the dataset has no env id, or kwargs that cannot be rebuilt (the message names the fix).
    """
    env_id, kwargs = recorded_env_args(info, renderer)
    return gym.make(env_id, **kwargs)


def recorded_env_args(info: DatasetInfo, renderer: str | None) -> tuple[str, dict[str, Any]]:
    """The ``gym.make`` id and kwargs of :func:`make_recorded_env` (checks that the env can be rebuilt without
    making it).

    Raises:
        ValueError: as :func:`make_recorded_env`.
    """
    if info.env_id is None:
        raise ValueError("the dataset's env was not made by gym.make (no env id recorded): pass make_env= (a "
                         "function returning the same env, without PixelObs) to replay")
    kwargs = rebuild_kwargs(info.env_kwargs)
    kwargs.pop("render_mode", None)  # replay draws its own images: never a window
    kwargs["renderer"] = renderer or info.renderer
    if info.max_episode_steps is not None:
        kwargs["max_episode_steps"] = info.max_episode_steps
    return info.env_id, kwargs
