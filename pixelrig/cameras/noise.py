"""Sensor noise: :class:`SensorNoise` (what a camera's readings suffer) and the pure functions that apply it to
an exact RGB or depth image with a given random generator.

Every function draws from the generator it is handed and from nothing else; :class:`~pixelrig.PixelObs` hands
them a generator of its own (never the env's), so noise never changes the simulation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import cv2
import numpy as np

NAN = math.nan
"""The NaN ``invalid`` holds when asked for NaN."""


@dataclass(frozen=True, eq=False)
class SensorNoise:
    """What a camera's readings suffer; every effect is off by default.

    RGB (8-bit levels): ``value + N(0, sqrt(rgb_sigma**2 + rgb_shot * value))``, rounded and clipped to [0, 255]
    (read noise and the Gaussian form of shot noise, whose variance grows with the signal), then an optional JPEG
    round trip at ``jpeg_quality``.

    Depth (metres along the optical axis), in this order, on pixels that see a surface:

    1. ``z + N(0, a + b z**2)`` with ``(a, b) = depth_sigma`` (the error of a stereo or structured-light sensor grows
       with the square of the distance);
    2. rounded to a multiple of ``depth_step`` (quantisation; 0 = none);
    3. outside ``depth_range = (min, max)`` the pixel reads ``invalid`` (the background too, where ``far`` is out of
       range; without a range the background keeps reading ``far``);
    4. dropouts read ``invalid``: each *edge* pixel (one whose exact depth differs from a 4-neighbour's by more than
       ``edge_threshold`` times the nearer of the two: both sides of a jump) with probability ``edge_dropout``, each
       *grazing* pixel (its surface normal, estimated from the exact depth, more than ``grazing_angle`` degrees from
       its ray) with probability ``grazing_dropout``;
    5. surviving readings are clipped to ``[near, far)``.

    Points, normals and the label images stay exact (ground truth); ``depth_stereo`` has its own error (the stereo
    matcher's) and reads ``invalid`` at its holes.

    Attributes:
        rgb_sigma: Gaussian read-noise standard deviation, in 8-bit levels (>= 0).
        rgb_shot: shot-noise variance per level of signal, levels (>= 0): a pixel at 200 with ``rgb_shot=0.5`` has
            a shot-noise standard deviation of 10 levels.
        jpeg_quality: a JPEG encode/decode at this quality (1..100), or None.
        depth_sigma: ``(a, b)``: depth noise standard deviation ``a + b z**2`` (a in metres, b per metre; >= 0).
        depth_step: depth quantisation step in metres (>= 0; 0 = none).
        depth_range: ``(min, max)`` metres the sensor measures; readings outside read ``invalid``. None: no limit.
        invalid: what an invalid pixel reads: 0.0 or NaN (``float("nan")`` or ``"nan"``).
        edge_dropout: probability that an edge pixel reads invalid, in [0, 1].
        edge_threshold: relative depth jump to a 4-neighbour that makes a pixel an edge pixel (> 0).
        grazing_dropout: probability that a grazing pixel reads invalid, in [0, 1].
        grazing_angle: angle in degrees between ray and surface normal beyond which a pixel is grazing, in (0, 90).

    Raises:
        ValueError: a value out of range; the message names the field, the value and what it must be.
    """

    rgb_sigma: float = field(default=0.0, kw_only=True)
    rgb_shot: float = field(default=0.0, kw_only=True)
    jpeg_quality: int | None = field(default=None, kw_only=True)
    depth_sigma: tuple[float, float] = field(default=(0.0, 0.0), kw_only=True)
    depth_step: float = field(default=0.0, kw_only=True)
    depth_range: tuple[float, float] | None = field(default=None, kw_only=True)
    invalid: float = field(default=0.0, kw_only=True)
    edge_dropout: float = field(default=0.0, kw_only=True)
    edge_threshold: float = field(default=0.05, kw_only=True)
    grazing_dropout: float = field(default=0.0, kw_only=True)
    grazing_angle: float = field(default=75.0, kw_only=True)

    def __post_init__(self) -> None:
        for name in ("rgb_sigma", "rgb_shot", "depth_step"):
            object.__setattr__(self, name, _number(name, getattr(self, name), low=0.0))
        for name in ("edge_dropout", "grazing_dropout"):
            value = _number(name, getattr(self, name), low=0.0)
            if value > 1.0:
                raise ValueError(f"SensorNoise: {name}={value!r} must be a probability in [0, 1]")
            object.__setattr__(self, name, value)
        threshold = _number("edge_threshold", self.edge_threshold, low=0.0)
        if threshold <= 0.0:
            raise ValueError(f"SensorNoise: edge_threshold={threshold!r} must be > 0 (a relative depth jump, e.g. "
                             "0.05 for 5%)")
        object.__setattr__(self, "edge_threshold", threshold)
        angle = _number("grazing_angle", self.grazing_angle, low=0.0)
        if not 0.0 < angle < 90.0:
            raise ValueError(f"SensorNoise: grazing_angle={angle!r} must be in (0, 90) degrees")
        object.__setattr__(self, "grazing_angle", angle)
        q = self.jpeg_quality
        if q is not None:
            if isinstance(q, bool) or not isinstance(q, int | np.integer) or not 1 <= q <= 100:
                raise ValueError(f"SensorNoise: jpeg_quality={q!r} must be an integer in [1, 100], or None")
            object.__setattr__(self, "jpeg_quality", int(q))
        object.__setattr__(self, "depth_sigma", _pair("depth_sigma", self.depth_sigma, "(a, b) with sigma = a + b "
                                                      "z**2, both >= 0"))
        if self.depth_range is not None:
            lo, hi = _pair("depth_range", self.depth_range, "(min, max) metres, 0 <= min < max")
            if lo >= hi:
                raise ValueError(f"SensorNoise: depth_range={self.depth_range!r} must be (min, max) metres with "
                                 "0 <= min < max")
            object.__setattr__(self, "depth_range", (lo, hi))
        object.__setattr__(self, "invalid", _invalid(self.invalid))

    def _key(self) -> tuple[Any, ...]:
        """The fields as a tuple, with a NaN ``invalid`` spelled ``"nan"``: NaN never equals itself, and Python
        3.13's dataclasses compare field by field (3.11's compared tuples, which let one NaN object equal itself)."""
        return tuple("nan" if f.name == "invalid" and math.isnan(self.invalid) else getattr(self, f.name)
                     for f in fields(self))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    # ---- what is on ------------------------------------------------------------------------------------------

    @property
    def rgb(self) -> bool:
        """Whether RGB images are changed."""
        return self.rgb_sigma > 0.0 or self.rgb_shot > 0.0 or self.jpeg_quality is not None

    @property
    def depth(self) -> bool:
        """Whether depth images are changed."""
        return (any(v > 0.0 for v in self.depth_sigma) or self.depth_step > 0.0 or self.can_invalidate)

    @property
    def can_invalidate(self) -> bool:
        """Whether some depth pixels may read :attr:`invalid`."""
        return self.depth_range is not None or self.edge_dropout > 0.0 or self.grazing_dropout > 0.0

    @property
    def invalid_is_nan(self) -> bool:
        """Whether invalid pixels read NaN (else 0.0)."""
        return math.isnan(self.invalid)

    def sigma(self, z: np.ndarray | float) -> np.ndarray | float:
        """The depth noise standard deviation at depth ``z`` (metres): ``a + b z**2``."""
        a, b = self.depth_sigma
        return a + b * np.square(z)

    # ---- (de)serialisation -----------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/TOML friendly: tuples as lists, NaN as ``"nan"``, None fields left out) that
        :meth:`from_dict` turns back into an equal object."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if isinstance(value, tuple):
                value = list(value)
            elif f.name == "invalid" and math.isnan(value):
                value = "nan"
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any] | SensorNoise) -> SensorNoise:
        """Build from :meth:`to_dict`'s dict (lists for the pairs accepted).

        Raises:
            ValueError: an unknown key (the message lists the known ones) or a bad value.
        """
        if isinstance(spec, SensorNoise):
            return spec
        if not isinstance(spec, Mapping):
            raise ValueError(f"SensorNoise: a noise spec must be a SensorNoise or a dict of its fields: got {spec!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"SensorNoise: unknown keys {unknown}; known keys are {sorted(known)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()})


def _number(name: str, value: Any, low: float) -> float:
    bad = ValueError(f"SensorNoise: {name}={value!r} must be a finite number >= {low:g}")
    if isinstance(value, bool):
        raise bad
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise bad from None
    if not math.isfinite(out) or out < low:
        raise bad
    return out


def _pair(name: str, value: Any, what: str) -> tuple[float, float]:
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray) or len(value) != 2:
        raise ValueError(f"SensorNoise: {name}={value!r} must be {what}")
    return _number(f"{name}[0]", value[0], 0.0), _number(f"{name}[1]", value[1], 0.0)


def _invalid(value: Any) -> float:
    if isinstance(value, str) and value.strip().lower() == "nan":
        return NAN
    if not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating):
        if math.isnan(float(value)):
            return NAN
        if float(value) == 0.0:
            return 0.0
    raise ValueError(f"SensorNoise: invalid={value!r} must be 0.0 or nan (what a pixel without a reading holds)")


# ---- applying it -----------------------------------------------------------------------------------------------


def noisy_rgb(rgb: np.ndarray, noise: SensorNoise, rng: np.random.Generator) -> np.ndarray:
    """An RGB image as the sensor reads it.

    Args:
        rgb: (H, W, 3) uint8 exact image.
        noise: the model (its rgb fields).
        rng: the generator to draw from: one standard normal per channel value when read or shot noise is on.

    Returns:
        (H, W, 3) uint8, a new array.
    """
    out = np.array(rgb, dtype=np.uint8, copy=True)
    if noise.rgb_sigma > 0.0 or noise.rgb_shot > 0.0:
        value = out.astype(np.float64)
        std = np.sqrt(noise.rgb_sigma ** 2 + noise.rgb_shot * value)
        value += std * rng.standard_normal(value.shape)
        out = np.clip(np.rint(value), 0, 255).astype(np.uint8)
    if noise.jpeg_quality is not None:
        ok, data = cv2.imencode(".jpg", cv2.cvtColor(out, cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, noise.jpeg_quality])
        if not ok:  # pragma: no cover - OpenCV encodes any uint8 image
            raise RuntimeError("OpenCV could not JPEG-encode an RGB image")
        out = cv2.cvtColor(cv2.imdecode(data, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    return out


def edge_pixels(depth: np.ndarray, hit: np.ndarray, threshold: float) -> np.ndarray:
    """Pixels at a depth discontinuity: a hit whose depth differs from a 4-neighbour's (or that borders the
    background) by more than ``threshold`` times the nearer of the two depths, so both sides of a jump are edge
    pixels.

    Args:
        depth: (H, W) metres.
        hit: (H, W) bool, True where a surface was drawn.
        threshold: relative jump (> 0).

    Returns:
        (H, W) bool.
    """
    d = np.where(hit, np.asarray(depth, dtype=np.float64), np.inf)
    edge = np.zeros(d.shape, bool)
    for axis in (0, 1):
        with np.errstate(invalid="ignore"):  # inf - inf between two background pixels: NaN, not an edge (masked)
            jump = np.abs(np.diff(d, axis=axis))
        big = ~(jump <= threshold * np.minimum(np.take(d, range(d.shape[axis] - 1), axis=axis),
                                               np.take(d, range(1, d.shape[axis]), axis=axis)))
        lo = [slice(None)] * 2
        hi = [slice(None)] * 2
        lo[axis] = slice(0, -1)
        hi[axis] = slice(1, None)
        edge[tuple(lo)] |= big
        edge[tuple(hi)] |= big
    return edge & hit


def incidence_degrees(depth: np.ndarray, rays: np.ndarray) -> np.ndarray:
    """Angle between each pixel's ray and its surface's normal, estimated from depth (central differences).

    Args:
        depth: (H, W) metres along the optical axis.
        rays: (2, H, W) normalised image coordinates ``x / z`` and ``y / z`` of each pixel's ray (OpenCV axes).

    Returns:
        (H, W) float64 degrees in [0, 90]; 0 where the normal cannot be estimated (a one-pixel image).
    """
    z = np.asarray(depth, dtype=np.float64)
    pts = np.stack([rays[0] * z, rays[1] * z, z], axis=-1)
    if min(z.shape) < 2:
        return np.zeros(z.shape)
    d_row = np.gradient(pts, axis=0)
    d_col = np.gradient(pts, axis=1)
    n = np.cross(d_col, d_row)
    ray = np.stack([rays[0], rays[1], np.ones_like(z)], axis=-1)
    cos = np.abs((n * ray).sum(-1)) / np.maximum(np.linalg.norm(n, axis=-1) * np.linalg.norm(ray, axis=-1), 1e-300)
    return np.degrees(np.arccos(np.clip(cos, 0.0, 1.0)))


def noisy_depth(depth: np.ndarray, noise: SensorNoise, rng: np.random.Generator, *, near: float, far: float,
                rays: np.ndarray) -> np.ndarray:
    """A depth image as the sensor reads it (see :class:`SensorNoise` for the steps, in order).

    Draws, in order and always whole images (so the stream does not depend on the scene): one standard normal
    per pixel when ``depth_sigma`` is on, one uniform per pixel when ``edge_dropout`` is on, one per pixel when
    ``grazing_dropout`` is on.

    Args:
        depth: (H, W, 1) float32 exact metres, background = ``far``.
        noise: the model (its depth fields).
        rng: the generator to draw from.
        near: the camera's near plane (m).
        far: the camera's far plane (m); depth ``>= far`` is background.
        rays: (2, H, W) normalised image coordinates of each pixel's ray (for grazing angles).

    Returns:
        (H, W, 1) float32 metres; invalid pixels hold ``noise.invalid``.
    """
    exact = np.asarray(depth, dtype=np.float64).reshape(depth.shape[0], depth.shape[1])
    hit = exact < far
    z = exact.copy()
    if any(v > 0.0 for v in noise.depth_sigma):
        z += noise.sigma(exact) * rng.standard_normal(z.shape)
    if noise.depth_step > 0.0:
        z = np.rint(z / noise.depth_step) * noise.depth_step
    invalid = np.zeros(z.shape, bool)
    if noise.depth_range is not None:
        lo, hi = noise.depth_range
        invalid |= hit & ((z < lo) | (z > hi))
        if not lo <= far <= hi:
            invalid |= ~hit
    if noise.edge_dropout > 0.0:
        draw = rng.random(z.shape)
        invalid |= edge_pixels(exact, hit, noise.edge_threshold) & (draw < noise.edge_dropout)
    if noise.grazing_dropout > 0.0:
        draw = rng.random(z.shape)
        grazing = hit & (incidence_degrees(exact, rays) > noise.grazing_angle)
        invalid |= grazing & (draw < noise.grazing_dropout)
    out = np.where(hit, np.clip(z, near, float(np.nextafter(np.float32(far), np.float32(0.0)))), far)
    out = out.astype(np.float32)
    out[invalid] = noise.invalid
    return out[..., None]
