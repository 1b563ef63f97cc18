"""Pure image conversions: pybullet buffers to metric depth, labels, link ids, world points and normals (colourings
for people live in :mod:`pixelrig.display.colors`).

Every function here is pure (no pybullet client, no global state): it takes numpy arrays and returns new ones.
Precision-sensitive arithmetic is done in float64 and cast at the end.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

BACKGROUND_LABEL = -1
"""Label value of pixels that show no body (the sky)."""

_BODY_MASK = 0xFFFFFF


def zbuffer_to_depth(zbuffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """Convert an OpenGL z-buffer to metric depth along the camera's optical axis.

    Args:
        zbuffer: (H, W) float z-buffer values in [0, 1] as returned by ``getCameraImage``
            (1.0 = background, nothing drawn).
        near: near clipping plane in metres (> 0).
        far: far clipping plane in metres (> near).

    Returns:
        (H, W, 1) float32 depth in metres, measured along the optical axis (not along the ray). Background pixels
        (z >= 1) read exactly ``far`` and surfaces read less (clipped to ``[near, below far]``, the float32 just
        under ``far``), so ``depth < far`` tells surfaces from background exactly.
    """
    z = np.asarray(zbuffer)
    d = z.astype(np.float64)  # in place from here: this runs for every camera of every step
    d *= -(far - near)
    d += far
    np.divide(far * near, d, out=d)
    np.clip(d, near, far, out=d)  # one pass: near < far, so the same as the minimum then the maximum
    depth = d.astype(np.float32)
    np.minimum(depth, below_far(far), out=depth)  # a surface within float32 rounding of far stays a surface
    np.copyto(depth, np.float32(far), where=z >= 1.0)  # exactly far, not far minus rounding
    return depth[..., None]


@functools.lru_cache(maxsize=256)
def below_far(far: float) -> np.float32:
    """The largest float32 below ``far`` (as float32): the deepest a surface reads, so that ``depth < far``
    tells surfaces from background."""
    return np.nextafter(np.float32(far), np.float32(0.0))


def tiny_background_zbuffer(projection: Sequence[float]) -> np.float32:
    """The z-buffer value pybullet's TinyRenderer writes where it draws nothing, for a projection matrix.

    TinyRenderer clears its depth buffer to ``-far`` and converts every pixel to a z-buffer value in
    ``copyCameraImageData`` as ``far (near + z) / (2 far near + far z - near z)`` with ``z = far``: 1 in exact
    arithmetic, but evaluated in float32 (``near`` and ``far`` themselves read back from the float32 matrix as
    ``P[14] / (P[10] -+ 1)``) it lands up to two float32 steps either side of 1 (0.99999988 .. 1.0000001), so that
    ``z < 1`` would count background pixels as surfaces at ``far``. This repeats that arithmetic (float32
    products, the ``2.`` literal's double sums) and matches the renderer bit for bit (checked on 305 near/far
    pairs from 1 mm to 30 km).

    Args:
        projection: 16 floats, the column-major projection matrix the image was drawn with.

    Returns:
        The background's z-buffer value, float32.
    """
    f32 = np.float32
    m = np.asarray(projection, dtype=np.float32)
    near = f32(m[14] / (m[10] - f32(1.0)))
    far = f32(m[14] / (m[10] + f32(1.0)))
    z = far  # the cleared buffer holds -far; copyCameraImageData negates it
    numerator = f32(far * f32(near + z))
    denominator = 2.0 * np.float64(far) * np.float64(near) + np.float64(f32(far * z)) - np.float64(f32(near * z))
    return f32(np.float64(numerator) / denominator)


def background_to_one(zbuffer: np.ndarray, background: float) -> np.ndarray:
    """A z-buffer with its background written as exactly 1.0 (the :class:`~pixelrig.render.backends.Frame`
    contract), in place.

    Args:
        zbuffer: (H, W) float32 z-buffer of a renderer whose cleared value is ``background`` (not exactly 1).
        background: the renderer's cleared value (e.g. :func:`tiny_background_zbuffer`).

    Returns:
        ``zbuffer``: pixels at or beyond ``background`` set to 1.0, surfaces at or beyond 1.0 (within rounding
        of the far plane, but nearer than the background) set to the float32 just below 1.
    """
    z = zbuffer
    behind = z >= np.float32(background)
    if background > 1.0:
        z[(z >= 1.0) & ~behind] = np.nextafter(np.float32(1.0), np.float32(0.0))
    z[behind] = 1.0
    return z


def zbuffer_to_metres(zbuffer: np.ndarray, near: float, far: float) -> np.ndarray:
    """Metric depth along the optical axis from an OpenGL z-buffer, unclipped and in full precision.

    Args:
        zbuffer: (H, W) z-buffer values in [0, 1) at hits (values at 1.0, background, give ``far``).
        near: near clipping plane in metres (> 0).
        far: far clipping plane in metres (> near).

    Returns:
        (H, W) float64 metres, ``far * near / (far - (far - near) * z)``.
    """
    d = np.asarray(zbuffer).astype(np.float64)
    d *= -(far - near)
    d += far
    np.divide(far * near, d, out=d)
    return d


def depth_to_zbuffer(depth: np.ndarray, near: float, far: float) -> np.ndarray:
    """Inverse of :func:`zbuffer_to_depth`: metric depth (metres, any shape) to z-buffer values in [0, 1]."""
    d = np.asarray(depth, dtype=np.float64)
    return ((far - far * near / d) / (far - near)).astype(np.float32)


def decode_segmentation(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split a segmentation buffer rendered with ``ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX``.

    pybullet packs each pixel as ``uid + ((link + 1) << 24)``; background pixels are -1.

    Args:
        seg: (H, W) int32 segmentation buffer.

    Returns:
        ``(body, link)``: two (H, W) int32 arrays. ``body`` is the body unique id (-1 for background),
        ``link`` the link index (-1 for a body's base, and -1 for background too).
    """
    s = np.asarray(seg, dtype=np.int64)
    background = s < 0
    body = np.where(background, BACKGROUND_LABEL, s & _BODY_MASK).astype(np.int32)
    link = np.where(background, -1, (s >> 24) - 1).astype(np.int32)
    return body, link


