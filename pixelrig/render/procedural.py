"""Seeded procedural images, made with numpy alone (no data files): the texture and background families of looks
randomisation. The same (family, seed, size) gives the same pixels in every process and on every machine (integer
seeds into numpy's PCG64, float64 arithmetic, no library randomness)."""

from __future__ import annotations

import math

import numpy as np

FAMILIES = ("noise", "checkers", "stripes", "gradient", "marble")
"""The procedural families, by name."""


def _colors(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random RGB colours (float64, 0..255), kept apart in brightness so that the pattern shows."""
    out = rng.uniform(0.0, 255.0, size=(n, 3))
    if n > 1 and abs(out[0].mean() - out[1].mean()) < 60.0:
        out[1] = 255.0 - out[0]
    return out


def _grid(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates scaled to [0, 1) along the longer side: (y, x), each (H, W) float64."""
    scale = float(max(height, width))
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    return (y + 0.5) / scale, (x + 0.5) / scale


def value_noise(rng: np.random.Generator, height: int, width: int, cells: int, octaves: int = 4) -> np.ndarray:
    """Smooth fractal noise in [0, 1], (H, W) float64: random values on a ``cells`` grid, interpolated with a
    smoothstep, summed over octaves of doubling frequency and halving weight."""
    y, x = _grid(height, width)
    total = np.zeros((height, width))
    weight, norm = 1.0, 0.0
    for octave in range(octaves):
        n = cells * (1 << octave)
        lattice = rng.random((n + 1, n + 1))
        gy, gx = y * n, x * n
        iy, ix = np.floor(gy).astype(int), np.floor(gx).astype(int)
        fy, fx = gy - iy, gx - ix
        sy, sx = fy * fy * (3 - 2 * fy), fx * fx * (3 - 2 * fx)
        top = lattice[iy, ix] * (1 - sx) + lattice[iy, ix + 1] * sx
        bottom = lattice[iy + 1, ix] * (1 - sx) + lattice[iy + 1, ix + 1] * sx
        total += weight * (top * (1 - sy) + bottom * sy)
        norm += weight
        weight *= 0.5
    return total / norm


def _mix(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    return a[None, None, :] * (1.0 - t[..., None]) + b[None, None, :] * t[..., None]


def procedural_image(family: str, seed: int, size: tuple[int, int] = (64, 64)) -> np.ndarray:
    """An image of a procedural family.

    Args:
        family: one of :data:`FAMILIES`: "noise" (smooth fractal noise between two colours), "checkers" (two colours,
            2 to 8 squares along the longer side, turned by a random angle), "stripes" (two colours, 2 to 10 stripes,
            a random angle and duty), "gradient" (two or three colours along a random direction), "marble" (veins:
            a sine of position bent by fractal noise).
        seed: any integer >= 0.
        size: (height, width) in pixels.

    Returns:
        (H, W, 3) uint8.

    Raises:
        ValueError: an unknown family (the message lists them), a negative seed, or a side < 1.
    """
    if family not in FAMILIES:
        raise ValueError(f"procedural family {family!r} is not one of {FAMILIES}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"procedural seed={seed!r} must be an integer >= 0")
    height, width = (int(v) for v in size)
    if height < 1 or width < 1:
        raise ValueError(f"procedural size={size!r} must be (height, width) >= 1")
    rng = np.random.Generator(np.random.PCG64([int(seed), FAMILIES.index(family)]))
    y, x = _grid(height, width)
    angle = rng.uniform(0.0, math.pi)
    along = x * math.cos(angle) + y * math.sin(angle)
    if family == "noise":
        a, b = _colors(rng, 2)
        out = _mix(a, b, value_noise(rng, height, width, int(rng.integers(2, 6))))
    elif family == "checkers":
        a, b = _colors(rng, 2)
        n = int(rng.integers(2, 9))
        across = -x * math.sin(angle) + y * math.cos(angle)
        parity = (np.floor(along * n) + np.floor(across * n)) % 2
        out = _mix(a, b, parity)
    elif family == "stripes":
        a, b = _colors(rng, 2)
        n, duty = int(rng.integers(2, 11)), rng.uniform(0.3, 0.7)
        out = _mix(a, b, ((along * n) % 1.0 < duty).astype(np.float64))
    elif family == "gradient":
        stops = _colors(rng, int(rng.integers(2, 4)))
        t = (along - along.min()) / max(float(np.ptp(along)), 1e-12) * (len(stops) - 1)
        k = np.minimum(np.floor(t).astype(int), len(stops) - 2)
        out = np.empty((height, width, 3))
        for i in range(len(stops) - 1):
            mask = k == i
            out[mask] = _mix(stops[i], stops[i + 1], t - i)[mask]
    else:  # marble
        a, b = _colors(rng, 2)
        turbulence = value_noise(rng, height, width, int(rng.integers(2, 5)), octaves=5)
        veins = 0.5 + 0.5 * np.sin((along * rng.uniform(3.0, 8.0) + turbulence * rng.uniform(3.0, 6.0)) * 2 * math.pi)
        out = _mix(a, b, veins ** rng.uniform(0.5, 3.0))
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)
