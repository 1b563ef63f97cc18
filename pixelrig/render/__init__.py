"""Rendering: the tiny (TinyRenderer) and egl (EGL plugin) backends, backend choice, and image conversions."""

from pixelrig.render.backends import (
    RENDERER_CHOICES,
    EglBackend,
    RawFrame,
    RenderBackend,
    RendererUnavailable,
    TinyBackend,
    active_egl_client,
)
from pixelrig.render.choice import EglProbe, make_backend, probe_egl, requested_renderer, resolve_renderer
from pixelrig.render.convert import (
    BACKGROUND_LABEL,
    colorize_depth,
    colorize_labels,
    decode_segmentation,
    segmentation_to_label,
    zbuffer_to_depth,
)

__all__ = [
    "BACKGROUND_LABEL",
    "RENDERER_CHOICES",
    "EglBackend",
    "EglProbe",
    "RawFrame",
    "RenderBackend",
    "RendererUnavailable",
    "TinyBackend",
    "active_egl_client",
    "colorize_depth",
    "colorize_labels",
    "decode_segmentation",
    "make_backend",
    "probe_egl",
    "requested_renderer",
    "resolve_renderer",
    "segmentation_to_label",
    "zbuffer_to_depth",
]
