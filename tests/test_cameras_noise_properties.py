"""Property tests of the sensor noise model (pixelrig.cameras.noise) aimed at what mutmut found no test pinning
(issue 33).

Each test's inputs make the parameter it pins matter, and its reference is independent of pixelrig's code: the
model of docs/sensors.md written out here (read and shot noise, quantisation, the range, the documented draws, the
clip to ``[near, far)``), exact rational arithmetic for the edge rule, analytic planes for incidence angles, and
OpenCV's own JPEG round trip. Validation is tested by its full messages (they are part of the contract), at and
just past each bound; fields given as numpy values must come out plain Python (``to_dict`` is JSON friendly).
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import re
import warnings
from fractions import Fraction

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pixelrig.cameras.noise import SensorNoise, edge_pixels, incidence_degrees, noisy_depth, noisy_rgb

FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None)


def refused(message: str, **fields) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        SensorNoise(**fields)


# ---- validation: every message in full, each bound from both sides ---------------------------------------------------


def test_each_field_is_refused_past_its_bound_with_a_message_naming_field_value_and_rule() -> None:
    for name in ("edge_dropout", "grazing_dropout"):
        refused(f"SensorNoise: {name}=-0.5 must be a finite number >= 0", **{name: -0.5})
        refused(f"SensorNoise: {name}=1.0000001 must be a probability in [0, 1]", **{name: 1.0000001})
    refused("SensorNoise: edge_threshold=-1 must be a finite number >= 0", edge_threshold=-1)
    refused("SensorNoise: edge_threshold=inf must be a finite number >= 0", edge_threshold=math.inf)
    refused("SensorNoise: edge_threshold=0.0 must be > 0 (a relative depth jump, e.g. 0.05 for 5%)", edge_threshold=0)
    refused("SensorNoise: grazing_angle=-1 must be a finite number >= 0", grazing_angle=-1)
    for angle in (0, 90, 90.5):
        refused(f"SensorNoise: grazing_angle={float(angle)!r} must be in (0, 90) degrees", grazing_angle=angle)
    for q in (True, 50.0, "50", 0, 101):
        refused(f"SensorNoise: jpeg_quality={q!r} must be an integer in [1, 100], or None", jpeg_quality=q)
    sigma = "must be (a, b) with sigma = a + b z**2, both >= 0"
    for value in (0.01, "12", (1, 2, 3), {0.1, 0.2}):
        refused(f"SensorNoise: depth_sigma={value!r} {sigma}", depth_sigma=value)
    refused("SensorNoise: depth_sigma[0]=-0.1 must be a finite number >= 0", depth_sigma=(-0.1, 0.0))
    refused("SensorNoise: depth_sigma[1]=nan must be a finite number >= 0", depth_sigma=(0.0, math.nan))
    refused("SensorNoise: depth_range=(1, 2, 3) must be (min, max) metres, 0 <= min < max", depth_range=(1, 2, 3))
    refused("SensorNoise: depth_range[0]=-1 must be a finite number >= 0", depth_range=(-1, 2))
    refused("SensorNoise: depth_range[1]=inf must be a finite number >= 0", depth_range=(1, math.inf))
    for pair in ((1.0, 1.0), (2.0, 1.0)):  # min == max measures nothing
        refused(f"SensorNoise: depth_range={pair!r} must be (min, max) metres with 0 <= min < max", depth_range=pair)
    for value in ("0", False, None, 1.0, "none"):  # 0.0 or NaN only: not a string of a number, not a bool
        refused(f"SensorNoise: invalid={value!r} must be 0.0 or nan (what a pixel without a reading holds)",
                invalid=value)


def test_each_bound_itself_is_accepted() -> None:
    """Probabilities 0 and 1, angles just inside (0, 90) (below 1 degree too), JPEG qualities 1 and 100, a range
    starting at 0, NaN spelled any way."""
    for p in (0.0, 1.0):
        assert SensorNoise(edge_dropout=p, grazing_dropout=p).edge_dropout == p
    for angle in (0.5, 1e-3, 89.99):
        assert SensorNoise(grazing_angle=angle).grazing_angle == angle
    for q in (1, 100, np.int64(7)):
        assert SensorNoise(jpeg_quality=q).jpeg_quality == int(q)
    assert SensorNoise(depth_range=(0, 1e-6)).depth_range == (0.0, 1e-6)
    assert SensorNoise(edge_threshold=1e-9).edge_threshold == 1e-9
    for nan in ("nan", " NaN ", math.nan, np.float32("nan")):
        assert SensorNoise(invalid=nan).invalid_is_nan
    assert SensorNoise(invalid=np.int64(0)).invalid == 0.0


def test_from_dict_refuses_what_is_not_a_spec_and_reports_list_values_as_the_tuples_it_reads() -> None:
    for spec in (5, [("rgb_sigma", 1.0)], "rgb_sigma=1"):
        with pytest.raises(ValueError, match=re.escape(
                f"SensorNoise: a noise spec must be a SensorNoise or a dict of its fields: got {spec!r}") + "$"):
            SensorNoise.from_dict(spec)
    with pytest.raises(ValueError, match=re.escape(
            "SensorNoise: depth_range=(2.0, 1.0) must be (min, max) metres with 0 <= min < max") + "$"):
        SensorNoise.from_dict({"depth_range": [2.0, 1.0]})  # a TOML list, min > max
    with pytest.raises(ValueError, match=re.escape(
            "SensorNoise: jpeg_quality=(50,) must be an integer in [1, 100], or None") + "$"):
        SensorNoise.from_dict({"jpeg_quality": [50]})


def test_numpy_values_become_plain_python_fields_that_go_through_json_and_hash() -> None:
    """A noise built from numpy values (a config computed with numpy) holds Python floats, ints and tuples: its
    ``to_dict`` goes through JSON and back equal, and it hashes (numpy arrays do not)."""
    noise = SensorNoise(rgb_sigma=np.float32(1.5), rgb_shot=np.float32(0.25), jpeg_quality=np.int64(80),
                        depth_sigma=np.array([0.001, 0.004]), depth_step=np.float32(0.002),
                        depth_range=np.array([0.25, 2.5], np.float32), edge_dropout=np.float32(0.25),
                        edge_threshold=np.float32(0.125), grazing_dropout=np.float32(0.5),
                        grazing_angle=np.float32(60.0), invalid=np.float64("nan"))
    for name, kind in (("rgb_sigma", float), ("rgb_shot", float), ("jpeg_quality", int), ("depth_sigma", tuple),
                       ("depth_step", float), ("depth_range", tuple), ("edge_dropout", float),
                       ("edge_threshold", float), ("grazing_dropout", float), ("grazing_angle", float)):
        assert type(getattr(noise, name)) is kind, name
    assert all(type(v) is float for v in noise.depth_sigma + noise.depth_range)
    assert noise.depth_sigma == (0.001, 0.004) and noise.depth_range == (0.25, 2.5)
    assert noise.edge_threshold == 0.125 and noise.grazing_angle == 60.0 and noise.jpeg_quality == 80
    back = SensorNoise.from_dict(json.loads(json.dumps(noise.to_dict())))
    assert back == noise and hash(back) == hash(noise)
    listed = SensorNoise(depth_sigma=[0.001, 0.004], depth_range=[0.25, 2.5])  # lists, as TOML gives them
    assert listed.depth_sigma == (0.001, 0.004) and listed.depth_range == (0.25, 2.5)
    assert {listed: 1}[SensorNoise(depth_sigma=(0.001, 0.004), depth_range=(0.25, 2.5))] == 1


# ---- equality: NaN ``invalid`` included, through pickling ------------------------------------------------------------


DISTINCT = (SensorNoise(), SensorNoise(rgb_sigma=1.0), SensorNoise(invalid="nan"),
            SensorNoise(invalid="nan", rgb_sigma=1.0), SensorNoise(invalid="nan", depth_range=(0.2, 2.0)),
            SensorNoise(invalid="nan", edge_dropout=0.5), SensorNoise(depth_range=(0.2, 2.0)))


def test_noises_equal_exactly_when_their_fields_do_with_nan_equal_to_nan() -> None:
    """Distinct models compare unequal (NaN ``invalid`` or not), and each equals a rebuilt copy; a set of them holds
    each once."""
    for i, a in enumerate(DISTINCT):
        for j, b in enumerate(DISTINCT):
            assert (a == b) == (i == j), (a, b)
        rebuilt = SensorNoise(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in a.to_dict().items()})
        assert rebuilt == a and hash(rebuilt) == hash(a)
    assert len(set(DISTINCT) | set(copy.deepcopy(DISTINCT))) == len(DISTINCT)


def test_a_pickled_nan_noise_equals_and_hashes_like_the_original() -> None:
    """Pickling (a rig sent to a subprocess of a vector env) makes a new NaN object, which never equals the old
    one: the model still compares and hashes equal."""
    for noise in DISTINCT:
        back = pickle.loads(pickle.dumps(noise))
        assert back == noise and hash(back) == hash(noise)
        assert back.invalid_is_nan == noise.invalid_is_nan
    nan = SensorNoise(invalid="nan", rgb_sigma=2.0)
    back = pickle.loads(pickle.dumps(nan))
    assert back.invalid is not nan.invalid  # the case that matters: two NaN objects
    assert {nan: "x"}[back] == "x"


# ---- RGB -------------------------------------------------------------------------------------------------------------


def reference_rgb(rgb: np.ndarray, sigma: float, shot: float, rng: np.random.Generator) -> np.ndarray:
    """docs/sensors.md: ``value + N(0, sqrt(sigma**2 + shot * value))``, one standard normal per channel value,
    rounded and clipped to [0, 255]."""
    value = rgb.astype(np.float64)
    noisy = value + np.sqrt(sigma**2 + shot * value) * rng.standard_normal(value.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def opencv_jpeg(rgb: np.ndarray, quality: int) -> np.ndarray:
    ok, data = cv2.imencode(".jpg", rgb[..., ::-1], [int(cv2.IMWRITE_JPEG_QUALITY), quality])
    assert ok
    return cv2.imdecode(data, cv2.IMREAD_COLOR)[..., ::-1]


@FEW
@given(st.floats(0.3, 0.99), st.integers(0, 2**32 - 1))
def test_read_noise_below_one_level_is_drawn(sigma: float, seed: int) -> None:
    """A read-noise sigma under one level (where rounding hides most of it, not all) is the documented draw."""
    rgb = np.random.default_rng(seed).integers(0, 256, (16, 16, 3)).astype(np.uint8)
    rng = np.random.default_rng(seed + 1)
    out = noisy_rgb(rgb, SensorNoise(rgb_sigma=sigma), copy.deepcopy(rng))
    np.testing.assert_array_equal(out, reference_rgb(rgb, sigma, 0.0, rng))
    assert (out != rgb).any()


@pytest.mark.parametrize("quality", [1, 10, 50, 100])
def test_jpeg_is_opencvs_round_trip_at_the_quality_asked_and_draws_nothing(quality: int) -> None:
    """JPEG alone is OpenCV's encode/decode at ``jpeg_quality`` (qualities 1 and 100 included, each different from
    OpenCV's default 95); with read and shot noise off the generator is not touched (the draws are documented: one
    normal per channel value only when read or shot noise is on)."""
    gen = np.random.default_rng(quality)
    rgb = np.clip(gen.normal(128, 60, (24, 32, 3)), 0, 255).astype(np.uint8)
    rgb[8:16, 8:24] = (220, 20, 40)
    rng = np.random.default_rng(3)
    before = copy.deepcopy(rng.bit_generator.state)
    out = noisy_rgb(rgb, SensorNoise(jpeg_quality=quality), rng)
    assert rng.bit_generator.state == before
    assert out.dtype == np.uint8 and out.shape == rgb.shape
    np.testing.assert_array_equal(out, opencv_jpeg(rgb, quality))
    if quality != 95:
        assert not np.array_equal(out, opencv_jpeg(rgb, 95))


def test_without_rgb_noise_the_image_comes_back_as_a_new_array_and_draws_nothing() -> None:
    rgb = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    rng = np.random.default_rng(0)
    before = copy.deepcopy(rng.bit_generator.state)
    out = noisy_rgb(rgb, SensorNoise(depth_sigma=(0.01, 0.0)), rng)
    np.testing.assert_array_equal(out, rgb)
    assert out is not rgb and not np.shares_memory(out, rgb)
    out[0, 0, 0] = 99
    assert rgb[0, 0, 0] == 0 and rng.bit_generator.state == before


# ---- edges and incidence ---------------------------------------------------------------------------------------------


def exact_edges(z: np.ndarray, hit: np.ndarray, threshold: float) -> np.ndarray:
    """The documented rule in rational arithmetic: a hit whose depth differs from a 4-neighbour's by more than
    ``threshold`` times the nearer one, or that borders the background."""
    h, w = z.shape
    out = np.zeros(z.shape, bool)
    t = Fraction(threshold)
    for r in range(h):
        for c in range(w):
            if not hit[r, c]:
                continue
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < h and 0 <= cc < w:
                    a, b = Fraction(float(z[r, c])), Fraction(float(z[rr, cc]))
                    out[r, c] |= not hit[rr, cc] or abs(a - b) > t * min(a, b)
    return out


def test_the_edge_threshold_is_applied_exactly_to_a_float32_depth_image() -> None:
    """Float32 depths (the renderers' dtype) 1 and 1 + 2**-10 m: a threshold 2**-40 under the jump ratio makes
    both pixels edges, as exact arithmetic says (in float32 the threshold would round to the jump ratio itself);
    the background beside the background raises no warning."""
    z = np.array([[1.0, 1.0 + 2.0**-10, 4.0, 4.0]], np.float32)
    hit = np.array([[True, True, False, False]])
    for threshold in (2.0**-10 - 2.0**-40, 2.0**-10, 2.0**-10 + 2.0**-40):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = edge_pixels(z, hit, threshold)
        np.testing.assert_array_equal(got, exact_edges(z, hit, threshold))
    assert edge_pixels(z, hit, 2.0**-10 - 2.0**-40).tolist() == [[True, True, False, False]]
    assert edge_pixels(z, hit, 2.0**-10).tolist() == [[False, True, False, False]]
    grid = np.full((3, 3), 2.0, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not edge_pixels(grid, np.zeros((3, 3), bool), 0.05).any()  # all background: inf - inf, no edge


def plane_scene(normal, distance: float, h: int, w: int, fx: float, fy: float, cx: float, cy: float):
    """Rays of a pinhole K and the depth of the plane ``normal . X = distance`` along each: (depth, rays, the
    analytic incidence angle in degrees)."""
    cols, rows = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    rays = np.stack([(cols - cx) / fx, (rows - cy) / fy])
    n = np.asarray(normal, dtype=np.float64)
    dot = n[0] * rays[0] + n[1] * rays[1] + n[2]
    depth = distance / dot
    ray_norm = np.sqrt(rays[0] ** 2 + rays[1] ** 2 + 1.0)
    angle = np.degrees(np.arccos(np.clip(np.abs(dot) / (ray_norm * np.linalg.norm(n)), 0.0, 1.0)))
    return depth, rays, angle


@FEW
@given(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0), st.floats(0.3, 3.0), st.integers(2, 7), st.integers(2, 7),
       st.floats(0.6, 1.6), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_incidence_of_a_plane_is_its_analytic_angle_down_to_two_pixel_images(gx, gy, distance, h, w, ratio, dx,
                                                                              dy) -> None:
    """Any two differences of points on a plane lie in it, so the estimated normal is the plane's exactly
    (rounding aside): the angle is the analytic one, a plane tilted in x and in y, seen by a K with fx != fy, an
    off-centre principal point and depths far from 1, on images down to 2 pixels a side; a one-pixel image reads
    0."""
    fx = 20.0
    depth, rays, angle = plane_scene((gx, gy, 1.0), distance, h, w, fx, fx * ratio, (w - 1) / 2 + dx, (h - 1) / 2 + dy)
    assert (depth > 0).all()  # |gx x + gy y| < 0.9 over these rays: the plane is in front everywhere
    got = incidence_degrees(depth, rays)
    assert got.shape == (h, w) and got.dtype == np.float64
    np.testing.assert_allclose(got, angle, atol=1e-6)
    for shape in ((1, w), (h, 1), (1, 1)):
        flat = incidence_degrees(depth[: shape[0], : shape[1]], rays[:, : shape[0], : shape[1]])
        assert flat.shape == shape and flat.dtype == np.float64 and not flat.any()


def test_incidence_of_float32_inputs_is_float64_and_close() -> None:
    """The documented result is float64 degrees, whatever the inputs' dtype."""
    depth, rays, angle = plane_scene((0.8, -0.5, 1.0), 1.5, 9, 12, 15.0, 11.0, 5.2, 4.1)
    got = incidence_degrees(depth.astype(np.float32), rays.astype(np.float32))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, angle, atol=0.05)


