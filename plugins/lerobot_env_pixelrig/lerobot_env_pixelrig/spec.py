"""What a pixelrig task is to LeRobot, without LeRobot: the env a ``--env.type=pixelrig`` config makes, the
observation layout LeRobot's ``preprocess_observation`` reads, and the features ``pixelrig collect`` writes for the
same task and rig (so that a policy trained on a collected dataset meets the same keys, shapes and units).

Keys, env side -> policy side (what LeRobot's dataset reader gives for a collected dataset):

- ``pixels[<cam>]``: (H, W, 3) uint8, padded to even sizes as the dataset's H.264 videos are
  -> ``observation.images.<cam>``;
- ``<cam>_depth``: (H, W, 1) float32 metres along the optical axis (far plane and beyond: the camera's ``far``)
  -> ``observation.depth.<cam>``, in the dataset's units (:data:`pixelrig.datasets.DEPTH_CONVENTION`: millimetres,
  0 = no surface) by the env processor (:func:`depth_as_recorded`);
- ``agent_pos``: the env's own observation (``"state"``) -> ``observation.state``;
- ``action`` -> ``action``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  # registers the pixelrig/... ids
from pixelrig.cameras.rigfile import rig_cameras
from pixelrig.cameras.spec import Camera
from pixelrig.datasets import DatasetInfo, depth_to_mm, recording_info
from pixelrig.datasets.lerobot import depth_key, features, image_key
from pixelrig.envs.presets import looks_preset
from pixelrig.evaluation.factor_env import default_cameras
from pixelrig.wrappers.pixel_obs import PixelObs

PIXELS = "pixels"
STATE = "agent_pos"
ACTION = "action"


def depth_env_key(cam: str) -> str:
    """The env observation key of camera ``cam``'s depth in metres."""
    return f"{cam}_depth"


def task_id(task: str | None) -> str:
    """The registered pixelrig id of ``task``: ``"PandaLift-v0"``, ``"pixelrig/PandaLift-v0"`` or ``"PandaLift"``.

    Raises:
        ValueError: not a pixelrig id (the message names it and lists the ids there are).
    """
    ids = sorted(e for e in gym.registry if e.startswith("pixelrig/"))
    if isinstance(task, str) and task.strip():
        name = task.strip().removeprefix("pixelrig/")
        for candidate in (f"pixelrig/{name}", f"pixelrig/{name}-v0"):
            if candidate in ids:
                return candidate
    short = [e.removeprefix("pixelrig/") for e in ids]
    raise ValueError(f"--env.task={task!r} is not a pixelrig task: pixelrig {pixelrig.__version__} registers {short} "
                     "(with or without the 'pixelrig/' prefix)")


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """A pixelrig task as one ``--env.type=pixelrig`` config asks for it.

    Attributes:
        env_id: the registered id.
        env_kwargs: its ``gym.make`` kwargs (looks, render size and mode, episode length).
        cams: the rig (the task's own, or the rig file's), resized to the image size asked for.
        renderer: the renderer asked for (any of pixelrig's choices: auto, tiny, egl, gl).
        info: what ``pixelrig collect`` records from this env and rig (its dataset's description).
    """

    env_id: str
    env_kwargs: Mapping[str, Any]
    cams: tuple[Camera, ...]
    renderer: str
    info: DatasetInfo

    @property
    def fps(self) -> int:
        """Frames per second (LeRobot's timestamps and videos)."""
        return self.info.fps

    @property
    def max_episode_steps(self) -> int | None:
        """The episode length (the TimeLimit)."""
        return self.info.max_episode_steps

    @property
    def task_description(self) -> str:
        """What every frame of a collected dataset carries as its task (LeRobot's ``task``)."""
        return self.info.task

    @property
    def fars(self) -> dict[str, float]:
        """Each depth camera's far plane (where its depth reads "no surface")."""
        return {c.name: c.far for c in self.cams if c.name in self.info.depth}


def _resized(cams: tuple[Camera, ...], size: int | None, where: str) -> tuple[Camera, ...]:
    if size is None:
        return cams
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"--env.image_size={size!r} must be a whole number of pixels >= 1 (or unset: the rig's own)")
    fixed = [c.name for c in cams if c.intrinsics is not None]
    if fixed:
        raise ValueError(f"--env.image_size={size} cannot resize cameras {fixed} of {where}: their intrinsics are in "
                         "pixels; set their size in a rig file (--env.rig) instead")
    return tuple(dataclasses.replace(c, width=size, height=size) for c in cams)


