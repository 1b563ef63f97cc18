"""pixelrig's own OpenGL renderer of pybullet scenes (``renderer="gl"``): TinyRenderer's images, drawn with moderngl
on one headless EGL context per process, many cameras of many clients per pass."""

from pixelrig.render.gl.backend import GlBackend
from pixelrig.render.gl.context import gl_info
from pixelrig.render.gl.pipeline import release

__all__ = ["GlBackend", "gl_info", "release"]
