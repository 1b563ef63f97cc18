"""The pictures for people, written again in the tests from their definitions, so that a test can compare what
pixelrig shows (a window, a video, a page) with a picture that pixelrig's own colouring and tiling code did not make.

Definitions (README: "RGB | depth (near = yellow, far = blue, background black) | labels (one colour per body)";
the docstrings of ``pixelrig.render.convert.colorize_depth`` / ``colorize_labels`` / ``label_palette`` and
``pixelrig.display.mosaic.tile_rig``). The numbers the docstrings leave out (the ramp's five stops, the palette's
saturation and value terms) are pinned here as data, copied from ``pixelrig/render/convert.py``; the arithmetic
(interpolation along the ramp with ``np.interp``, HSV to RGB with ``colorsys``, the tiling) is written anew:

- depth: each image's own foreground range (nearest to farthest pixel nearer than the camera's far plane) is mapped
  linearly onto a colour ramp of five evenly spaced stops, dark blue (far) -> purple -> red -> yellow (near); pixels
  at or beyond the camera's far plane (background) are black.
- labels: body id ``i`` gets the HSV colour with golden-ratio hue ``(0.618033988749895 i + 0.11) mod 1``,
  saturation ``0.65 + 0.3 ((0.37 i) mod 1)`` and value ``0.95 - 0.25 ((0.53 i) mod 1)``; background (-1) black.
- the mosaic: a row per camera, rgb | depth colours | label colours, each tile at the camera's size (a grey tile,
  level 48, for a modality the camera does not return), rows padded with black to the widest, the camera's name
  drawn in the top-left corner of its row (over the rgb tile), every pixel repeated ``scale`` times.

Only numpy and the standard library's ``colorsys`` are used here: nothing from pixelrig.
"""

from __future__ import annotations

import colorsys
from collections.abc import Mapping, Sequence

import numpy as np

DEPTH_RAMP = np.array([[13, 8, 135], [84, 2, 163], [139, 10, 165], [219, 92, 104], [240, 249, 33]], np.float64)
"""The depth ramp's stops, from far (dark blue) to near (yellow), evenly spaced."""

PLACEHOLDER = 48
"""Grey level of a tile for a modality a camera does not return."""

MODALITIES = ("rgb", "depth", "label")

# The README's words, checked on the stops themselves: far is dark and blue, near is bright and yellow.
assert DEPTH_RAMP[0, 2] > 2 * DEPTH_RAMP[0, :2].max() and DEPTH_RAMP[0].sum() < 200
assert min(DEPTH_RAMP[-1, :2]) > 200 and DEPTH_RAMP[-1, 2] < 50


def depth_colors(depth: np.ndarray, far: float | None = None) -> np.ndarray:
    """Expected depth colouring.

    Args:
        depth: (H, W) or (H, W, 1) metres.
        far: the camera's far plane: depth at or beyond it is background (black); None: no background.

    Returns:
        (H, W, 3) uint8 RGB.
    """
    d = np.asarray(depth, np.float64).reshape(np.shape(depth)[:2])
    background = d >= far if far is not None else np.zeros(d.shape, bool)
    fg = d[~background]
    near_end, far_end = (float(fg.min()), float(fg.max())) if fg.size else (0.0, 1.0)
    nearness = 1.0 - np.clip((d - near_end) / (far_end - near_end if far_end > near_end else 1.0), 0.0, 1.0)
    stops = np.linspace(0.0, 1.0, len(DEPTH_RAMP))
    out = np.stack([np.interp(nearness, stops, DEPTH_RAMP[:, c]) for c in range(3)], axis=-1)
    out[background] = 0.0
    return np.rint(out).astype(np.uint8)


def label_color(body: int) -> tuple[int, int, int]:
    """Expected RGB colour of body id ``body`` (>= 0)."""
    hue = (body * 0.618033988749895 + 0.11) % 1.0
    sat = 0.65 + 0.3 * ((body * 0.37) % 1.0)
    val = 0.95 - 0.25 * ((body * 0.53) % 1.0)
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return round(r * 255), round(g * 255), round(b * 255)


def label_colors(label: np.ndarray) -> np.ndarray:
    """Expected label colouring of an (H, W) or (H, W, 1) integer body-id image (-1 = background)."""
    lab = np.asarray(label).reshape(np.shape(label)[:2]).astype(np.int64)
    out = np.zeros((*lab.shape, 3), np.uint8)
    for body in np.unique(lab[lab >= 0]):
        out[lab == body] = label_color(int(body))
    return out


def expected_tiles(obs: Mapping[str, np.ndarray], camera: str, far: float | None) -> dict[str, np.ndarray]:
    """The three tiles of one camera's mosaic row: modality -> (H, W, 3) uint8 (grey where the camera lacks it)."""
    shape = next(np.shape(v)[:2] for k, v in obs.items() if k.startswith(camera + "/"))
    tiles = {}
    for mod in MODALITIES:
        img = obs.get(f"{camera}/{mod}")
        if img is None:
            tiles[mod] = np.full((*shape, 3), PLACEHOLDER, np.uint8)
        elif mod == "rgb":
            tiles[mod] = np.asarray(img)[..., :3].astype(np.uint8)
        elif mod == "depth":
            tiles[mod] = depth_colors(img, far)
        else:
            tiles[mod] = label_colors(img)
    return tiles


