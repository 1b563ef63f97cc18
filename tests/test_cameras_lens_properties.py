"""Property tests of the lens (pixelrig.cameras.lens) aimed at what mutmut found no test pinning (issue 33).

Each test's inputs make the parameter it pins matter, and its reference is independent of pixelrig's formulas:
pybullet's own field-of-view frustum, OpenCV (``cv2.projectPoints``, ``cv2.undistortPoints``), the analytic fold
radius of a radial lens, a linear gradient image, and ``scipy.ndimage.map_coordinates`` (bilinear) over inverse
depth. The depth rule's two bounds (:data:`PLANAR_TOL`, :data:`EDGE_JUMP`) are tested with taps just inside and
just outside each, at mean inverse depths far from 1 (0.25 m and 4 m), where a bound scaled the wrong way differs.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pybullet as p
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage

from pixelrig.cameras.lens import (
    EDGE_JUMP,
    PLANAR_TOL,
    Remap,
    check_invertible,
    fov_intrinsics,
    lens_plan,
    undistort_pixels,
)

from .camera_refs import grid, opencv_project

FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None)

STRONG_K = np.array([[30.0, 0.0, 31.0], [0.0, 33.0, 22.0], [0.0, 0.0, 1.0]])  # 64x48, wide, fx != fy
STRONGER = (0.3, 0.4, 0.01, -0.01, 0.3)  # OpenCV's default 5 iterations leave it ~20 px off at the corners


# ---- a field-of-view camera's K is pybullet's frustum ----------------------------------------------------------------


@FEW
@given(st.floats(20.0, 120.0), st.integers(16, 160), st.integers(12, 120),
       st.sampled_from(((0.0, 0.0), (-0.5, -0.5), (0.25, -0.75))), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0),
       st.floats(0.3, 8.0))
def test_fov_intrinsics_are_the_frustum_pybullet_draws(fov, width, height, sampling, a, b, z) -> None:
    """``fov_intrinsics`` is the K of ``p.computeProjectionMatrixFOV(fov, width / height)``: a point inside the
    frustum, through pybullet's matrix and a renderer sampling pixel ``(col, row)`` at NDC ``(2 (col - dx) / W - 1,
    1 - 2 (row - dy) / H)``, lands where ``cv2.projectPoints`` puts it with K (1e-4 px; pybullet's matrix is
    float32); a point on the frustum's top plane (``fov / 2`` above the axis) lands on row ``dy``, one on its right
    plane on column ``W + dx`` (the image's edges: ``f = (H / 2) / tan(fov / 2)``)."""
    near, far = 0.05, 20.0
    k = fov_intrinsics(fov, width, height, sampling)
    proj = np.array(p.computeProjectionMatrixFOV(fov, width / height, near, far)).reshape(4, 4).T
    t = math.tan(math.radians(fov) / 2.0)
    top, right = (0.0, -t, 1.0), (t * width / height, 0.0, 1.0)
    for x, y, zz in ((a * t * width / height * z, b * t * z, z), tuple(z * c for c in top),
                     tuple(z * c for c in right)):
        clip = proj @ np.array([x, -y, -zz, 1.0])  # OpenCV camera axes -> GL eye axes
        ndc = clip[:3] / clip[3]
        col = (ndc[0] + 1.0) * width / 2.0 + sampling[0]
        row = (1.0 - ndc[1]) * height / 2.0 + sampling[1]
        uv, _ = cv2.projectPoints(np.array([[x, y, zz]]), np.zeros(3), np.zeros(3), k, np.zeros(5))
        np.testing.assert_allclose(uv[0, 0], [col, row], atol=1e-4)
    uv, _ = cv2.projectPoints(np.array([top, right]), np.zeros(3), np.zeros(3), k, np.zeros(5))
    assert uv[0, 0, 1] == pytest.approx(sampling[1], abs=1e-9)  # the top plane: row dy
    assert uv[1, 0, 0] == pytest.approx(width + sampling[0], abs=1e-9)  # the right plane: column W + dx


# ---- inverting strong distortion; refusing, and saying why -----------------------------------------------------------


def test_a_lens_opencvs_default_iterations_leave_far_off_is_inverted_and_accepted() -> None:
    """A pincushion lens (every coefficient raising the radius: no fold) that ``cv2.undistortPoints`` with its
    default criteria leaves pixels off (and a pinhole first guess further still) is inverted to 1e-9 px by both the
    full inversion and the border check, which therefore accept it: the 30 iterations asked of OpenCV matter, and
    the distortion handed to it does."""
    pix = grid(64, 48)
    dist = np.array(STRONGER)
    default = cv2.undistortPoints(pix[:, None, :], STRONG_K, dist)[:, 0, :]
    assert np.abs(opencv_project(default, STRONG_K, dist) - pix).max() > 1.0  # the inputs need the 30 iterations
    rays = undistort_pixels(STRONG_K, STRONGER, 64, 48).reshape(2, -1).T
    np.testing.assert_allclose(opencv_project(rays, STRONG_K, dist), pix, atol=1e-9)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 2000, 1e-15)
    reference = cv2.undistortPoints(pix[:, None, :], STRONG_K, dist, criteria=criteria)[:, 0, :]
    np.testing.assert_allclose(rays, reference, atol=1e-9)
    assert check_invertible(STRONG_K, STRONGER, 64, 48) is None


