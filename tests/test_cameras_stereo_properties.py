"""Property tests of active stereo (pixelrig.cameras.stereo) aimed at what mutmut found no test pinning (issue 33).

References independent of pixelrig's code: the disparity range by enumeration of the multiples of 16 that fit,
OpenCV's own ``cv2.StereoSGBM`` with the settings ``sgbm_depth`` documents (on a scene where every one of them, and
its neighbour value, changes the disparities), ``fx * baseline / disparity`` with the documented ``[near, far)``
bounds hit exactly, and the infrared image of a black scene without dots. The projector's dot lattice is a fixed
pattern (every ``depth_stereo`` image and recorded dataset depends on it), pinned by a digest.
"""

from __future__ import annotations

import hashlib
import math

import cv2
import numpy as np
import pytest

from pixelrig.cameras.stereo import BLOCK, DOT_DENSITY, MAX_DISPARITIES, _lattice, disparities, infrared, sgbm_depth

# ---- the disparity range, by enumeration ---------------------------------------------------------------------------


@pytest.mark.parametrize("need", [1.0, 16.0, 16.5, 40.0, 77.0, 127.9, 500.0])
def test_the_disparity_range_is_the_least_multiple_of_16_for_near_that_fits(need: float) -> None:
    """Every width from 1 to 400 px: the range is the least multiple of 16 (at least 16) covering ``need = fx *
    baseline / near`` px, unless a larger one is needed than fits: then the largest multiple of 16 that is at most
    MAX_DISPARITIES and leaves BLOCK + 1 columns (``width - n >= BLOCK + 1``); 0 when none does. Widths 16 m + 6
    are the ones where exactly m * 16 fits."""
    fx, baseline = 400.0, 0.05
    near = fx * baseline / need
    for width in range(1, 401):
        fits = [n for n in range(16, MAX_DISPARITIES + 1, 16) if width - n >= BLOCK + 1]
        wanted = next(n for n in range(16, 10_000, 16) if n >= fx * baseline / near)
        expected = min(wanted, max(fits)) if fits else 0
        assert disparities(fx, baseline, near, width) == expected, f"width {width}, need {need}"


# ---- the dot lattice is a fixed pattern ----------------------------------------------------------------------------


LATTICE_SHA256 = "cf2801c5b108b5cca043334f03e34b2c7f37bc0eda8ad24ffd9bab06b206c749"
LATTICE_CORNER = ("###.......#.#.#.",
                  ".#.#....##...#..",
                  ".......#.....###",
                  "...##.##.#.###..",
                  "......###.#.....",
                  ".#.#.#......#.#.",
                  "#.##....#.#.####",
                  "......#.#...#.#.")


def test_the_dot_lattice_is_the_fixed_pattern_every_stereo_image_was_drawn_with() -> None:
    """Lattice points ``(ix, iy)`` for ix, iy in [-300, 300) (360 000 points, more than a 848-px camera's rays reach
    at its pitch, and ~5 of them with the hash exactly at the density threshold): the packed dot bits have the
    recorded digest, the corner (0..15, 0..7) reads as drawn, every value is 0.0 or 1.0 float64, and the density
    is DOT_DENSITY within 0.5%. A change of the hash changes every ``depth_stereo`` image and recorded dataset:
    update the digest only on purpose."""
    iy, ix = np.mgrid[-300:300, -300:300]
    bits = _lattice(ix.astype(np.float64), iy.astype(np.float64))
    assert bits.dtype == np.float64 and set(np.unique(bits)) <= {0.0, 1.0}
    assert abs(bits.mean() - DOT_DENSITY) < 0.005
    corner = bits[300:308, 300:316]
    assert tuple("".join("#" if v else "." for v in row) for row in corner) == LATTICE_CORNER
    assert hashlib.sha256(np.packbits(bits.astype(bool)).tobytes()).hexdigest() == LATTICE_SHA256


# ---- the infrared image --------------------------------------------------------------------------------------------


def test_a_black_scene_without_dots_reads_0_in_infrared() -> None:
    """Black RGB (and RGBA, as the rig hands it) where no dot falls reads 0, not 1; grey 1 and 2 read
    ``rint(0.4 * grey)`` = 0 and 1; a full dot on black reads 160; white with a full dot saturates at 255."""
    rgb = np.zeros((4, 6, 4), np.uint8)
    rgb[1] = 1
    rgb[2] = 2
    rgb[3] = 255
    dots = np.zeros((4, 6))
    dots[0, 3:] = 1.0
    dots[3] = 1.0
    for image in (rgb, rgb[..., :3]):
        out = infrared(image, dots)
        assert out.dtype == np.uint8
        np.testing.assert_array_equal(out, [[0, 0, 0, 160, 160, 160], [0] * 6, [1] * 6, [255] * 6])


# ---- sgbm_depth is OpenCV's SGBM with its documented settings ------------------------------------------------------


DOCUMENTED = dict(minDisparity=0, blockSize=5, P1=8 * 25, P2=32 * 25, disp12MaxDiff=1, uniquenessRatio=10,
                  speckleWindowSize=100, speckleRange=2, preFilterCap=63, mode=cv2.STEREO_SGBM_MODE_SGBM)
"""``sgbm_depth``'s settings as its docstring states them (block 5, P1 = 8 * 25, P2 = 32 * 25, uniqueness 10,
left-right check 1, speckle window 100 and range 2, SGBM's 5-direction mode; OpenCV's usual prefilter cap 63)."""
NEIGHBOURS = dict(minDisparity=1, blockSize=3, P1=9 * 25, P2=33 * 25, disp12MaxDiff=2, uniquenessRatio=11,
                  speckleWindowSize=101, speckleRange=3, preFilterCap=64)
