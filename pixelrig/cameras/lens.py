"""A camera's lens: the projection matrix that makes a renderer draw a given OpenCV K, and for a lens with
distortion, the wider pinhole image to draw and the maps that turn it into the distorted one.

Conventions (the one stated for the whole package): OpenCV's pinhole model, +x right, +y down, +z forward, and
pixel ``(row, col)`` has its centre at image coordinates ``(u, v) = (col, row)`` (pixel centres at integers, the
image spans ``[-0.5, width - 0.5]``). Distortion is OpenCV's ``(k1, k2, p1, p2, k3)`` model: the undistorted
normalised point ``(x, y)`` is seen at ``u = fx x_d + cx`` with ``x_d = x (1 + k1 r^2 + k2 r^4 + k3 r^6) + 2 p1 x y +
p2 (r^2 + 2 x^2)`` and ``y_d`` likewise, exactly as ``cv2.projectPoints`` computes it.

Every function is pure and computed in float64; plans are cached per camera (a world-fixed camera's maps are made
once).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np

MARGIN_PX = 1.5
"""Pixels of the drawn (undistorted) image kept beyond the farthest point a distorted pixel samples, so that
bilinear taps stay inside."""

MAX_SOURCE_SIDE = 4096
"""Largest side of the drawn image of a distorted camera; a lens that needs more is drawn with a shorter focal
length (fewer pixels per radian) instead."""

EDGE_JUMP = 0.1
"""A distorted pixel's depth is interpolated (inverse depth, bilinear: exact on planes) from its four source taps
when all four are surfaces within this relative depth of each other and on one plane (:data:`PLANAR_TOL`); at a
larger jump (an occluding edge) or a crease it takes its nearest tap's point, so that no pixel floats between a
foreground and a background or cuts a corner."""

PLANAR_TOL = 1e-3
"""Four taps lie on one plane when their inverse depths ``i`` satisfy ``|i00 - i01 - i10 + i11| <= PLANAR_TOL *
mean(i)`` (an affine function's 2x2 cross difference is 0; the tolerance covers the renderers' depth rounding, up
to 3e-4 relative on EGL's 24-bit buffer)."""

INVERSION_TOL_PX = 1e-3
"""Largest allowed residual, in output pixels, of re-distorting (``cv2.projectPoints``) each pixel's undistorted
ray: a lens whose model folds over inside the image cannot be inverted and is refused."""


def projection_from_intrinsics(k: tuple[float, float, float, float], width: int, height: int, near: float,
                               far: float, sampling: tuple[float, float]) -> tuple[float, ...]:
    """The OpenGL projection matrix (column-major, as pybullet takes it) whose image, drawn by a renderer that
    samples pixels as ``sampling`` says, has the OpenCV camera matrix ``k``.

    A renderer with pixel sampling ``(dx, dy)`` (:attr:`pixelrig.render.registry.BackendEntry.pixel_sampling`)
    samples pixel ``(col, row)`` at normalised device coordinates ``x = 2 (col - dx) / W - 1`` and ``y = 1 - 2 (row -
    dy) / H`` (that is what a symmetric frustum's principal point at ``(W / 2 + dx, H / 2 + dy)`` means). Solving
    ``x = P00 (u - cx) / fx - P02`` for every column gives ``P00 = 2 fx / W`` and ``P02 = 1 - 2 (cx - dx) / W``;
    rows likewise (image y is down, GL's y up): ``P11 = 2 fy / H`` and ``P12 = 2 (cy - dy) / H - 1``. The depth
    rows are pybullet's (``computeProjectionMatrixFOV``'s), so the z-buffer still converts with near and far.

    Args:
        k: ``(fx, fy, cx, cy)`` in pixels, OpenCV convention.
        width: image width in pixels.
        height: image height in pixels.
        near: near plane (m).
        far: far plane (m).
        sampling: the renderer's ``(dx, dy)``.

    Returns:
        16 floats, column-major.
    """
    fx, fy, cx, cy = (float(v) for v in k)
    dx, dy = sampling
    m = np.zeros((4, 4))
    m[0, 0] = 2.0 * fx / width
    m[0, 2] = 1.0 - 2.0 * (cx - dx) / width
    m[1, 1] = 2.0 * fy / height
    m[1, 2] = 2.0 * (cy - dy) / height - 1.0
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return tuple(float(v) for v in m.T.ravel())


def fov_intrinsics(fov: float, width: int, height: int, sampling: tuple[float, float]) -> np.ndarray:
    """The OpenCV K of a symmetric frustum of vertical ``fov`` degrees drawn by a renderer with ``sampling``."""
    f = 0.5 * height / math.tan(math.radians(fov) / 2.0)
    return np.array([[f, 0.0, width / 2.0 + sampling[0]], [0.0, f, height / 2.0 + sampling[1]], [0.0, 0.0, 1.0]])


def pinhole_rays(k: np.ndarray, width: int, height: int) -> np.ndarray:
    """(2, H, W) float64 normalised coordinates ``((col - cx) / fx, (row - cy) / fy)`` of each pixel's ray."""
    k = np.asarray(k, dtype=np.float64)
    xs = (np.arange(width, dtype=np.float64) - k[0, 2]) / k[0, 0]
    ys = (np.arange(height, dtype=np.float64) - k[1, 2]) / k[1, 1]
    return np.stack(np.broadcast_arrays(xs[None, :], ys[:, None]))


def undistort_pixels(k: np.ndarray, distortion: tuple[float, ...], width: int, height: int) -> np.ndarray:
    """(2, H, W) float64 normalised coordinates of the undistorted ray that each pixel of a distorted image sees.

    ``cv2.undistortPoints`` (30 iterations), Newton steps where it has not converged, then checked by
    re-distorting with ``cv2.projectPoints``.

    Raises:
        ValueError: some pixel's ray does not re-distort onto it within :data:`INVERSION_TOL_PX` (the model folds
            over inside the image: no ray maps there, or two do).
    """
    k = np.asarray(k, dtype=np.float64)
    dist = np.asarray(distortion, dtype=np.float64)
    cols, rows = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    pix = np.stack([cols.ravel(), rows.ravel()], axis=-1)[:, None, :]
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-12)  # then Newton steps where slow
    norm = cv2.undistortPoints(pix, k, dist, criteria=criteria)[:, 0, :]
    back = redistort(norm, k, dist)
    if len(back) and float(np.abs(back - pix[:, 0, :]).max()) > 1e-9:
        norm = _refine(norm, pix[:, 0, :], k, dist)
        back = redistort(norm, k, dist)
    residual = float(np.abs(back - pix[:, 0, :]).max()) if len(back) else 0.0
    if not residual <= INVERSION_TOL_PX:
        raise ValueError(f"distortion {tuple(float(v) for v in dist)} cannot be inverted over a {width}x{height} image "
                         f"with this K: undistorted rays re-distort up to {residual:.3g} px off their pixels (the "
                         "model folds over inside the image); use smaller coefficients or a narrower field of view")
    return norm.T.reshape(2, height, width)


