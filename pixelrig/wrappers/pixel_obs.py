"""``PixelObs``: add RGB, metric depth and label images from a camera rig to any pybullet env's observation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.cameras.rig import CameraLike, CameraRig
from pixelrig.envs.base import BulletEnv, bullet_client_of, names_of
from pixelrig.render.backends import RenderBackend, TinyBackend
from pixelrig.render.select import resolve_renderer


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
        self.rig = CameraRig(cams)
        gym.utils.RecordConstructorArgs.__init__(
            self, cams=list(self.rig.cameras), pixels_only=pixels_only, renderer=renderer
        )
        obs_spaces: dict[str, spaces.Space] = dict(self.rig.observation_spaces)
        if not pixels_only:
            obs_spaces["state"] = env.observation_space
        self.observation_space = spaces.Dict(obs_spaces)
        self.pixels_only = pixels_only
        self._own_backend: RenderBackend | None = None
        self._renderer = renderer
        self._backend = self._choose_backend(renderer)
        self._bound_version: object = None
        self._bind(resetting=True)

    def _choose_backend(self, renderer: str | None) -> RenderBackend:
        base = self.env.unwrapped
        if isinstance(base, BulletEnv):
            return base.use_renderer(renderer)
        kind = resolve_renderer(renderer) if renderer is not None else "tiny"
        if kind != "tiny":
            raise ValueError(
                f"PixelObs(renderer={renderer!r}) resolved to {kind!r}, but {type(base).__name__} does not own a "
                "render backend and EGL must be loaded before its first body: use renderer='tiny', or build the "
                "env on pixelrig.envs.BulletEnv and pass renderer= to it"
            )
        self._own_backend = TinyBackend(bullet_client_of(self.env))
        return self._own_backend

    @property
    def label_names(self) -> dict[int, str]:
        """Body id -> name for the label images of the current scene."""
        return dict(self.rig.label_names)

    @property
    def render_backend(self) -> RenderBackend:
        """The backend the rig renders with."""
        return self._backend

    def _bind(self, *, resetting: bool = False) -> None:
        """Bind the rig to the current scene when it was rebuilt (pixelrig envs bump ``scene_version``); envs
        without a scene version are re-bound on every reset."""
        base = self.env.unwrapped
        version = getattr(base, "scene_version", None)
        if isinstance(base, BulletEnv):
            self._backend = base.render_backend
        if version != self._bound_version or (version is None and resetting):
            self.rig.bind(self._backend, names_of(self.env), getattr(base, "camera_jitter", None))
            self._bound_version = version

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._bind(resetting=True)
        return self.observation(obs), info

    def observation(self, observation: Any) -> dict[str, np.ndarray]:
        self._bind()
        frames = self.rig.render()
        if not self.pixels_only:
            frames["state"] = observation
        return {key: frames[key] for key in self.observation_space.spaces}

    def render_rig(self) -> dict[str, np.ndarray]:
        """Render the rig now, outside ``step()`` (for windows, recorders and debugging)."""
        self._bind()
        return self.rig.render()

    def snapshot_state(self) -> dict[str, Any]:
        """PixelObs holds no simulation state (its rig re-binds when the scene is rebuilt)."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore (see :meth:`snapshot_state`)."""

    def close(self) -> None:
        if self._own_backend is not None:
            self._own_backend.close()
        super().close()
