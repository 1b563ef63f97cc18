"""Render backends: one small interface over pybullet's TinyRenderer (CPU) and its EGL plugin (GPU or Mesa).

A backend belongs to one pybullet client. It renders one camera per call and returns the raw buffers; turning
them into metres and labels is :mod:`pixelrig.render.convert`'s job.

EGL facts this module is built around (pybullet 3.2.7): the plugin must be loaded before any body exists in the
client (bodies loaded earlier are invisible to it); it serves every camera request of the client once loaded;
only one client per process may use it (a second one silently renders another scene's geometry), so this module
refuses a second concurrent EGL backend; unloading it leaves the client returning stale images, so a closed EGL
backend refuses to render and its client should be disconnected.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import os
import re
import sys
import tempfile
import threading
from abc import ABC
from collections.abc import Iterator
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pybullet as p

RENDERER_CHOICES = ("auto", "tiny", "egl", "gl")
"""Accepted values of ``renderer=`` and of the ``PIXELRIG_RENDERER`` environment variable."""


class RendererUnavailable(RuntimeError):
    """The requested render backend cannot run here. The message lists what was tried and the fix."""


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


# ---- EGL ---------------------------------------------------------------------------------------------------

_egl_lock = threading.Lock()
_egl_owner: tuple[int, int] | None = None  # (pid, client) of the live EGL backend of this process


def egl_plugin_path() -> str | None:
    """Filesystem path of pybullet's EGL renderer plugin, or None when this pybullet build has none."""
    spec = importlib.util.find_spec("eglRenderer")
    return spec.origin if spec is not None and spec.origin else None


def active_egl_client() -> int | None:
    """The client id of this process's live EGL backend, or None."""
    owner = _egl_owner
    return owner[1] if owner is not None and owner[0] == os.getpid() else None


_libc = ctypes.CDLL(None)
_PLUGIN_LINE = re.compile(
    r"^(ven = |Loaded EGL|GL_[A-Z_]+=|Version = |Vendor = |Renderer = |Destroy EGL|EGL device choice|"
    r"eglInitialize|eglQueryString|Not a valid|failed to EGL)"
)
_captures: dict[int, tuple[int, Any]] = {}  # fd -> (pid, temporary file) reused by capture_native_output


def _capture_file(fd: int) -> Any:
    pid, tmp = _captures.get(fd, (None, None))
    if pid != os.getpid():  # a forked child must not share its parent's file
        tmp = tempfile.TemporaryFile()
        _captures[fd] = (os.getpid(), tmp)
    return tmp


@atexit.register
def _close_capture_files() -> None:
    for pid, tmp in _captures.values():
        if pid == os.getpid():
            tmp.close()


@contextlib.contextmanager
def capture_native_output(fd: int = 1, drop: re.Pattern[str] | None = _PLUGIN_LINE) -> Iterator[list[str]]:
    """Capture what native code writes to a file descriptor (1 = stdout, 2 = stderr) while the block runs.

    Afterwards the lines matching ``drop`` (by default: the EGL plugin's chatter) are discarded and any other
    text (another thread printing meanwhile) is passed on to the real descriptor. Yields a list that holds the
    captured text once the block exits. Set ``PIXELRIG_DEBUG=1`` to see everything captured on stderr.
    """
    (sys.stdout if fd == 1 else sys.stderr).flush()
    _libc.fflush(None)
    tmp = _capture_file(fd)
    tmp.seek(0)
    tmp.truncate()
    saved = os.dup(fd)
    box: list[str] = []
    os.dup2(tmp.fileno(), fd)
    try:
        yield box
    finally:
        _libc.fflush(None)
        os.dup2(saved, fd)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", errors="replace")
        box.append(text)
        others = "".join(line for line in text.splitlines(True) if drop is None or not drop.match(line))
        if others and drop is not None:
            os.write(saved, others.encode())
        os.close(saved)
        if os.environ.get("PIXELRIG_DEBUG"):
            sys.stderr.write(text)


def capture_native_stdout() -> contextlib.AbstractContextManager[list[str]]:
    """Keep the EGL plugin's chatter off stdout (see :func:`capture_native_output`)."""
    return capture_native_output(1)


_GL_LINE = re.compile(r"^GL_(VENDOR|RENDERER|VERSION)=(.*)$", re.MULTILINE)


def parse_gl_info(text: str) -> dict[str, str]:
    """Extract ``{"vendor", "renderer", "version"}`` from the EGL plugin's start-up output."""
    return {key.lower(): value.strip() for key, value in _GL_LINE.findall(text)}


