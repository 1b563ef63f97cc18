"""``GlBackend``: the gl renderer behind pixelrig's render contract (``renderer="gl"``)."""

from __future__ import annotations

from collections.abc import Sequence

from pixelrig.render.backends import CameraRequest, Frame, Job, PendingFrames, RenderBackend
from pixelrig.render.gl import context as glc
from pixelrig.render.gl.pipeline import PendingBatch, release, shared_pipeline

_live: dict[int, int] = {}  # client -> number of open GlBackends drawing it


class GlBackend(RenderBackend):
    """pixelrig's own OpenGL renderer of pybullet scenes (moderngl on a headless EGL context).

    Any number of GlBackends (of any number of clients) share the process's one GL context. Images match
    TinyRenderer's (same shading, tessellation, sampling and buffers). The scene is re-read from pybullet at every
    render and rebuilt when it changed (see :mod:`pixelrig.render.gl.scene`); call :meth:`invalidate` to force a
    rebuild. Not thread-safe. It draws geometry normals (``draws_normals``) and the cameras of many clients in one
    pass (``batches``: :func:`pixelrig.render.backends.submit`).

    Raises:
        ValueError: the client is not connected.
        RendererUnavailable: no OpenGL 4.3 EGL context can be made here (the message names ``renderer='tiny'``).
    """

    name = "gl"
    draws_normals = True
    batches = True

    def __init__(self, client: int) -> None:
        super().__init__(client)
        glc.get_context()
        _live[client] = _live.get(client, 0) + 1

    def _draw(self, requests: Sequence[CameraRequest]) -> list[Frame]:
        """Every camera of this client in one pass: one scene sync and one readback."""
        return shared_pipeline().render([self._client] * len(requests), requests, [self.lighting] * len(requests))

    @classmethod
    def submit_batch(cls, jobs: Sequence[Job]) -> PendingFrames:
        """Every camera of every job (any number of clients) in one pass, sent to the GL without waiting."""
        owners, requests, lightings, sizes = [], [], [], []
        for backend, reqs in jobs:
            backend.check_open()
            owners += [backend.client] * len(reqs)
            requests += list(reqs)
            lightings += [backend.lighting] * len(reqs)
            sizes.append(len(reqs))
        return _Split(shared_pipeline().submit(owners, requests, lightings), sizes)

    def invalidate(self) -> None:
        """Rebuild this client's scene at the next render (automatic rebuilds cover resets and colour changes)."""
        shared_pipeline().invalidate(self._client)

    def close(self) -> None:
        """Release this backend; the client's scene goes when its last GlBackend closes, and the GL context when
        the process's last GlBackend closes (so that pybullet's EGL plugin may start afterwards). Idempotent."""
        if self._closed:
            return
        super().close()
        count = _live.get(self._client, 1) - 1
        if count <= 0:
            _live.pop(self._client, None)
            shared_pipeline().forget(self._client)
            if not _live:
                release()
        else:
            _live[self._client] = count


class _Split(PendingFrames):
    """One gl pass holding several jobs' cameras: collected, its frames are cut back into the jobs."""

    def __init__(self, batch: PendingBatch, sizes: list[int]) -> None:
        self._batch = batch
        self._sizes = sizes

    def collect(self) -> list[list[Frame]]:
        frames, out, start = self._batch.collect(), [], 0
        for n in self._sizes:
            out.append(frames[start:start + n])
            start += n
        return out

    def discard(self) -> None:
        self._batch.discard()
