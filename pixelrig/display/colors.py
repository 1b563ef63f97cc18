"""Colourings for people: depth as a colour ramp, labels as a palette (numpy only)."""

from __future__ import annotations

import numpy as np

# A perceptually ordered colour ramp (dark blue -> teal -> yellow), sampled at 5 stops and interpolated.
_DEPTH_STOPS = np.array(
    [[13, 8, 135], [84, 2, 163], [139, 10, 165], [219, 92, 104], [240, 249, 33]], dtype=np.float64
)


def colorize_depth(
    depth: np.ndarray, near: float | None = None, far: float | None = None, background: float | None = None
) -> np.ndarray:
    """Colour-map a depth image for people: near = bright yellow, far = dark blue, background black.

    Args:
        depth: (H, W) or (H, W, 1) depth in metres.
        near: depth drawn brightest; defaults to the nearest pixel.
        far: depth drawn darkest; defaults to the farthest non-background pixel.
        background: depth at or beyond which a pixel is background (a camera's ``far``), drawn black.

    Returns:
        (H, W, 3) uint8 RGB image.
    """
    d = np.asarray(depth, dtype=np.float64).reshape(np.shape(depth)[0], np.shape(depth)[1])
    bg = d >= background if background is not None else np.zeros(d.shape, dtype=bool)
    fg = d[~bg]
    lo = float(near) if near is not None else (float(fg.min()) if fg.size else 0.0)
    hi = float(far) if far is not None else (float(fg.max()) if fg.size else 1.0)
    span = hi - lo if hi > lo else 1.0
    t = 1.0 - np.clip((d - lo) / span, 0.0, 1.0)  # 1 = near
    pos = t * (len(_DEPTH_STOPS) - 1)
    i0 = np.clip(np.floor(pos).astype(np.int64), 0, len(_DEPTH_STOPS) - 2)
    frac = (pos - i0)[..., None]
    rgb = _DEPTH_STOPS[i0] * (1.0 - frac) + _DEPTH_STOPS[i0 + 1] * frac
    rgb[bg] = 0.0
    return np.rint(rgb).astype(np.uint8)


def label_palette(n: int) -> np.ndarray:
    """A deterministic, well-separated palette: (n, 3) uint8, colour i for label i (golden-ratio hues)."""
    i = np.arange(n, dtype=np.float64)
    hue = (i * 0.618033988749895 + 0.11) % 1.0
    sat = 0.65 + 0.3 * ((i * 0.37) % 1.0)
    val = 0.95 - 0.25 * ((i * 0.53) % 1.0)
    h6 = hue * 6.0
    c = val * sat
    x = c * (1.0 - np.abs(h6 % 2.0 - 1.0))
    m = val - c
    sector = np.floor(h6).astype(np.int64) % 6
    zeros = np.zeros_like(c)
    table = np.stack(
        [
            np.stack([c, x, zeros], -1),
            np.stack([x, c, zeros], -1),
            np.stack([zeros, c, x], -1),
            np.stack([zeros, x, c], -1),
            np.stack([x, zeros, c], -1),
            np.stack([c, zeros, x], -1),
        ]
    )
    rgb = table[sector, np.arange(n)] + m[:, None]
    return np.rint(rgb * 255.0).astype(np.uint8)


def colorize_labels(label: np.ndarray) -> np.ndarray:
    """Colour-map a label image for people: each body id its own colour, background black.

    Args:
        label: (H, W) or (H, W, 1) integer body ids, -1 = background.

    Returns:
        (H, W, 3) uint8 RGB image. The colour of an id does not depend on which other ids are present.
    """
    lab = np.asarray(label).reshape(np.shape(label)[0], np.shape(label)[1]).astype(np.int64)
    top = int(lab.max()) if lab.size else -1
    palette = label_palette(max(top + 1, 1))
    out = np.zeros((*lab.shape, 3), dtype=np.uint8)
    fg = lab >= 0
    out[fg] = palette[lab[fg]]
    return out
