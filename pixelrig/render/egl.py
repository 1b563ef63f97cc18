"""pybullet's EGL plugin as a render backend (``renderer="egl"``): OpenGL on a GPU, or Mesa's llvmpipe.

EGL facts this module is built around (pybullet 3.2.7): the plugin must be loaded before any body exists in the
client (bodies loaded earlier are invisible to it); it serves every camera request of the client once loaded;
only one client per process may use it (a second one silently renders another scene's geometry), so this module
refuses a second concurrent EGL backend; unloading it leaves the client returning stale images, so a closed EGL
backend refuses to render and its client should be disconnected.
"""

from __future__ import annotations

import importlib.util
import re

import pybullet as p

from pixelrig.errors import RendererUnavailable
from pixelrig.render.backends import PybulletBackend
from pixelrig.render.egl_plugin_owner import LOCK, active_egl_client, set_egl_client
from pixelrig.system.output import capture_native_stdout


def egl_plugin_path() -> str | None:
    """Filesystem path of pybullet's EGL renderer plugin, or None when this pybullet build has none."""
    spec = importlib.util.find_spec("eglRenderer")
    return spec.origin if spec is not None and spec.origin else None


_GL_LINE = re.compile(r"^GL_(VENDOR|RENDERER|VERSION)=(.*)$", re.MULTILINE)


def parse_gl_info(text: str) -> dict[str, str]:
    """Extract ``{"vendor", "renderer", "version"}`` from the EGL plugin's start-up output."""
    return {key.lower(): value.strip() for key, value in _GL_LINE.findall(text)}


EGL_OWN_LIGHT = (-50.0, -400.0, 2000.0)
"""The direction the plugin lights with until told otherwise, as near as measured (its own default light, given
back after a look that set another: on PandaPush it then differs from a fresh plugin's image in 0.04% of pixels, by 2
levels at most)."""

EGL_CHATTY_FRAMES = 3
"""Frames after the plugin loads whose stdout is captured (it prints on the first two; one more for margin)."""


class EglBackend(PybulletBackend):
    """pybullet's EGL plugin: OpenGL on a GPU, or on Mesa's llvmpipe on CPU-only machines.

    Must be created right after ``connect`` and before any body is loaded. One per process at a time.
    Prefer :func:`pixelrig.render.make_backend`, which probes EGL in a subprocess first (the plugin calls
    ``exit()`` on failure, which would kill this process).
    """

    name = "egl"
    _renderer_flag = p.ER_BULLET_HARDWARE_OPENGL

    def __init__(self, client: int) -> None:
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
        with LOCK:
            other = active_egl_client()
            if other is not None:
                raise RuntimeError(
                    f"an EGL renderer is already active in this process (pybullet client {other}); pybullet's "
                    "EGL plugin supports one client per process and a second one renders the wrong scene. "
                    "Close the other environment first, use renderer='tiny', or run each EGL environment in its "
                    "own process (pixelrig.make_vec, vectorization_mode='async')."
                )
            with capture_native_stdout() as out:
                plugin = p.loadPlugin(path, "_eglRendererPlugin", physicsClientId=client)
            if plugin < 0:
                raise RendererUnavailable(
                    f"renderer 'egl' is unavailable: loading {path} returned {plugin}. "
                    "Use renderer='tiny' (or PIXELRIG_RENDERER=tiny)."
                )
            set_egl_client(client)
        self._plugin = plugin
        self._chatty_frames = EGL_CHATTY_FRAMES
        self._light_given = False
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

    def _light_arguments(self) -> dict[str, object]:
        """The light's direction, the one part of the look the plugin draws (the registry refuses the others);
        nothing for the default look until a direction has been given, so that the default stays the plugin's own
        image bit for bit."""
        if self._lighting.changed():
            self._light_given = True
            return {"lightDirection": list(self._lighting.direction)}
        return {"lightDirection": list(EGL_OWN_LIGHT)} if self._light_given else {}

    def close(self) -> None:
        if self._closed:
            return
        super().close()
        with LOCK:
            if p.isConnected(physicsClientId=self._client):
                with capture_native_stdout():
                    p.unloadPlugin(self._plugin, physicsClientId=self._client)
            if active_egl_client() == self._client:
                set_egl_client(None)