# A barrel lens (k1 < 0 alone): r_d = r (1 + k1 r^2) peaks at r_d = (2/3) / sqrt(-3 k1); no ray reaches a pixel
# whose normalised distorted radius is beyond that.
FOLD_K1 = -0.3
FOLD_K = np.array([[37.0, 0.0, 18.0], [0.0, 40.7, 13.0], [0.0, 0.0, 1.0]])  # 40x30: corner at 0.98 of the fold


def distorted_radius(col: float, row: float) -> float:
    return math.hypot((col - FOLD_K[0, 2]) / FOLD_K[0, 0], (row - FOLD_K[1, 2]) / FOLD_K[1, 1])


def test_the_border_check_refuses_exactly_the_images_that_reach_the_fold() -> None:
    """The analytic fold of a radial lens passes between the 40x30 image's far corner (0.98 of the fold radius)
    and the pixels two rows below or two columns right of it (1.02, 1.05): the 40x30 image is accepted (its border
    only: nothing beyond it is checked) and fully inverted, the 40x32 and 42x30 ones are refused by the border
    check, each message naming the coefficients, how far off, and what to do."""
    dist = (FOLD_K1, 0.0, 0.0, 0.0, 0.0)
    fold = (2.0 / 3.0) / math.sqrt(-3.0 * FOLD_K1)
    beyond = min(distorted_radius(39, 31), distorted_radius(41, 29))  # two rows below, two columns right
    assert distorted_radius(39, 29) < 0.99 * fold < fold * 1.01 < beyond
    assert check_invertible(FOLD_K, dist, 40, 30) is None
    rays = undistort_pixels(FOLD_K, dist, 40, 30).reshape(2, -1).T
    np.testing.assert_allclose(opencv_project(rays, FOLD_K, dist), grid(40, 30), atol=1e-6)
    for width, height in ((40, 32), (42, 30)):
        message = check_invertible(FOLD_K, dist, width, height)
        assert message is not None and message.startswith(f"distortion {dist} cannot be inverted at the image border (")
        assert message.endswith(" px off: the model folds over inside the image); use smaller coefficients or a "
                                "narrower field of view")
        with pytest.raises(ValueError) as refused:
            undistort_pixels(FOLD_K, dist, width, height)
        text = str(refused.value)
        assert text.startswith(f"distortion {dist} cannot be inverted over a {width}x{height} image with this K: "
                               "undistorted rays re-distort up to ")
        assert text.endswith(" px off their pixels (the model folds over inside the image); use smaller "
                             "coefficients or a narrower field of view")


# ---- the remap of colour: bilinear, edges replicated -----------------------------------------------------------------


