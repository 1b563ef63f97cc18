"""The render contract every backend implements, and pybullet's TinyRenderer behind it.

A backend belongs to one pybullet client. It draws under a :class:`~pixelrig.render.lighting.Lighting` (its
:attr:`RenderBackend.lighting`, set by the env that owns it: the scene's light, like its bodies), is asked for camera
images with :class:`CameraRequest` s and answers a :class:`Frame` each: the raw buffers (turning them into metres,
labels and points is :mod:`pixelrig.render.convert`'s job). A backend that draws geometry normals says so
(``draws_normals``); one that draws the cameras of many clients in one pass says so (``batches``) and implements
:meth:`RenderBackend.submit_batch`. :func:`submit` draws any mix of backends' requests, each batching kind in one pass,
so that callers never ask which backend they have.

Adding a backend: a module with a :class:`RenderBackend` subclass, and its entry in :mod:`pixelrig.render.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pybullet as p

from pixelrig.render.convert import background_to_one, tiny_background_zbuffer
from pixelrig.render.lighting import DEFAULT_LIGHTING, LIGHT_DISTANCE, Lighting
from pixelrig.render.registry import check_lighting, entry


@dataclass(frozen=True)
class CameraRequest:
    """One camera image to draw.

    Attributes:
        width: image width in pixels.
        height: image height in pixels.
        view: 16 floats, column-major view matrix (``pybullet.computeViewMatrix``).
        projection: 16 floats, column-major projection matrix (``pybullet.computeProjectionMatrixFOV``).
        segmentation: return the segmentation buffer (else :attr:`Frame.seg` is None).
        normals: return world normals where the backend draws them (``draws_normals``); other backends ignore it.
    """

    width: int
    height: int
    view: tuple[float, ...]
    projection: tuple[float, ...]
    segmentation: bool = True
    normals: bool = False


@dataclass(frozen=True, eq=False)
class Frame:
    """One camera image as a backend drew it.

    Attributes:
        rgba: (H, W, 4) uint8.
        zbuffer: (H, W) float32 OpenGL z-buffer in [0, 1]: exactly 1.0 where nothing was drawn (the background),
            below 1.0 on every surface; each backend keeps to it (TinyRenderer's own background is not exactly 1).
        seg: (H, W) int32 segmentation (``uid + ((link + 1) << 24)``, -1 = background), or None when the request
            asked for none (pybullet then returns a stale buffer, which is dropped).
        normal: (H, W, 3) float32 world unit normals of the drawn triangles, 0 at background, when the request
            asked for normals and the backend draws them; else None (the rig estimates them from depth).
    """

    rgba: np.ndarray
    zbuffer: np.ndarray
    seg: np.ndarray | None
    normal: np.ndarray | None = None


Job = tuple["RenderBackend", Sequence[CameraRequest]]
"""A backend and the cameras to draw with it."""


class PendingFrames(ABC):
    """Jobs submitted for drawing: :meth:`collect` waits for them and returns each job's frames, in order."""

    @abstractmethod
    def collect(self) -> list[list[Frame]]:
        """Each job's frames (waiting for them). Raises ``RuntimeError`` when collected twice."""

    @abstractmethod
    def discard(self) -> None:
        """Give back what drawing holds without reading it (idempotent)."""


class Drawn(PendingFrames):
    """Jobs already drawn (what backends that do not batch return)."""

    def __init__(self, frames: list[list[Frame]]) -> None:
        self._frames: list[list[Frame]] | None = frames

    def collect(self) -> list[list[Frame]]:
        if self._frames is None:
            raise RuntimeError("these frames were already collected")
        frames, self._frames = self._frames, None
        return frames

    def discard(self) -> None:
        self._frames = None


class RenderBackend(ABC):
    """Draws camera images of one pybullet client. Close it (or use it as a context manager) when done.

    Attributes:
        name: the ``renderer=`` value that selects it.
        draws_normals: a request's ``normals`` gives :attr:`Frame.normal` (drawn from the geometry).
        batches: :meth:`submit_batch` draws the requests of many backends (many clients) of this class in one pass.
    """

    name: ClassVar[str]
    draws_normals: ClassVar[bool] = False
    batches: ClassVar[bool] = False

    def __init__(self, client: int) -> None:
        if not p.isConnected(physicsClientId=client):
            raise ValueError(f"{type(self).__name__}: pybullet client {client} is not connected")
        self._client = client
        self._closed = False
        self._lighting = DEFAULT_LIGHTING

    @property
    def client(self) -> int:
        """The pybullet client id this backend renders."""
        return self._client

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    @property
    def draws_textures(self) -> bool:
        """Whether it draws textures set at run time (the registry's ``textures``)."""
        return entry(self.name).textures

    @property
    def lighting(self) -> Lighting:
        """The light this backend draws with (``Lighting()``, TinyRenderer's own, until :meth:`set_lighting`)."""
        return self._lighting

    def set_lighting(self, lighting: Lighting) -> None:
        """Draw every later image under ``lighting``.

        Raises:
            ValueError: not a Lighting, or it sets a field this backend does not draw (the registry's ``lighting``;
                the message names the renderers that draw it). Nothing is changed.
        """
        if not isinstance(lighting, Lighting):
            raise ValueError(f"set_lighting needs a pixelrig.Lighting: got {lighting!r}")
        check_lighting(self.name, lighting.changed(), repr(lighting))
        self._lighting = lighting

    def render(self, requests: Sequence[CameraRequest]) -> list[Frame]:
        """Draw these cameras of the client: one frame per request, in order.

        Raises:
            RuntimeError: the backend is closed.
        """
        self.check_open()
        return self._draw(requests) if len(requests) else []

    @abstractmethod
    def _draw(self, requests: Sequence[CameraRequest]) -> list[Frame]:
        """Draw the requests (the backend is open)."""

    @classmethod
    def submit_batch(cls, jobs: Sequence[Job]) -> PendingFrames:
        """Draw the jobs of backends of this class (``batches`` true) in one pass, without waiting for it.

        Raises:
            NotImplementedError: the class does not batch.
        """
        raise NotImplementedError(f"{cls.__name__} does not draw batches (batches = False): call render()")

    def check_open(self) -> None:
        """Raise ``RuntimeError`` (naming the fix) when the backend is closed."""
        if self._closed:
            raise RuntimeError(f"{self.name} render backend is closed: create a new environment to render again")

    def close(self) -> None:
        """Release what the backend holds. Idempotent."""
        self._closed = True

    def __enter__(self) -> RenderBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"client={self._client}"
        return f"<{type(self).__name__} {state}>"


def submit(jobs: Sequence[Job]) -> PendingFrames:
    """Draw the jobs of any backends: those of a batching class in one pass per class, sent without waiting; the
    others now, one after another. ``collect()`` returns each job's frames in job order.

    Raises:
        RuntimeError: a backend is closed.
    """
    jobs = list(jobs)
    for backend, _ in jobs:
        backend.check_open()
    groups: dict[type[RenderBackend], list[int]] = {}
    frames: list[list[Frame] | None] = [None] * len(jobs)
    for i, (backend, requests) in enumerate(jobs):
        if not len(requests):  # nothing to draw (a rig whose cameras all hold their last picture): no frames
            frames[i] = []
            continue
        if type(backend).batches:
            groups.setdefault(type(backend), []).append(i)
        else:
            frames[i] = backend.render(requests)
    pending = []
    try:
        for cls, indices in groups.items():
            pending.append((indices, cls.submit_batch([jobs[i] for i in indices])))
    except BaseException:
        for _, part in pending:
            part.discard()
        raise
    if not pending:
        return Drawn(frames)  # type: ignore[arg-type]
    return _Gathered(frames, pending)


class _Gathered(PendingFrames):
    """Frames drawn now plus batches still being drawn, put back in job order when collected."""

    def __init__(self, frames: list[list[Frame] | None], pending: list[tuple[list[int], PendingFrames]]) -> None:
        self._frames = frames
        self._pending: list[tuple[list[int], PendingFrames]] | None = pending

    def collect(self) -> list[list[Frame]]:
        if self._pending is None:
            raise RuntimeError("these frames were already collected")
        pending, self._pending = self._pending, None
        try:
            for indices, part in pending:
                for i, frames in zip(indices, part.collect(), strict=True):
                    self._frames[i] = frames
        finally:
            for _, part in pending:
                part.discard()
        return self._frames  # type: ignore[return-value]

    def discard(self) -> None:
        for _, part in self._pending or []:
            part.discard()
        self._pending = None


class PybulletBackend(RenderBackend):
    """A renderer pybullet draws with ``getCameraImage`` (one call per camera; rgba, z-buffer and segmentation from
    that call), passing the light's parameters with every call (pybullet keeps the last ones given per client, so a
    call that left one out would draw under an earlier look)."""

    _renderer_flag: ClassVar[int]

    def _draw(self, requests: Sequence[CameraRequest]) -> list[Frame]:
        frames = []
        for r in requests:
            flags = p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX if r.segmentation else p.ER_NO_SEGMENTATION_MASK
            _, _, rgba, zbuffer, seg = self._camera_image(r.width, r.height, r.view, r.projection, flags)
            frames.append(Frame(rgba, self._background_to_one(zbuffer, r.projection), seg if r.segmentation else None))
        return frames

    def _background_to_one(self, zbuffer: np.ndarray, projection: Sequence[float]) -> np.ndarray:
        """The z-buffer with its background at exactly 1.0 (the Frame contract); pybullet's EGL plugin writes 1.0
        (measured at near/far from 0.01/1 to 0.5/100), so this is the identity but on TinyRenderer."""
        return zbuffer

    def _camera_image(self, width: int, height: int, view: Sequence[float], projection: Sequence[float],
                      flags: int) -> tuple:
        return p.getCameraImage(width, height, view, projection, renderer=self._renderer_flag, flags=flags,
                                physicsClientId=self._client, **self._light_arguments())

    def _light_arguments(self) -> dict[str, object]:
        """``getCameraImage``'s light keywords for :attr:`lighting`: every one of them, each call."""
        light = self._lighting
        return {"lightDirection": list(light.direction), "lightColor": list(light.color),
                "lightDistance": LIGHT_DISTANCE, "lightAmbientCoeff": light.ambient,
                "lightDiffuseCoeff": light.diffuse, "lightSpecularCoeff": light.specular,
                "shadow": int(light.shadows)}


class TinyBackend(PybulletBackend):
    """pybullet's TinyRenderer: CPU, in process, deterministic; white background; fast at RL sizes."""

    name = "tiny"
    _renderer_flag = p.ER_TINY_RENDERER

    def _background_to_one(self, zbuffer: np.ndarray, projection: Sequence[float]) -> np.ndarray:
        """TinyRenderer's background is its cleared depth converted in float32: up to two steps off 1.0
        (:func:`~pixelrig.render.convert.tiny_background_zbuffer`); written back as 1.0."""
        z = np.asarray(zbuffer, dtype=np.float32)  # pybullet hands over a fresh, writable array
        return background_to_one(z, float(tiny_background_zbuffer(projection)))
