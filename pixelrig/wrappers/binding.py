"""``BoundRig``: a CameraRig kept bound to an env's scene (backend choice, re-binding when the world is rebuilt).

Shared by PixelObs (observations), HumanWindow and VideoRecorder (their own cameras).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import gymnasium as gym
import numpy as np

from pixelrig.cameras.rig import CameraLike, CameraRig
from pixelrig.envs.base import BulletEnv, bullet_client_of, names_of
from pixelrig.render.backends import RenderBackend
from pixelrig.render.choice import resolve_renderer
from pixelrig.render.registry import BACKENDS, backend_class, entry


class BoundRig:
    """A rig rendering ``env``'s scene.

    Args:
        env: any env whose ``unwrapped.client`` is a pybullet client id.
        cams: Cameras or camera dicts.
        renderer: None uses a pixelrig env's own backend; a backend's name (tiny, egl, gl: any key of
            :data:`~pixelrig.render.registry.BACKENDS`) or 'auto' asks it to switch (allowed before its first reset).
            An env that does not own a backend gets that backend (TinyRenderer when None).
        who: the caller's name, for error messages.
        classes: glob pattern -> class id for cameras returning ``"class"`` (see :class:`CameraRig`).
        camera_params: add every camera's intrinsics and extrinsics to the rig's output.
    """

    def __init__(self, env: gym.Env, cams: Iterable[CameraLike], renderer: str | None = None,
                 who: str = "PixelObs", classes: Mapping[str, int] | None = None,
                 camera_params: bool = False) -> None:
        bullet_client_of(env)  # fail early, with the fix, on envs without a pybullet client
        self.env = env
        self.rig = CameraRig(cams, classes=classes, camera_params=camera_params)
        self._own_backend: RenderBackend | None = None
        self._backend = self._choose_backend(renderer, who)
        self._bound_version: object = None
        self.bind(resetting=True)

    def _choose_backend(self, renderer: str | None, who: str) -> RenderBackend:
        base = self.env.unwrapped
        if isinstance(base, BulletEnv):
            return base.use_renderer(renderer)
        kind = resolve_renderer(renderer) if renderer is not None else "tiny"
        if entry(kind).before_bodies:
            raise ValueError(
                f"{who}(renderer={renderer!r}) resolved to {kind!r}, which must start before the scene's first body, "
                f"but {type(base).__name__} built its scene itself: use a renderer that can join a built scene "
                f"({', '.join(n for n, e in BACKENDS.items() if not e.before_bodies)}), or build the env on "
                "pixelrig.envs.BulletEnv and pass renderer= to it"
            )
        self._own_backend = backend_class(kind)(bullet_client_of(self.env))
        return self._own_backend

    @property
    def backend(self) -> RenderBackend:
        """The backend the rig renders with."""
        return self._backend

    def bind(self, *, resetting: bool = False) -> None:
        """Bind the rig to the current scene when it was rebuilt (pixelrig envs bump ``scene_version``); envs
        without a scene version are re-bound on every reset."""
        base = self.env.unwrapped
        version = getattr(base, "scene_version", None)
        if isinstance(base, BulletEnv):
            self._backend = base.render_backend
        if version != self._bound_version or (version is None and resetting):
            self.rig.bind(self._backend, names_of(self.env), getattr(base, "camera_jitter", None))
            self._bound_version = version

    def render(self, cams: list[int] | None = None) -> dict[str, np.ndarray]:
        """Render every camera (or those at the indices ``cams``) now (re-binding first if the scene changed)."""
        self.bind()
        return self.rig.render(cams)

    def close(self) -> None:
        """Close a backend this object created (a pixelrig env's own backend belongs to the env)."""
        if self._own_backend is not None:
            self._own_backend.close()
