"""A recorded step as the formats write it (:class:`Step`, :class:`Observation`) and read it back
(:class:`StoredStep`), depth in stored millimetres, and the attributes stored with an episode."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from pixelrig.datasets.info import DEPTH_UNIT_M, DatasetInfo


@dataclasses.dataclass(frozen=True)
class Observation:
    """What a dataset keeps of one observation.

    Attributes:
        rgb: camera -> (H, W, 3) uint8.
        depth: camera -> (H, W, 1) uint16 millimetres (:data:`DEPTH_CONVENTION`).
        state: the env's own observation (float32), or None.
        robot_state: the real robot's state in its units (float32; :attr:`DatasetInfo.robot`), or None.
    """

    rgb: dict[str, np.ndarray]
    depth: dict[str, np.ndarray]
    state: np.ndarray | None
    robot_state: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class Step:
    """One step: the observation the action was taken in, the action, what the step returned, and the snapshot
    of the state ``obs`` was rendered in. ``next_obs`` is the observation the step returned. ``robot_action``: the
    action in the real robot's units (:attr:`DatasetInfo.robot`), or None."""

    obs: Observation
    action: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    snapshot: bytes
    next_obs: Observation
    robot_action: np.ndarray | None = None


def depth_to_mm(depth: np.ndarray, far: float) -> np.ndarray:
    """Metric depth to stored millimetres.

    Args:
        depth: (H, W, 1) float32 metres along the optical axis, background = ``far`` (PixelObs' depth; a noisy
            camera's invalid pixels read 0 or NaN).
        far: the camera's far plane (m).

    Returns:
        (H, W, 1) uint16 millimetres: round(depth × 1000) clipped to [1, 65535]; 0 where depth >= far
        (background) and where the camera has no reading (0 or NaN). See :data:`DEPTH_CONVENTION`.
    """
    d = np.asarray(depth, dtype=np.float64)
    none = ~(d > 0.0) | (d >= far)  # NaN compares false: no reading
    mm = np.clip(np.rint(np.where(none, 0.0, d) * 1000.0), 1, 65535).astype(np.uint16)
    mm[none] = 0
    return mm


def mm_to_depth(mm: np.ndarray, far: float) -> np.ndarray:
    """Stored millimetres back to float32 metres, 0 (no surface) read as ``far`` as PixelObs gives it."""
    m = np.asarray(mm).astype(np.float32) * np.float32(DEPTH_UNIT_M)
    m[np.asarray(mm) == 0] = far
    return m


def split_observation(obs: Mapping[str, Any], info: DatasetInfo, fars: Mapping[str, float]) -> Observation:
    """The parts of a PixelObs observation that a dataset keeps (RGB, depth as millimetres, the state)."""
    state = None
    if info.state_shape is not None:
        state = np.asarray(obs["state"], dtype=np.float32).reshape(info.state_shape)
    return Observation(
        rgb={cam: np.asarray(obs[f"{cam}/rgb"], dtype=np.uint8) for cam in info.rgb},
        depth={cam: depth_to_mm(obs[f"{cam}/depth"], fars[cam]) for cam in info.depth},
        state=state,
    )


@dataclasses.dataclass(frozen=True)
class StoredStep:
    """A frame as read back: everything but the images."""

    action: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    state: np.ndarray | None
    snapshot: bytes
    robot_state: np.ndarray | None = None
    robot_action: np.ndarray | None = None


EpisodeAttrs = Mapping[str, bool | int | float | str]
"""Values stored with one episode (``pixelrig collect``: its ``seed`` and ``success``): LeRobot's
``meta/episodes`` column ``pixelrig/<name>``, robomimic's ``data/demo_k`` attribute ``pixelrig_<name>``."""

RESERVED_ATTRS = ("end",)
"""Attribute names the writers use themselves (``pixelrig/end``, ``pixelrig_end``)."""


def check_attrs(attrs: EpisodeAttrs | None) -> dict[str, bool | int | float | str]:
    """``attrs`` as a dict, checked: names are lowercase identifiers other than :data:`RESERVED_ATTRS`, values
    plain bools, ints, floats or strings (one type per name across a dataset: LeRobot reads its episodes' rows as one
    table).

    Raises:
        ValueError: a bad name or value (the message names it).
    """
    out: dict[str, bool | int | float | str] = {}
    for name, value in (attrs or {}).items():
        if not (isinstance(name, str) and name.isidentifier() and name.islower()) or name in RESERVED_ATTRS:
            raise ValueError(f"episode attribute name {name!r} must be a lowercase identifier other than "
                             f"{RESERVED_ATTRS}")
        if not isinstance(value, bool | int | float | str):
            raise ValueError(f"episode attribute {name!r}={value!r} must be a bool, int, float or str")
        out[name] = value
    return out


def plain_attr(value: Any) -> bool | int | float | str:
    """A stored episode attribute as the Python value it was (HDF5 gives numpy scalars and may give bytes)."""
    if isinstance(value, bytes):
        return value.decode()
    return value.item() if isinstance(value, np.generic) else value