def test_a_plane_facing_a_ray_is_at_zero_degrees_not_nan() -> None:
    """A plane perpendicular to a pixel's ray: the cosine there rounds to just over 1 half the time; the angle is
    still 0 (the cosine is clipped), never NaN."""
    gen = np.random.default_rng(7)
    for _ in range(30):
        rays = gen.uniform(-1.0, 1.0, (2, 3, 3))
        normal = (rays[0, 1, 1], rays[1, 1, 1], 1.0)
        depth = gen.uniform(0.5, 3.0) / (rays[0] * normal[0] + rays[1] * normal[1] + 1.0)
        if (depth <= 0).any():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = incidence_degrees(depth, rays)
        assert np.isfinite(got).all() and (got >= 0).all() and (got <= 90).all()
        assert got[1, 1] < 1e-5


# ---- depth -----------------------------------------------------------------------------------------------------------


def test_depth_quantised_past_the_planes_is_clipped_into_near_and_below_far() -> None:
    """Rounding to 0.25 m steps sends 0.12 m to 0 (under near = 0.1) and 0.45 m to 0.5 m = far (a far plane under
    1 m): surviving readings are clipped to [near, far): near, and the float32 just under far."""
    near, far = 0.1, 0.5
    exact = np.array([[0.12, 0.45, 0.3, far]], np.float32)[..., None]
    rays = np.zeros((2, 1, 4))
    out = noisy_depth(exact, SensorNoise(depth_step=0.25), np.random.default_rng(0), near=near, far=far, rays=rays)
    below_far = np.nextafter(np.float32(far), np.float32(0.0))
    assert out[0, :, 0].tolist() == [np.float32(near), below_far, np.float32(0.25), np.float32(far)]
    assert out[0, 1, 0] < far  # still a reading, not background
    far = 3.0  # the same above 1 m
    exact = np.array([[2.9, 0.05]], np.float32)[..., None]
    out = noisy_depth(exact, SensorNoise(depth_step=0.5), np.random.default_rng(0), near=0.2, far=far,
                      rays=np.zeros((2, 1, 2)))
    assert out[0, :, 0].tolist() == [np.nextafter(np.float32(far), np.float32(0.0)), np.float32(0.2)]


