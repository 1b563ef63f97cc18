"""Property tests of the sensor models, with inputs that make every documented parameter matter (issue 33).

The lens against OpenCV (every distortion coefficient non-zero, fx != fy, off-centre principal points), the noise
model against the documented draws from the generator it is handed (depths straddling the valid range's bounds,
asymmetric dropout probabilities), stereo geometry (disparity <-> depth with fx != fy and several baselines), the
sensor timeline against a reference clock written here, and the presets against what the documentation states.
Hypothesis draws the inputs; OpenCV and analytic scenes (planes) are the references, never pixelrig's own code.
"""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import cv2
import numpy as np
import pybullet as p
import pytest
from gymnasium.utils import seeding
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from pixelrig import Camera, PixelObs
from pixelrig.cameras.lens import check_invertible, lens_plan, projection_from_intrinsics, redistort, undistort_pixels
from pixelrig.cameras.noise import SensorNoise, edge_pixels, incidence_degrees, noisy_depth, noisy_rgb
from pixelrig.cameras.presets import PRESETS
from pixelrig.cameras.sensors import SensorTimeline
from pixelrig.cameras.stereo import (
    AMBIENT,
    BLOCK,
    DOT_DENSITY,
    DOT_LEVELS,
    MAX_DISPARITIES,
    disparities,
    dot_pattern,
    infrared,
    sgbm_depth,
)

from .camera_refs import UnboundRig, grid, opencv_project
from .worlds import BuiltByFunctionEnv

ROOT = Path(__file__).resolve().parent.parent
# Derandomised (the same examples every run: a mutant is killed or not, never by luck) and without a database.
FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None)
SOME = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def signed(lo: float, hi: float) -> st.SearchStrategy[float]:
    """A float whose magnitude is in [lo, hi], either sign (never 0: the parameter always matters)."""
    return st.tuples(st.sampled_from((-1.0, 1.0)), st.floats(lo, hi)).map(lambda t: t[0] * t[1])


def k_matrix(fx: float, fy: float, cx: float, cy: float) -> np.ndarray:
    return np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])


# ---- the lens, against OpenCV --------------------------------------------------------------------------------------


W, H = 48, 36


@st.composite
def lenses(draw) -> tuple[tuple[float, float, float, float], tuple[float, ...]]:
    """Non-square pixels (fy/fx in [0.75, 0.92] or [1.08, 1.3]), a principal point 2-6 px off centre each way, and
    every one of (k1, k2, p1, p2, k3) non-zero and large enough to move some pixel by 0.02 px or more."""
    fx = draw(st.floats(40.0, 60.0))
    fy = fx * draw(st.one_of(st.floats(0.75, 0.92), st.floats(1.08, 1.3)))
    cx = (W - 1) / 2 + draw(signed(2.0, 6.0))
    cy = (H - 1) / 2 + draw(signed(2.0, 6.0))
    dist = (draw(signed(0.03, 0.12)), draw(signed(0.01, 0.03)), draw(signed(0.003, 0.008)),
            draw(signed(0.003, 0.008)), draw(signed(0.02, 0.04)))
    return (fx, fy, cx, cy), dist


@FEW
@given(lenses())
def test_undistorted_rays_redistort_onto_their_pixels_with_opencv(lens) -> None:
    """Each pixel's undistorted ray (``undistort_pixels``) goes back onto its own pixel through
    ``cv2.projectPoints`` with the full (k1, k2, p1, p2, k3) within 1e-6 px, and agrees with ``cv2.undistortPoints``
    (run long) to 1e-7. The inputs are checked to be discriminating: zeroing any one coefficient moves some ray's
    pixel by >= 0.02 px (k3 ignored: 0.47 px with k3 = 0.03 at 96x72, issue 33)."""
    (fx, fy, cx, cy), dist = lens
    k = k_matrix(fx, fy, cx, cy)
    try:
        rays = undistort_pixels(k, dist, W, H)
    except ValueError:  # the model folds over inside the image: refused, nothing to compare
        assume(False)
    pix = grid(W, H)
    norm = rays.reshape(2, -1).T
    np.testing.assert_allclose(opencv_project(norm, k, dist), pix, atol=1e-6)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 500, 1e-15)
    reference = cv2.undistortPoints(pix[:, None, :], k, np.asarray(dist), criteria=criteria)[:, 0, :]
    assume(float(np.abs(opencv_project(reference, k, dist) - pix).max()) < 1e-9)  # OpenCV converged here
    np.testing.assert_allclose(norm, reference, atol=1e-7)
    for i in range(5):  # the inputs tell right from wrong: each coefficient moves some pixel (a narrow lens may not)
        without = list(dist)
        without[i] = 0.0
        assume(np.abs(opencv_project(norm, k, without) - pix).max() >= 0.02)


