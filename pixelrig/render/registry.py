"""The render backends by name: what ``renderer=`` accepts, and the class behind each name, imported on first use."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pixelrig.render.backends import RenderBackend

BACKENDS: dict[str, str] = {
    "tiny": "pixelrig.render.backends:TinyBackend",
    "egl": "pixelrig.render.egl:EglBackend",
    "gl": "pixelrig.render.gl.backend:GlBackend",
}
"""Every backend: its name and ``module:class``."""

RENDERER_CHOICES = ("auto", *BACKENDS)
"""Accepted values of ``renderer=`` and of the ``PIXELRIG_RENDERER`` environment variable."""


def backend_class(kind: str) -> type[RenderBackend]:
    """The backend class for a resolved kind (one of :data:`BACKENDS`)."""
    try:
        module, _, name = BACKENDS[kind].partition(":")
    except KeyError:
        raise ValueError(f"renderer must be one of {tuple(BACKENDS)} once resolved: got {kind!r}") from None
    return getattr(importlib.import_module(module), name)