def segmentation_to_label(seg: np.ndarray) -> np.ndarray:
    """Body-id label image from a segmentation buffer: (H, W) int32 -> (H, W, 1) int32, -1 = background."""
    s = np.asarray(seg, dtype=np.int32)
    label = s & _BODY_MASK
    label[s < 0] = BACKGROUND_LABEL
    return label[..., None]


def segmentation_to_link(seg: np.ndarray, first_id: np.ndarray) -> np.ndarray:
    """Link-id image from a segmentation buffer, with one id per (body, link) of the scene.

    Args:
        seg: (H, W) int32 segmentation buffer (``uid + ((link + 1) << 24)``, -1 = background).
        first_id: (B,) integer array: the id of body ``b``'s base link at index ``b`` (its link ``k`` then has id
            ``first_id[b] + k + 1``); -1 for body ids that are not in the scene.

    Returns:
        (H, W, 1) int32 link ids; -1 for background and for bodies outside ``first_id``.
    """
    s = np.asarray(seg, dtype=np.int64)
    table = np.append(np.asarray(first_id, dtype=np.int64), -1)  # the last entry answers unknown bodies
    body = s & _BODY_MASK
    body[(s < 0) | (body >= len(table) - 1)] = len(table) - 1
    first = table[body]
    out = np.where(first >= 0, first + (s >> 24), BACKGROUND_LABEL)
    return out.astype(np.int32)[..., None]


def link_to_class(link: np.ndarray, class_of_link: np.ndarray) -> np.ndarray:
    """Class-id image from a link-id image.

    Args:
        link: (H, W, 1) integer link ids (-1 = background), as :func:`segmentation_to_link` returns.
        class_of_link: (L,) integer class id of each link id (0 = unclassified).

    Returns:
        (H, W, 1) int32 class ids; -1 for background (and for link ids outside ``class_of_link``).
    """
    table = np.append(np.asarray(class_of_link, dtype=np.int32), np.int32(BACKGROUND_LABEL))
    ids = np.asarray(link, dtype=np.int64)
    ids = np.where((ids < 0) | (ids >= len(table) - 1), len(table) - 1, ids)
    return table[ids]


