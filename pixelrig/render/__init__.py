"""Rendering: the tiny (TinyRenderer), egl (EGL plugin) and gl (pixelrig's own) backends, backend choice, and image
conversions."""

from pixelrig.render import _pybullet_check  # noqa: F401  (ImportError naming the fix if pybullet lacks numpy)
from pixelrig.render.backends import (
    RENDERER_CHOICES,
    EglBackend,
    RawFrame,
    RenderBackend,
    RendererUnavailable,
    TinyBackend,
    active_egl_client,
)
from pixelrig.render.choice import (
    RendererProbe,
    choose_auto,
    make_backend,
    probe_egl,
    probe_gl,
    requested_renderer,
    resolve_renderer,
)
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
    "RawFrame",
    "RenderBackend",
    "RendererProbe",
    "RendererUnavailable",
    "TinyBackend",
    "active_egl_client",
    "colorize_depth",
    "colorize_labels",
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