@FEW
@given(lenses(), st.floats(0.6, 2.0), signed(0.1, 0.4), signed(0.1, 0.4))
def test_a_distorted_plane_reads_its_analytic_depth(lens, distance: float, gx: float, gy: float) -> None:
    """A tilted plane ``z = distance + gx x + gy y`` (camera frame) drawn in the lens plan's wider pinhole source
    image, remapped: every distorted pixel reads the depth where the plane meets that pixel's ray, the ray from
    ``cv2.undistortPoints`` (relative 1e-6; inverse depth is affine over the source, so bilinear taps are exact);
    the remap's maps sample the source where that ray lands through the source K (1e-3 px, float32 maps)."""
    (fx, fy, cx, cy), dist = lens
    try:
        plan = lens_plan((fx, fy, cx, cy), W, H, 0.01, 10.0, (0.0, 0.0), dist)
    except ValueError:
        assume(False)
    remap = plan.remap
    ws, hs = remap.source_size
    sk = remap.source_k
    src = grid(ws, hs)
    sx, sy = (src[:, 0] - sk[0, 2]) / sk[0, 0], (src[:, 1] - sk[1, 2]) / sk[1, 1]
    # the plane z = d + gx X + gy Y with X = x z, Y = y z: z = d / (1 - gx x - gy y)
    denominator = 1.0 - gx * sx - gy * sy
    assume(denominator.min() > 0.2)  # the plane is in front of the camera over the whole source
    source_depth = (distance / denominator).reshape(hs, ws)
    k = k_matrix(fx, fy, cx, cy)
    pix = grid(W, H)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 500, 1e-15)
    ray = cv2.undistortPoints(pix[:, None, :], k, np.asarray(dist), criteria=criteria)[:, 0, :]
    assume(float(np.abs(opencv_project(ray, k, dist) - pix).max()) < 1e-7)
    expected = (distance / (1.0 - gx * ray[:, 0] - gy * ray[:, 1])).reshape(H, W)
    depth, valid, smooth = remap.depth(source_depth, np.ones((hs, ws), bool))
    assert valid.all() and smooth.all()
    np.testing.assert_allclose(depth, expected, rtol=1e-6)
    np.testing.assert_allclose(remap.map_x, (ray[:, 0] * sk[0, 0] + sk[0, 2]).reshape(H, W), atol=1e-3)
    np.testing.assert_allclose(remap.map_y, (ray[:, 1] * sk[1, 1] + sk[1, 2]).reshape(H, W), atol=1e-3)
    assert remap.map_x.min() >= 1.0 and remap.map_x.max() <= ws - 2.0  # bilinear taps inside the source
    assert remap.map_y.min() >= 1.0 and remap.map_y.max() <= hs - 2.0


STRONG_K = np.array([[30.0, 0.0, 31.0], [0.0, 33.0, 22.0], [0.0, 0.0, 1.0]])  # 64x48, wide, fx != fy
STRONG = (0.3, 0.15, 0.01, -0.01, 0.05)  # OpenCV's 30 iterations leave 4.4e-3 px at its corners: Newton must finish
FOLDS = (-0.3, 0.08, 0.004, -0.003, -0.01)  # folds over inside the image: no ray maps to its corners


def test_strong_distortion_is_inverted_to_machine_precision() -> None:
    """Where OpenCV's fixed-point iteration stops short (4.4e-3 px, beyond the 1e-3 px tolerance), the Newton steps
    bring every pixel's ray back onto its pixel within 1e-9 px; a lens that folds over is refused by both the cheap
    border check and the full inversion, naming its coefficients."""
    cols, rows = np.meshgrid(np.arange(64.0), np.arange(48.0))
    pix = np.stack([cols.ravel(), rows.ravel()], axis=-1)
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-12)
    opencv = cv2.undistortPoints(pix[:, None, :], STRONG_K, np.array(STRONG), criteria=crit)[:, 0, :]
    assert np.abs(redistort(opencv, STRONG_K, np.array(STRONG)) - pix).max() > 1e-3  # the inputs need the refinement
    rays = undistort_pixels(STRONG_K, STRONG, 64, 48).reshape(2, -1).T
    assert np.abs(redistort(rays, STRONG_K, np.array(STRONG)) - pix).max() < 1e-9
    assert check_invertible(STRONG_K, STRONG, 64, 48) is None
    message = check_invertible(STRONG_K, FOLDS, 64, 48)
    assert message is not None and str(FOLDS) in message and "folds over" in message
    with pytest.raises(ValueError, match=re.escape(f"distortion {FOLDS} cannot be inverted over a 64x48 image")):
        undistort_pixels(STRONG_K, FOLDS, 64, 48)


@SOME
@given(st.floats(30.0, 200.0), st.floats(0.6, 1.6), signed(1.0, 15.0), signed(1.0, 10.0),
       st.sampled_from(((0.0, 1.0), (0.5, 0.5), (0.0, 0.0), (0.25, -0.75))),
       st.floats(-0.6, 0.6), st.floats(-0.45, 0.45), st.floats(0.3, 8.0))
def test_the_projection_of_intrinsics_draws_points_where_opencv_puts_them(fx, ratio, dcx, dcy, sampling, x, y, z):
    """A camera-frame point, through ``projection_from_intrinsics`` and a renderer with pixel sampling (dx, dy)
    (it samples pixel (col, row) at NDC ``(2 (col - dx) / W - 1, 1 - 2 (row - dy) / H)``), lands on the pixel
    ``cv2.projectPoints`` gives with K (1e-6 px), and its z-buffer value converts back to its depth."""
    width, height, near, far = 64, 48, 0.1, 20.0
    k = k_matrix(fx, fx * ratio, (width - 1) / 2 + dcx, (height - 1) / 2 + dcy)
    proj = np.array(projection_from_intrinsics((k[0, 0], k[1, 1], k[0, 2], k[1, 2]), width, height, near, far,
                                               sampling)).reshape(4, 4).T
    point = np.array([x * z, y * z, z])
    clip = proj @ np.array([point[0], -point[1], -point[2], 1.0])  # OpenCV axes -> GL eye axes
    ndc = clip[:3] / clip[3]
    col = (ndc[0] + 1.0) * width / 2.0 + sampling[0]
    row = (1.0 - ndc[1]) * height / 2.0 + sampling[1]
    uv, _ = cv2.projectPoints(point[None, :], np.zeros(3), np.zeros(3), k, np.zeros(5))
    np.testing.assert_allclose([col, row], uv[0, 0], atol=1e-6)
    d = (ndc[2] + 1.0) / 2.0
    assert far * near / (far - (far - near) * d) == pytest.approx(z, rel=1e-9)


