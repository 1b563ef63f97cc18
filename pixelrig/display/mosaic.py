"""Tiling a rig's images into one picture for people: a row per camera, rgb | depth colours | label colours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np

from pixelrig.display.colors import colorize_depth, colorize_labels

PLACEHOLDER = 48  # grey level of a tile for a modality a camera does not return


def camera_names(frames: Mapping[str, np.ndarray]) -> list[str]:
    """Camera names in order of first appearance among ``"<camera>/<modality>"`` keys (other keys ignored)."""
    names: list[str] = []
    for key in frames:
        cam, sep, _ = key.partition("/")
        if sep and cam not in names:
            names.append(cam)
    return names


def tile_rig(
    frames: Mapping[str, np.ndarray],
    *,
    depth_ranges: Mapping[str, tuple[float, float]] | None = None,
    cams: Sequence[str] | None = None,
    scale: int = 1,
    captions: bool = True,
) -> np.ndarray:
    """Tile a rig's frames: one row per camera with its rgb | depth colour map | label colour map.

    Args:
        frames: ``{"<camera>/<modality>": array}`` as PixelObs returns (other keys, like "state", are ignored).
        depth_ranges: camera -> (near, far); depth at or beyond far is drawn black (background). Without it the
            colour map spans each image's own range.
        cams: which cameras, in which order (default: order of appearance).
        scale: integer up-scaling of every tile (nearest neighbour, so pixels stay visible).
        captions: draw the camera name on each row.

    Returns:
        (H, W, 3) uint8 image; rows narrower or shorter than the largest are padded with black.
    """
    if scale < 1:
        raise ValueError(f"scale={scale!r} must be an integer >= 1")
    names = list(cams) if cams is not None else camera_names(frames)
    if not names:
        raise ValueError("tile_rig: no '<camera>/<modality>' keys in frames")
    rows = []
    for name in names:
        shape = next(v.shape[:2] for k, v in frames.items() if k.startswith(name + "/"))
        tiles = []
        for mod in ("rgb", "depth", "label"):
            img = frames.get(f"{name}/{mod}")
            if img is None:
                tile = np.full((*shape, 3), PLACEHOLDER, np.uint8)
            elif mod == "rgb":
                tile = np.asarray(img, np.uint8)
            elif mod == "depth":
                near_far = (depth_ranges or {}).get(name)
                tile = colorize_depth(img, background=near_far[1]) if near_far else colorize_depth(img)
            else:
                tile = colorize_labels(img)
            tiles.append(tile)
        row = np.concatenate(tiles, axis=1)
        if scale > 1:
            row = np.repeat(np.repeat(row, scale, axis=0), scale, axis=1)
        if captions:
            row = np.ascontiguousarray(row)
            caption(row, name)
        rows.append(row)
    width = max(r.shape[1] for r in rows)
    rows = [np.pad(r, ((0, 0), (0, width - r.shape[1]), (0, 0))) for r in rows]
    return np.concatenate(rows, axis=0)


def caption(img: np.ndarray, text: str) -> None:
    """Draw ``text`` in the top-left corner, white on a dark box, sized to the image (in place)."""
    h = img.shape[0]
    font_scale = max(0.3, min(1.0, h / 260.0))
    thickness = 1 if font_scale < 0.7 else 2
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thickness)
    cv2.rectangle(img, (0, 0), (tw + 6, th + base + 6), (0, 0, 0), thickness=-1)
    cv2.putText(img, text, (3, th + 3), cv2.FONT_HERSHEY_SIMPLEX, font_scale, (255, 255, 255), thickness,
                cv2.LINE_AA)