"""One step from each documented setting (blockSize 3 is also OpenCV's default; P1, P2 and the uniqueness ratio 0
are tested as well: OpenCV reads P1 0 as 2 and P2 0 as P1 + 1, and a ratio 0 as no uniqueness check)."""
ZEROS = dict(P1=0, P2=0, uniquenessRatio=0, speckleWindowSize=0)
FX, BASELINE, NUM = 200.0, 0.05, 64


def layered_scene(seed: int, width: int = 192, height: int = 128, boxes: int = 80) -> tuple[np.ndarray, np.ndarray]:
    """A rectified pair: a textured background at disparity 0.75 px (under one pixel), ``boxes`` textured
    fronto-parallel boxes 6-15 px wide at disparities 2-40 px (nearer ones drawn over farther ones, in both views:
    occlusions), a grey noise of sigma 6 levels in each view apart (so uniqueness and the left-right check bite)."""
    gen = np.random.default_rng(seed)
    cols, rows = np.meshgrid(np.arange(width, dtype=np.float32), np.arange(height, dtype=np.float32))

    def textured(d: float) -> tuple[np.ndarray, np.ndarray]:
        tex = cv2.GaussianBlur(gen.integers(0, 256, (height, width + 128)).astype(np.float32), (0, 0), 0.8)
        return (cv2.remap(tex, cols + 64, rows, cv2.INTER_LINEAR),
                cv2.remap(tex, cols + 64 + np.float32(d), rows, cv2.INTER_LINEAR))  # right column u sees left u + d

    left, right = textured(0.75)
    placed = []
    for _ in range(boxes):
        w, h = gen.integers(6, 16, 2)
        x0, y0 = gen.integers(0, width - w), gen.integers(0, height - h)
        placed.append((gen.uniform(2.0, 40.0), x0, y0, w, h))
    for d, x0, y0, w, h in sorted(placed):
        lv, rv = textured(d)
        rows_in = (rows >= y0) & (rows < y0 + h)
        in_left = rows_in & (cols >= x0) & (cols < x0 + w)
        in_right = rows_in & (cols >= x0 - d) & (cols < x0 + w - d)
        left, right = np.where(in_left, lv, left), np.where(in_right, rv, right)
    left = left + gen.normal(0.0, 6.0, left.shape)
    right = right + gen.normal(0.0, 6.0, right.shape)
    return tuple(np.clip(np.rint(v), 0, 255).astype(np.uint8) for v in (left, right))


def opencv_disparity(left: np.ndarray, right: np.ndarray, **changed) -> np.ndarray:
    """OpenCV's SGBM disparities (px) with the documented settings, some changed."""
    return cv2.StereoSGBM.create(numDisparities=NUM, **{**DOCUMENTED, **changed}).compute(left, right) / 16.0


def expected_depth(disparity: np.ndarray, near: float, far: float) -> tuple[np.ndarray, np.ndarray]:
    """``fx * baseline / d`` where SGBM matched (d > 0) and ``near <= z < far``; 0 and invalid elsewhere."""
    valid = np.zeros(disparity.shape, bool)
    z = np.zeros(disparity.shape)
    for (r, c), d in np.ndenumerate(disparity):
        if d > 0:
            depth = FX * BASELINE / d
            if near <= depth < far:
                valid[r, c], z[r, c] = True, depth
    return z, valid


SCENE_SEED = 9  # the first seed where every neighbour value changes the disparities


def test_sgbm_depth_is_opencvs_sgbm_with_the_documented_settings_on_a_scene_where_each_matters() -> None:
    """On a layered scene (occlusions, sub-pixel background, noise) where each documented setting's neighbour value
    (and P1, P2, uniqueness and speckle window 0) changes OpenCV's disparities, ``sgbm_depth`` reads what OpenCV
    reads with the documented settings, converted by ``fx * baseline / d``: with ``near`` 0 (holes stay invalid,
    depth 0 there) and far beyond every reading, the background's disparities under one pixel read too; with
    ``near`` or ``far`` exactly a reading's depth, the reading is valid at ``near`` and invalid at ``far``."""
    left, right = layered_scene(SCENE_SEED)
    reference = opencv_disparity(left, right)
    for name, value in [*NEIGHBOURS.items(), *ZEROS.items()]:
        changed = int((opencv_disparity(left, right, **{name: value}) != reference).sum())
        assert changed > 0, f"{name}={value} no longer changes this scene's disparities: pick another SCENE_SEED"
    assert ((reference > 0) & (reference <= 1.0)).sum() > 100  # sub-pixel readings (the background)
    assert (reference <= 0).sum() > 100  # holes
    at = float(np.median(reference[reference > 1.0]))
    bound = FX * BASELINE / at
    assert (reference == at).sum() > 0
    for near, far in [(0.0, math.inf), (bound, math.inf), (1e-3, bound), (bound, 2.0 * bound)]:
        depth, valid = sgbm_depth(left, right, FX, BASELINE, NUM, near, far)
        z, expected = expected_depth(reference, near, far)
        np.testing.assert_array_equal(valid, expected, err_msg=f"near {near}, far {far}")
        np.testing.assert_array_equal(depth, z, err_msg=f"near {near}, far {far}")
        assert depth.dtype == np.float64