EGL_CHATTY_FRAMES = 3
"""Frames after the plugin loads whose stdout is captured (it prints on the first two; one more for margin)."""


class EglBackend(RenderBackend):
    """pybullet's EGL plugin: OpenGL on a GPU, or on Mesa's llvmpipe on CPU-only machines.

    Must be created right after ``connect`` and before any body is loaded. One per process at a time.
    Prefer :func:`pixelrig.render.make_backend`, which probes EGL in a subprocess first (the plugin calls
    ``exit()`` on failure, which would kill this process).
    """

    name = "egl"
    _renderer_flag = p.ER_BULLET_HARDWARE_OPENGL

    def __init__(self, client: int) -> None:
        global _egl_owner
        super().__init__(client)
        path = egl_plugin_path()
        if path is None:
            raise RendererUnavailable(
                "renderer 'egl' is unavailable: this pybullet build has no eglRenderer plugin module. "
                "Use renderer='tiny' (or PIXELRIG_RENDERER=tiny)."
            )
        n_bodies = p.getNumBodies(physicsClientId=client)
        if n_bodies:
            raise RuntimeError(
                f"EGL must be loaded before any body: pybullet client {client} already has {n_bodies} bodies, "
                "which the EGL plugin would never draw. Create the EGL backend right after connect(), or call "
                "resetSimulation() first and rebuild the scene."
            )
        from pixelrig.render.gl.context import context_created

        if context_created():
            import gc

            gc.collect()  # an unreferenced gl env not yet collected still holds the context
        if context_created():
            raise RuntimeError(
                "the gl renderer holds an EGL context in this process, and pybullet's EGL plugin crashes the process "
                "(segfault) when it starts beside it. Close every gl environment first (or call "
                "pixelrig.render.gl.release()), use renderer='gl' for every environment of this process, or run the "
                "egl environment in another process."
            )
        with _egl_lock:
            other = active_egl_client()
            if other is not None:
                raise RuntimeError(
                    f"an EGL renderer is already active in this process (pybullet client {other}); pybullet's "
                    "EGL plugin supports one client per process and a second one renders the wrong scene. "
                    "Close the other environment first, use renderer='tiny', or run each EGL environment in its "
                    "own process (pixelrig.make_vec / gymnasium AsyncVectorEnv)."
                )
            with capture_native_stdout() as out:
                plugin = p.loadPlugin(path, "_eglRendererPlugin", physicsClientId=client)
            if plugin < 0:
                raise RendererUnavailable(
                    f"renderer 'egl' is unavailable: loading {path} returned {plugin}. "
                    "Use renderer='tiny' (or PIXELRIG_RENDERER=tiny)."
                )
            _egl_owner = (os.getpid(), client)
        self._plugin = plugin
        self._chatty_frames = EGL_CHATTY_FRAMES
        self.gl_info: dict[str, str] = parse_gl_info(out[0])
        """GL vendor, renderer and version strings the plugin reported (e.g. ``llvmpipe`` on Mesa)."""

    def _camera_image(self, width: int, height: int, view: tuple[float, ...], projection: tuple[float, ...],
                      flags: int) -> tuple:
        # The plugin prints "ven = ..." to stdout on the first two frames after it loads, and on no frame after
        # them (checked: resets, new bodies, colour changes, sizes from 64 to 2000 px, 200 frames more). Only those
        # frames are captured: capturing redirects the process's fd 1, which is not thread-safe.
        if self._chatty_frames <= 0:
            return super()._camera_image(width, height, view, projection, flags)
        self._chatty_frames -= 1
        with capture_native_stdout():
            return super()._camera_image(width, height, view, projection, flags)

    def close(self) -> None:
        global _egl_owner
        if self._closed:
            return
        super().close()
        with _egl_lock:
            if p.isConnected(physicsClientId=self._client):
                with capture_native_stdout():
                    p.unloadPlugin(self._plugin, physicsClientId=self._client)
            if _egl_owner == (os.getpid(), self._client):
                _egl_owner = None


BACKENDS: dict[str, type[RenderBackend]] = {"tiny": TinyBackend, "egl": EglBackend}

from pixelrig.render.gl.backend import GlBackend  # noqa: E402  (gl builds on the classes above)

BACKENDS["gl"] = GlBackend


def backend_class(kind: str) -> type[RenderBackend]:
    """The backend class for a resolved kind ('tiny' or 'egl')."""
    try:
        return BACKENDS[kind]
    except KeyError:
        raise ValueError(f"renderer must be one of {tuple(BACKENDS)} once resolved: got {kind!r}") from None
