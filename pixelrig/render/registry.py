"""The render backends by name: what ``renderer=`` accepts, what each one is, where it samples its pixels, and the
class behind each name (imported on first use). The error texts, the CLI's choices and the docs list them from
here.

Adding a backend: a module with a :class:`~pixelrig.render.backends.RenderBackend` subclass, and one entry below.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pixelrig.render.lighting import LIGHTING_FIELDS

if TYPE_CHECKING:
    from pixelrig.render.backends import RenderBackend


@dataclass(frozen=True)
class BackendEntry:
    """One backend.

    Attributes:
        name: its ``renderer=`` value.
        target: ``"module:Class"`` of its :class:`~pixelrig.render.backends.RenderBackend` subclass.
        label: what it is, as messages name it.
        summary: what it is and where it wins, in a few words (CLI help).
        pixel_sampling: where pixel ``(0, 0)`` samples the image plane, as the offset of the principal point from
            ``(width / 2, height / 2)`` in OpenCV pixel coordinates (pixel centres at integers). Measured by
            fitting rendered depth of a tilted plane: TinyRenderer (and the gl renderer, which copies it) samples
            pixel ``(col, row)`` at the continuous image position ``(col, row + 1)``; pybullet's EGL plugin samples
            pixel centres ``(col + 0.5, row + 0.5)`` (at sizes up to its 1024x768 pbuffer; larger images are
            upscaled by the plugin).
        one_client_per_process: only one pybullet client of a process may use it (pybullet's EGL plugin): vector
            envs give each env a process of its own.
        egl_device: it draws on the EGL device ``EGL_VISIBLE_DEVICES`` picks, which vector envs set per worker from
            its GPU.
        before_bodies: it must start before the client's first body (pybullet's EGL plugin never draws bodies
            loaded before it), so only an env that builds its own world can use it.
        lighting: the :class:`~pixelrig.render.lighting.Lighting` fields it draws: all of them on TinyRenderer and
            gl; the direction only on pybullet's EGL plugin (checked: it ignores the light's colour, the ambient,
            diffuse and specular coefficients and ``shadow``, and draws shadows of its own always). A look that
            sets another field is refused on it, naming the renderers that draw it.
        textures: it draws textures set at run time (:mod:`pixelrig.render.textures`). pybullet's EGL plugin does
            not: it draws another texture of its list (checked: a box given a red texture shows the ground plane's
            checkers), so textures are refused on it, naming the renderers that draw them.
    """

    name: str
    target: str
    label: str
    summary: str
    pixel_sampling: tuple[float, float]
    one_client_per_process: bool = False
    egl_device: bool = False
    before_bodies: bool = False
    lighting: tuple[str, ...] = LIGHTING_FIELDS
    textures: bool = True


BACKENDS: dict[str, BackendEntry] = {e.name: e for e in (
    BackendEntry("tiny", "pixelrig.render.backends:TinyBackend", "pybullet's TinyRenderer",
                 "pybullet's TinyRenderer (CPU, always there)", (0.0, -1.0)),
    BackendEntry("egl", "pixelrig.render.egl:EglBackend", "pybullet's EGL plugin",
                 "pybullet's EGL plugin (GPU or Mesa; one per process)", (-0.5, -0.5), one_client_per_process=True,
                 egl_device=True, before_bodies=True, lighting=("direction",), textures=False),
    BackendEntry("gl", "pixelrig.render.gl.backend:GlBackend", "pixelrig's gl renderer",
                 "pixelrig's own OpenGL renderer (many envs per pass)", (0.0, -1.0), egl_device=True),
)}
"""Every backend by name."""

RENDERER_CHOICES = ("auto", *BACKENDS)
"""Accepted values of ``renderer=`` and of the ``PIXELRIG_RENDERER`` environment variable."""


def entry(kind: str) -> BackendEntry:
    """The registry entry of a resolved kind.

    Raises:
        ValueError: not a backend's name (the message lists them).
    """
    try:
        return BACKENDS[kind]
    except KeyError:
        raise ValueError(f"renderer must be one of {tuple(BACKENDS)} once resolved: got {kind!r}") from None


def backend_class(kind: str) -> type[RenderBackend]:
    """The backend class for a resolved kind (one of :data:`BACKENDS`)."""
    module, _, name = entry(kind).target.partition(":")
    return getattr(importlib.import_module(module), name)


def may_use_egl_device(renderer: str) -> bool:
    """Whether a renderer request (``"auto"`` or a backend's name) may end on a backend drawing on an EGL device (so
    that ``EGL_VISIBLE_DEVICES`` must be set before it is resolved: the probes read it)."""
    return renderer == "auto" or entry(renderer).egl_device


def choices_help() -> str:
    """The renderer choices with what each is, for command-line help."""
    return "; ".join(["auto: the fastest that works here", *(f"{e.name}: {e.summary}" for e in BACKENDS.values())])


def check_lighting(kind: str, changed: Iterable[str], what: str) -> None:
    """Refuse a look that the backend ``kind`` cannot draw.

    Args:
        kind: a resolved backend name.
        changed: the :class:`~pixelrig.render.lighting.Lighting` fields the look sets away from their defaults (or
            randomises).
        what: how the caller names the look, e.g. ``"Lighting(shadows=True)"``.

    Raises:
        ValueError: a field the backend does not draw; the message names the renderers that draw it.
    """
    drawn = entry(kind).lighting
    missing = [name for name in changed if name not in drawn]
    if missing:
        able = [e.name for e in BACKENDS.values() if all(name in e.lighting for name in missing)]
        raise ValueError(
            f"renderer {kind!r} ({entry(kind).label}) draws the light's {', '.join(drawn)} only, not its "
            f"{', '.join(missing)}: {what} needs renderer={' or renderer='.join(repr(n) for n in able)} (or leave "
            f"{', '.join(missing)} at the default)"
        )


def check_textures(kind: str, what: str) -> None:
    """Refuse textures set at run time on a backend that does not draw them.

    Raises:
        ValueError: the message names ``what`` and the renderers that draw them.
    """
    if not entry(kind).textures:
        able = [e.name for e in BACKENDS.values() if e.textures]
        raise ValueError(f"renderer {kind!r} ({entry(kind).label}) does not draw textures set at run time: {what} "
                         f"needs renderer={' or renderer='.join(repr(n) for n in able)}")
