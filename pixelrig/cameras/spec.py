"""The ``Camera`` spec: an immutable, validated description of one camera (where it is, what it returns).

A camera is world-fixed (``eye``/``target``/``up``) or mounted on a link (``mount`` + ``offset`` in the link
frame). A mounted camera follows the OpenCV convention in its mount frame (after the offset): it looks along +z,
image x runs along +x and image y (downwards) along +y, so the up vector is -y.

A camera is also a sensor: a field of view or OpenCV intrinsics, lens distortion, noise, active stereo depth, a
frame period and a latency (see :class:`Camera`; :mod:`pixelrig.cameras.lens` states the pixel convention).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from pixelrig.cameras.lens import LensPlan, check_invertible, fov_intrinsics, lens_plan
from pixelrig.cameras.noise import SensorNoise
from pixelrig.cameras.stereo import disparities
from pixelrig.render.registry import BACKENDS

MODALITIES = ("rgb", "depth", "label", "points", "normal", "link", "class", "depth_stereo")
"""Modalities a camera can return, in their canonical order: rgb (H,W,3) uint8; depth (H,W,1) float32 metres;
label (H,W,1) int32 body ids; points (H,W,4) float32 world xyz + hit flag; normal (H,W,3) float32 world unit
normals; link (H,W,1) int32 link ids; class (H,W,1) int32 class ids (see ``PixelObs(classes=...)``);
depth_stereo (H,W,1) float32 metres from active stereo (see :mod:`pixelrig.cameras.stereo`)."""

SEGMENTATION_MODALITIES = ("label", "link", "class")
"""Modalities computed from the segmentation pass (body id and link index per pixel)."""

MAX_SIZE = 4096
"""Largest accepted image width/height in pixels."""

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
Pose = tuple[Vec3, Quat]

IDENTITY_POSE: Pose = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))

class _DefaultFov(float):
    """The default field of view as an object of its own (equal to 60.0): a camera given ``intrinsics`` tells it
    from a ``fov`` passed explicitly, which conflicts with them. Never stored: a camera keeps a plain float or None."""


DEFAULT_FOV: float = _DefaultFov(60.0)
"""Vertical field of view (degrees) of a camera given neither ``fov`` nor ``intrinsics``."""


@dataclass(frozen=True)
class Camera:
    """One camera of a rig.

    Args:
        name: unique name in its rig; observation keys are ``"<name>/<modality>"`` (so no "/" in it).
        width: image width in pixels (1..4096).
        height: image height in pixels (1..4096).
        fov: vertical field of view in degrees, in (0, 180); square pixels, the principal point where the renderer
            puts a symmetric frustum's (see :meth:`opencv_intrinsics`). A camera given ``intrinsics`` has none
            (None); passing both is an error; None without intrinsics means the default, 60.
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
            ``"points"``, ``"normal"``, ``"link"``, ``"class"``, ``"depth_stereo"``); stored in that canonical
            order.
        intrinsics: OpenCV intrinsics ``(fx, fy, cx, cy)`` in pixels, or the 3x3 matrix ``[[fx, 0, cx], [0, fy,
            cy], [0, 0, 1]]``; pixel centres at integers (pixel ``(row, col)`` is at ``(u, v) = (col, row)``). The
            images have exactly this K on every renderer (an off-axis projection that accounts for where each one
            samples its pixels). Exclusive with ``fov``; stored as ``(fx, fy, cx, cy)``.
        distortion: OpenCV's ``(k1, k2, p1, p2, k3)``: images are drawn wider and remapped so that a world point
            shows where ``cv2.projectPoints(..., K, distortion)`` puts it (see :mod:`pixelrig.cameras.lens`).
            All zeros is stored as None.
        noise: a :class:`~pixelrig.cameras.noise.SensorNoise` (or a dict of its fields): what PixelObs's
            observations of this camera suffer. None: exact images.
        stereo_baseline: metres between the two imagers of ``"depth_stereo"`` (the right one along +x), > 0.
        period: the camera takes a picture every ``period`` steps (and at each reset) and repeats its last one in
            between (an integer >= 1).
        latency: PixelObs shows the picture taken ``latency`` steps ago (an integer >= 0); after a reset, the
            reset's picture until then.

    Raises:
        ValueError: any field is out of range or inconsistent; the message names the camera and the field.
    """

    name: str
    width: int = field(default=84, kw_only=True)
    height: int = field(default=84, kw_only=True)
    fov: float | None = field(default=DEFAULT_FOV, kw_only=True)
    near: float = field(default=0.01, kw_only=True)
    far: float = field(default=10.0, kw_only=True)
    eye: Vec3 | None = field(default=None, kw_only=True)
    target: Vec3 | None = field(default=None, kw_only=True)
    up: Vec3 = field(default=(0.0, 0.0, 1.0), kw_only=True)
    mount: str | None = field(default=None, kw_only=True)
    offset: Pose = field(default=IDENTITY_POSE, kw_only=True)
    follow: str = field(default="pose", kw_only=True)
    modalities: tuple[str, ...] = field(default=("rgb",), kw_only=True)
    intrinsics: tuple[float, float, float, float] | None = field(default=None, kw_only=True)
    distortion: tuple[float, float, float, float, float] | None = field(default=None, kw_only=True)
    noise: SensorNoise | None = field(default=None, kw_only=True)
    stereo_baseline: float = field(default=0.05, kw_only=True)
    period: int = field(default=1, kw_only=True)
    latency: int = field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or "/" in self.name:
            raise ValueError(f"Camera name must be a non-empty string without '/': got {self.name!r}")
        who = f"Camera {self.name!r}"
        for attr in ("width", "height"):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= MAX_SIZE:
                raise ValueError(f"{who}: {attr}={value!r} must be an integer in [1, {MAX_SIZE}]")
            object.__setattr__(self, attr, int(value))
        for attr in ("near", "far"):
            object.__setattr__(self, attr, _finite(who, attr, getattr(self, attr)))
        self._validate_lens(who)
        if self.near <= 0.0:
            raise ValueError(f"{who}: near={self.near!r} must be > 0")
        if self.near >= self.far:
            raise ValueError(f"{who}: near={self.near!r} must be < far={self.far!r}")
        self._validate_pose(who)
        self._validate_modalities(who)
        self._validate_sensor(who)

    def _validate_lens(self, who: str) -> None:
        if self.intrinsics is not None:
            if self.fov is not None and self.fov is not DEFAULT_FOV:
                raise ValueError(f"{who}: fov={self.fov!r} and intrinsics={self.intrinsics!r} are exclusive: give the "
                                 "field of view or the intrinsics, not both (dataclasses.replace(cam, fov=None, "
                                 "intrinsics=...) switches a camera over)")
            object.__setattr__(self, "intrinsics", _intrinsics(who, self.intrinsics, self.width, self.height))
            object.__setattr__(self, "fov", None)
        else:
            fov = _finite(who, "fov", DEFAULT_FOV if self.fov is None else self.fov)
            if not 0.0 < fov < 180.0:
                raise ValueError(f"{who}: fov={fov!r} must be in (0, 180) degrees (vertical field of view)")
            object.__setattr__(self, "fov", fov)
        if self.distortion is not None:
            dist = _vec(who, "distortion", self.distortion, 5)
            if all(v == 0.0 for v in dist):
                object.__setattr__(self, "distortion", None)
            else:
                object.__setattr__(self, "distortion", dist)
                problem = check_invertible(self.opencv_intrinsics("tiny"), dist, self.width, self.height)
                if problem is not None:
                    raise ValueError(f"{who}: {problem}")

    def _validate_sensor(self, who: str) -> None:
        if self.noise is not None and not isinstance(self.noise, SensorNoise):
            try:
                object.__setattr__(self, "noise", SensorNoise.from_dict(self.noise))
            except ValueError as exc:
                raise ValueError(f"{who}: noise: {exc}") from None
        baseline = _finite(who, "stereo_baseline", self.stereo_baseline)
        if baseline <= 0.0:
            raise ValueError(f"{who}: stereo_baseline={baseline!r} must be > 0 (metres between the stereo imagers)")
        object.__setattr__(self, "stereo_baseline", baseline)
        for attr, low in (("period", 1), ("latency", 0)):
            value = getattr(self, attr)
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
                what = "steps between pictures" if attr == "period" else "steps a picture is late"
                raise ValueError(f"{who}: {attr}={value!r} must be an integer >= {low} ({what})")
            object.__setattr__(self, attr, int(value))
        if "depth_stereo" in self.modalities:
            fx = float(self.opencv_intrinsics("tiny")[0, 0])
            if disparities(fx, self.stereo_baseline, self.stereo_min_depth, self.width) < 16:
                raise ValueError(f"{who}: depth_stereo needs an image wide enough to match 16 disparities plus the "
                                 f"matching block: width={self.width} is too narrow (use width >= 22)")

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
    def vertical_fov(self) -> float:
        """The vertical field of view in degrees: ``fov``, or what ``intrinsics`` give (``2 atan(H / 2 fy)``)."""
        if self.intrinsics is None:
            return float(self.fov)  # type: ignore[arg-type]
        return math.degrees(2.0 * math.atan(0.5 * self.height / self.intrinsics[1]))

    @property
    def stereo_min_depth(self) -> float:
        """The nearest depth ``depth_stereo`` searches disparities for (metres): the noise model's range minimum
        when it has one, else ``near`` (nearer points read invalid; see :func:`pixelrig.cameras.stereo.disparities`,
        which also caps the search at 128 disparities)."""
        if self.noise is not None and self.noise.depth_range is not None and self.noise.depth_range[0] > self.near:
            return self.noise.depth_range[0]
        return self.near

    @property
    def timed(self) -> bool:
        """Whether PixelObs holds state for this camera between steps (``period`` > 1, ``latency`` > 0 or noise)."""
        return self.period > 1 or self.latency > 0 or self.noise is not None

    def opencv_intrinsics(self, renderer: str = "tiny") -> np.ndarray:
        """The OpenCV camera matrix K of this camera's images on ``renderer``, float64 (3, 3).

        A point ``(x, y, z)`` in the OpenCV camera frame (+x right, +y down, +z forward) lands on
        ``(u, v) = (fx x / z + cx, fy y / z + cy)`` (before distortion), where pixel ``(row, col)`` of the image has
        its centre at ``(u, v) = (col, row)``. A camera given ``intrinsics`` has exactly those on every renderer. A
        camera given ``fov`` has ``fx = fy = (height / 2) / tan(fov / 2)`` and the principal point where the
        renderer samples a symmetric frustum's (:attr:`pixelrig.render.registry.BackendEntry.pixel_sampling`: the
        image centre shifted by that offset).

        Args:
            renderer: a backend's name (:data:`pixelrig.render.registry.BACKENDS`).

        Raises:
            ValueError: an unknown renderer (the message lists the known ones).
        """
        sampling = self._sampling(renderer)
        if self.intrinsics is not None:
            fx, fy, cx, cy = self.intrinsics
            return np.array([[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]])
        return fov_intrinsics(float(self.fov), self.width, self.height, sampling)  # type: ignore[arg-type]

    def _sampling(self, renderer: str) -> tuple[float, float]:
        try:
            return BACKENDS[renderer].pixel_sampling
        except KeyError:
            raise ValueError(f"Camera {self.name!r}: renderer={renderer!r} must be one of {tuple(BACKENDS)}") \
                from None

    def projection_matrix(self, renderer: str = "tiny") -> tuple[float, ...]:
        """The column-major 4x4 projection matrix that draws this camera's (undistorted) images on ``renderer``:
        pybullet's ``computeProjectionMatrixFOV`` for a field of view (the same on every renderer), an off-axis
        frustum for intrinsics (:func:`pixelrig.cameras.lens.projection_from_intrinsics`)."""
        return self.lens(renderer).projection

    def lens(self, renderer: str = "tiny") -> LensPlan:
        """What to draw for this camera on ``renderer`` and how to make its images from it (cached): the size and
        projection to draw, each pixel's ray and, with distortion, the remap (:func:`pixelrig.cameras.lens.lens_plan`).

        Raises:
            ValueError: an unknown renderer, or a distortion that cannot be inverted over the image.
        """
        sampling = self._sampling(renderer)
        k = self.opencv_intrinsics(renderer)
        fov_projection = None
        if self.intrinsics is None:
            import pybullet as p

            fov_projection = tuple(p.computeProjectionMatrixFOV(self.fov, self.aspect, self.near, self.far))
        try:
            return lens_plan((float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2])), self.width, self.height,
                             self.near, self.far, sampling, self.distortion, fov_projection)
        except ValueError as exc:
            raise ValueError(f"Camera {self.name!r}: {exc}") from None

    @classmethod
    def preset(cls, sensor: str, *, name: str, resolution: tuple[int, int] | None = None, **fields: Any) -> Camera:
        """A camera modelled on a real sensor (:data:`pixelrig.cameras.presets.PRESETS`): its intrinsics at one of
        its resolutions, depth range, stereo baseline and noise, from its datasheet.

        Args:
            sensor: a preset's name, e.g. ``"d435"`` or ``"d405"``.
            name: the camera's name.
            resolution: ``(width, height)``, one the sensor offers; None: its default.
            **fields: any other Camera fields (``eye``/``target`` or ``mount``, ``modalities``, ``period``, ...);
                they win over the preset's.

        Raises:
            ValueError: an unknown preset (the message lists them), a resolution the sensor does not offer (the
                message lists those it does), or an invalid field.
        """
        from pixelrig.cameras.presets import preset_fields

        return cls(name, **{**preset_fields(sensor, resolution), **fields})

    # ---- (de)serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/TOML friendly) that :meth:`from_dict` turns back into an equal camera."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "offset":
                value = [list(value[0]), list(value[1])]
            elif f.name == "noise" and value is not None:
                value = value.to_dict()
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
        for key in ("eye", "target", "up", "modalities", "intrinsics", "distortion"):
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


def _intrinsics(who: str, value: Any, width: int, height: int) -> tuple[float, float, float, float]:
    """``(fx, fy, cx, cy)`` from four numbers or a 3x3 K, checked (focal lengths > 0, principal point in the image)."""
    arr = None
    if not isinstance(value, str | bytes):
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
    if arr is None or arr.shape not in ((4,), (3, 3)):
        raise ValueError(f"{who}: intrinsics={value!r} must be (fx, fy, cx, cy) or a 3x3 K [[fx, 0, cx], [0, fy, cy], "
                         "[0, 0, 1]]")
    if not np.isfinite(arr).all():
        raise ValueError(f"{who}: intrinsics={value!r} must be finite numbers")
    if arr.shape == (3, 3):
        if arr[0, 1] != 0.0 or arr[1, 0] != 0.0 or arr[2, 0] != 0.0 or arr[2, 1] != 0.0 or arr[2, 2] != 1.0:
            raise ValueError(f"{who}: intrinsics K={arr.tolist()} must be of the form [[fx, 0, cx], [0, fy, cy], "
                             "[0, 0, 1]] (no skew, last row 0 0 1)")
        arr = np.array([arr[0, 0], arr[1, 1], arr[0, 2], arr[1, 2]])
    fx, fy, cx, cy = (float(v) for v in arr)
    for label, f in (("fx", fx), ("fy", fy)):
        if f <= 0.0:
            raise ValueError(f"{who}: intrinsics {label}={f!r} must be > 0 (a focal length in pixels)")
    if not (-0.5 <= cx <= width - 0.5 and -0.5 <= cy <= height - 0.5):
        raise ValueError(f"{who}: intrinsics principal point (cx, cy)=({cx!r}, {cy!r}) lies outside the "
                         f"{width}x{height} image: it must be within [-0.5, {width - 0.5}] x [-0.5, {height - 0.5}] "
                         "(OpenCV pixel coordinates, pixel centres at integers)")
    return fx, fy, cx, cy


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