@SOME
@given(st.floats(30.0, 200.0), st.floats(0.6, 1.6), signed(1.0, 15.0), signed(1.0, 10.0))
def test_pinhole_rays_are_opencvs(fx, ratio, dcx, dcy) -> None:
    """A camera without distortion: each pixel's ray is ``cv2.undistortPoints`` of its centre with K (fx != fy,
    principal point off centre), 1e-12."""
    width, height = 40, 30
    k = (fx, fx * ratio, (width - 1) / 2 + dcx, (height - 1) / 2 + dcy)
    plan = lens_plan(k, width, height, 0.01, 10.0, (0.0, 0.0), None)
    pix = grid(width, height)
    ray = cv2.undistortPoints(pix[:, None, :], k_matrix(*k), np.zeros(5))[:, 0, :]
    np.testing.assert_allclose(plan.rays.reshape(2, -1).T, ray, atol=1e-12)
    assert plan.remap is None and plan.draw_size == (width, height)


# ---- noise, against the documented draws ---------------------------------------------------------------------------


def reference_rgb(rgb: np.ndarray, sigma: float, shot: float, rng: np.random.Generator) -> np.ndarray:
    """SensorNoise's documented RGB model: one standard normal per channel value, ``value + N(0, sqrt(sigma**2 +
    shot value))``, rounded and clipped to [0, 255]."""
    value = rgb.astype(np.float64)
    noisy = value + np.sqrt(sigma ** 2 + shot * value) * rng.standard_normal(value.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def reference_depth(exact: np.ndarray, noise: SensorNoise, rng: np.random.Generator, near: float, far: float,
                    edge: np.ndarray, grazing: np.ndarray) -> np.ndarray:
    """SensorNoise's documented depth steps, in order, with the documented draws (a standard normal per pixel when
    depth_sigma is on, then a uniform per pixel for edges, then one for grazing), given the edge and grazing masks.
    (H, W) float64 in, (H, W) float64 out."""
    a, b = noise.depth_sigma
    hit = exact < far
    z = exact.copy()
    if a > 0 or b > 0:
        z = z + (a + b * exact * exact) * rng.standard_normal(z.shape)
    if noise.depth_step > 0:
        z = np.rint(z / noise.depth_step) * noise.depth_step
    invalid = np.zeros(z.shape, bool)
    if noise.depth_range is not None:
        lo, hi = noise.depth_range
        invalid |= hit & ((z < lo) | (z > hi))  # outside (min, max): the bounds themselves are readings
        if not lo <= far <= hi:
            invalid |= ~hit
    if noise.edge_dropout > 0:
        invalid |= edge & (rng.random(z.shape) < noise.edge_dropout)
    if noise.grazing_dropout > 0:
        invalid |= grazing & (rng.random(z.shape) < noise.grazing_dropout)
    out = np.where(hit, np.clip(z, near, np.nextafter(np.float32(far), np.float32(0.0))), far)
    return np.where(invalid, noise.invalid, out)


def assert_depth_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Same invalid pixels (NaN where NaN), same readings within float32 rounding."""
    actual = actual.reshape(expected.shape).astype(np.float64)
    assert (np.isnan(actual) == np.isnan(expected)).all()
    np.testing.assert_allclose(actual, expected.astype(np.float32), rtol=1e-6, atol=0)


@st.composite
def ranged_noise(draw) -> tuple[SensorNoise, float, float]:
    """A noise model with both a and b non-zero, a step, a range, invalid 0 or NaN; near and far, far inside or
    outside the range."""
    lo = float(np.float32(draw(st.floats(0.1, 1.0))))  # float32 values: an image can hold the bound exactly
    hi = float(np.float32(lo + draw(st.floats(0.5, 3.0))))
    far = draw(st.sampled_from((hi + 1.0, 0.5 * (lo + hi))))
    noise = SensorNoise(depth_sigma=(draw(st.floats(0.0005, 0.005)), draw(st.floats(0.001, 0.01))),
                        depth_step=draw(st.sampled_from((0.0, 0.001, 0.004))), depth_range=(lo, hi),
                        invalid=draw(st.sampled_from((0.0, "nan"))))
    return noise, 0.05, far


@SOME
@given(ranged_noise(), st.integers(0, 2**32 - 1))
@example((SensorNoise(depth_sigma=(0.002, 0.004), depth_range=(0.28, 10.0), invalid="nan"), 0.05, 12.0), 0)
def test_depth_near_the_range_bounds_is_the_documented_draw(case, seed: int) -> None:
    """Exact depths within 3 sigma (or 3 depth steps) of the range's bounds (either side), at the bounds themselves
    and the background: the noisy image is exactly the documented model (noise from the generator handed in, rounding,
    invalid outside the range judged on the noisy reading, the background invalid when far is out of range,
    clipping to [near, far)); about as many pixels fall either side of each bound."""
    noise, near, far = case
    lo, hi = noise.depth_range
    gen = np.random.default_rng(seed)
    side = 64
    exact = np.empty((side, side))
    for rows, bound in ((slice(0, 28), lo), (slice(28, 56), min(hi, far - 0.01))):
        spread = max(float(noise.sigma(bound)), noise.depth_step)  # noise or rounding: whichever is coarser
        exact[rows] = bound + spread * gen.uniform(-3.0, 3.0, (28, side))
    exact[56:60] = far  # background
    exact[60:62] = lo  # at the bounds: readings, without noise (see below)
    exact[62:64] = min(hi, far - 0.01)
    exact = exact.astype(np.float32).astype(np.float64)
    rng = np.random.default_rng(seed + 1)
    out = noisy_depth(exact[..., None].astype(np.float32), noise, copy.deepcopy(rng), near=near, far=far,
                      rays=np.zeros((2, side, side)))
    assert out.shape == (side, side, 1) and out.dtype == np.float32
    none = np.zeros(exact.shape, bool)
    expected = reference_depth(exact, noise, rng, near, far, none, none)
    assert_depth_equal(out[..., 0], expected)
    bad = np.isnan(expected) if noise.invalid_is_nan else expected == 0.0
    assert 0.2 < bad[:28].mean() < 0.8  # the noise moves readings across the lower bound both ways
    assert bad[56:60].all() == (not lo <= far <= hi)
    # at a bound exactly, without noise or rounding, a pixel reads: the range is closed
    exact_only = SensorNoise(depth_range=(lo, hi), invalid=noise.invalid)
    plain = noisy_depth(exact[60:64, :, None].astype(np.float32), exact_only, np.random.default_rng(0), near=near,
                        far=far, rays=np.zeros((2, 4, side)))[..., 0]
    assert not (np.isnan(plain) | (plain == 0.0))[exact[60:64] <= hi].any()


@st.composite
def step_scenes(draw) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray]:
    """A tilted plane (seen by a pinhole K with fx != fy) with a nearer block in front and a patch of background:
    (exact depth, rays, far, edge mask, grazing mask), the masks computed analytically (edges: a 4-neighbour's
    depth differs by more than threshold times the nearer one, or is background; grazing: the angle between the
    plane's normal and the ray)."""
    side = 40
    k = k_matrix(40.0, 40.0 * draw(st.floats(0.7, 0.9)), 19.5 + draw(signed(1.0, 4.0)), 19.5 + draw(signed(1.0, 4.0)))
    cols, rows = np.meshgrid(np.arange(side, dtype=np.float64), np.arange(side, dtype=np.float64))
    rays = np.stack([(cols - k[0, 2]) / k[0, 0], (rows - k[1, 2]) / k[1, 1]])
    gx = draw(st.floats(1.5, 2.5))  # steep: a good part of the plane is grazing
    distance = draw(st.floats(1.0, 2.0))
    denominator = 1.0 - gx * rays[0] * 0.5
    z = distance / denominator
    normal = np.array([-0.5 * gx, 0.0, 1.0])
    ray3 = np.stack([rays[0], rays[1], np.ones_like(z)], axis=-1)
    cos = np.abs(ray3 @ normal) / (np.linalg.norm(ray3, axis=-1) * np.linalg.norm(normal))
    angle = np.degrees(np.arccos(np.clip(cos, 0.0, 1.0)))
    far = 10.0
    hit = np.ones(z.shape, bool)
    r0, c0 = draw(st.integers(5, 15)), draw(st.integers(5, 15))
    block = (slice(r0, r0 + 12), slice(c0, c0 + 12))
    z[block] = 0.5 * z[block].min()  # a jump of 2x: an edge at any threshold below 1
    angle[block] = np.degrees(np.arccos(1.0 / np.linalg.norm(ray3[block], axis=-1)))  # fronto-parallel
    z[:3, -6:] = far  # background
    hit[:3, -6:] = False
    z = z.astype(np.float32).astype(np.float64)
    edge = np.zeros(z.shape, bool)
    for axis in (0, 1):
        a, b = np.moveaxis(z, axis, 0)[:-1], np.moveaxis(z, axis, 0)[1:]
        ha, hb = np.moveaxis(hit, axis, 0)[:-1], np.moveaxis(hit, axis, 0)[1:]
        big = (np.abs(a - b) > 0.05 * np.minimum(a, b)) | ~ha | ~hb
        np.moveaxis(edge, axis, 0)[:-1] |= big
        np.moveaxis(edge, axis, 0)[1:] |= big
    edge &= hit
    surface = np.where(hit, 1, 0)
    surface[block] = 2
    padded = np.pad(surface, 1, mode="edge")
    interior = np.ones(z.shape, bool)
    for dr in (0, 1, 2):
        for dc in (0, 1, 2):
            interior &= padded[dr:dr + side, dc:dc + side] == surface
    return z, rays, far, edge, (angle, hit, interior & hit)


@SOME
@given(step_scenes(), st.floats(0.1, 0.4) | st.floats(0.6, 0.9), st.floats(0.1, 0.4) | st.floats(0.6, 0.9),
       st.floats(40.0, 70.0), st.integers(0, 2**32 - 1))
def test_dropouts_are_the_documented_draws_at_asymmetric_probabilities(scene, pe: float, pg: float, angle: float,
                                                                       seed: int) -> None:
    """Depth noise, then edge and grazing dropouts at probabilities away from 0.5 (where p and 1 - p agree): the
    image is exactly the documented model with the documented draws (a normal per pixel, a uniform per pixel for
    edges, another for grazing) on analytically found edge and grazing pixels; the dropped fractions are p."""
    z, rays, far, edge, (incidence, hit, interior) = scene
    # a normal estimated from depth is the surface's where the 3x3 neighbourhood is one surface (checked against
    # the plane's); elsewhere (beside an edge) the estimate is what the model documents: take it there. Pixels
    # numerically at the threshold are skipped.
    estimated = incidence_degrees(z, rays)
    keep = np.abs(np.where(interior, incidence, estimated) - angle) >= 0.05
    grazing = hit & (np.where(interior, incidence, estimated) > angle)
    assume(grazing.sum() > 100 and edge.sum() > 40)
    noise = SensorNoise(depth_sigma=(0.001, 0.002), edge_dropout=pe, edge_threshold=0.05, grazing_dropout=pg,
                        grazing_angle=angle, invalid="nan")
    np.testing.assert_array_equal(edge_pixels(z, hit, 0.05), edge)
    np.testing.assert_array_equal((estimated > angle)[keep & interior], grazing[keep & interior])
    rng = np.random.default_rng(seed)
    out = noisy_depth(z[..., None].astype(np.float32), noise, copy.deepcopy(rng), near=0.05, far=far, rays=rays)[..., 0]
    expected = reference_depth(z, noise, rng, 0.05, far, edge, grazing)
    assert_depth_equal(out[keep], expected[keep])
    for only, prob in ((edge & ~grazing, pe), (grazing & ~edge, pg)):
        if only.sum() >= 40:
            assert abs(np.isnan(out)[only].mean() - prob) < 0.2


def test_an_edge_is_a_jump_of_more_than_the_threshold() -> None:
    """Depths 1 and 1.0625 m (exact in binary): a jump of exactly ``threshold`` times the nearer depth is no edge, one
    a hair more is; a pixel beside the background is one."""
    z = np.array([[1.0, 1.0625, 1.0625]])
    hit = np.array([[True, True, False]])
    assert edge_pixels(z, hit, 0.0625).tolist() == [[False, True, False]]  # beside the background only
    assert edge_pixels(z, hit, 0.0624).tolist() == [[True, True, False]]
    assert edge_pixels(z[:, :2], hit[:, :2], 0.0625).tolist() == [[False, False]]
    # the documented rule takes the nearer depth: 1.0 -> 1.0525 is a jump of 0.0525 > 0.05 x 1.0, though less than
    # 0.05 x 1.0525, so the far side is an edge pixel too
    z2, hit2 = np.array([[1.0, 1.0525]]), np.array([[True, True]])
    assert edge_pixels(z2, hit2, 0.05).tolist() == [[True, True]]


@SOME
@given(st.floats(0.5, 6.0), st.floats(0.05, 1.0), st.one_of(st.none(), st.integers(5, 95)), st.integers(0, 2**32 - 1))
def test_rgb_noise_is_the_documented_draw(sigma: float, shot: float, quality, seed: int) -> None:
    """Read and shot noise together (levels from 0 to 255, so clipping happens) are exactly the documented model
    drawn from the generator handed in; a JPEG round trip keeps each channel's colour (a red patch stays red, a blue
    one blue) and stays close."""
    gen = np.random.default_rng(seed)
    rgb = gen.integers(0, 256, (24, 32, 3)).astype(np.uint8)
    rgb[:, :, :] = np.where(rgb < 12, 0, rgb)
    rgb[:4, :4] = 255
    rng = np.random.default_rng(seed ^ 0xABCDEF)
    out = noisy_rgb(rgb, SensorNoise(rgb_sigma=sigma, rgb_shot=shot), copy.deepcopy(rng))
    np.testing.assert_array_equal(out, reference_rgb(rgb, sigma, shot, rng))
    if quality is not None:
        patches = np.zeros((32, 32, 3), np.uint8)
        patches[:, :16] = (200, 30, 40)
        patches[:, 16:] = (30, 40, 200)
        jpeg = noisy_rgb(patches, SensorNoise(jpeg_quality=quality), np.random.default_rng(0)).astype(int)
        assert (jpeg[4:28, 2:12, 0] - jpeg[4:28, 2:12, 2] > 100).all()  # red stays red
        assert (jpeg[4:28, 20:30, 2] - jpeg[4:28, 20:30, 0] > 100).all()  # blue stays blue


@FEW
@given(st.floats(0.0005, 0.004), st.floats(0.002, 0.02), st.floats(0.3, 3.0), st.floats(1.0, 60.0),
       st.floats(0.05, 0.8), st.floats(40.0, 200.0), st.integers(0, 2**32 - 1))
def test_noise_statistics_follow_the_model(a, b, z, sigma, shot, level, seed) -> None:
    """Over 20,000 pixels: depth error std within 5% of ``a + b z**2`` and mean within 3% of it; RGB error std within
    5% of ``sqrt(sigma**2 + shot level)`` (levels away from clipping)."""
    n = (100, 200)
    rng = np.random.default_rng(seed)
    depth = np.full((*n, 1), z, np.float32)
    err = noisy_depth(depth, SensorNoise(depth_sigma=(a, b)), rng, near=0.01, far=10.0,
                      rays=np.zeros((2, *n)))[..., 0].astype(np.float64) - np.float32(z)
    model = a + b * z * z
    assert abs(err.std() / model - 1.0) < 0.05 and abs(err.mean()) < 0.03 * model
    sd = math.sqrt(sigma ** 2 + shot * level)
    assume(level - 4 * sd > 0 and level + 4 * sd < 255)
    grey = np.full((*n, 3), round(level), np.uint8)
    rgb_err = noisy_rgb(grey, SensorNoise(rgb_sigma=sigma, rgb_shot=shot), rng).astype(np.float64) - round(level)
    expected = math.sqrt(sigma ** 2 + shot * round(level) + 1 / 12)  # + rounding to whole levels
    assert abs(rgb_err.std() / expected - 1.0) < 0.05


# ---- stereo geometry -----------------------------------------------------------------------------------------------


@FEW
@given(st.floats(80.0, 400.0), st.floats(0.015, 0.1), st.integers(6, 40), st.integers(0, 2**32 - 1))
def test_sgbm_depth_of_a_shifted_texture_is_fx_baseline_over_disparity(fx, baseline, shift, seed) -> None:
    """A random texture and the same texture ``shift`` columns to the left (a fronto-parallel plane at disparity
    ``shift``): depth is ``fx * baseline / shift`` on the matched pixels; a near plane just beyond the plane's depth
    invalidates it all (and a far plane just before it)."""
    width, height = 128, 48
    gen = np.random.default_rng(seed)
    texture = cv2.resize(gen.integers(0, 256, (height // 2, (width + 64) // 2)).astype(np.uint8), None, fx=2.0,
                         fy=2.0, interpolation=cv2.INTER_NEAREST)
    left = np.ascontiguousarray(texture[:height, :width])
    right = np.ascontiguousarray(texture[:height, shift:shift + width])
    z = fx * baseline / shift
    near = 0.5 * z
    num = disparities(fx, baseline, near, width)
    assume(num > shift + 2 and width - num > 30)
    depth, valid = sgbm_depth(left, right, fx, baseline, num, near, 100.0 * z)
    matched = valid[:, num + BLOCK:-BLOCK]
    assert matched.mean() > 0.9
    inside = depth[:, num + BLOCK:-BLOCK][matched]
    assert np.median(inside) == pytest.approx(z, rel=1e-9)
    assert np.abs(fx * baseline / inside - shift).max() <= 0.13  # SGBM's 1/16 px steps, a step or two off
    assert (depth[~valid] == 0.0).all()
    _, valid_near = sgbm_depth(left, right, fx, baseline, num, 1.05 * z, 100.0 * z)
    _, valid_far = sgbm_depth(left, right, fx, baseline, num, near, 0.95 * z)
    assert not valid_near[:, num + BLOCK:-BLOCK].any() and not valid_far[:, num + BLOCK:-BLOCK].any()


@SOME
@given(st.floats(20.0, 2000.0), st.floats(0.005, 0.2), st.floats(0.01, 2.0), st.integers(1, 1500))
def test_the_disparity_search_covers_near_within_its_limits(fx, baseline, near, width) -> None:
    """``disparities``: a multiple of 16, at most 128, leaving at least BLOCK columns to match, 0 only when not
    even 16 fit; enough for ``near`` (``fx * baseline / near``) unless a limit stops it; no more than 16 beyond."""
    n = disparities(fx, baseline, near, width)
    need = fx * baseline / near
    assert n % 16 == 0 and 0 <= n <= MAX_DISPARITIES
    if n == 0:
        assert width - BLOCK - 1 < 16
        return
    assert width - n >= BLOCK + 1
    capped = n + 16 > MAX_DISPARITIES or width - (n + 16) < BLOCK + 1
    assert n >= need or capped
    assert n < need + 16 or n == 16


@SOME
@given(st.floats(60.0, 300.0), st.floats(0.6, 1.4), st.floats(0.02, 0.1), st.integers(3, 30), signed(0.0, 30.0),
       st.floats(1.5, 4.0))
@example(60.0, 1.25, 0.0625, 4, -1.5, 1.5)  # a dot's bilinear weights summed to 1 + 2e-16 (found by a fresh run)
def test_the_projected_dots_stay_on_the_surface_between_the_two_views(fx, ratio, baseline, shift, dcx, pitch_px):
    """The projector (between the imagers, ``offset`` +b/2 in the left view's frame, -b/2 in the right's) puts its
    dots on the surface: on a fronto-parallel plane at disparity ``shift`` the right view's dots at column ``u -
    shift`` are the left view's at ``u`` (fx != fy, off-centre principal point); about DOT_DENSITY of the lattice
    carries a dot; nothing lands where no surface was drawn."""
    width, height = 96, 40
    fy = fx * ratio
    k = k_matrix(fx, fy, (width - 1) / 2 + dcx, (height - 1) / 2)
    cols, rows = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    rays = np.stack([(cols - k[0, 2]) / fx, (rows - k[1, 2]) / fy])
    z = fx * baseline / shift
    depth = np.full((height, width), z)
    hit = np.ones((height, width), bool)
    hit[:, :4] = False
    pitch = pitch_px / fx
    left = dot_pattern(rays, depth, hit, 0.5 * baseline, pitch)
    right = dot_pattern(rays, depth, hit, -0.5 * baseline, pitch)
    np.testing.assert_allclose(right[:, 4:width - shift], left[:, 4 + shift:], atol=1e-9)
    assert (left[:, :4] == 0.0).all() and left.min() >= 0.0 and left.max() <= 1.0
    lattice = dot_pattern(np.stack(np.meshgrid(np.arange(400.0), np.arange(400.0))) * 0.01, np.ones((400, 400)),
                          np.ones((400, 400), bool), 0.0, 0.01)  # one pixel per lattice point: 0 or 1
    assert abs(lattice.mean() - DOT_DENSITY) < 0.01


@FEW
@given(st.integers(0, 2**32 - 1))
def test_the_infrared_image_is_ambient_grey_plus_dots(seed: int) -> None:
    """The infrared image: OpenCV's grey level of the RGB image (RGB order) times AMBIENT plus DOT_LEVELS per dot,
    rounded and clipped to 8 bits."""
    gen = np.random.default_rng(seed)
    rgb = gen.integers(0, 256, (20, 30, 3)).astype(np.uint8)
    dots = gen.uniform(0.0, 1.0, (20, 30))
    dots[:5] = 0.0
    dots[5:8] = 1.0
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(np.float64)
    out = infrared(rgb, dots)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.clip(np.rint(AMBIENT * grey + DOT_LEVELS * dots), 0, 255))
    assert (out[:5] == np.rint(AMBIENT * grey[:5])).all()


def wall_world() -> BuiltByFunctionEnv:
    """A grey wall turned 20 degrees about z (no texture of its own), 1 m along +x of the origin."""

    def build(env: BuiltByFunctionEnv) -> None:
        c = env.client
        col = p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.05, 3.0, 3.0), physicsClientId=c)
        vis = p.createVisualShape(p.GEOM_BOX, halfExtents=(0.05, 3.0, 3.0), rgbaColor=(0.7, 0.7, 0.7, 1),
                                  physicsClientId=c)
        env.wall = env.load_body("wall", p.createMultiBody(0, col, vis, (1.05, 0.0, 1.0),
                                                           p.getQuaternionFromEuler((0.0, 0.0, 0.35)),
                                                           physicsClientId=c))

    return BuiltByFunctionEnv(build, renderer="tiny")


def test_stereo_with_non_square_off_centre_pixels_reads_the_wall_at_its_depth() -> None:
    """Two stereo cameras with fy = 0.8 fx and fy = 1.25 fx, principal points off centre, baselines 50 and 80 mm:
    depth_stereo on a wall 1 m away agrees with exact depth (median within 1.5%, 90% of the wall's pixels
    matched). Reading fx as fy puts the wall 20% nearer or 25% farther."""
    common = {"eye": (0.0, 0.0, 1.0), "target": (1.0, 0.0, 1.0), "width": 192, "height": 144, "near": 0.05,
              "far": 5.0, "modalities": ("depth", "depth_stereo", "label"),
              "noise": SensorNoise(depth_range=(0.5, 4.0))}  # the disparity search starts at 0.5 m
    cams = [Camera("a", intrinsics=(160.0, 128.0, 90.3, 77.6), stereo_baseline=0.05, **common),
            Camera("b", intrinsics=(120.0, 150.0, 101.2, 64.9), stereo_baseline=0.08, **common)]
    env = PixelObs(wall_world(), cams=cams, pixels_only=True)
    try:
        env.reset(seed=0)
        obs = env.render_rig()  # exact depth (no noise) and the stereo depth
        for cam in cams:
            name = cam.name
            band = disparities(cam.intrinsics[0], cam.stereo_baseline, cam.stereo_min_depth, cam.width) + BLOCK
            wall = obs[f"{name}/label"][..., 0] == 0
            wall[:, :band] = False
            wall[:, -BLOCK:] = False
            stereo = obs[f"{name}/depth_stereo"][..., 0].astype(np.float64)
            exact = obs[f"{name}/depth"][..., 0].astype(np.float64)
            valid = wall & (stereo > 0)
            assert wall.sum() > 3000 and valid.sum() >= 0.9 * wall.sum(), name
            ratio = np.median(stereo[valid] / exact[valid])
            assert abs(ratio - 1.0) <= 0.015, f"{name}: stereo / exact depth = {ratio:.4f}"
    finally:
        env.close()


# ---- the sensor timeline, against a reference clock ---------------------------------------------------------------


def tiny_camera(i: int, period: int, latency: int, noise: SensorNoise | None = None) -> Camera:
    return Camera(f"c{i}", eye=(1.0, 0.0, 1.0), target=(0.0, 0.0, 0.0), width=6, height=4, near=0.1, far=5.0,
                  period=period, latency=latency, noise=noise, modalities=("rgb", "depth"))


def pictures(cams, tag: int) -> dict[str, np.ndarray]:
    """Exact images whose values name the picture: rgb = tag % 200 + 20 + camera, depth 0.5 + tag / 1000 m."""
    out = {}
    for i, cam in enumerate(cams):
        out[f"{cam.name}/rgb"] = np.full((cam.height, cam.width, 3), tag % 200 + 20 + i, np.uint8)
        out[f"{cam.name}/depth"] = np.full((cam.height, cam.width, 1), 0.5 + tag / 1000.0 + i / 10.0, np.float32)
    return out


cameras_st = st.lists(st.tuples(st.integers(1, 4), st.integers(0, 3)), min_size=1, max_size=3)


@SOME
@given(cameras_st, st.lists(st.integers(0, 12), min_size=1, max_size=3), st.integers(0, 40))
def test_the_timeline_shows_the_picture_of_the_reference_clock(specs, episodes, snap_at) -> None:
    """Camera (period k, latency d) at step t shows the picture taken at step ``k * floor(max(t - d, 0) / k)`` of the
    same episode; ``due()`` names exactly the cameras with ``(t + 1) % k == 0`` (all at a reset); a timeline restored
    from ``state()`` at any step goes on identically."""
    cams = [tiny_camera(i, k, d) for i, (k, d) in enumerate(specs)]
    timeline = SensorTimeline(UnboundRig(cams))
    twin: SensorTimeline | None = None
    count = 0
    for episode, length in enumerate(episodes):
        timeline.start_episode()
        if twin is not None:
            twin.start_episode()
        for t in range(length + 1):
            due = timeline.due()
            if t == 0 or not any(cam.timed for cam in cams):
                assert due is None
            else:
                assert due == [i for i, cam in enumerate(cams) if t % cam.period == 0]
            if twin is not None:
                assert twin.due() == due
            tag = 100 * episode + t
            shown = timeline.observe(pictures(cams, tag))
            assert timeline.step == t
            for cam in cams:
                source = cam.period * (max(t - cam.latency, 0) // cam.period)
                np.testing.assert_array_equal(shown[f"{cam.name}/rgb"],
                                              pictures(cams, 100 * episode + source)[f"{cam.name}/rgb"],
                                              err_msg=f"episode {episode} step {t} {cam.name}")
            if twin is not None:
                for key, value in twin.observe(pictures(cams, tag)).items():
                    np.testing.assert_array_equal(value, shown[key])
            count += 1
            if count == snap_at:
                twin = SensorTimeline(UnboundRig(cams))
                twin.set_state(copy.deepcopy(timeline.state()))


noisy_cams_st = st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2), st.booleans(), st.booleans()), min_size=1,
                         max_size=3)


