"""``EnvFactory``: a picklable recipe for one vector-env worker's env (the env id, its kwargs, its cameras, its
renderer and GPU)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


@dataclass(frozen=True)
class EnvFactory:
    """A picklable recipe for one worker's env (pixelrig's worker processes and SB3's SubprocVecEnv load it by name).

    Attributes:
        env_id: registered id.
        env_kwargs: its ``gym.make`` kwargs.
        cams: the PixelObs cameras (None: the env's default rig).
        pixels_only: drop the "state" key.
        pixels: wrap in PixelObs at all.
        renderer: the backend, already resolved (a key of :data:`pixelrig.render.registry.BACKENDS`).
        worker: the index of the process the env runs in (its GPU is ``worker % n_visible`` with EGL or gl and
            several GPUs).
        gpu: an explicit CUDA device for every worker instead.
    """

    env_id: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    cams: tuple | None = None
    pixels_only: bool = False
    pixels: bool = True
    renderer: str = "tiny"
    worker: int = 0
    gpu: int | None = None

    def __call__(self) -> gym.Env:
        from pixelrig.render.egl_devices import select_gpu
        from pixelrig.render.registry import entry
        from pixelrig.wrappers.pixel_obs import PixelObs

        if entry(self.renderer).egl_device:  # it reads EGL_VISIBLE_DEVICES when its EGL display opens
            if self.gpu is not None:
                select_gpu(self.gpu)
            elif _cuda_egl_devices():
                select_gpu(rank=self.worker)
        env = gym.make(self.env_id, renderer=self.renderer, **dict(self.env_kwargs))
        if self.pixels:
            env = PixelObs(env, cams=self.cams, pixels_only=self.pixels_only)
        return env


@functools.cache
def _cuda_egl_devices() -> bool:
    """Whether any EGL device of this machine is a CUDA GPU (listed in a subprocess once per process)."""
    from pixelrig.render.egl_devices import list_egl_devices

    return any(d.cuda is not None for d in list_egl_devices())