def test_a_range_ending_or_starting_at_far_keeps_or_drops_the_background_as_documented() -> None:
    """The background reads ``far``, so it is valid exactly when ``far`` is within the closed range: a range whose
    max is far keeps it, one whose min is far too (its surfaces, nearer than far, all read invalid), one just
    under far drops it."""
    far = 2.0
    exact = np.array([[0.5, 1.5, far]], np.float32)[..., None]
    rays = np.zeros((2, 1, 3))
    for depth_range, expected in (((0.2, far), [0.5, 1.5, far]), ((far, far + 1.0), [0.0, 0.0, far]),
                                  ((0.2, 1.9999), [0.5, 1.5, 0.0])):
        out = noisy_depth(exact, SensorNoise(depth_range=depth_range), np.random.default_rng(0), near=0.1, far=far,
                          rays=rays)
        assert out[0, :, 0].tolist() == [np.float32(v) for v in expected], depth_range


def step_scene() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A 12x12 fronto-parallel wall at 1 m with a 4x4 block at 0.5 m and a 2x3 patch of background (far = 4), and
    a range that drops the block's readings: (exact depth, hit, edge pixels by the rule, rays)."""
    z = np.ones((12, 12))
    z[3:7, 3:7] = 0.5
    z[9:11, 8:11] = 4.0
    hit = z < 4.0
    return z, hit, exact_edges(z, hit, 0.05), np.zeros((2, 12, 12))


