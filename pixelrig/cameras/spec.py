"""The ``Camera`` spec: an immutable, validated description of one camera (where it is, what it returns).

A camera is world-fixed (``eye``/``target``/``up``) or mounted on a link (``mount`` + ``offset`` in the link
frame). A mounted camera follows the OpenCV convention in its mount frame (after the offset): it looks along +z,
image x runs along +x and image y (downwards) along +y, so the up vector is -y.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from pixelrig.render.registry import BACKENDS

MODALITIES = ("rgb", "depth", "label", "points", "normal", "link", "class")
"""Modalities a camera can return, in their canonical order: rgb (H,W,3) uint8; depth (H,W,1) float32 metres;
label (H,W,1) int32 body ids; points (H,W,4) float32 world xyz + hit flag; normal (H,W,3) float32 world unit
normals; link (H,W,1) int32 link ids; class (H,W,1) int32 class ids (see ``PixelObs(classes=...)``)."""

SEGMENTATION_MODALITIES = ("label", "link", "class")
"""Modalities computed from the segmentation pass (body id and link index per pixel)."""

MAX_SIZE = 4096
"""Largest accepted image width/height in pixels."""

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
Pose = tuple[Vec3, Quat]

IDENTITY_POSE: Pose = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))


@dataclass(frozen=True)
class Camera:
    """One camera of a rig.

    Args:
        name: unique name in its rig; observation keys are ``"<name>/<modality>"`` (so no "/" in it).
        width: image width in pixels (1..4096).
        height: image height in pixels (1..4096).
        fov: vertical field of view in degrees, in (0, 180).
        near: near clipping plane in metres (> 0).
        far: far clipping plane in metres (> near); depth of background pixels.
        eye: camera position in world coordinates (world-fixed camera; needs ``target``).
        target: a point the camera looks at (world-fixed camera; needs ``eye``).
        up: world up direction of a world-fixed camera.
        mount: link the camera is attached to: ``"link"`` or ``"body/link"`` (link names as in the model file;
            a body's base link counts too). Exclusive with ``eye``/``target``.
        offset: pose of the camera in the mount link's frame: ``((x, y, z), (qx, qy, qz, qw))``.
            The camera looks along +z of that frame (OpenCV convention). Normalised on construction.
        follow: how a mounted camera follows its link: "pose" (position and rotation, a camera bolted on) or
            "position" (the link's position only; the offset is then in world axes -- a tracking camera, as
            dm_control's "track" cameras).
        modalities: a non-empty subset of :data:`MODALITIES` (``"rgb"``, ``"depth"``, ``"label"``,
            ``"points"``, ``"normal"``, ``"link"``, ``"class"``); stored in that canonical order.

    Raises:
        ValueError: any field is out of range or inconsistent; the message names the camera and the field.
    """

    name: str
    width: int = field(default=84, kw_only=True)
    height: int = field(default=84, kw_only=True)
    fov: float = field(default=60.0, kw_only=True)
    near: float = field(default=0.01, kw_only=True)
    far: float = field(default=10.0, kw_only=True)
    eye: Vec3 | None = field(default=None, kw_only=True)
    target: Vec3 | None = field(default=None, kw_only=True)
    up: Vec3 = field(default=(0.0, 0.0, 1.0), kw_only=True)
    mount: str | None = field(default=None, kw_only=True)
    offset: Pose = field(default=IDENTITY_POSE, kw_only=True)
    follow: str = field(default="pose", kw_only=True)
    modalities: tuple[str, ...] = field(default=("rgb",), kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or "/" in self.name:
            raise ValueError(f"Camera name must be a non-empty string without '/': got {self.name!r}")
        who = f"Camera {self.name!r}"
        for attr in ("width", "height"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= MAX_SIZE:
                raise ValueError(f"{who}: {attr}={value!r} must be an integer in [1, {MAX_SIZE}]")
            object.__setattr__(self, attr, int(value))
        for attr in ("fov", "near", "far"):
            object.__setattr__(self, attr, _finite(who, attr, getattr(self, attr)))
        if not 0.0 < self.fov < 180.0:
            raise ValueError(f"{who}: fov={self.fov!r} must be in (0, 180) degrees (vertical field of view)")
        if self.near <= 0.0:
            raise ValueError(f"{who}: near={self.near!r} must be > 0")
        if self.near >= self.far:
            raise ValueError(f"{who}: near={self.near!r} must be < far={self.far!r}")
        self._validate_pose(who)
        self._validate_modalities(who)

    def _validate_pose(self, who: str) -> None:
        world = self.eye is not None or self.target is not None
        if world and self.mount is not None:
            raise ValueError(
                f"{who}: eye/target and mount are exclusive: got eye={self.eye!r}, target={self.target!r} and "
                f"mount={self.mount!r}. Use eye+target for a world-fixed camera or mount+offset for one on a link."
            )
        if self.mount is not None:
            if not isinstance(self.mount, str) or not self.mount.strip() or self.mount.count("/") > 1:
                raise ValueError(f"{who}: mount must be 'link' or 'body/link': got {self.mount!r}")
            if self.follow not in ("pose", "position"):
                raise ValueError(f"{who}: follow={self.follow!r} must be 'pose' or 'position'")
            if tuple(self.up) != (0.0, 0.0, 1.0):
                raise ValueError(f"{who}: up={self.up!r} applies to world-fixed cameras; orient a mounted one "
                                 "with offset's quaternion")
            object.__setattr__(self, "offset", _pose(who, self.offset))
            return
        if self.eye is None or self.target is None:
            raise ValueError(
                f"{who}: needs eye and target (world-fixed) or mount (on a link): got eye={self.eye!r}, "
                f"target={self.target!r}, mount=None"
            )
        if self.offset != IDENTITY_POSE:
            raise ValueError(f"{who}: offset={self.offset!r} applies to mounted cameras only (set mount=)")
        if self.follow != "pose":
            raise ValueError(f"{who}: follow={self.follow!r} applies to mounted cameras only (set mount=)")
        eye, target, up = (_vec(who, a, getattr(self, a), 3) for a in ("eye", "target", "up"))
        forward = np.subtract(target, eye)
        if np.linalg.norm(forward) < 1e-9:
            raise ValueError(f"{who}: eye={eye} and target={target} must differ")
        if np.linalg.norm(up) < 1e-9 or np.linalg.norm(np.cross(forward, up)) < 1e-9 * np.linalg.norm(forward):
            raise ValueError(f"{who}: up={up} must be non-zero and not parallel to target - eye")
        object.__setattr__(self, "eye", eye)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "up", up)

    def _validate_modalities(self, who: str) -> None:
        mods = self.modalities
        if isinstance(mods, str) or not isinstance(mods, Sequence) or len(mods) == 0:
            raise ValueError(f"{who}: modalities must be a non-empty sequence drawn from {MODALITIES}: "
                             f"got {mods!r}")
        unknown = [m for m in mods if m not in MODALITIES]
        if unknown:
            raise ValueError(f"{who}: unknown modalities {unknown!r}; choose from {MODALITIES}")
        if len(set(mods)) != len(mods):
            raise ValueError(f"{who}: modalities {tuple(mods)!r} repeat a name")
        object.__setattr__(self, "modalities", tuple(m for m in MODALITIES if m in mods))

    # ---- derived quantities --------------------------------------------------------------------------

    @property
    def aspect(self) -> float:
        """width / height."""
        return self.width / self.height

    @property
    def keys(self) -> tuple[str, ...]:
        """Observation keys this camera produces: ``"<name>/<modality>"``."""
        return tuple(f"{self.name}/{m}" for m in self.modalities)

    @property
    def segmentation(self) -> bool:
        """Whether this camera needs the segmentation pass (it returns label, link or class images)."""
        return any(m in SEGMENTATION_MODALITIES for m in self.modalities)

    @property
    def intrinsics(self) -> np.ndarray:
        """3x3 pinhole matrix K (pixels; square pixels, principal point at the image centre), float64.

        The principal point is ``(width / 2, height / 2)`` in continuous image coordinates (pixel edges at
        integers). For the matrix that maps world points onto the pixel indices of a rendered image, use
        :meth:`opencv_intrinsics`.
        """
        fy = 0.5 * self.height / math.tan(math.radians(self.fov) / 2.0)
        return np.array([[fy, 0.0, self.width / 2.0], [0.0, fy, self.height / 2.0], [0.0, 0.0, 1.0]])

    def opencv_intrinsics(self, renderer: str = "tiny") -> np.ndarray:
        """The OpenCV camera matrix K of this camera's images on ``renderer``, float64 (3, 3).

        A point ``(x, y, z)`` in the OpenCV camera frame (+x right, +y down, +z forward) lands on
        ``(u, v) = (fx x / z + cx, fy y / z + cy)``, where pixel ``(row, col)`` of the image has its centre at
        ``(u, v) = (col, row)``. ``fx = fy = (height / 2) / tan(fov / 2)``; the principal point depends on where the
        renderer samples its pixels (see :data:`PIXEL_SAMPLING`).

        Args:
            renderer: a backend's name (:data:`pixelrig.render.registry.BACKENDS`).

        Raises:
            ValueError: an unknown renderer (the message lists the known ones).
        """
        try:
            dx, dy = BACKENDS[renderer].pixel_sampling
        except KeyError:
            raise ValueError(f"Camera {self.name!r}: renderer={renderer!r} must be one of {tuple(BACKENDS)}") \
                from None
        f = 0.5 * self.height / math.tan(math.radians(self.fov) / 2.0)
        return np.array([[f, 0.0, self.width / 2.0 + dx], [0.0, f, self.height / 2.0 + dy], [0.0, 0.0, 1.0]])

    def projection_matrix(self) -> tuple[float, ...]:
        """pybullet's column-major 4x4 projection matrix for this camera."""
        import pybullet as p

        return tuple(p.computeProjectionMatrixFOV(self.fov, self.aspect, self.near, self.far))

    # ---- (de)serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/TOML friendly) that :meth:`from_dict` turns back into an equal camera."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "offset":
                value = [list(value[0]), list(value[1])]
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Camera:
        """Build a camera from a dict of its fields (as in rig files and ``default_cameras()``).

        Raises:
            ValueError: an unknown key (listing the known ones), a missing name, or an invalid field.
        """
        if isinstance(spec, Camera):
            return spec
        if not isinstance(spec, Mapping):
            raise ValueError(f"a camera spec must be a Camera or a dict of its fields: got {spec!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(
                f"camera spec {spec.get('name', '?')!r}: unknown keys {unknown}; known keys are {sorted(known)}"
            )
        if "name" not in spec:
            raise ValueError(f"camera spec {dict(spec)!r} has no 'name'")
        kwargs = dict(spec)
        name = kwargs.pop("name")
        for key in ("eye", "target", "up", "modalities"):
            if isinstance(kwargs.get(key), list):
                kwargs[key] = tuple(kwargs[key])
        if "offset" in kwargs and isinstance(kwargs["offset"], Sequence) and len(kwargs["offset"]) == 2:
            kwargs["offset"] = (tuple(kwargs["offset"][0]), tuple(kwargs["offset"][1]))
        return cls(name, **kwargs)


def _finite(who: str, attr: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{who}: {attr}={value!r} must be a finite number")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: {attr}={value!r} must be a finite number") from None
    if not math.isfinite(out):
        raise ValueError(f"{who}: {attr}={value!r} must be a finite number")
    return out


def _vec(who: str, attr: str, value: Any, n: int) -> tuple[float, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray) or len(value) != n:
        raise ValueError(f"{who}: {attr}={value!r} must be a sequence of {n} finite numbers")
    return tuple(_finite(who, f"{attr}[{i}]", v) for i, v in enumerate(value))


def _pose(who: str, value: Any) -> Pose:
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise ValueError(f"{who}: offset={value!r} must be ((x, y, z), (qx, qy, qz, qw))")
    xyz = _vec(who, "offset position", value[0], 3)
    quat = np.asarray(_vec(who, "offset quaternion", value[1], 4), dtype=np.float64)
    norm = float(np.linalg.norm(quat))
    if norm < 1e-9:
        raise ValueError(f"{who}: offset quaternion {tuple(value[1])!r} has zero length; identity is (0, 0, 0, 1)")
    return (xyz, tuple(float(q) for q in quat / norm))  # type: ignore[return-value]
