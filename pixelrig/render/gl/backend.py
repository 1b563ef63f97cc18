"""``GlBackend``: the gl renderer behind pixelrig's one-camera backend interface (``renderer="gl"``)."""

from __future__ import annotations

from pixelrig.render.backends import RawFrame, RenderBackend
from pixelrig.render.gl import context as glc
from pixelrig.render.gl.pipeline import GlRequest, release, shared_pipeline

_live: dict[int, int] = {}  # client -> number of open GlBackends drawing it


class GlBackend(RenderBackend):
    """pixelrig's own OpenGL renderer of pybullet scenes (moderngl on a headless EGL context).

    Any number of GlBackends (of any number of clients) share the process's one GL context. Images match
    TinyRenderer's (same shading, tessellation, sampling and buffers). The scene is re-read from pybullet at every
    render and rebuilt when it changed (see :mod:`pixelrig.render.gl.scene`); call :meth:`invalidate` to force a
    rebuild. Not thread-safe. For many cameras or many clients at once use :func:`pixelrig.render.gl.render_batch`.

    Raises:
        ValueError: the client is not connected.
        RendererUnavailable: no OpenGL 4.3 EGL context can be made here (the message names ``renderer='tiny'``).
    """

    name = "gl"
    _renderer_flag = -1  # never passed to pybullet

    def __init__(self, client: int) -> None:
        super().__init__(client)
        glc.get_context()
        _live[client] = _live.get(client, 0) + 1

    def render(
        self,
        width: int,
        height: int,
        view: tuple[float, ...],
        projection: tuple[float, ...],
        *,
        segmentation: bool,
    ) -> RawFrame:
        """Render one camera (see :meth:`RenderBackend.render`): rgba, z-buffer and segmentation from one pass."""
        if self._closed:
            raise RuntimeError("gl render backend is closed: create a new environment to render again")
        request = GlRequest(self._client, width, height, view, projection, segmentation)
        return shared_pipeline().render([request])[0]

    def render_many(self, cameras: list[tuple[int, int, tuple[float, ...], tuple[float, ...], bool]]) -> list[RawFrame]:
        """Render several cameras of this client in one pass: ``(width, height, view, projection, segmentation)``
        each (and normals for those whose ``normals`` attribute is true, as a rig's requests carry it). One scene
        sync and one readback instead of one per camera (what a rig should call)."""
        requests = []
        for cam in cameras:
            w, h, v, pr, seg = cam
            requests.append(self.request(w, h, v, pr, segmentation=seg, normals=bool(getattr(cam, "normals", False))))
        return shared_pipeline().render(requests)

    def request(self, width: int, height: int, view: tuple[float, ...], projection: tuple[float, ...], *,
                segmentation: bool, normals: bool = False) -> GlRequest:
        """A :class:`GlRequest` for this backend's client, to pass to ``render_batch`` with other requests.

        ``normals`` draws world normals too (a rig's :class:`~pixelrig.cameras.rig.CameraRequest` says so in its
        ``normals`` attribute; the frame is then a :class:`~pixelrig.render.gl.pipeline.GlFrame`)."""
        if self._closed:
            raise RuntimeError("gl render backend is closed: create a new environment to render again")
        return GlRequest(self._client, width, height, view, projection, segmentation, normals)

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
