"""``PointCloudObs``: fuse a PixelObs rig's world-point images into one fixed-size point cloud per step."""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.wrappers.pixel_obs import PixelObs

INT32_MAX = int(np.iinfo(np.int32).max)
NO_LABEL = -1
"""Label of points from cameras without a ``"label"`` image, and of the zero points of an empty cloud."""
_SEED_SALT = 0x50C1  # keeps the sampler's stream apart from the env's own, which gymnasium seeds with the same seed
KEYS = ("pointcloud/xyz", "pointcloud/rgb", "pointcloud/label")


class PointCloudObs(gym.ObservationWrapper[dict[str, np.ndarray], Any, Any], gym.utils.RecordConstructorArgs):
    """Adds one fused, fixed-size point cloud of the scene to a PixelObs observation.

    Every step, the ``"<camera>/points"`` images of the fused cameras (world xyz + hit flag) are gathered, with
    each point's colour from the camera's ``"rgb"`` image and body id from its ``"label"`` image where the camera
    returns them. Background pixels, points on excluded bodies and points outside ``bounds`` are dropped; with
    ``voxel_size``, one point per occupied voxel is kept (the first in camera order, then pixel order, so colours
    and labels stay those of a real pixel). Then exactly ``num_points`` are chosen:

    - more points than ``num_points``: a uniform sample without replacement;
    - fewer (but some): every point once, then repeats drawn uniformly with replacement;
    - none: zeros, colour 0 and label -1.

    Points keep camera order, then pixel order (the sample is sorted; repeats follow the originals). The sampler
    is a numpy ``Generator`` of its own: it never draws from the env's RNG, it is re-seeded by
    ``reset(seed=...)`` (from that seed, but a stream apart from the env's), and its state is part of
    :func:`pixelrig.snapshot` (so a restored env samples the same clouds).

    Keys added: ``"pointcloud/xyz"`` (N,3) float32 world metres; ``"pointcloud/rgb"`` (N,3) uint8 (0 for cameras
    without rgb); ``"pointcloud/label"`` (N,1) int32 body ids (-1 for cameras without label). The wrapped
    observation's keys stay.

    Args:
        env: a PixelObs, or a wrapper over one whose observation still holds its keys.
        num_points: N, the fixed number of points (>= 1).
        exclude: body names (``fnmatch`` globs allowed) whose points are dropped, e.g. ``("ground", "table")``.
            Every fused camera then needs ``"label"``.
        bounds: ``(low_xyz, high_xyz)`` world box; points outside it are dropped. None keeps all.
        cams: names of the cameras to fuse; None fuses every camera that returns ``"points"``.
        voxel_size: edge in metres of the voxel grid for downsampling (> 0); None keeps every point.
        seed: the sampler's seed until ``reset(seed=...)`` gives one; None draws fresh entropy.

    Raises:
        ValueError: ``num_points`` is not an integer >= 1; no PixelObs underneath; a camera is unknown or does not
            return ``"points"`` (the message lists those that do); ``exclude`` names a body that is not in the
            scene (the message lists the bodies) or a fused camera lacks ``"label"``; ``bounds`` is not two
            finite-or-infinite xyz triples with low <= high; ``voxel_size`` is not a finite number > 0.
    """

    def __init__(
        self,
        env: gym.Env,
        num_points: int,
        exclude: Iterable[str] = (),
        bounds: Sequence[Sequence[float]] | np.ndarray | None = None,
        cams: Iterable[str] | None = None,
        voxel_size: float | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(env)
        if isinstance(num_points, bool) or not isinstance(num_points, int | np.integer) or num_points < 1:
            raise ValueError(f"PointCloudObs: num_points={num_points!r} must be an integer >= 1 (the fixed number of "
                             "points per observation)")
        self.num_points = int(num_points)
        self.pixel_obs = _find_pixel_obs(env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict):
            raise ValueError(f"PointCloudObs needs a Dict observation (a PixelObs's): got {type(space).__name__}")
        self.cams = _fused_cameras(self.pixel_obs, space, cams)
        self.exclude = _names(exclude)
        self._check_exclude(space)
        self.bounds = _bounds(bounds)
        self.voxel_size = _voxel(voxel_size)
        taken = [k for k in KEYS if k in space.spaces]
        if taken:
            raise ValueError(f"PointCloudObs: the wrapped observation already has {taken} (one PointCloudObs per "
                             "stack)")
        gym.utils.RecordConstructorArgs.__init__(
            self, num_points=self.num_points, exclude=self.exclude, cams=self.cams,
            bounds=None if self.bounds is None else self.bounds.tolist(), voxel_size=self.voxel_size, seed=seed,
        )
        self._rng = np.random.Generator(np.random.PCG64(seed))
        n = self.num_points
        if self.bounds is None:
            low, high = np.full((n, 3), -np.inf, np.float32), np.full((n, 3), np.inf, np.float32)
        else:  # an empty cloud is all zeros, so the space holds the origin too
            low = np.broadcast_to(np.minimum(self.bounds[0], 0.0), (n, 3)).astype(np.float32)
            high = np.broadcast_to(np.maximum(self.bounds[1], 0.0), (n, 3)).astype(np.float32)
        self.observation_space = spaces.Dict({
            **space.spaces,
            "pointcloud/xyz": spaces.Box(low, high, dtype=np.float32),
            "pointcloud/rgb": spaces.Box(0, 255, (n, 3), np.uint8),
            "pointcloud/label": spaces.Box(NO_LABEL, INT32_MAX, (n, 1), np.int32),
        })
        self._excluded_for: tuple[int, np.ndarray] | None = None

    def _check_exclude(self, space: spaces.Dict) -> None:
        if not self.exclude:
            return
        unlabelled = [c for c in self.cams if f"{c}/label" not in space.spaces]
        if unlabelled:
            raise ValueError(f"PointCloudObs(exclude={list(self.exclude)}) needs the body ids of every fused camera, "
                             f"but cameras {unlabelled} do not return 'label': add 'label' to their modalities")
        bodies = sorted(set(self.pixel_obs.rig.label_names.values()))
        unknown = [pat for pat in self.exclude if not any(fnmatch.fnmatchcase(b, pat) for b in bodies)]
        if unknown:
            raise ValueError(f"PointCloudObs: exclude names {unknown} match no body in the scene; bodies: "
                             f"{', '.join(bodies) or '(none)'}")

    # ---- the cloud ------------------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Reset the wrapped env; a ``seed`` also re-seeds the point sampler (see the class docstring)."""
        if seed is not None:
            self._rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(_SEED_SALT,))))
        return super().reset(seed=seed, options=options)

    def observation(self, observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Add the fused cloud's keys to the wrapped observation."""
        xyz, rgb, label = self.gather(observation)
        out = dict(observation)
        out.update(zip(KEYS, self.sample(xyz, rgb, label), strict=True))
        return out

    def gather(self, observation: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every kept point of the fused cameras before sampling: ``(xyz (M,3) float32, rgb (M,3) uint8,
        label (M,) int32)`` after dropping background, excluded bodies, points out of bounds, and voxel
        downsampling."""
        xyzs, rgbs, labels = [], [], []
        for cam in self.cams:
            points = observation[f"{cam}/points"]
            hit = points[..., 3] > 0
            xyzs.append(points[..., :3][hit])
            rgb = observation.get(f"{cam}/rgb")
            rgbs.append(rgb[hit] if rgb is not None else np.zeros((len(xyzs[-1]), 3), np.uint8))
            label = observation.get(f"{cam}/label")
            labels.append(label[..., 0][hit] if label is not None else np.full(len(xyzs[-1]), NO_LABEL, np.int32))
        xyz, rgb, label = np.concatenate(xyzs), np.concatenate(rgbs), np.concatenate(labels)
        keep = None
        if self.exclude:
            keep = ~np.isin(label, self._excluded_ids())
        if self.bounds is not None:
            inside = np.all((xyz >= self.bounds[0]) & (xyz <= self.bounds[1]), axis=1)
            keep = inside if keep is None else keep & inside
        if keep is not None:
            xyz, rgb, label = xyz[keep], rgb[keep], label[keep]
        if self.voxel_size is not None and len(xyz):
            first = _first_per_voxel(xyz, self.voxel_size)
            xyz, rgb, label = xyz[first], rgb[first], label[first]
        return xyz, rgb, label

    def sample(self, xyz: np.ndarray, rgb: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, ...]:
        """Exactly ``num_points`` of the gathered points (see the class docstring for padding); draws from the
        wrapper's own sampler only."""
        n, m = self.num_points, len(xyz)
        if m == 0:
            return (np.zeros((n, 3), np.float32), np.zeros((n, 3), np.uint8), np.full((n, 1), NO_LABEL, np.int32))
        if m >= n:
            idx = np.sort(self._rng.choice(m, size=n, replace=False))
        else:
            idx = np.concatenate([np.arange(m), np.sort(self._rng.integers(0, m, size=n - m))])
        return (np.ascontiguousarray(xyz[idx], dtype=np.float32), np.ascontiguousarray(rgb[idx], dtype=np.uint8),
                label[idx].astype(np.int32)[:, None])

    def _excluded_ids(self) -> np.ndarray:
        """Body ids of the excluded names in the current scene (looked up again when the world is rebuilt)."""
        names = self.pixel_obs.rig.label_names
        if self._excluded_for is None or self._excluded_for[0] != id(names):
            ids = [b for b, name in names.items() if any(fnmatch.fnmatchcase(name, pat) for pat in self.exclude)]
            self._excluded_for = (id(names), np.asarray(ids, np.int32))
        return self._excluded_for[1]

    # ---- snapshots ------------------------------------------------------------------------------------------------

    def snapshot_state(self) -> dict[str, Any]:
        """The sampler's state (numpy's PCG64 state: a dict of strings and integers)."""
        return {"sampler": self._rng.bit_generator.state}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Put the sampler back where :meth:`snapshot_state` found it.

        Raises:
            ValueError: the state is not a PCG64 state.
        """
        sampler = state.get("sampler") if isinstance(state, dict) else None
        if not isinstance(sampler, dict) or sampler.get("bit_generator") != "PCG64":
            raise ValueError(f"PointCloudObs: snapshot state {state!r} holds no PCG64 sampler state")
        rng = np.random.Generator(np.random.PCG64())
        rng.bit_generator.state = sampler
        self._rng = rng


def _find_pixel_obs(env: gym.Env) -> PixelObs:
    inner = env
    while isinstance(inner, gym.Wrapper):
        if isinstance(inner, PixelObs):
            return inner
        inner = inner.env
    raise ValueError(
        "PointCloudObs needs a PixelObs underneath whose cameras return 'points': e.g. PointCloudObs(PixelObs(env, "
        "cams=[Camera('front', ..., modalities=('rgb', 'label', 'points'))]), num_points=1024)"
    )


def _fused_cameras(pixel_obs: PixelObs, space: spaces.Dict, cams: Iterable[str] | None) -> tuple[str, ...]:
    with_points = [c.name for c in pixel_obs.rig.cameras if f"{c.name}/points" in space.spaces]
    if cams is None:
        if not with_points:
            have = {c.name: c.modalities for c in pixel_obs.rig.cameras}
            raise ValueError(f"PointCloudObs: no camera returns 'points' (cameras: {have}); add 'points' to the "
                             "modalities of the cameras to fuse")
        return tuple(with_points)
    if isinstance(cams, str):
        raise ValueError(f"PointCloudObs: cams must be a list of camera names: got the string {cams!r} "
                         f"(write cams=[{cams!r}])")
    names = tuple(cams)
    bad = [c for c in names if c not in with_points]
    if bad or not names:
        raise ValueError(f"PointCloudObs: cams {list(names)} must be a non-empty list of cameras that return "
                         f"'points'; those are {with_points}" + (f" (not: {bad})" if bad else ""))
    return names


def _names(exclude: Iterable[str]) -> tuple[str, ...]:
    names = (exclude,) if isinstance(exclude, str) else tuple(exclude)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"PointCloudObs: exclude entries must be body names (globs allowed): got {name!r}")
    return names


def _bounds(bounds: Sequence[Sequence[float]] | np.ndarray | None) -> np.ndarray | None:
    if bounds is None:
        return None
    try:
        arr = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (2, 3):
        shape = "ragged" if arr is None else arr.shape
        raise ValueError(f"PointCloudObs: bounds must be (low_xyz, high_xyz), two triples of numbers, shape (2, 3): "
                         f"got {bounds!r} (shape {shape})")
    if np.isnan(arr).any() or (arr[0] > arr[1]).any():
        raise ValueError(f"PointCloudObs: bounds {arr.tolist()} need low <= high on every axis and no NaN")
    return arr


def _voxel(voxel_size: float | None) -> float | None:
    if voxel_size is None:
        return None
    ok = not isinstance(voxel_size, bool) and isinstance(voxel_size, int | float | np.integer | np.floating)
    if not ok or not math.isfinite(float(voxel_size)) or float(voxel_size) <= 0:
        raise ValueError(f"PointCloudObs: voxel_size={voxel_size!r} must be a finite number of metres > 0, or None")
    return float(voxel_size)


def _first_per_voxel(xyz: np.ndarray, size: float) -> np.ndarray:
    """Indices (ascending) of the first point in each occupied voxel of edge ``size``."""
    cells = np.floor(xyz.astype(np.float64) / size).astype(np.int64)
    cells -= cells.min(axis=0)
    dims = cells.max(axis=0) + 1
    if float(np.prod(dims.astype(np.float64))) < 2.0**62:
        keys = np.ravel_multi_index(cells.T, tuple(int(d) for d in dims))
        _, first = np.unique(keys, return_index=True)
    else:  # a huge, sparse grid: compare whole rows
        _, first = np.unique(cells, axis=0, return_index=True)
    return np.sort(first)
