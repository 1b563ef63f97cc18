"""What a dataset is: its formats, its conventions (depth in millimetres, one snapshot per frame) and
:class:`DatasetInfo`, the description stored with it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from pixelrig.cameras.spec import Camera

FORMATS = ("lerobot", "robomimic")
"""The dataset formats: LeRobot v3.0 (a folder) and robomimic HDF5 (one file)."""

DEPTH_UNIT_M = 0.001
"""Depth is stored as uint16 millimetres: metres = stored value × DEPTH_UNIT_M."""

DEPTH_CONVENTION = (
    "uint16 millimetres along the optical axis, rounded to the nearest millimetre (error <= 0.5 mm); 0 = no "
    "surface (background: the camera's far plane or beyond) or no reading (a noisy camera's invalid pixel); surfaces "
    "nearer than 1 mm read 1, and depths beyond 65.535 m read 65535 (saturated)"
)

SNAPSHOT_CONVENTION = (
    "frame t's snapshot is the whole env (pixelrig.snapshot of the stack under PixelObs) in the state its "
    "observation was rendered in, before its action; one more snapshot per episode holds the state after the last "
    "action (the final observation's). pixelrig.Snapshot.from_bytes(b) reads one."
)

FRAME_CONVENTION = (
    "one frame per step: the observation the action was taken in, that action, and what the step returned "
    "(reward, terminated, truncated); an episode cut short by reset() or close() ends truncated"
)

ROBOT_KEYS = ("robot_type", "state_names", "action_names", "video")
"""What a task's ``lerobot_robot()`` gives (:attr:`DatasetInfo.robot`): LeRobot's ``robot_type``, the names of the
robot's state and action values (LeRobot's ``<motor>.pos``), and the video encoder LeRobot records with
(``codec``, ``pix_fmt``, ``g``, ``crf``, ``preset``, ``fast_decode``, ``video_backend``, ``extra_options``)."""

JSON_KEYS = {"cams": "cameras"}
"""Fields of :class:`DatasetInfo` stored under another JSON key (datasets written before the rename still load)."""


@dataclasses.dataclass(frozen=True)
class DatasetInfo:
    """What a recorded dataset is: the env it came from, its cameras and what each frame holds.

    Stored as JSON (``meta/info.json["pixelrig"]`` for LeRobot, inside ``data.attrs["env_args"]`` for
    robomimic); :meth:`to_json` / :meth:`from_json` convert.

    Attributes:
        env_id: the gymnasium id (None for an env not made by ``gym.make``: replay then needs ``make_env``).
        env_kwargs: the env's constructor arguments as snapshots describe them (plain JSON values;
            dataclasses as ``{"__dataclass__": "module:Class", field: ...}``; functions as ``{"__callable__"}``).
        max_episode_steps: the TimeLimit of the env's spec (None: none).
        renderer: the backend that drew the images (a key of :data:`pixelrig.render.registry.BACKENDS`).
        cams: the rig, as ``Camera.to_dict()`` dicts (stored under the JSON key ``"cameras"``).
        fps: frames per second (LeRobot timestamps are frame_index / fps).
        task: the task description of every frame.
        rgb: cameras whose RGB images are stored.
        depth: cameras whose depth images are stored (see :data:`DEPTH_CONVENTION`).
        state_shape: shape of the env's own observation (None: PixelObs(pixels_only=True), no state).
        action_shape: shape of an action (``()`` for a Discrete action, stored as int64).
        action_dtype: "float32" (Box) or "int64" (Discrete).
        pixelrig_version: the version that wrote the dataset.
        replayed_from: the dataset this one was re-rendered from (None for a recording).
        collected: how :func:`~pixelrig.datasets.collect.collect` made the episodes (``task``, ``expert``, the
            first ``seed``, ``keep``), None for episodes recorded otherwise; each episode's ``seed`` and ``success``
            are its attributes (``episode_attrs(e)``).
        robot: the real robot whose LeRobot features a LeRobot dataset takes (the task's
            ``lerobot_robot()``: :data:`ROBOT_KEYS`), or None for pixelrig's own features. With a robot,
            ``observation.state`` and ``action`` are the robot's state and action in its own units, the features
            and ``robot_type`` are what LeRobot's recording code writes for it, and pixelrig's columns (the env's
            own state and action, rewards, flags, depth, snapshots) live under ``pixelrig/``.
    """

    env_id: str | None
    env_kwargs: dict[str, Any]
    max_episode_steps: int | None
    renderer: str
    cams: tuple[dict[str, Any], ...]
    fps: int
    task: str
    rgb: tuple[str, ...]
    depth: tuple[str, ...]
    state_shape: tuple[int, ...] | None
    action_shape: tuple[int, ...]
    action_dtype: str
    pixelrig_version: str
    replayed_from: str | None = None
    collected: dict[str, Any] | None = None
    robot: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly dict, with the conventions spelled out for people reading the file."""
        out = {JSON_KEYS.get(k, k): v for k, v in dataclasses.asdict(self).items()}
        if self.robot is None:
            del out["robot"]  # datasets without one are written as before, byte for byte
        out["cameras"] = list(self.cams)
        out["rgb"], out["depth"] = list(self.rgb), list(self.depth)
        out["state_shape"] = None if self.state_shape is None else list(self.state_shape)
        out["action_shape"] = list(self.action_shape)
        out["conventions"] = {"depth": DEPTH_CONVENTION, "snapshots": SNAPSHOT_CONVENTION,
                              "frames": FRAME_CONVENTION}
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DatasetInfo:
        """Read :meth:`to_json`'s dict back.

        Raises:
            ValueError: a key is missing (not a dataset written by pixelrig).
        """
        try:
            return cls(
                env_id=data["env_id"], env_kwargs=dict(data["env_kwargs"]),
                max_episode_steps=data["max_episode_steps"], renderer=data["renderer"],
                cams=tuple(dict(c) for c in data["cameras"]), fps=int(data["fps"]), task=data["task"],
                rgb=tuple(data["rgb"]), depth=tuple(data["depth"]),
                state_shape=None if data["state_shape"] is None else tuple(data["state_shape"]),
                action_shape=tuple(data["action_shape"]), action_dtype=data["action_dtype"],
                pixelrig_version=data["pixelrig_version"], replayed_from=data.get("replayed_from"),
                collected=data.get("collected"), robot=data.get("robot"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"dataset metadata lacks pixelrig's description ({type(exc).__name__}: {exc}): "
                             "was it written by pixelrig's DatasetRecorder?") from None

    def camera(self, name: str) -> Camera:
        """The recorded camera called ``name``."""
        for spec in self.cams:
            if spec["name"] == name:
                return Camera.from_dict(spec)
        raise KeyError(name)

    def image_shape(self, cam: str) -> tuple[int, int]:
        """(height, width) of camera ``cam``'s images."""
        camera = self.camera(cam)
        return camera.height, camera.width

    def compatible_with(self, other: DatasetInfo) -> str | None:
        """None when ``other`` describes frames that can join this dataset (resume); else what differs."""
        for field in ("env_id", "env_kwargs", "cams", "fps", "rgb", "depth", "state_shape", "action_shape",
                      "action_dtype", "robot"):
            mine, theirs = getattr(self, field), getattr(other, field)
            if json.dumps(mine, sort_keys=True, default=list) != json.dumps(theirs, sort_keys=True, default=list):
                return f"{JSON_KEYS.get(field, field)}: the dataset has {mine!r}, this recorder has {theirs!r}"
        return None
