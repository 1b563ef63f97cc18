"""Child-process body of the EGL probe: load pybullet's EGL plugin, draw one box, report what happened.

Run as a script (``python _egl_probe_main.py``), never imported by the library: the plugin calls ``exit()`` when
EGL fails, which is exactly what the parent process must survive. It prints one line
``PIXELRIG_PROBE {json}`` on success; the plugin's own ``GL_RENDERER=...`` lines go to stdout beside it.
"""

import importlib.util
import json
import sys


def list_devices() -> list:
    """EGL devices through ctypes (eglQueryDevicesEXT, eglQueryDeviceStringEXT, eglQueryDeviceAttribEXT)."""
    import ctypes

    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError:
        return []
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]

    def proc(name, restype, *argtypes):
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


def main() -> int:
    if "--devices" in sys.argv:
        print("PIXELRIG_DEVICES " + json.dumps(list_devices()), flush=True)
        return 0
    import pybullet as p

    spec = importlib.util.find_spec("eglRenderer")
    if spec is None or not spec.origin:
        print("PIXELRIG_PROBE " + json.dumps({"ok": False, "error": "pybullet has no eglRenderer module"}))
        return 0
    client = p.connect(p.DIRECT)
    plugin = p.loadPlugin(spec.origin, "_eglRendererPlugin", physicsClientId=client)
    if plugin < 0:
        print("PIXELRIG_PROBE " + json.dumps({"ok": False, "error": f"loadPlugin returned {plugin}"}))
        return 0
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
    result = {"ok": ok, "center_depth_m": metric, "center_label": int(seg[8][8])}
    if not ok:
        result["error"] = f"test frame wrong: centre depth {metric:.3f} m (expected 2.5), label {int(seg[8][8])}"
    sys.stdout.flush()
    print("PIXELRIG_PROBE " + json.dumps(result), flush=True)
    p.unloadPlugin(plugin, physicsClientId=client)
    p.disconnect(client)
    return 0


if __name__ == "__main__":
    sys.exit(main())
