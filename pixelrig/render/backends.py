"""Render backends: the one interface every renderer implements, and pybullet's TinyRenderer (CPU) behind it.

A backend belongs to one pybullet client. It renders one camera per call and returns the raw buffers; turning
them into metres and labels is :mod:`pixelrig.render.convert`'s job.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar, NamedTuple

import numpy as np
import pybullet as p


class RawFrame(NamedTuple):
    """What one ``getCameraImage`` call returned.

    Attributes:
        rgba: (H, W, 4) uint8.
        zbuffer: (H, W) float32 OpenGL z-buffer in [0, 1], 1.0 = background.
        seg: (H, W) int32 segmentation (``uid + ((link + 1) << 24)``, -1 = background), or None when the frame was
            rendered without a segmentation pass (pybullet then returns a stale buffer, which is dropped here).
    """

    rgba: np.ndarray
    zbuffer: np.ndarray
    seg: np.ndarray | None


class RenderBackend(ABC):
    """Renders camera images for one pybullet client. Close it (or use it as a context manager) when done."""

    name: ClassVar[str]
    _renderer_flag: ClassVar[int]

    def __init__(self, client: int) -> None:
        if not p.isConnected(physicsClientId=client):
            raise ValueError(f"{type(self).__name__}: pybullet client {client} is not connected")
        self._client = client
        self._closed = False

    @property
    def client(self) -> int:
        """The pybullet client id this backend renders."""
        return self._client

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def render(
        self,
        width: int,
        height: int,
        view: tuple[float, ...],
        projection: tuple[float, ...],
        *,
        segmentation: bool,
    ) -> RawFrame:
        """Render one camera with a single ``getCameraImage`` call.

        Args:
            width: image width in pixels.
            height: image height in pixels.
            view: 16 floats, column-major view matrix (``pybullet.computeViewMatrix``).
            projection: 16 floats, column-major projection matrix (``pybullet.computeProjectionMatrixFOV``).
            segmentation: whether to run the segmentation pass (object id and link index).

        Returns:
            The raw buffers; ``seg`` is None when ``segmentation`` is False.
        """
        if self._closed:
            raise RuntimeError(f"{self.name} render backend is closed: create a new environment to render again")
        flags = p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX if segmentation else p.ER_NO_SEGMENTATION_MASK
        _, _, rgba, zbuffer, seg = self._camera_image(width, height, view, projection, flags)
        return RawFrame(rgba, zbuffer, seg if segmentation else None)

    def render_many(self, cameras: list[tuple[int, int, tuple[float, ...], tuple[float, ...], bool]]
                    ) -> list[RawFrame]:
        """Render several cameras: ``(width, height, view, projection, segmentation)`` each. pybullet's renderers
        take one ``getCameraImage`` call per camera; the gl backend draws them all in one pass."""
        return [self.render(w, h, v, pr, segmentation=seg) for w, h, v, pr, seg in cameras]

    def _camera_image(self, width: int, height: int, view: tuple[float, ...], projection: tuple[float, ...],
                      flags: int) -> tuple:
        return p.getCameraImage(width, height, view, projection, renderer=self._renderer_flag, flags=flags,
                                physicsClientId=self._client)

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


class TinyBackend(RenderBackend):
    """pybullet's TinyRenderer: CPU, in process, deterministic; white background; fast at RL sizes."""

    name = "tiny"
    _renderer_flag = p.ER_TINY_RENDERER