def task_spec(task: str | None, *, rig: str | os.PathLike[str] | None = None, looks: str | None = None,
              image_size: int | None = None, renderer: str = "auto", fps: int | None = None,
              episode_length: int | None = None, render_size: int | None = None,
              env_kwargs: Mapping[str, Any] | None = None) -> TaskSpec:
    """Resolve a config's options into the env it makes and what collect records from it.

    Builds the task once (TinyRenderer, never reset) to read its spaces, as ``pixelrig collect`` does before it runs.

    Args:
        task: a pixelrig id, with or without ``pixelrig/`` (:func:`task_id`).
        rig: a rig file (JSON/TOML, as ``pixelrig collect --cams``); None: the task's own rig.
        looks: a looks preset (``"train"``, ``"test-hard"``) or None.
        image_size: every camera's width and height; None: the rig's.
        renderer: auto, tiny, egl or gl.
        fps: frames per second as ``DatasetRecorder(fps=...)``; None: the env's ``metadata["render_fps"]``.
        episode_length: the TimeLimit; None: the task's.
        render_size: the size of ``render()`` (LeRobot's evaluation videos); None: the env's.
        env_kwargs: more ``gym.make`` kwargs.

    Raises:
        ValueError: an unknown task, rig file content, looks preset, image size or fps (each names what was asked
            and what there is).
        FileNotFoundError: no such rig file.
    """
    env_id = task_id(task)
    kwargs = dict(env_kwargs or {})
    if looks is not None:
        looks_preset(looks)
        kwargs["looks"] = looks
    if episode_length is not None:
        kwargs["max_episode_steps"] = episode_length
    if render_size is not None:
        kwargs.update(render_mode="rgb_array", render_width=render_size, render_height=render_size)
    if rig is None:
        cams = tuple(default_cameras(env_id, kwargs))
        where = f"{env_id}'s own rig"
    else:
        try:
            cams = rig_cameras(Path(rig))
        except FileNotFoundError:
            raise FileNotFoundError(f"--env.rig={str(rig)!r}: no such rig file (for --env.task={env_id}; leave "
                                    "--env.rig out for the task's own rig)") from None
        where = f"rig file {str(rig)!r}"
    cams = _resized(cams, image_size, where)
    env = gym.make(env_id, renderer="tiny", **kwargs)
    try:
        info = recording_info(PixelObs(env, cams=cams), fps=fps)
    finally:
        env.close()
    return TaskSpec(env_id, kwargs, cams, renderer, dataclasses.replace(info, renderer=renderer))