def test_rgb_is_bilinear_where_the_maps_point() -> None:
    """A linear gradient source (integer levels, a different gradient per channel) remapped through a distorted
    lens's plan reads, at each output pixel, the gradient's value where its map points (within 0.6 of a level:
    the output's rounding plus OpenCV's 1/32 px weights); the nearest source pixel would be up to 2.5 off."""
    plan = lens_plan((50.0, 46.0, 25.3, 16.2), 48, 36, 0.01, 10.0, (0.0, 0.0), (-0.08, 0.02, 0.004, -0.005, 0.01))
    remap = plan.remap
    ws, hs = remap.source_size
    assert 4 * (ws - 1) + (hs - 1) <= 255  # every level fits in uint8
    gradient = [lambda c, r: 4.0 * c + r, lambda c, r: 250.0 - 4.0 * c, lambda c, r: 5.0 + 5.0 * r]
    cols, rows = np.meshgrid(np.arange(ws, dtype=np.float64), np.arange(hs, dtype=np.float64))
    source = np.stack([g(cols, rows) for g in gradient], axis=-1).astype(np.uint8)
    out = remap.rgb(source)
    mx, my = remap.map_x.astype(np.float64), remap.map_y.astype(np.float64)
    expected = np.stack([g(mx, my) for g in gradient], axis=-1)
    assert out.dtype == np.uint8 and out.shape == (36, 48, 3)
    assert np.abs(out - expected).max() <= 0.6
    nearest = np.stack([g(np.rint(mx), np.rint(my)) for g in gradient], axis=-1)
    assert np.abs(nearest - expected).max() > 1.5  # the inputs tell bilinear from nearest


def test_rgb_past_the_source_edge_replicates_the_edge() -> None:
    """A map that points up to a pixel past the source's edges reads the edge pixel (bilinear over a replicated
    border: the gradient at the coordinate clamped into the source), never a black frame."""
    ws, hs = 5, 4
    cols, rows = np.meshgrid(np.arange(ws, dtype=np.float64), np.arange(hs, dtype=np.float64))
    source = np.rint(40.0 * cols + 12.0 * rows + 20.0).astype(np.uint8)[..., None].repeat(3, axis=-1)
    mx = np.array([[-0.8, -0.3, 4.6, 4.2, 2.0, 2.5, -0.6, 4.9]], dtype=np.float32)
    my = np.array([[1.0, 2.0, 1.0, 0.0, -0.7, 3.8, -0.9, 3.6]], dtype=np.float32)
    remap = Remap((ws, hs), np.eye(3), mx, my, np.zeros((1, 8), np.int64), np.zeros((2, 1, 8)),
                  np.zeros((4, 1, 8), np.int64), np.zeros((4, 1, 8)))
    out = remap.rgb(source)
    expected = 40.0 * np.clip(mx, 0, ws - 1) + 12.0 * np.clip(my, 0, hs - 1) + 20.0
    np.testing.assert_allclose(out[..., 0], expected, atol=0.6)
    assert (out[..., 0] == out[..., 2]).all()


# ---- the remap of depth: the smooth rule's bounds ----------------------------------------------------------------


