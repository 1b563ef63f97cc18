"""``Lighting``: the one light of TinyRenderer's model (direction, colour, ambient/diffuse/specular coefficients,
shadows), which every backend draws as far as its registry entry says (:attr:`BackendEntry.lighting
<pixelrig.render.registry.BackendEntry>`).

The model, per colour channel ``c`` (the surface's texture colour times its RGBA, truncated to an integer)::

    value = int(ambient * c + shadow * (diffuse * max(0, n . l) + specular * max(0, r_z)**2) * c * color)

with ``l`` the unit light direction (towards the light), ``n`` the surface normal, ``r`` the reflection of ``l``
about ``n``, ``shadow`` 1 where the light reaches the surface and 0.8 where something is between (so a shadow dims
only the direct term), and the result capped at 255. The default is TinyRenderer's own light, so ``Lighting()``
draws every image as pixelrig always did.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

LIGHT_DISTANCE = 2.0
"""How far from the world origin TinyRenderer places the light's shadow camera (pybullet's default; only shadows
depend on it)."""

SHADOW_DIM = 0.8
"""What a shadow multiplies the direct (diffuse and specular) term by in TinyRenderer."""

MIN_SHADOW_TILT = 1e-3
"""The least horizontal part of a shadow-casting light's unit direction: TinyRenderer's shadow camera looks along the
light with world z up, which has no view for a vertical light."""


def _triple(name: str, value: Any, low: float | None) -> tuple[float, float, float]:
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"Lighting: {name}={value!r} must be 3 numbers") from None
    if len(out) != 3 or not all(math.isfinite(v) for v in out):
        raise ValueError(f"Lighting: {name}={value!r} must be 3 finite numbers")
    if low is not None and min(out) < low:
        raise ValueError(f"Lighting: {name}={value!r} must be 3 numbers >= {low} (1.0 is white light's full "
                         "strength)")
    return out  # type: ignore[return-value]


def _coefficient(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not math.isfinite(value) or value < 0:
        raise ValueError(f"Lighting: {name}={value!r} must be a finite number >= 0 (TinyRenderer's default: "
                         f"{getattr(Lighting, name)})")
    return float(value)


@dataclass(frozen=True)
class Lighting:
    """The scene's light, in TinyRenderer's model (see the module docstring).

    Args:
        direction: towards the light, world frame (any length but zero; renderers normalise it). TinyRenderer's
            default ``(-50, 30, 100)`` is azimuth 149.0°, elevation 58.5°.
        color: the light's RGB, multiplying the direct term (1.0 = white at full strength; the ambient term is the
            surface's own colour).
        ambient: the ambient coefficient (>= 0).
        diffuse: the diffuse coefficient (>= 0).
        specular: the specular coefficient (>= 0).
        shadows: cast shadows (a shadow map drawn from the light; shadowed surfaces keep their ambient term and
            0.8 of their direct one). Needs a direction that is not vertical.

    Raises:
        ValueError: a zero or non-finite direction, a negative or non-finite colour or coefficient, a non-bool
            ``shadows``, or shadows from a vertical light; the message names the value and the fix.
    """

    direction: tuple[float, float, float] = (-50.0, 30.0, 100.0)
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    ambient: float = 0.6
    diffuse: float = 0.35
    specular: float = 0.05
    shadows: bool = False

    def __post_init__(self) -> None:
        direction = _triple("direction", self.direction, None)
        norm = math.sqrt(sum(v * v for v in direction))
        if norm <= 0.0:
            raise ValueError(f"Lighting: direction={self.direction!r} is zero: give the direction towards the light, "
                             "e.g. (-50, 30, 100) (TinyRenderer's default)")
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "color", _triple("color", self.color, 0.0))
        for name in ("ambient", "diffuse", "specular"):
            object.__setattr__(self, name, _coefficient(name, getattr(self, name)))
        if not isinstance(self.shadows, bool | np.bool_):
            raise ValueError(f"Lighting: shadows={self.shadows!r} must be True or False")
        object.__setattr__(self, "shadows", bool(self.shadows))
        if self.shadows and math.hypot(direction[0], direction[1]) < MIN_SHADOW_TILT * norm:
            raise ValueError(f"Lighting: shadows need a light that is not vertical (direction={self.direction!r}): "
                             "TinyRenderer's shadow camera looks along the light with z up; tilt it, e.g. "
                             f"({MIN_SHADOW_TILT * 10:g}, 0, 1)")

    @property
    def unit_direction(self) -> np.ndarray:
        """(3,) float64: the direction towards the light, unit length."""
        d = np.asarray(self.direction, dtype=np.float64)
        return d / np.linalg.norm(d)

    def changed(self) -> tuple[str, ...]:
        """The names of the fields that differ from the default ``Lighting()``, in field order."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name) != getattr(DEFAULT_LIGHTING, f.name))

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain data (lists, floats, a bool): what ``randomization_values`` and snapshots keep."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Lighting:
        """The inverse of :meth:`to_dict`.

        Raises:
            ValueError: an unknown field (the message lists the fields) or a bad value.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"Lighting: unknown fields {unknown}; fields: {sorted(names)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


DEFAULT_LIGHTING = Lighting()
"""TinyRenderer's own light: what every renderer draws unless told otherwise."""

LIGHTING_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Lighting))
"""Every field of :class:`Lighting`, in order."""


def look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray) -> np.ndarray:
    """(4, 4) float64 row-major world-to-eye matrix of a camera at ``eye`` looking at ``target`` (TinyRenderer's
    ``lookat``, which is gluLookAt's)."""
    f = (target - eye) / np.linalg.norm(target - eye)
    s = np.cross(f, up / np.linalg.norm(up))
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = (-s @ eye, -u @ eye, f @ eye)
    return m


@functools.lru_cache(maxsize=256)
def shadow_view(lighting: Lighting) -> np.ndarray:
    """(4, 4) float64 row-major view matrix of TinyRenderer's shadow camera: at the unit light direction times
    :data:`LIGHT_DISTANCE`, looking at the world origin with z up (float32 inputs, as TinyRenderer computes them).
    It draws with the camera's own projection and image size."""
    d = lighting.unit_direction.astype(np.float32).astype(np.float64)
    eye = (d * np.float32(LIGHT_DISTANCE)).astype(np.float32).astype(np.float64)
    view = look_at(eye, np.zeros(3), np.array([0.0, 0.0, 1.0]))
    view.setflags(write=False)  # shared by every caller (cached per lighting)
    return view