def redistort(norm: np.ndarray, k: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """(N, 2) pixel coordinates of normalised undistorted points (N, 2), through ``cv2.projectPoints``."""
    obj = np.concatenate([norm, np.ones((len(norm), 1))], axis=1)[:, None, :]
    out, _ = cv2.projectPoints(obj, np.zeros(3), np.zeros(3), k, dist)
    return out[:, 0, :]


def _refine(norm: np.ndarray, pix: np.ndarray, k: np.ndarray, dist: np.ndarray, steps: int = 4) -> np.ndarray:
    """Newton steps on ``redistort(norm) = pix`` (OpenCV's fixed-point iteration converges slowly where the
    distortion is strong); finite-difference Jacobian, float64."""
    h = 1e-7
    for _ in range(steps):
        f0 = redistort(norm, k, dist) - pix
        if float(np.abs(f0).max(initial=0.0)) < 1e-9:
            break
        jx = (redistort(norm + [h, 0.0], k, dist) - pix - f0) / h
        jy = (redistort(norm + [0.0, h], k, dist) - pix - f0) / h
        det = jx[:, 0] * jy[:, 1] - jy[:, 0] * jx[:, 1]
        ok = np.abs(det) > 1e-12
        det = np.where(ok, det, 1.0)
        step_x = (jy[:, 1] * f0[:, 0] - jy[:, 0] * f0[:, 1]) / det
        step_y = (-jx[:, 1] * f0[:, 0] + jx[:, 0] * f0[:, 1]) / det
        norm = norm - np.where(ok[:, None], np.stack([step_x, step_y], axis=1), 0.0)
    return norm


@dataclass(frozen=True, eq=False)
class Remap:
    """How a distorted camera's image is made from a wider pinhole image (the *source*) drawn for it.

    Attributes:
        source_size: ``(width, height)`` of the source image.
        source_k: (3, 3) float64 OpenCV K of the source image (same focal length as the camera unless the source
            would pass :data:`MAX_SOURCE_SIDE`).
        map_x: (H, W) float32 source column each output pixel samples (``cv2.remap``'s map).
        map_y: (H, W) float32 source row.
        nearest: (H, W) int64 flat index of each output pixel's nearest source pixel.
        nearest_rays: (2, H, W) float64 normalised coordinates of that nearest source pixel's ray.
        taps: (4, H, W) int64 flat indices of the four bilinear taps.
        weights: (4, H, W) float64 bilinear weights of the taps.
    """

    source_size: tuple[int, int]
    source_k: np.ndarray
    map_x: np.ndarray
    map_y: np.ndarray
    nearest: np.ndarray
    nearest_rays: np.ndarray
    taps: np.ndarray
    weights: np.ndarray

    def rgb(self, source: np.ndarray) -> np.ndarray:
        """(H, W, C) uint8 output from a (Hs, Ws, C) source image, bilinear (``cv2.remap``)."""
        return cv2.remap(np.ascontiguousarray(source), self.map_x, self.map_y, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE)

    def pick(self, source: np.ndarray) -> np.ndarray:
        """Nearest-neighbour output (labels, segmentation, drawn normals) from a (Hs, Ws, ...) source image."""
        flat = np.asarray(source).reshape(self.source_size[0] * self.source_size[1], *np.shape(source)[2:])
        return flat[self.nearest]

    def depth(self, metres: np.ndarray, valid: np.ndarray, segment: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Depth along the optical axis of the point each output pixel sees, whether it sees one, and which point.

        Where the four bilinear taps are valid surfaces within :data:`EDGE_JUMP` of each other, on one plane and
        (given ``segment``) on one body and link (*smooth*), inverse
        depth is interpolated bilinearly (inverse depth is affine over the source image on a plane, so this is exact
        on planes) and the point is on the output pixel's own ray; elsewhere (an occluding edge, the horizon) the
        pixel sees its nearest tap's point: that tap's depth, validity and ray (:attr:`nearest_rays`), so that no
        point floats off every surface (it lies at most half a source pixel off the pixel's ray).

        Args:
            metres: (Hs, Ws) float64 source depth.
            valid: (Hs, Ws) bool, True where the source has a reading (a surface).
            segment: (Hs, Ws) integer segmentation, or None: with it, a pixel whose taps straddle two bodies or
                links (an object standing on another: no depth jump) sees its nearest tap's point, so that its label
                (the nearest tap's) and its point agree.

        Returns:
            ``((H, W) float64 metres, (H, W) bool valid, (H, W) bool smooth)``.
        """
        z = np.asarray(metres, dtype=np.float64).ravel()
        ok = np.asarray(valid, dtype=bool).ravel()
        tz = z[self.taps]
        all_ok = ok[self.taps].all(axis=0)
        safe = np.where(all_ok[None], tz, 1.0)
        inv = 1.0 / safe
        planar = np.abs(inv[0] - inv[1] - inv[2] + inv[3]) <= PLANAR_TOL * inv.mean(axis=0)
        smooth = all_ok & planar & (safe.max(axis=0) <= safe.min(axis=0) * (1.0 + EDGE_JUMP))
        if segment is not None:
            seg = np.asarray(segment).ravel()[self.taps]
            smooth &= (seg == seg[0]).all(axis=0)
        inverse = (self.weights * inv).sum(axis=0)
        near_z, near_ok = z[self.nearest], ok[self.nearest]
        out = np.where(smooth, 1.0 / inverse, near_z)
        return out, smooth | near_ok, smooth


@dataclass(frozen=True, eq=False)
class LensPlan:
    """What to draw for a camera on one renderer, and how to turn it into the camera's images.

    Attributes:
        k: (3, 3) float64 OpenCV K of the camera's images.
        size: ``(width, height)`` of the camera's images.
        draw_size: ``(width, height)`` of the image to draw.
        projection: column-major projection matrix to draw it with.
        rays: (2, H, W) float64 normalised coordinates of each output pixel's ray (distortion undone).
        remap: the distortion's remap, or None for a pinhole camera (the drawn image is the output).
    """

    k: np.ndarray
    size: tuple[int, int]
    draw_size: tuple[int, int]
    projection: tuple[float, ...]
    rays: np.ndarray
    remap: Remap | None


@functools.lru_cache(maxsize=256)
def lens_plan(k: tuple[float, float, float, float], width: int, height: int, near: float, far: float,
              sampling: tuple[float, float], distortion: tuple[float, ...] | None,
              projection: tuple[float, ...] | None = None) -> LensPlan:
    """The plan of a camera with OpenCV intrinsics ``k`` on a renderer with ``sampling`` (cached).

    Args:
        k: ``(fx, fy, cx, cy)``.
        width: image width.
        height: image height.
        near: near plane (m).
        far: far plane (m).
        sampling: the renderer's pixel sampling.
        distortion: ``(k1, k2, p1, p2, k3)`` or None.
        projection: the pinhole projection to use when there is no distortion (a field-of-view camera keeps
            pybullet's own matrix, bit for bit); None computes it from ``k``.

    Raises:
        ValueError: the distortion cannot be inverted over the image (see :func:`undistort_pixels`).
    """
    fx, fy, cx, cy = k
    kk = np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
    if distortion is None:
        proj = projection if projection is not None else projection_from_intrinsics(k, width, height, near, far,
                                                                                     sampling)
        return LensPlan(kk, (width, height), (width, height), proj, pinhole_rays(kk, width, height), None)
    rays = undistort_pixels(kk, distortion, width, height)
    lo = rays.reshape(2, -1).min(axis=1)
    hi = rays.reshape(2, -1).max(axis=1)
    focal = np.array([fx, fy])
    span = (hi - lo) * focal + 2.0 * MARGIN_PX
    scale = min(1.0, (MAX_SOURCE_SIDE - 1) / float(span.max()))
    sf = focal * scale
    size = np.maximum(np.ceil((hi - lo) * sf + 2.0 * MARGIN_PX).astype(int) + 1, 1)
    centre = MARGIN_PX - lo * sf  # the source principal point: the lowest ray lands MARGIN_PX inside
    sk = (float(sf[0]), float(sf[1]), float(centre[0]), float(centre[1]))
    ws, hs = int(size[0]), int(size[1])
    source_k = np.array([[sk[0], 0.0, sk[2]], [0.0, sk[1], sk[3]], [0.0, 0.0, 1.0]])
    mx = rays[0] * sk[0] + sk[2]
    my = rays[1] * sk[1] + sk[3]
    x0 = np.clip(np.floor(mx).astype(np.int64), 0, ws - 2 if ws > 1 else 0)
    y0 = np.clip(np.floor(my).astype(np.int64), 0, hs - 2 if hs > 1 else 0)
    ax = np.clip(mx - x0, 0.0, 1.0)
    ay = np.clip(my - y0, 0.0, 1.0)
    x1 = np.minimum(x0 + 1, ws - 1)
    y1 = np.minimum(y0 + 1, hs - 1)
    taps = np.stack([y0 * ws + x0, y0 * ws + x1, y1 * ws + x0, y1 * ws + x1])
    weights = np.stack([(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay])
    ny = np.clip(np.rint(my), 0, hs - 1)
    nx = np.clip(np.rint(mx), 0, ws - 1)
    nearest = ny.astype(np.int64) * ws + nx.astype(np.int64)
    nearest_rays = np.stack([(nx - sk[2]) / sk[0], (ny - sk[3]) / sk[1]])
    remap = Remap((ws, hs), source_k, mx.astype(np.float32), my.astype(np.float32), nearest, nearest_rays, taps,
                  weights)
    proj = projection_from_intrinsics(sk, ws, hs, near, far, sampling)
    return LensPlan(kk, (width, height), (ws, hs), proj, rays, remap)


def check_invertible(k: np.ndarray, distortion: tuple[float, ...], width: int, height: int) -> str | None:
    """None when the distortion can be inverted over the image's border (where a radial model first folds); else
    what goes wrong. Cheap enough for a camera's construction (the whole image is checked when it is drawn)."""
    cols = np.arange(width, dtype=np.float64)
    rows = np.arange(height, dtype=np.float64)
    border = np.concatenate([np.stack([cols, np.zeros(width)], 1), np.stack([cols, np.full(width, height - 1.0)], 1),
                             np.stack([np.zeros(height), rows], 1), np.stack([np.full(height, width - 1.0), rows], 1)])
    k = np.asarray(k, dtype=np.float64)
    dist = np.asarray(distortion, dtype=np.float64)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 1e-12)  # then Newton steps where slow
    norm = cv2.undistortPoints(border[:, None, :], k, dist, criteria=criteria)[:, 0, :]
    norm = _refine(norm, border, k, dist)
    residual = float(np.abs(redistort(norm, k, dist) - border).max())
    if residual <= INVERSION_TOL_PX:
        return None
    return (f"distortion {tuple(float(v) for v in dist)} cannot be inverted at the image border ({residual:.3g} px "
            "off: the model folds over inside the image); use smaller coefficients or a narrower field of view")
