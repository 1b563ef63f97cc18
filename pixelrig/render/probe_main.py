"""Child-process body of the renderer probes and the EGL device listing, started through
:mod:`pixelrig.system.process` (``python -m``) so that a GL driver that crashes, or pybullet's EGL plugin calling
``exit()`` when EGL fails, takes only this process down.

Protocol: the config names what to do; the ready payload is the answer.

- ``{"probe": "gl"}``: make a headless moderngl EGL context (OpenGL 4.3), clear a framebuffer and read it back:
  ``{"ok", "vendor", "renderer", "version"}`` (``"error"`` when not ok).
- ``{"probe": "egl"}``: load pybullet's EGL plugin and draw one box: ``{"ok", "center_depth_m", "center_label",
  "output"}``, where ``output`` is what the plugin printed on stdout (its ``GL_VENDOR=...`` lines, which
  :func:`pixelrig.render.egl.parse_gl_info` reads), captured from this process's file descriptor 1.
- ``{"probe": "devices"}``: the EGL devices (``eglQueryDevicesEXT``, through ctypes), as dicts of
  :class:`pixelrig.render.egl_devices.EglDevice`.
"""

from __future__ import annotations

import importlib.util
from multiprocessing.connection import Connection
from typing import Any

from pixelrig.system.output import capture_native_output
from pixelrig.system.process import ready, serve


def list_devices() -> list[dict[str, Any]]:
    """EGL devices through ctypes (eglQueryDevicesEXT, eglQueryDeviceStringEXT, eglQueryDeviceAttribEXT); empty when
    EGL device enumeration is unavailable."""
    import ctypes

    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError:
        return []
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]

    def proc(name: bytes, restype: Any, *argtypes: Any) -> Any:
        address = egl.eglGetProcAddress(name)
        return ctypes.CFUNCTYPE(restype, *argtypes)(address) if address else None

    query_devices = proc(b"eglQueryDevicesEXT", ctypes.c_uint, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                         ctypes.POINTER(ctypes.c_int))
    query_string = proc(b"eglQueryDeviceStringEXT", ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
    query_attrib = proc(b"eglQueryDeviceAttribEXT", ctypes.c_uint, ctypes.c_void_p, ctypes.c_int,
                        ctypes.POINTER(ctypes.c_ssize_t))
    if query_devices is None:
        return []
    count = ctypes.c_int(0)
    if not query_devices(0, None, ctypes.byref(count)) or count.value <= 0:
        return []
    handles = (ctypes.c_void_p * count.value)()
    query_devices(count.value, handles, ctypes.byref(count))
    out = []
    for i in range(count.value):
        ext = query_string(handles[i], 0x3055) if query_string else None  # EGL_EXTENSIONS
        extensions = ext.decode(errors="replace") if ext else ""
        cuda = drm = None
        value = ctypes.c_ssize_t(0)
        if "EGL_NV_device_cuda" in extensions and query_attrib(handles[i], 0x323A, ctypes.byref(value)):
            cuda = int(value.value)  # EGL_CUDA_DEVICE_NV
        if "EGL_EXT_device_drm" in extensions:
            name = query_string(handles[i], 0x3233)  # EGL_DRM_DEVICE_FILE_EXT
            drm = name.decode(errors="replace") if name else None
        out.append({"index": i, "cuda": cuda, "software": "EGL_MESA_device_software" in extensions, "drm": drm,
                    "extensions": extensions})
    return out


def probe_gl() -> dict[str, Any]:
    """Try a moderngl EGL context; report ok, the GL strings, or the error."""
    try:
        import moderngl

        ctx = moderngl.create_context(standalone=True, backend="egl", require=430)
        fbo = ctx.simple_framebuffer((4, 4))
        fbo.use()
        fbo.clear(1.0, 0.0, 0.0, 1.0)
        ok = fbo.read(components=4)[:4] == bytes([255, 0, 0, 255])
        result = {"ok": ok, "vendor": ctx.info["GL_VENDOR"], "renderer": ctx.info["GL_RENDERER"],
                  "version": ctx.info["GL_VERSION"]}
        if not ok:
            result["error"] = "a cleared test framebuffer read back wrong values"
    except Exception as exc:  # every failure is the answer: the parent raises RendererUnavailable with it
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return result


def probe_egl() -> dict[str, Any]:
    """Load pybullet's EGL plugin and draw one box 2.5 m away; report whether its depth and label came back right.
    When EGL fails the plugin calls ``exit()``: this process dies, and the parent reports its exit code and stderr."""
    import pybullet as p

    spec = importlib.util.find_spec("eglRenderer")
    if spec is None or not spec.origin:
        return {"ok": False, "error": "pybullet has no eglRenderer module", "output": ""}
    with capture_native_output(1) as printed:  # the plugin's GL_VENDOR=... lines; nothing reaches stdout
        result = _draw_box(p, spec.origin)
    result["output"] = printed[0]
    return result


def _draw_box(p: Any, plugin_path: str) -> dict[str, Any]:
    client = p.connect(p.DIRECT)
    plugin = p.loadPlugin(plugin_path, "_eglRendererPlugin", physicsClientId=client)
    if plugin < 0:
        p.disconnect(client)
        return {"ok": False, "error": f"loadPlugin returned {plugin}"}
    box = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5, 0.5, 0.5], physicsClientId=client)
    body = p.createMultiBody(0, box, basePosition=[0, 0, 0], physicsClientId=client)
    view = p.computeViewMatrix([0, 0, 3], [0, 0, 0], [0, 1, 0])
    proj = p.computeProjectionMatrixFOV(60, 1, 0.1, 10)
    _, _, _, depth, seg = p.getCameraImage(
        16, 16, view, proj, renderer=p.ER_BULLET_HARDWARE_OPENGL,
        flags=p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX, physicsClientId=client,
    )
    z = float(depth[8][8])
    metric = 10 * 0.1 / (10 - (10 - 0.1) * z)
    ok = abs(metric - 2.5) < 0.05 and int(seg[8][8]) == body
    result: dict[str, Any] = {"ok": ok, "center_depth_m": metric, "center_label": int(seg[8][8])}
    if not ok:
        result["error"] = f"test frame wrong: centre depth {metric:.3f} m (expected 2.5), label {int(seg[8][8])}"
    p.unloadPlugin(plugin, physicsClientId=client)
    p.disconnect(client)
    return result


PROBES = {"gl": probe_gl, "egl": probe_egl, "devices": list_devices}


def main(conn: Connection, config: dict[str, Any]) -> int:
    """Run the probe the config names and answer with its result."""
    what = config.get("probe") if isinstance(config, dict) else None
    if what not in PROBES:
        raise ValueError(f"probe config {config!r} must be {{'probe': one of {sorted(PROBES)}}}")
    ready(conn, PROBES[what]())
    return 0


if __name__ == "__main__":
    serve(main)