@SOME
@given(noisy_cams_st, st.integers(0, 2**31 - 1), st.integers(1, 8))
def test_timeline_noise_is_its_own_stream_drawn_when_a_picture_is_taken(specs, seed: int, snap_at: int) -> None:
    """Noise is drawn when a picture is taken, cameras in rig order, RGB before depth, from the timeline's own
    generator seeded from the episode's seed as a stream apart from the env's (gymnasium seeds the env's
    ``np_random`` from the same seed): each observation equals the documented models applied with a copy of that
    generator, a repeated picture repeats its noise, and ``state()`` carries the stream."""
    cams = []
    for i, (k, d, rgb_on, depth_on) in enumerate(specs):
        noise = SensorNoise(rgb_sigma=3.0 if rgb_on else 0.0, rgb_shot=0.2 if rgb_on else 0.0,
                            depth_sigma=(0.002, 0.01) if depth_on or not rgb_on else (0.0, 0.0))
        cams.append(tiny_camera(i, k, d, noise))
    timeline = SensorTimeline(UnboundRig(cams))
    timeline.seed(seed)
    env_rng, _ = seeding.np_random(seed)
    first = copy.deepcopy(timeline.rng).standard_normal(64)
    assert abs(np.corrcoef(first, env_rng.standard_normal(64))[0, 1]) < 0.7  # not the env's stream
    timeline.start_episode()
    taken: list[dict[str, np.ndarray]] = []  # each step's noisy pictures, per the reference
    twin = None
    for t in range(12):
        rng = copy.deepcopy(timeline.rng)
        exact = pictures(cams, t)
        now = {}
        for cam in cams:
            if t % cam.period:
                continue
            noise = cam.noise
            key = cam.name
            now[f"{key}/rgb"] = (reference_rgb(exact[f"{key}/rgb"], noise.rgb_sigma, noise.rgb_shot, rng)
                                 if noise.rgb else exact[f"{key}/rgb"])
            if noise.depth:
                z = reference_depth(exact[f"{key}/depth"][..., 0].astype(np.float64), noise, rng, cam.near, cam.far,
                                    np.zeros((cam.height, cam.width), bool), np.zeros((cam.height, cam.width), bool))
                now[f"{key}/depth"] = z[..., None]
            else:
                now[f"{key}/depth"] = exact[f"{key}/depth"]
        taken.append(now)
        shown = timeline.observe(exact)
        if twin is not None:
            again = twin.observe(exact)
            for key in shown:
                np.testing.assert_array_equal(again[key], shown[key])
        assert rng.bit_generator.state == timeline.rng.bit_generator.state  # nothing else drawn
        for cam in cams:
            source = cam.period * (max(t - cam.latency, 0) // cam.period)
            np.testing.assert_array_equal(shown[f"{cam.name}/rgb"], taken[source][f"{cam.name}/rgb"])
            assert_depth_equal(shown[f"{cam.name}/depth"][..., 0], taken[source][f"{cam.name}/depth"][..., 0])
        if t == snap_at:
            twin = SensorTimeline(UnboundRig(cams))
            twin.set_state(copy.deepcopy(timeline.state()))


# ---- presets, against the documentation ----------------------------------------------------------------------------


def documentation() -> str:
    """README.md and docs/*.md, whitespace collapsed (a statement may move between them or wrap anywhere)."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return " ".join(" ".join(path.read_text(encoding="utf-8").split()) for path in paths if path.exists())


def documented(pattern: str) -> re.Match[str]:
    """The one statement of the documentation that ``pattern`` matches (whitespace in it matches any run of it)."""
    found = list(re.finditer(pattern, documentation()))
    assert found, f"the documentation no longer states {pattern!r}"
    assert len({m.groups() for m in found}) == 1, f"the documentation states {pattern!r} differently in places"
    return found[0]


NUM = r"(\d+(?:\.\d+)?)"
RES = r"(\d+)x(\d+)"


def test_presets_are_what_the_documentation_states() -> None:
    """Each preset's field of view, baseline, depth range, default and offered resolutions, the square-pixel
    intrinsics from the horizontal field of view with the principal point at the centre (pixel centres at integers),
    the 1 mm depth step and Intel's RMS model ``z**2 * 0.08 / (f * baseline)`` (1.4 cm at 2 m for the D435 at 848 px),
    read from the README / docs text, not from the presets' own table."""
    m = documented(rf"Intel RealSense D435 \({NUM}×{NUM}°, {NUM} mm baseline, depth {NUM}-{NUM} m\) and D405 "
                   rf"\({NUM}×{NUM}°, {NUM} mm, {NUM}-{NUM} m\) at their depth resolutions \({RES} or {RES} by "
                   r"default; ([\dx, ]+)\)")
    g = m.groups()
    sheets = {"d435": (float(g[0]), float(g[2]) / 1000, (float(g[3]), float(g[4])), (int(g[10]), int(g[11]))),
              "d405": (float(g[5]), float(g[7]) / 1000, (float(g[8]), float(g[9])), (int(g[12]), int(g[13])))}
    offered = {tuple(int(v) for v in r.split("x")) for r in g[14].split(", ")}
    assert len(offered) == 6
    step = documented(r"centre, the stereo baseline, the depth range, (\d+) mm depth steps")
    rms = documented(rf"`z² × {NUM} / \(f × baseline\)` \({NUM} cm at {NUM} m for the D435 at (\d+) px\)")
    subpixel = float(rms.group(1))
    assert set(PRESETS) == set(sheets)
    for name, (hfov, baseline, depth_range, default) in sheets.items():
        cam = Camera.preset(name, name="c", eye=(1.0, 0.0, 1.0), target=(0.0, 0.0, 0.0))
        assert (cam.width, cam.height) == default, name
        for size in offered:
            cam = Camera.preset(name, name="c", resolution=size, eye=(1.0, 0.0, 1.0), target=(0.0, 0.0, 0.0))
            width, height = size
            f = 0.5 * width / math.tan(math.radians(hfov) / 2.0)
            assert cam.intrinsics == pytest.approx((f, f, (width - 1) / 2, (height - 1) / 2), rel=1e-12), (name, size)
            assert cam.stereo_baseline == pytest.approx(baseline, rel=1e-12)
            assert cam.noise.depth_range == pytest.approx(depth_range, rel=1e-12)
            assert cam.noise.depth_step == pytest.approx(int(step.group(1)) / 1000.0, rel=1e-12)
            assert cam.near < depth_range[0] and cam.far > depth_range[1]
            for z in (0.1, 0.7, 2.0, 6.0):
                assert cam.noise.sigma(z) == pytest.approx(z * z * subpixel / (f * baseline), rel=1e-9)
    d435 = sheets["d435"]
    f = 0.5 * int(rms.group(4)) / math.tan(math.radians(d435[0]) / 2.0)
    z = float(rms.group(3))
    assert z * z * subpixel / (f * d435[1]) * 100 == pytest.approx(float(rms.group(2)), abs=0.05)
