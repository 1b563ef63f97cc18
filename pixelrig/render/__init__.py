"""Rendering, scene to pixels: the backends (listed in :mod:`pixelrig.render.registry`), choosing and probing
them, and pure conversions of their buffers (depth, labels, points, normals)."""

from pixelrig.errors import RendererUnavailable
from pixelrig.render import _pybullet_check  # noqa: F401  (ImportError naming the fix if pybullet lacks numpy)
from pixelrig.render.backends import CameraRequest, Frame, RenderBackend, TinyBackend, submit
from pixelrig.render.choice import (
    RendererProbe,
    choose_auto,
    make_backend,
    probe_egl,
    probe_gl,
    requested_renderer,
    resolve_renderer,
)
from pixelrig.render.convert import BACKGROUND_LABEL, decode_segmentation, segmentation_to_label, zbuffer_to_depth
from pixelrig.render.egl import EglBackend
from pixelrig.render.egl_plugin_owner import active_egl_client
from pixelrig.render.registry import RENDERER_CHOICES

__all__ = [
    "BACKGROUND_LABEL",
    "RENDERER_CHOICES",
    "EglBackend",
    "CameraRequest",
    "Frame",
    "RenderBackend",
    "RendererProbe",
    "RendererUnavailable",
    "TinyBackend",
    "submit",
    "active_egl_client",
    "decode_segmentation",
    "choose_auto",
    "make_backend",
    "probe_egl",
    "probe_gl",
    "requested_renderer",
    "resolve_renderer",
    "segmentation_to_label",
    "zbuffer_to_depth",
]