def test_edge_dropout_is_the_first_draw_each_pixel_dropping_when_its_uniform_is_under_p() -> None:
    """Without depth noise the first thing drawn is one uniform per pixel for edges (no normals first); an edge
    pixel drops when its uniform is under ``edge_dropout`` (strictly: one whose uniform equals it stays, so the
    probability is exactly p); a reading out of range stays invalid whether or not it is an edge; p = 1 drops every
    edge pixel."""
    z, hit, edges, rays = step_scene()
    draw = np.random.default_rng(11).random(z.shape)
    p = float(draw[edges & (draw > 0.3) & (draw < 0.7)][0])  # a uniform an edge pixel draws: p exactly
    assert 5 < (edges & (draw < p)).sum() < edges.sum() - 5
    noise = SensorNoise(depth_range=(0.6, 3.0), edge_dropout=p, invalid="nan")
    out = noisy_depth(z[..., None].astype(np.float32), noise, np.random.default_rng(11), near=0.1, far=4.0,
                      rays=rays)[..., 0]
    out_of_range = hit & (z < 0.6)
    background_out = ~hit  # far = 4 is out of (0.6, 3)
    expected = (edges & (draw < p)) | out_of_range | background_out
    np.testing.assert_array_equal(np.isnan(out), expected)
    assert (out_of_range & ~edges).any() and (edges & (draw == p)).sum() == 1
    every = noisy_depth(z[..., None].astype(np.float32), SensorNoise(edge_dropout=1.0, invalid="nan"),
                        np.random.default_rng(0), near=0.1, far=4.0, rays=rays)[..., 0]
    np.testing.assert_array_equal(np.isnan(every), edges)


