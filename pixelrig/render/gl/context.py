"""The one moderngl EGL context per process that every gl backend shares, plus the few raw GL calls moderngl lacks.

The context is created lazily on first use and released when the last ``GlBackend`` closes (or by
:func:`pixelrig.render.gl.release`): pybullet's EGL plugin segfaults if it starts while this context exists, so the
egl backend refuses to start beside it. It is not thread-safe: use the gl renderer from one thread at a time.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from pixelrig.errors import RendererUnavailable
from pixelrig.render.egl_plugin_owner import active_egl_client

HINT = "Use renderer='tiny' (or PIXELRIG_RENDERER=tiny)."

_ctx: Any = None
_ctx_pid: int | None = None
_gl: dict[str, Any] = {}

GL_COLOR = 0x1800
GL_DEPTH = 0x1801


def unavailable(cause: str) -> RendererUnavailable:
    """The error raised when the gl renderer cannot run, with its cause and the fix."""
    return RendererUnavailable(f"renderer 'gl' is unavailable: {cause}. {HINT}")


def get_context() -> Any:
    """The process's shared moderngl context (standalone, EGL), created on first call.

    Raises:
        RendererUnavailable: moderngl is missing, EGL cannot give a context, or pybullet's EGL plugin is active
            in this process (both would fight over the thread's current EGL context).
    """
    global _ctx, _ctx_pid
    if _ctx is not None and _ctx_pid == os.getpid():
        return _ctx
    if active_egl_client() is not None:
        raise unavailable(
            f"pybullet's EGL plugin is active in this process (client {active_egl_client()}) and owns the EGL "
            "context; close that environment or run gl environments in another process"
        )
    try:
        import moderngl
    except ImportError as exc:
        raise unavailable(f"the moderngl package is not installed ({exc}); pip install moderngl") from None
    device = device_index()
    where = "" if device is None else f" on EGL device {device} (EGL_VISIBLE_DEVICES={device})"
    try:
        ctx = moderngl.create_context(standalone=True, backend="egl", require=430,
                                      **({} if device is None else {"device_index": device}))
    except Exception as exc:  # moderngl/glcontext raise plain Exceptions on EGL failures
        raise unavailable(f"moderngl could not create a headless EGL context with OpenGL 4.3{where} ({exc})") \
            from None
    _ctx, _ctx_pid = ctx, os.getpid()
    _gl.clear()
    return ctx


def device_index() -> int | None:
    """The EGL device the context is made on: ``EGL_VISIBLE_DEVICES`` (an index into ``eglQueryDevicesEXT``'s list,
    as pybullet's EGL plugin reads it, and as ``gpu=`` sets it from a CUDA device), else None (EGL's default)."""
    value = os.environ.get("EGL_VISIBLE_DEVICES", "").strip()
    return int(value) if value.isdigit() else None


def release_context() -> None:
    """Destroy the shared context (idempotent). The next :func:`get_context` makes a new one."""
    global _ctx, _ctx_pid
    if _ctx is not None and _ctx_pid == os.getpid():
        _ctx.release()
    _ctx, _ctx_pid = None, None
    _gl.clear()


def context_created() -> bool:
    """Whether this process already holds the gl renderer's EGL context (pybullet's EGL plugin then segfaults
    when it loads, so the egl backend refuses to start)."""
    return _ctx is not None and _ctx_pid == os.getpid()


def gl_info() -> dict[str, str]:
    """GL vendor, renderer and version of the shared context (creating it if needed)."""
    info = get_context().info
    return {"vendor": info["GL_VENDOR"], "renderer": info["GL_RENDERER"], "version": info["GL_VERSION"]}


def _proc(name: str, *argtypes: Any) -> Any:
    """A GL entry point of the current context, through eglGetProcAddress."""
    if "egl" not in _gl:
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
        _gl["egl"] = egl
    if name not in _gl:
        address = _gl["egl"].eglGetProcAddress(name.encode())
        if not address:
            raise unavailable(f"the GL driver has no {name}")
        _gl[name] = ctypes.CFUNCTYPE(None, *argtypes)(address)
    return _gl[name]


def clear_buffer_float(buffer: int, drawbuffer: int, values: tuple[float, ...]) -> None:
    """``glClearBufferfv`` on the bound draw framebuffer (moderngl's ``clear`` writes one value to every target)."""
    fn = _proc("glClearBufferfv", ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_float))
    fn(buffer, drawbuffer, (ctypes.c_float * 4)(*values, *([0.0] * (4 - len(values)))))


def clear_buffer_int(drawbuffer: int, values: tuple[int, ...]) -> None:
    """``glClearBufferiv(GL_COLOR, ...)``: clears an integer colour attachment without a float bit pattern."""
    fn = _proc("glClearBufferiv", ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_int))
    fn(GL_COLOR, drawbuffer, (ctypes.c_int * 4)(*values, *([0] * (4 - len(values)))))


def flush() -> None:
    """``glFlush``: start executing the GL commands issued so far without waiting for them (llvmpipe rasterises in
    its own threads meanwhile)."""
    _proc("glFlush")()
