"""Pure conversions: z-buffer -> metres, segmentation decoding, colour maps."""

from __future__ import annotations

import numpy as np
import pytest

from pixelrig.display.colors import colorize_depth, colorize_labels, label_palette
from pixelrig.render.convert import (
    decode_segmentation,
    depth_to_zbuffer,
    rgba_to_rgb,
    segmentation_to_label,
    zbuffer_to_depth,
)


def test_zbuffer_round_trip_and_units() -> None:
    near, far = 0.05, 8.0
    depth = np.array([[0.05, 0.3, 1.0], [2.5, 7.9, 8.0]])
    z = depth_to_zbuffer(depth, near, far)
    out = zbuffer_to_depth(z, near, far)
    assert out.shape == (2, 3, 1) and out.dtype == np.float32
    np.testing.assert_allclose(out[..., 0], depth, rtol=1e-5)


def test_background_reads_exactly_far() -> None:
    out = zbuffer_to_depth(np.ones((4, 5), np.float32), 0.01, 5.0)
    assert np.all(out == np.float32(5.0))


def test_zbuffer_is_clipped_to_near_far() -> None:
    out = zbuffer_to_depth(np.array([[-0.5, 0.0, 1.5]], np.float32), 0.1, 10.0)
    assert out.min() >= np.float32(0.1) and out.max() <= np.float32(10.0)


def test_decode_segmentation_splits_body_and_link() -> None:
    seg = np.array([[-1, 3, 3 + (1 << 24)], [7 + (5 << 24), 0, 12 + (12 << 24)]], dtype=np.int32)
    body, link = decode_segmentation(seg)
    np.testing.assert_array_equal(body, [[-1, 3, 3], [7, 0, 12]])
    np.testing.assert_array_equal(link, [[-1, -1, 0], [4, -1, 11]])
    label = segmentation_to_label(seg)
    assert label.shape == (2, 3, 1) and label.dtype == np.int32
    np.testing.assert_array_equal(label[..., 0], body)


def test_rgba_to_rgb_drops_alpha_and_copies() -> None:
    rgba = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    rgb = rgba_to_rgb(rgba)
    assert rgb.shape == (2, 3, 3) and rgb.flags.c_contiguous
    np.testing.assert_array_equal(rgb, rgba[..., :3])
    rgb[0, 0, 0] = 99
    assert rgba[0, 0, 0] == 0


def test_colorize_depth_orders_near_bright_and_background_black() -> None:
    depth = np.array([[0.5, 1.0, 2.0, 5.0]], np.float32)[..., None]
    img = colorize_depth(depth, background=5.0)
    assert img.shape == (1, 4, 3) and img.dtype == np.uint8
    brightness = img.astype(int).sum(-1)[0]
    assert brightness[0] > brightness[1] > brightness[2] > 0
    assert brightness[3] == 0


def test_colorize_labels_distinct_and_stable() -> None:
    lab = np.array([[-1, 0, 1, 2, 3]], np.int32)
    img = colorize_labels(lab)
    assert (img[0, 0] == 0).all()
    colors = {tuple(c) for c in img[0, 1:]}
    assert len(colors) == 4
    # the colour of an id does not depend on which other ids are present
    np.testing.assert_array_equal(colorize_labels(np.array([[2]]))[0, 0], img[0, 3])


def test_palette_is_deterministic_and_well_separated() -> None:
    pal = label_palette(32).astype(int)
    np.testing.assert_array_equal(pal, label_palette(32))
    d = np.abs(pal[:, None, :] - pal[None, :, :]).sum(-1)
    np.fill_diagonal(d, 999)
    assert d.min() > 20


def _float32_z_bound(depth: np.ndarray, z: np.ndarray, near: float, far: float) -> np.ndarray:
    """The depth error (metres) that storing z in float32 alone causes: half a float32 step of z times metres
    per unit of z, plus half a float32 step of the float32 result."""
    metres_per_z = depth**2 * (far - near) / (far * near)  # |dd/dz| of d = far*near / (far - (far - near) z)
    return np.spacing(z.astype(np.float32)).astype(np.float64) / 2 * metres_per_z + np.spacing(
        depth.astype(np.float32)).astype(np.float64) / 2


@pytest.mark.parametrize("near,far", [(0.01, 5.0), (0.1, 10.0), (0.01, 100.0), (0.1, 100.0)])
def test_depth_precision_is_the_float32_z_buffer_s(near: float, far: float) -> None:
    """A z-buffer value is a float32. Converted to metres in float64, the only errors left are the rounding of
    the true z to a float32 (half a float32 step of z, times dd/dz = d**2 (far - near) / (far near) metres per
    unit of z: 0.0027 mm at 3 m for near=0.1/far=10, 0.027 mm for near=0.01/far=100) and of the result to float32
    (half a step of d). A conversion in float32 fails this: far - (far - near) z cancels near z = 1 and loses
    about 1e-7 * far of the denominator, microns at a few metres."""
    depth = np.geomspace(near * 1.01, far * 0.99, 2000)
    z = depth_to_zbuffer(depth, near, far)
    assert z.dtype == np.float32
    out = zbuffer_to_depth(z, near, far)[..., 0].astype(np.float64)
    bound = _float32_z_bound(depth, z, near, far) * 1.001  # 0.1% for the linearisation of d(z)
    err = np.abs(out - depth)
    assert (err <= bound).all(), f"worst: {err.max():.3g} m at {depth[err.argmax()]:.3f} m > {bound[err.argmax()]:.3g}"
    # and the float64 arithmetic adds nothing beyond rounding the result: exact for the float32 z it was given
    exact = far * near / (far - (far - near) * z.astype(np.float64))
    assert (np.abs(out - exact) <= np.spacing(out.astype(np.float32)).astype(np.float64) / 2).all()