def test_grazing_is_strictly_beyond_the_angle_and_drops_strictly_under_p() -> None:
    """A tilted plane; the grazing angle set to one pixel's incidence exactly: that pixel is not grazing (the
    angle must be exceeded); p = 1 drops every grazing pixel; p set to a grazing pixel's uniform exactly keeps that
    pixel."""
    depth, rays, angle = plane_scene((1.2, 0.5, 1.0), 1.0, 10, 16, 12.0, 12.0, 5.0, 4.1)
    assert (depth > 0).all()
    exact = depth[..., None].astype(np.float32)
    exact64 = exact[..., 0].astype(np.float64)
    estimated = incidence_degrees(exact64, rays)  # the float32 image's own angles (what the model estimates)
    np.testing.assert_allclose(estimated, angle, atol=1e-3)
    at = float(np.sort(estimated.ravel())[80])  # one pixel's angle: pixels on either side
    grazing = estimated > at
    assert 20 < grazing.sum() < 140 and (estimated == at).any()
    out = noisy_depth(exact, SensorNoise(grazing_dropout=1.0, grazing_angle=at, invalid="nan"),
                      np.random.default_rng(0), near=0.1, far=10.0, rays=rays)[..., 0]
    np.testing.assert_array_equal(np.isnan(out), grazing)
    assert not np.isnan(out[estimated == at]).any()
    draw = np.random.default_rng(5).random(exact64.shape)
    p = float(draw[grazing & (draw > 0.3) & (draw < 0.7)][0])
    out = noisy_depth(exact, SensorNoise(grazing_dropout=p, grazing_angle=at, invalid="nan"),
                      np.random.default_rng(5), near=0.1, far=10.0, rays=rays)[..., 0]
    np.testing.assert_array_equal(np.isnan(out), grazing & (draw < p))
    assert (grazing & (draw == p)).sum() == 1
