"""The env an evaluation runs: a task under PixelObs with one factor applied, registered with gymnasium as
:data:`FACTORED_ID` so that ``make_vec``'s worker processes (which import this module through the id's ``module:``
prefix) build exactly what this process builds."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from pixelrig.cameras.spec import Camera
from pixelrig.envs.randomization import Randomization, camera_jitter
from pixelrig.evaluation.factors import FACTORS, Factor
from pixelrig.wrappers.pixel_obs import PixelObs

_NAME = "pixelrig_eval/Factored-v0"
FACTORED_ID = f"{__name__}:{_NAME}"
"""The id to ``gym.make`` (and ``make_vec``) a factored env with: ``env_id``, ``factor``, ``cams``, ``env_kwargs``."""


def _jittered(cls: type, spec: Randomization) -> type:
    """``cls`` whose cameras are jittered by ``spec`` per episode, from the episode's reset seed alone (the env's
    own camera jitter draws from its generator, which would move the task's objects too)."""

    def jitter(self: Any, camera: str) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        return camera_jitter(spec, int(self.np_random_seed), camera)

    return type(cls.__name__, (cls,), {"camera_jitter": jitter, "__module__": cls.__module__,
                                       "__qualname__": cls.__qualname__})


def default_cameras(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> list[Camera]:
    """The task's own rig (what PixelObs shows without ``cams``)."""
    env = gym.make(env_id, renderer="tiny", **dict(env_kwargs or {}))
    try:
        return list(PixelObs(env).rig.cameras)
    finally:
        env.close()


def make_base(env_id: str, factor: Factor, env_kwargs: Mapping[str, Any], renderer: str | None) -> gym.Env:
    """``gym.make(env_id)`` with the factor's looks and camera jitter.

    Raises:
        ValueError: the factor's keyword arguments clash with ``env_kwargs``, or the env cannot take camera jitter.
    """
    added = factor.env_kwargs()
    clash = sorted(set(added) & set(env_kwargs))
    if clash:
        raise ValueError(f"factor {factor.name!r} sets {clash}, which env_kwargs gives too: drop them from env_kwargs "
                         "(the factors set the looks)")
    kwargs = {**dict(env_kwargs), **added}
    if not factor.jitters_cameras:
        return gym.make(env_id, renderer=renderer, **kwargs)
    spec = gym.spec(env_id)
    creator = load_env_creator(spec.entry_point) if isinstance(spec.entry_point, str) else spec.entry_point
    if not isinstance(creator, type) or not hasattr(creator, "camera_jitter"):
        raise ValueError(f"factor {factor.name!r} moves the cameras through the env's camera_jitter(), which "
                         f"{env_id} ({creator!r}) does not have: leave this factor out for it")
    jittered = dataclasses.replace(spec, entry_point=_jittered(creator, factor.camera_randomization))
    return gym.make(jittered, renderer=renderer, **kwargs)


def make_factored(env_id: str, factor: str, cams: Sequence[Mapping[str, Any]] | None = None,
                  env_kwargs: Mapping[str, Any] | None = None, renderer: str | None = None) -> gym.Env:
    """A task under PixelObs with a factor applied (what :data:`FACTORED_ID` makes).

    Args:
        env_id: the task.
        factor: a name in :data:`~pixelrig.evaluation.factors.FACTORS`.
        cams: the rig as camera dicts (None: the task's own).
        env_kwargs: more ``gym.make`` arguments for the task.
        renderer: the backend.
    """
    chosen = FACTORS[factor]
    cameras = [Camera.from_dict(dict(c)) for c in cams] if cams is not None else default_cameras(env_id, env_kwargs)
    env = make_base(env_id, chosen, dict(env_kwargs or {}), renderer)
    try:
        return PixelObs(env, cams=chosen.cameras(cameras), background=chosen.background,
                        background_bodies=chosen.background_bodies)
    except BaseException:
        env.close()
        raise


if _NAME not in gym.registry:
    gym.register(_NAME, entry_point=make_factored, disable_env_checker=True, order_enforce=False)
