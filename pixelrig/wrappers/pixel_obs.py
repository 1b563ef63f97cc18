"""``PixelObs``: add RGB, metric depth and label images from a camera rig to any pybullet env's observation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.cameras.rig import CameraLike
from pixelrig.envs.base import bullet_client_of
from pixelrig.render.backends import RenderBackend
from pixelrig.wrappers.binding import BoundRig


class PixelObs(gym.ObservationWrapper[dict[str, np.ndarray], Any, Any], gym.utils.RecordConstructorArgs):
    """Observations from a rig of cameras, as a flat gymnasium ``Dict``.

    Keys are ``"<camera>/<modality>"`` (rgb (H,W,3) uint8; depth (H,W,1) float32 metres along the optical axis,
    background = far; label (H,W,1) int32 body ids, -1 = background) plus ``"state"`` (the wrapped env's own
    observation) unless ``pixels_only``. The space is built from the camera specs alone; rendering never
    changes the simulation.

    Args:
        env: an env whose ``unwrapped`` exposes ``client`` (a pybullet client id), e.g. any pixelrig env.
        cams: Cameras or camera dicts. None uses ``env.unwrapped.default_cameras()``.
        pixels_only: drop the ``"state"`` key.
        renderer: None keeps the env's own backend. 'tiny' / 'egl' / 'auto' ask a pixelrig env to switch
            (allowed before its first reset); an env that does not own a backend gets a TinyRenderer backend
            ('egl' needs the plugin loaded before the env's first body, which only the env can do).

    Attributes:
        rig: the :class:`~pixelrig.cameras.CameraRig`.
        label_names: body id -> body name for the label images (also ``env.get_wrapper_attr("label_names")``).
    """

    def __init__(
        self,
        env: gym.Env,
        cams: Iterable[CameraLike] | None = None,
        pixels_only: bool = False,
        renderer: str | None = None,
    ) -> None:
        super().__init__(env)
        bullet_client_of(env)  # fail early, with the fix, on envs without a pybullet client
        base = env.unwrapped
        if cams is None:
            if not hasattr(base, "default_cameras"):
                raise ValueError(f"{type(base).__name__} has no default_cameras(): pass cams=[Camera(...), ...]")
            cams = base.default_cameras()
        self.bound = BoundRig(env, cams, renderer)
        self.rig = self.bound.rig
        gym.utils.RecordConstructorArgs.__init__(
            self, cams=list(self.rig.cameras), pixels_only=pixels_only, renderer=renderer
        )
        obs_spaces: dict[str, spaces.Space] = dict(self.rig.observation_spaces)
        if not pixels_only:
            obs_spaces["state"] = env.observation_space
        self.observation_space = spaces.Dict(obs_spaces)
        self.pixels_only = pixels_only

    @property
    def label_names(self) -> dict[int, str]:
        """Body id -> name for the label images of the current scene."""
        return dict(self.rig.label_names)

    @property
    def render_backend(self) -> RenderBackend:
        """The backend the rig renders with."""
        return self.bound.backend

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.bound.bind(resetting=True)
        return self.observation(obs), info

    def observation(self, observation: Any) -> dict[str, np.ndarray]:
        frames = self.bound.render()
        if not self.pixels_only:
            frames["state"] = observation
        return {key: frames[key] for key in self.observation_space.spaces}

    def render_rig(self) -> dict[str, np.ndarray]:
        """Render the rig now, outside ``step()`` (for windows, recorders and debugging)."""
        return self.bound.render()

    def snapshot_state(self) -> dict[str, Any]:
        """PixelObs holds no simulation state (its rig re-binds when the scene is rebuilt)."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore (see :meth:`snapshot_state`)."""

    def close(self) -> None:
        self.bound.close()
        super().close()
