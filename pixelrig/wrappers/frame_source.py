"""``FrameSource``: the picture a window or a recorder shows after each reset and step.

- ``camera=None``: the tiled rig (rgb | depth | label per camera, names drawn on) when the observations passing
  through are a PixelObs Dict; otherwise the env's own render camera.
- ``camera="<name>"``: that camera's RGB, taken from the observations when a PixelObs underneath has it,
  otherwise rendered from the env's default camera of that name.
- ``camera=Camera(...)`` (or a camera dict): rendered by its own rig; tiled when it has depth or labels.

Frames rendered here use the same offscreen rig as PixelObs: they never change the simulation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.display.mosaic import camera_names, tile_rig
from pixelrig.wrappers.binding import BoundRig

CameraChoice = str | Camera | Mapping[str, Any] | None


def observed_cameras(space: gym.Space) -> dict[str, tuple[float, float]]:
    """Cameras present in a PixelObs Dict space, with their depth (near, far) where they have depth."""
    if not isinstance(space, spaces.Dict):
        return {}
    keys = [k for k in space.spaces if "/" in k]
    out = {}
    for name in camera_names(dict.fromkeys(keys)):
        depth = space.spaces.get(f"{name}/depth")
        out[name] = (float(depth.low.min()), float(depth.high.max())) if depth is not None else (0.0, 0.0)
    return out


class FrameSource:
    """Turns what passes through a wrapper into one RGB frame (see the module docstring).

    Raises:
        ValueError: a camera name that neither the observations nor the env's default cameras have (the message
            lists those that exist).
    """

    def __init__(self, env: gym.Env, camera: CameraChoice = None, who: str = "HumanWindow") -> None:
        self.env = env
        self._in_obs = observed_cameras(env.observation_space)
        self._bound: BoundRig | None = None
        self._name: str | None = None
        if camera is None:
            if self._in_obs:
                self.mode = "tiled-obs"
                return
            cam = env.unwrapped.render_view()
        elif isinstance(camera, str):
            if camera in self._in_obs and f"{camera}/rgb" in env.observation_space.spaces:
                self.mode, self._name = "obs-camera", camera
                return
            defaults = {c.name: c for c in map(Camera.from_dict, getattr(env.unwrapped, "default_cameras", list)())}
            if camera not in defaults:
                known = sorted(set(self._in_obs) | set(defaults))
                raise ValueError(f"{who}: unknown camera {camera!r}; cameras here: {known}")
            cam = dataclasses.replace(defaults[camera], modalities=("rgb",))
        else:
            cam = Camera.from_dict(camera)
        self.mode = "rig"
        self._bound = BoundRig(env, [cam], who=who)

    def frame(self, obs: Any) -> np.ndarray:
        """The (H, W, 3) uint8 frame for the observation that just passed through."""
        if self.mode == "tiled-obs":
            return tile_rig(obs, depth_ranges=self._in_obs)
        if self.mode == "obs-camera":
            return obs[f"{self._name}/rgb"]
        frames = self._bound.render()  # type: ignore[union-attr]
        cam = self._bound.rig.cameras[0]  # type: ignore[union-attr]
        if cam.modalities == ("rgb",):
            return frames[f"{cam.name}/rgb"]
        return tile_rig(frames, depth_ranges={cam.name: (cam.near, cam.far)})

    def close(self) -> None:
        if self._bound is not None:
            self._bound.close()