def dataset_features(spec_or_info: TaskSpec | DatasetInfo | Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The observation and action features (``meta/info.json`` entries) a collected dataset has: from a spec (what
    collect would write), a DatasetInfo, or a dataset's ``features`` dict."""
    if isinstance(spec_or_info, TaskSpec):
        feats: Mapping[str, Any] = features(spec_or_info.info)
    elif isinstance(spec_or_info, DatasetInfo):
        feats = features(spec_or_info)
    else:
        feats = spec_or_info
    return {k: dict(v) for k, v in feats.items() if k.startswith("observation.") or k == ACTION}


@dataclasses.dataclass(frozen=True)
class EnvKey:
    """One entry of the env's observation (or its action) and the policy feature it becomes.

    Attributes:
        env_key: LeRobot's ``features`` key (``"pixels/front"``, ``"front_depth"``, ``"agent_pos"``, ``"action"``).
        policy_key: its ``features_map`` value (the dataset's feature name).
        kind: LeRobot's FeatureType name: VISUAL, STATE or ACTION.
        shape: (H, W, C) for images and depth (HWC, as the env gives them), else (n,).
    """

    env_key: str
    policy_key: str
    kind: str
    shape: tuple[int, ...]


def env_keys(spec: TaskSpec) -> list[EnvKey]:
    """The env's observation entries and action, each with the dataset feature it meets, in the dataset's order."""
    keys = []
    for key, ft in dataset_features(spec).items():
        shape = tuple(int(n) for n in ft["shape"])
        cam = key.split(".", 2)[2] if key.count(".") >= 2 else None
        if cam is not None and key == image_key(cam):
            keys.append(EnvKey(f"{PIXELS}/{cam}", key, "VISUAL", shape))
        elif cam is not None and key == depth_key(cam):
            keys.append(EnvKey(depth_env_key(cam), key, "STATE", shape))
        elif key == "observation.state":
            keys.append(EnvKey(STATE, key, "STATE", shape))
        elif key == ACTION:
            keys.append(EnvKey(ACTION, key, "ACTION", shape))
        else:  # pragma: no cover - a feature collect does not write today
            raise ValueError(f"the dataset feature {key!r} has no counterpart in the pixelrig env's observation")
    return keys


def _describe(feats: Mapping[str, Mapping[str, Any]]) -> str:
    return ", ".join(f"{k} {ft.get('dtype')} {list(ft.get('shape', []))}" for k, ft in feats.items())


def _cameras(feats: Mapping[str, Any]) -> list[str]:
    return sorted({k.split(".", 2)[2] for k in feats if k.startswith(("observation.images.", "observation.depth."))})


def check_dataset(spec: TaskSpec, root: str | os.PathLike[str]) -> None:
    """Check that the dataset at ``root`` records what this env observes: the same cameras, image and depth shapes,
    state and action (LeRobot trains a policy on the dataset's features and evaluates it on the env's).

    Raises:
        FileNotFoundError: no ``meta/info.json`` under ``root``.
        ValueError: they differ: the message gives both sides (the dataset's features and the env's) and the fix.
    """
    info_path = Path(root) / "meta" / "info.json"
    if not info_path.is_file():
        raise FileNotFoundError(f"--env.dataset={str(root)!r}: no LeRobot dataset there ({info_path} is missing)")
    stored = json.loads(info_path.read_text())
    theirs = dataset_features(stored.get("features", {}))
    ours = dataset_features(spec)
    if {k: (v.get("dtype"), list(v.get("shape", []))) for k, v in theirs.items()} == \
            {k: (v["dtype"], list(v["shape"])) for k, v in ours.items()}:
        return
    recorded = stored.get("pixelrig") or {}
    hint = ""
    if recorded.get("env_id") not in (None, spec.env_id):
        hint = f" The dataset was recorded from {recorded['env_id']}, the env is {spec.env_id}."
    raise ValueError(
        f"the dataset at {str(root)!r} does not match --env.task={spec.env_id}: the dataset has cameras "
        f"{_cameras(theirs)} ({_describe(theirs)}), the env has cameras {_cameras(ours)} ({_describe(ours)}).{hint} "
        "Give the env the dataset's rig and image size (--env.rig=<the rig file given to pixelrig collect --cams>, "
        "--env.image_size=...), or collect the dataset with the env's rig")


def _even(a: np.ndarray) -> np.ndarray:
    """Pad an (..., H, W, C) image with black rows/columns at the bottom/right to even H and W, as the dataset's
    H.264 videos are."""
    h, w = a.shape[-3], a.shape[-2]
    if h % 2 == 0 and w % 2 == 0:
        return a
    pad = [(0, 0)] * (a.ndim - 3) + [(0, h % 2), (0, w % 2), (0, 0)]
    return np.pad(a, pad)


def lerobot_observation(obs: Mapping[str, np.ndarray], spec: TaskSpec) -> dict[str, Any]:
    """A PixelObs observation (one env's or a batch's) in LeRobot's env layout (the module docstring's keys)."""
    out: dict[str, Any] = {PIXELS: {cam: _even(np.asarray(obs[f"{cam}/rgb"], dtype=np.uint8))
                                    for cam in spec.info.rgb}}
    for cam in spec.info.depth:
        out[depth_env_key(cam)] = np.asarray(obs[f"{cam}/depth"], dtype=np.float32)
    if spec.info.state_shape is not None:
        state = np.asarray(obs["state"], dtype=np.float32)
        out[STATE] = state.reshape(*state.shape[:state.ndim - 1], *spec.info.state_shape) if state.ndim else state
    return out


def observation_space(spec: TaskSpec, single: gym.spaces.Dict) -> gym.spaces.Dict:
    """The Dict space of :func:`lerobot_observation`'s output for one env, from PixelObs' ``single`` space."""
    from gymnasium import spaces

    pixels = {}
    for cam in spec.info.rgb:
        h, w, c = single.spaces[f"{cam}/rgb"].shape
        pixels[cam] = spaces.Box(0, 255, (h + h % 2, w + w % 2, c), np.uint8)
    out: dict[str, spaces.Space] = {PIXELS: spaces.Dict(pixels)}
    for cam in spec.info.depth:
        box = single.spaces[f"{cam}/depth"]
        out[depth_env_key(cam)] = spaces.Box(box.low, box.high, box.shape, np.float32)
    if spec.info.state_shape is not None:
        box = single.spaces["state"]
        out[STATE] = spaces.Box(box.low.reshape(spec.info.state_shape), box.high.reshape(spec.info.state_shape),
                                spec.info.state_shape, np.float32)
    return spaces.Dict(out)


def depth_as_recorded(depth_m: np.ndarray, far: float) -> np.ndarray:
    """Depth in metres (any shape) as the dataset stores it (:data:`pixelrig.datasets.DEPTH_CONVENTION`), as
    float32: what LeRobot's reader gives a policy for ``observation.depth.<cam>``."""
    return depth_to_mm(np.asarray(depth_m, dtype=np.float32), far).astype(np.float32)
