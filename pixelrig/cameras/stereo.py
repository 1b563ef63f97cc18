"""Active stereo depth (the ``"depth_stereo"`` modality): a right view drawn ``stereo_baseline`` metres along the
camera's +x, a dot pattern projected from between the two imagers onto both views, and OpenCV's semi-global block
matcher (``cv2.StereoSGBM``) turning the pair into depth, with the holes and edge artefacts the method has.

The pattern is computed per pixel in numpy from each view's own depth (every renderer, no shader): each pixel's
surface point is put in the projector's frame and the pattern is looked up where the projector sends that ray.
It ignores projector shadows (a point the projector cannot see still gets its dot), surface orientation, albedo
and distance fall-off of the dots, and the difference between infrared and visible reflectance (the infrared
image is the RGB image's grey level plus the dots). Everything here is deterministic: no random generator.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

DOT_PITCH_PX = 2.0
"""Spacing of the projector's dot lattice, in the camera's pixels (at its focal length)."""
DOT_DENSITY = 0.35
"""Fraction of lattice points that carry a dot."""
AMBIENT = 0.4
"""Weight of the RGB image's grey level in the infrared image (the dots add up to 160 levels)."""
DOT_LEVELS = 160.0
MAX_DISPARITIES = 128
"""Largest disparity searched (pixels; OpenCV wants a multiple of 16): a RealSense D4xx searches 128 at full
resolution. Points nearer than ``fx * baseline / numDisparities`` read invalid."""
BLOCK = 5
"""SGBM's matching block size (pixels, odd)."""


def disparities(fx: float, baseline: float, near: float, width: int) -> int:
    """The disparity range searched (``numDisparities``): enough for ``near``, a multiple of 16, at most
    :data:`MAX_DISPARITIES` and leaving at least ``BLOCK`` columns to match; 0 when the image is too narrow."""
    want = int(math.ceil(fx * baseline / near / 16.0)) * 16
    room = (width - BLOCK - 1) // 16 * 16
    return max(0, min(max(want, 16), MAX_DISPARITIES, room))


def _lattice(ix: np.ndarray, iy: np.ndarray) -> np.ndarray:
    """1.0 where lattice point ``(ix, iy)`` carries a dot (an integer hash: the same pattern everywhere, always)."""
    h = (ix.astype(np.int64) * 0x27D4EB2D + iy.astype(np.int64) * 0x165667B1) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
    h ^= h >> 12
    h = (h * 0x297A2D39) & 0xFFFFFFFF
    h ^= h >> 15
    return ((h & 0xFFFF) < int(DOT_DENSITY * 0x10000)).astype(np.float64)


def dot_pattern(rays: np.ndarray, depth: np.ndarray, hit: np.ndarray, offset: float, pitch: float) -> np.ndarray:
    """The projector's dots as a view sees them.

    Args:
        rays: (2, H, W) normalised coordinates of each pixel's ray in the view's camera frame (OpenCV axes).
        depth: (H, W) metres along the view's optical axis.
        hit: (H, W) bool, True where a surface was drawn (dots fall on surfaces only).
        offset: the projector's x in the view's camera frame (m; it looks along the view's +z, unrotated).
        pitch: lattice spacing in normalised projector coordinates (radians, small-angle).

    Returns:
        (H, W) float64 dot brightness in [0, 1] (bilinear between lattice points).
    """
    z = np.where(hit, np.asarray(depth, dtype=np.float64), 1.0)
    px = (rays[0] * z - offset) / z / pitch
    py = rays[1] / pitch
    x0, y0 = np.floor(px), np.floor(py)
    ax, ay = px - x0, py - y0
    out = ((1 - ax) * (1 - ay) * _lattice(x0, y0) + ax * (1 - ay) * _lattice(x0 + 1, y0)
           + (1 - ax) * ay * _lattice(x0, y0 + 1) + ax * ay * _lattice(x0 + 1, y0 + 1))
    return np.where(hit, np.minimum(out, 1.0), 0.0)  # the weights sum to 1 but for rounding: 1 + 2e-16 at a dot


def infrared(rgb: np.ndarray, dots: np.ndarray) -> np.ndarray:
    """(H, W) uint8 infrared image: the grey level of ``rgb`` (H, W, 3) uint8 times :data:`AMBIENT` plus the dots."""
    grey = cv2.cvtColor(np.ascontiguousarray(rgb[..., :3]), cv2.COLOR_RGB2GRAY).astype(np.float64)
    return np.clip(np.rint(AMBIENT * grey + DOT_LEVELS * dots), 0, 255).astype(np.uint8)


def sgbm_depth(left: np.ndarray, right: np.ndarray, fx: float, baseline: float, num_disparities: int,
               near: float, far: float) -> tuple[np.ndarray, np.ndarray]:
    """Depth from a rectified infrared pair with ``cv2.StereoSGBM`` (1/16-pixel disparities).

    Settings: block 5, P1 = 8 * 25, P2 = 32 * 25, uniqueness 10, left-right check (``disp12MaxDiff`` 1), speckle
    filter (window 100, range 2), SGBM's 5-direction mode. The leftmost ``num_disparities`` columns cannot be
    matched and read invalid, as on a real sensor.

    Args:
        left: (H, W) uint8 left infrared image (the camera's own view).
        right: (H, W) uint8 right infrared image (``baseline`` metres along the left camera's +x).
        fx: horizontal focal length in pixels.
        baseline: metres.
        num_disparities: disparity range searched (a multiple of 16, see :func:`disparities`).
        near: readings nearer than this are invalid (m).
        far: readings at or beyond this are invalid (m).

    Returns:
        ``((H, W) float64 metres, (H, W) bool valid)``.
    """
    sgbm = cv2.StereoSGBM.create(minDisparity=0, numDisparities=num_disparities, blockSize=BLOCK,
                                 P1=8 * BLOCK * BLOCK, P2=32 * BLOCK * BLOCK, disp12MaxDiff=1, uniquenessRatio=10,
                                 speckleWindowSize=100, speckleRange=2, preFilterCap=63,
                                 mode=cv2.STEREO_SGBM_MODE_SGBM)
    disparity = sgbm.compute(np.ascontiguousarray(left), np.ascontiguousarray(right)).astype(np.float64) / 16.0
    valid = disparity > 0.0
    z = np.where(valid, fx * baseline / np.where(valid, disparity, 1.0), 0.0)
    valid &= (z >= near) & (z < far)
    return np.where(valid, z, 0.0), valid