def world_rays(intrinsics: np.ndarray, extrinsics: np.ndarray, width: int, height: int) -> np.ndarray:
    """World direction of every pixel's ray, scaled to unit depth along the optical axis.

    Args:
        intrinsics: (3, 3) OpenCV camera matrix K (pixel centres at integer coordinates).
        extrinsics: (4, 4) world -> camera transform in OpenCV axes (+x right, +y down, +z forward).
        width: image width in pixels.
        height: image height in pixels.

    Returns:
        (3, H, W) float32 planes x, y, z: ``R^T K^-1 (col, row, 1)``, so that the surface point at depth ``d`` is
        ``camera centre + d * ray`` (each row's and column's term in float64, their sum in float32: one rounding).
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    rt = np.asarray(extrinsics, dtype=np.float64)[:3, :3].T
    xs = (np.arange(width, dtype=np.float64) - k[0, 2]) / k[0, 0]
    ys = (np.arange(height, dtype=np.float64) - k[1, 2]) / k[1, 1]
    out = np.empty((3, height, width), dtype=np.float32)
    for axis in range(3):
        np.add.outer((ys * rt[axis, 1]).astype(np.float32), (xs * rt[axis, 0] + rt[axis, 2]).astype(np.float32),
                     out=out[axis])
    return out


def normalised_world_rays(rays: np.ndarray, extrinsics: np.ndarray) -> np.ndarray:
    """World direction of every pixel's ray, scaled to unit depth along the optical axis, from each pixel's
    normalised image coordinates (for images whose rays are not a pinhole grid: a distorted lens).

    Args:
        rays: (2, H, W) normalised coordinates ``x / z`` and ``y / z`` of each pixel's ray (OpenCV camera axes).
        extrinsics: (4, 4) world -> camera transform in OpenCV axes (+x right, +y down, +z forward).

    Returns:
        (3, H, W) float32 planes x, y, z: ``R^T (x, y, 1)`` (computed in float64).
    """
    rt = np.asarray(extrinsics, dtype=np.float64)[:3, :3].T
    x, y = np.asarray(rays[0], dtype=np.float64), np.asarray(rays[1], dtype=np.float64)
    return np.stack([rt[a, 0] * x + rt[a, 1] * y + rt[a, 2] for a in range(3)]).astype(np.float32)


def camera_centre(extrinsics: np.ndarray) -> np.ndarray:
    """(3,) float64 world position of the camera of a (4, 4) world -> camera transform."""
    e = np.asarray(extrinsics, dtype=np.float64)
    return -e[:3, :3].T @ e[:3, 3]


def rays_to_points(depth: np.ndarray, rays: np.ndarray, centre: np.ndarray, hit: np.ndarray) -> np.ndarray:
    """World points from depth along precomputed rays (see :func:`world_rays`): the ``"points"`` modality.

    Args:
        depth: (H, W) metres along the optical axis (float64 keeps a z-buffer's precision until here).
        rays: (3, H, W) world ray of each pixel at unit depth, as :func:`world_rays` returns.
        centre: (3,) camera position in world coordinates.
        hit: (H, W) bool, True where a surface was drawn.

    Returns:
        (H, W, 4) float32: world x, y, z in metres and w = 1 at hits; all four are 0 elsewhere. The products are
        float32, the output's own precision (about 0.5 µm at 4 m).
    """
    h, w = np.shape(depth)[:2]
    mask = np.asarray(hit, dtype=np.float32).reshape(h, w)
    d = np.asarray(depth).reshape(h, w).astype(np.float32)
    d *= mask  # background: 0 along the ray, and the centre term below vanishes too
    out = np.empty((h, w, 4), dtype=np.float32)
    plane = np.empty((h, w), dtype=np.float32)
    for axis in range(3):
        np.multiply(rays[axis], d, out=plane)
        plane += np.float32(centre[axis]) * mask
        out[..., axis] = plane
    out[..., 3] = mask
    return out


def depth_to_points(
    depth: np.ndarray, intrinsics: np.ndarray, extrinsics: np.ndarray, hit: np.ndarray | None = None
) -> np.ndarray:
    """World points of a depth image: the ``"points"`` modality.

    ``p = C + d * R^T K^-1 (u, v, 1)``, with ``C`` the camera centre, ``d`` the depth along the optical axis and
    ``(u, v)`` each pixel's index (column, row).

    Args:
        depth: (H, W) or (H, W, 1) metres along the optical axis.
        intrinsics: (3, 3) OpenCV camera matrix K (pixel centres at integer coordinates).
        extrinsics: (4, 4) world -> camera transform in OpenCV axes (+x right, +y down, +z forward).
        hit: (H, W) bool, True where a surface was drawn; None treats every pixel as a hit.

    Returns:
        (H, W, 4) float32: world x, y, z in metres and w = 1 at hits; all four are 0 elsewhere.
    """
    h, w = np.shape(depth)[:2]
    mask = np.ones((h, w), bool) if hit is None else np.asarray(hit, dtype=bool).reshape(h, w)
    rays = world_rays(intrinsics, extrinsics, w, h)
    return rays_to_points(np.asarray(depth).reshape(h, w), rays, camera_centre(extrinsics), mask)


def normals_from_points(
    points: np.ndarray, depth: np.ndarray, eye: np.ndarray, segment: np.ndarray | None = None
) -> np.ndarray:
    """World normals estimated from a ``"points"`` image, for renderers without a normal pass.

    Each pixel's normal is the cross product of two tangents: the difference to a horizontal and to a vertical
    neighbour. On each axis the neighbour is chosen so that the tangent stays on the pixel's own surface:

    1. the side (before or after) whose three pixels (the pixel and the next two that way) lie on one plane, i.e.
       the smaller second difference of inverse depth (which is affine in the image on a plane); so at a box's
       crease or an occluding edge, the tangent comes from the pixel's own face;
    2. a side with only one hit neighbour, ranked by the smaller depth jump;
    3. with ``segment``, neighbours on another segment (body and link) only when the pixel has none on its own,
       so that where an object stands on another (no depth jump) neither borrows the other's slope.

    The normal is oriented towards the camera. A hit pixel without any hit neighbour on an axis (a one-pixel
    sliver) gets the direction back to the camera. Pixels in a one-pixel-wide strip between two creases may
    still get a neighbouring face's normal.

    Args:
        points: (H, W, 4) world xyz + hit flag, as :func:`depth_to_points` returns.
        depth: (H, W) or (H, W, 1) metres along the optical axis.
        eye: (3,) the camera's world position.
        segment: optional (H, W) or (H, W, 1) integer segmentation (e.g. the raw buffer).

    Returns:
        (H, W, 3) float32 unit normals in world axes; 0 at background pixels.
    """
    h, w = points.shape[:2]
    p64 = np.asarray(points[..., :3], dtype=np.float64)
    hit = np.asarray(points[..., 3]) > 0
    d = np.asarray(depth, dtype=np.float64).reshape(h, w)
    inv = np.where(hit, 1.0 / np.where(hit, d, 1.0), np.nan)  # NaN marks background in every stencil
    seg = None if segment is None else np.asarray(segment).reshape(h, w)
    tangents = []
    for axis in (1, 0):  # image x (columns), then image y (rows)
        costs, diffs = [], []
        for step in (1, -1):  # the side after, then the side before
            g1, g2 = _shift(inv, step, axis), _shift(inv, 2 * step, axis)
            pair = np.isfinite(inv) & np.isfinite(g1)
            plane = np.abs(inv - 2.0 * g1 + g2)  # NaN unless all three are hits
            jump = np.abs(_shift(d, step, axis) - d)
            same1 = same2 = np.ones((h, w), bool)
            if seg is not None:
                s1 = _shift(seg, step, axis)
                same1 = s1 == seg
                same2 = same1 & (_shift(seg, 2 * step, axis) == s1)
            cost = np.where(pair, 2e9 + jump, np.inf)
            cost = np.where(pair & same1, 1e9 + jump, cost)
            cost = np.where(np.isfinite(plane) & same2, plane, cost)
            costs.append(cost)
            diffs.append((_shift(p64, step, axis) - p64) * step)  # both point along +axis
        after = costs[0] <= costs[1]
        tangent = np.where(after[..., None], diffs[0], diffs[1])
        valid = np.isfinite(np.where(after, costs[0], costs[1]))
        tangent[~valid] = 0.0
        tangents.append((tangent, valid))
    (tx, vx), (ty, vy) = tangents
    n = np.cross(ty, tx)  # image y x image x: towards the camera for a surface facing it
    to_eye = np.asarray(eye, dtype=np.float64) - p64
    n[np.einsum("ijk,ijk->ij", n, to_eye) < 0] *= -1.0
    length = np.linalg.norm(n, axis=-1)
    fallback = hit & ~(vx & vy & (length > 0))
    n[fallback] = to_eye[fallback]
    length = np.linalg.norm(n, axis=-1)
    n /= np.where(length > 0, length, 1.0)[..., None]
    n[~hit] = 0.0
    return n.astype(np.float32)


def _shift(a: np.ndarray, step: int, axis: int) -> np.ndarray:
    """``out[i] = a[i + step]`` along ``axis`` (0 = rows, 1 = columns); NaN (or -1 for integers, 0 for booleans)
    where ``i + step`` falls outside."""
    fill: Any = np.nan if a.dtype.kind == "f" else (-1 if a.dtype.kind in "iu" else 0)
    out = np.full_like(a, fill)
    n = a.shape[axis]
    k = abs(step)
    if k >= n:
        return out
    src = [slice(None)] * a.ndim
    dst = [slice(None)] * a.ndim
    src[axis] = slice(k, None) if step > 0 else slice(0, n - k)
    dst[axis] = slice(0, n - k) if step > 0 else slice(k, None)
    out[tuple(dst)] = a[tuple(src)]
    return out


def rgba_to_rgb(rgba: np.ndarray) -> np.ndarray:
    """(H, W, 4) uint8 RGBA -> contiguous (H, W, 3) uint8 RGB (a copy)."""
    src = np.ascontiguousarray(rgba, dtype=np.uint8).reshape(*np.shape(rgba)[:2], 4)
    return cv2.cvtColor(src, cv2.COLOR_RGBA2RGB)  # ~30x faster than a strided numpy copy