CAPTION = 0.6
"""A camera's name is drawn in the top-left corner of a tile: inside its top-left 60% x 60% at the sizes the tests
use (measured: 17 x 27 px of an 84-px tile, 16 x 13 px of a 30-px one, 34 x 76 px of a 252-px one), which the
comparisons below leave out."""


def pane_error(pane: np.ndarray, want: np.ndarray, captioned: bool) -> float:
    """Mean absolute difference (grey levels) of two tiles, leaving out the caption corner where there is one."""
    diff = np.abs(pane.astype(np.float64) - want).mean(axis=-1)
    if captioned:
        h, w = diff.shape
        keep = np.ones((h, w), bool)
        keep[:int(np.ceil(CAPTION * h)), :int(np.ceil(CAPTION * w))] = False
        return float(diff[keep].mean())
    return float(diff.mean())


def _camera_names(obs: Mapping[str, np.ndarray]) -> list[str]:
    return list(dict.fromkeys(k.split("/")[0] for k in obs if "/" in k))


def mosaic_panes(
    got: np.ndarray,
    obs: Mapping[str, np.ndarray],
    far: Mapping[str, float],
    cameras: Sequence[str] | None = None,
    scale: int = 1,
) -> dict[str, float]:
    """Compare a picture of the tiled rig with the mosaic expected from the raw observations, pane by pane.

    Args:
        got: (H, W, 3) the picture shown or written (a screenshot, a decoded video frame, ...).
        obs: the raw observations it shows, ``"<camera>/<modality>"`` -> array.
        far: camera -> far plane (depth at or beyond it is background).
        cameras: the rows, in order (default: the cameras of ``obs`` in order of appearance).
        scale: the integer up-scaling of the tiles.

    Returns:
        ``"<camera>/<modality>"`` -> mean absolute difference (grey levels) between the pane of ``got`` and the
        expected one (the rgb pane without its caption corner).

    Raises:
        AssertionError: ``got`` is not the size of the expected mosaic.
    """
    names = list(cameras) if cameras is not None else _camera_names(obs)
    rows = {name: expected_tiles(obs, name, far.get(name)) for name in names}
    height = scale * sum(t["rgb"].shape[0] for t in rows.values())
    width = scale * max(3 * t["rgb"].shape[1] for t in rows.values())
    assert got.shape == (height, width, 3), f"mosaic shape {got.shape}, expected {(height, width, 3)}"
    errors, y = {}, 0
    for name, tiles in rows.items():
        x = 0
        for mod in MODALITIES:
            want = np.repeat(np.repeat(tiles[mod], scale, axis=0), scale, axis=1)
            h, w = want.shape[:2]
            errors[f"{name}/{mod}"] = pane_error(got[y:y + h, x:x + w], want, captioned=mod == "rgb")
            x += w
        y += h
    return errors


def view_panes(
    got: np.ndarray, obs: Mapping[str, np.ndarray], far: Mapping[str, float], view: str
) -> dict[str, float]:
    """Compare the browser page's picture of one env with the one expected from the raw observations.

    Args:
        got: (H, W, 3) the picture (``compose``'s result, or what the page shows).
        obs: the raw observations, ``"<camera>/<modality>"`` -> array (one env's).
        far: camera -> far plane.
        view: "rgb", "depth" or "label" (that modality of every camera side by side, shorter tiles padded with
            black below, each tile captioned with its camera's name when there are several cameras), or "all"
            (the tiled rig, as :func:`mosaic_panes`).

    Returns:
        ``"<camera>/<view>"`` -> mean absolute difference (grey levels), captions left out.
    """
    if view == "all":
        return mosaic_panes(got, obs, far)
    names = _camera_names(obs)
    tiles = [expected_tiles(obs, name, far.get(name))[view] for name in names]
    shape = (max(t.shape[0] for t in tiles), sum(t.shape[1] for t in tiles), 3)
    assert got.shape == shape, f"{view} view shape {got.shape}, expected {shape}"
    errors, x = {}, 0
    for name, want in zip(names, tiles, strict=True):
        h, w = want.shape[:2]
        errors[f"{name}/{view}"] = pane_error(got[:h, x:x + w], want, captioned=len(names) > 1)
        x += w
    return errors


def off_depth_ramp(img: np.ndarray) -> np.ndarray:
    """(H, W) distance (largest channel difference, grey levels) of each pixel of an (H, W, 3) image from the
    nearest depth colour (the ramp, sampled finely, or background black): near 0 for a depth colouring."""
    nearness = np.linspace(0.0, 1.0, 1025)
    stops = np.linspace(0.0, 1.0, len(DEPTH_RAMP))
    ramp = np.stack([np.interp(nearness, stops, DEPTH_RAMP[:, c]) for c in range(3)], axis=-1)
    colors = np.concatenate([ramp, np.zeros((1, 3))])
    pixels = np.asarray(img, np.float64).reshape(-1, 1, 3)
    return np.abs(pixels - colors[None]).max(axis=-1).min(axis=1).reshape(np.shape(img)[:2])