def tap_remap(n: int, ax: float = 0.3, ay: float = 0.6) -> Remap:
    """A remap of a (2, 2n) source onto a (1, n) output: output pixel i samples its own 2x2 block (source columns
    2i, 2i + 1) at fraction (ax, ay); its nearest tap is the block's pixel that point rounds to."""
    i = np.arange(n)
    taps = np.stack([2 * i, 2 * i + 1, 2 * n + 2 * i, 2 * n + 2 * i + 1])[:, None, :]
    w = np.array([(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay])
    weights = np.broadcast_to(w[:, None, None], (4, 1, n)).copy()
    mx = (2 * i + ax)[None].astype(np.float32)
    my = np.full((1, n), ay, np.float32)
    nearest = (round(ay) * 2 * n + 2 * i + round(ax))[None]
    return Remap((2 * n, 2), np.eye(3), mx, my, nearest, np.zeros((2, 1, n)), taps, weights)


def blocks(inverse: list[tuple[float, float, float, float]]) -> np.ndarray:
    """(2, 2n) source depth from each block's inverse depths (i00, i01, i10, i11)."""
    inv = np.array(inverse, dtype=np.float64)
    top = inv[:, :2].ravel()
    bottom = inv[:, 2:].ravel()
    return 1.0 / np.stack([top, bottom])


def bilinear_depth(remap: Remap, metres: np.ndarray) -> np.ndarray:
    """Depth from inverse depth interpolated bilinearly at the maps (scipy's order-1 spline)."""
    coords = np.stack([remap.map_y.ravel().astype(np.float64), remap.map_x.ravel().astype(np.float64)])
    return 1.0 / ndimage.map_coordinates(1.0 / metres, coords, order=1).reshape(remap.map_x.shape)


def test_the_planar_tolerance_scales_with_each_pixels_mean_inverse_depth() -> None:
    """Four taps whose inverse depths' cross difference is 0.8 of ``PLANAR_TOL * mean`` read the bilinear inverse
    depth (scipy's), at 1.2 of it their nearest tap's depth; at 0.25 m (mean inverse depth 4) and at 4 m (0.25) in
    one call, so a tolerance divided by the mean, or a mean over the whole image, decides otherwise."""
    cases = []
    for scale in (4.0, 0.25):
        for within in (0.8, 1.2):
            c = within * PLANAR_TOL  # cross difference scale * c against PLANAR_TOL * scale * (1 + c / 4)
            cases.append((scale, scale, scale, scale * (1.0 + c)))
    remap = tap_remap(len(cases))
    metres = blocks(cases)
    depth, valid, smooth = remap.depth(metres, np.ones_like(metres, bool))
    assert smooth.tolist() == [[True, False, True, False]]
    assert valid.all()
    expected = bilinear_depth(remap, metres)
    np.testing.assert_allclose(depth[smooth], expected[smooth], rtol=1e-7)  # float32 maps
    np.testing.assert_array_equal(depth[~smooth], [0.25, 4.0])  # the nearest tap (i10)
    assert np.abs(expected[~smooth] - depth[~smooth]).min() > 1e-5  # interpolating there would differ


def test_a_planar_jump_past_edge_jump_takes_the_nearest_tap() -> None:
    """Taps on one plane (inverse depth affine: cross difference 0) whose depths span a ratio of 1.08 (under
    ``1 + EDGE_JUMP``) read the bilinear depth; spanning 1.12 or 1.6 (a grazing surface, an edge) they read their
    nearest tap's depth."""
    assert EDGE_JUMP == pytest.approx(0.1)
    cases = [tuple(0.5 * (1.0 + d * s) for d in (0, 1, 1, 2)) for s in (0.04, 0.06, 0.3)]
    remap = tap_remap(len(cases))
    metres = blocks(cases)
    ratios = metres.reshape(2, -1, 2).max(axis=(0, 2)) / metres.reshape(2, -1, 2).min(axis=(0, 2))
    np.testing.assert_allclose(ratios, [1.08, 1.12, 1.6])
    depth, valid, smooth = remap.depth(metres, np.ones_like(metres, bool))
    assert smooth.tolist() == [[True, False, False]] and valid.all()
    np.testing.assert_allclose(depth[0, 0], bilinear_depth(remap, metres)[0, 0], rtol=1e-7)
    np.testing.assert_array_equal(depth[0, 1:], metres[1, [2, 4]])  # the nearest tap (i10)


def test_depth_handed_as_float32_is_interpolated_in_float64() -> None:
    """A wall 1.5 m away, parallel to the image (its depth exact in float32), handed over as a renderer's float32
    buffer, reads 1.5 m to 1e-12 (inverse depth rounded to float32 would be 3e-8 off)."""
    remap = tap_remap(3, ax=0.37, ay=0.81)
    metres = np.full((2, 6), 1.5, np.float32)
    depth, valid, smooth = remap.depth(metres, np.ones((2, 6), bool))
    assert smooth.all() and valid.all() and depth.dtype == np.float64
    np.testing.assert_allclose(depth, 1.5, rtol=1e-12)


def test_a_uint8_validity_mask_reads_as_bool() -> None:
    """Validity handed as a 0/255 uint8 mask (OpenCV's) gives the same depth, validity and smoothness as the bool
    mask, as bool arrays: a pixel with an invalid tap takes its nearest tap's reading."""
    cases = [(2.0, 2.0, 2.0, 2.0)] * 3
    remap = tap_remap(3)
    metres = blocks(cases)
    mask = np.ones((2, 6), bool)
    mask[0, 1] = False  # block 0: an invalid tap that is not the nearest: nearest's point, valid
    mask[1, 4] = False  # block 2: the nearest tap invalid: no reading
    reference = remap.depth(metres, mask)
    got = remap.depth(metres, np.where(mask, 255, 0).astype(np.uint8))
    for a, b in zip(reference, got, strict=True):
        assert b.dtype == a.dtype
        np.testing.assert_array_equal(a, b)
    assert reference[1].dtype == bool and reference[1].tolist() == [[True, True, False]]
    assert reference[2].tolist() == [[False, True, False]]
