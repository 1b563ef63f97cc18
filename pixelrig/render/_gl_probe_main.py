"""Child-process body of the gl probe: create a headless moderngl EGL context, draw nothing, clear and read back.

Run as a script, never imported by the library, so that a GL driver that crashes takes only this process down. It
prints one line ``PIXELRIG_GL_PROBE {json}``.
"""

import json
import sys


def main() -> int:
    """Try the context; report ok, the GL strings, or the error."""
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
    except Exception as exc:  # report every failure to the parent, which raises RendererUnavailable
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print("PIXELRIG_GL_PROBE " + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
