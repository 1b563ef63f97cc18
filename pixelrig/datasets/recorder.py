"""``DatasetRecorder``: record every episode of a PixelObs env as a LeRobot v3.0 or robomimic HDF5 dataset while
it runs, with each step's snapshot so that the data can be re-rendered with another rig."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from pixelrig.datasets.formats import EpisodeWriter, open_writer
from pixelrig.datasets.info import ROBOT_KEYS, DatasetInfo
from pixelrig.datasets.steps import Observation, Step, split_observation
from pixelrig.datasets.target import check_format
from pixelrig.envs.base import BulletEnv
from pixelrig.errors import DatasetWriteError

# wrapper_stack and wrapper_state are snapshot()'s own steps: the recorder repeats snapshot() with the identity cached
from pixelrig.snapshots import Snapshot, describe, identity, wrapper_stack, wrapper_state
from pixelrig.wrappers.pixel_obs import PixelObs


def find_pixel_obs(env: gym.Env) -> PixelObs:
    """The outermost PixelObs in ``env``'s wrapper stack.

    Raises:
        ValueError: there is none (the message shows how to add one).
    """
    current: gym.Env = env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, PixelObs):
            return current
        current = current.env
    raise ValueError(f"DatasetRecorder records camera images from a PixelObs observation, and {env} has no "
                     "PixelObs: wrap it as DatasetRecorder(PixelObs(env), path)")


def env_description(inner: gym.Env) -> dict[str, Any]:
    """Env id, kwargs (as snapshots describe them, render options included), TimeLimit and backend of the stack
    under PixelObs."""
    base = inner.unwrapped
    ident = identity(inner)  # the kwargs snapshots check, without render options
    spec = base.spec
    given = dict(spec.kwargs) if spec is not None else dict(getattr(base, "init_kwargs", {}))
    render = {k: describe(v) for k, v in given.items() if k in BulletEnv.RENDER_OPTIONS and k != "renderer"}
    return {
        "env_id": ident["id"],
        "env_kwargs": {**ident["kwargs"], **render},
        "max_episode_steps": inner.spec.max_episode_steps if inner.spec is not None else None,
        "renderer": base.render_backend.name,
    }


def robot_profile(base: gym.Env) -> dict[str, Any] | None:
    """The real robot whose LeRobot features the env's LeRobot datasets take: its ``lerobot_robot()``
    (:data:`~pixelrig.datasets.info.ROBOT_KEYS`), or None (pixelrig's own features). Such an env also has
    ``robot_state()`` (after a reset or step) and ``robot_action()`` (after a step) in the robot's units."""
    describe = getattr(base, "lerobot_robot", None)
    if describe is None:
        return None
    robot = dict(describe())
    if sorted(robot) != sorted(ROBOT_KEYS):
        raise ValueError(f"{type(base).__name__}.lerobot_robot() gives {sorted(robot)}: it must give {ROBOT_KEYS}")
    return robot


def _action_layout(space: spaces.Space) -> tuple[tuple[int, ...], str]:
    if isinstance(space, spaces.Box):
        return (int(np.prod(space.shape)),), "float32"
    if isinstance(space, spaces.Discrete):
        return (1,), "int64"
    raise ValueError(f"DatasetRecorder stores Box (float32) and Discrete (int64) actions: got {space}")


def recording_info(env: gym.Env, task: str | None = None, fps: float | None = None,
                   format: str = "lerobot") -> DatasetInfo:
    """What :class:`DatasetRecorder` (and so ``pixelrig collect``) records from ``env``, without recording: the
    dataset's description, from which :func:`pixelrig.datasets.lerobot.features` gives its LeRobot features.

    Args:
        env: a pixelrig env under PixelObs. task, fps, format: as DatasetRecorder takes them (a LeRobot dataset of
            a task with a real robot's features records them: :func:`robot_profile`).

    Raises:
        ValueError: what DatasetRecorder raises for the env, the task or the fps.
    """
    pixel_obs = find_pixel_obs(env)
    base = env.unwrapped
    if not isinstance(base, BulletEnv):
        raise ValueError(f"DatasetRecorder needs a pixelrig env (BulletEnv) underneath, for its snapshots: got "
                         f"{type(base).__name__}")
    fps = fps if fps is not None else env.metadata.get("render_fps", 30)
    if not (isinstance(fps, int | float) and fps > 0 and float(fps).is_integer()):
        raise ValueError(f"fps={fps!r} must be a positive whole number (LeRobot's timestamps are frame_index / "
                         "fps): pass fps=<frames per second>")
    cameras = pixel_obs.rig.cameras
    obs_space = env.observation_space
    if not isinstance(obs_space, spaces.Dict):
        raise ValueError(f"DatasetRecorder needs PixelObs' Dict observation on top: got {obs_space}")
    rgb = tuple(c.name for c in cameras if f"{c.name}/rgb" in obs_space.spaces)
    depth = tuple(c.name for c in cameras if f"{c.name}/depth" in obs_space.spaces)
    if not rgb and not depth:
        raise ValueError(f"no camera of {[c.name for c in cameras]} returns 'rgb' or 'depth', the modalities a "
                         "dataset stores: add one to a camera's modalities")
    state_space = obs_space.spaces.get("state")
    if state_space is not None and not isinstance(state_space, spaces.Box):
        raise ValueError(f"DatasetRecorder stores a Box 'state' (flattened): got {state_space}; use "
                         "PixelObs(..., pixels_only=True) to record pixels only")
    action_shape, action_dtype = _action_layout(env.action_space)
    described = env_description(pixel_obs.env)
    from pixelrig.version import __version__

    return DatasetInfo(
        **described,
        cams=tuple(c.to_dict() for c in cameras), fps=int(fps),
        task=task if task is not None else (described["env_id"] or type(base).__name__),
        rgb=rgb, depth=depth,
        state_shape=None if state_space is None else (int(np.prod(state_space.shape)),),
        action_shape=action_shape, action_dtype=action_dtype, pixelrig_version=__version__,
        robot=robot_profile(base) if format == "lerobot" else None,
    )


class DatasetRecorder(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record every episode as it runs into a LeRobot v3.0 folder or a robomimic HDF5 file.

    Each step adds one frame: the observation the action was taken in (every camera's RGB, depth as uint16
    millimetres, the env's ``"state"``), the action, and the step's reward, terminated and truncated, plus the
    pixelrig snapshot of the state that observation was rendered in (``pixelrig.datasets.replay`` re-renders the
    frames from these with another rig). An episode is written when it ends; one cut short by ``reset()`` or
    ``close()`` is kept, its last frame marked truncated. Memory holds one frame of video per camera and at most
    64 frames of tables: videos stream to ffmpeg and tables are written in row groups.

    Args:
        env: a pixelrig env under :class:`~pixelrig.PixelObs` (the outermost PixelObs gives the cameras; its
            ``"<cam>/rgb"`` and ``"<cam>/depth"`` images are recorded; other modalities are not).
        path: a folder (``format="lerobot"``) or a ``*.hdf5`` file (``format="robomimic"``).
        format: "lerobot" or "robomimic".
        task: the task description stored with every frame (LeRobot's ``task``); default the env id.
        fps: frames per second (LeRobot's timestamps and videos); default the env's ``metadata["render_fps"]``.
            Must be a whole number.
        overwrite: replace a dataset of this format already at ``path`` (anything else there is never deleted).
        resume: add episodes to the dataset at ``path``; it must record the same env, cameras and shapes.
        writer: where the frames go instead of a dataset at ``path`` (then only named in messages, and ``overwrite``
            and ``resume`` unused): a function given the recording's :class:`~pixelrig.datasets.DatasetInfo` that
            returns an :class:`~pixelrig.datasets.formats.EpisodeWriter` (``pixelrig collect`` holds each episode
            in memory this way until it knows whether to keep it).

    Raises:
        ValueError: no PixelObs underneath, no rgb or depth camera, an action space other than Box or Discrete, a
            bad format or fps, or a resumed dataset that records something else.
        DatasetExistsError: a dataset is at ``path`` and neither ``overwrite`` nor ``resume`` was given.
        DatasetWriteError: the path cannot be written; also raised by ``step()``/``reset()``/``close()`` when
            writing fails (full disk): the episodes finished before are intact.

    Attributes:
        info: what the dataset records (:class:`~pixelrig.datasets.DatasetInfo`).
        episodes_written: episodes in the dataset (a resumed dataset's included).
    """

    def __init__(self, env: gym.Env, path: str | os.PathLike[str], format: str = "lerobot",
                 task: str | None = None, fps: float | None = None, overwrite: bool = False,
                 resume: bool = False, *, writer: Callable[[DatasetInfo], EpisodeWriter] | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, path=str(path), format=format, task=task, fps=fps,
                                                 overwrite=overwrite, resume=resume)
        gym.Wrapper.__init__(self, env)
        check_format(format)
        pixel_obs = find_pixel_obs(env)
        self._inner = pixel_obs.env
        base = env.unwrapped
        if not isinstance(base, BulletEnv):
            raise ValueError(f"DatasetRecorder needs a pixelrig env (BulletEnv) underneath, for its snapshots: got "
                             f"{type(base).__name__}")
        # Every episode from a rebuilt world: a fast reset gives the same episode bit for bit, but the snapshots'
        # .bullet bytes also record each collision object's simulation island (m_islandTag1, numbered by a
        # union-find over the broadphase's pair array, whose order depends on the episodes before), and a dataset
        # must be the same bytes whichever episodes a worker ran before (tests/test_datasets_collect.py).
        base.fast_reset = False
        self.info = recording_info(env, task=task, fps=fps, format=format)
        self._base = base
        self._fars = {c.name: c.far for c in pixel_obs.rig.cameras}
        self.path = Path(path)
        self.writer: EpisodeWriter = writer(self.info) if writer is not None else \
            open_writer(path, format, self.info, overwrite=overwrite, resume=resume)
        self._identity: dict[str, Any] | None = None
        self._obs: Observation | None = None  # the observation the next action is taken in
        self._snap: bytes | None = None       # the state it was rendered in
        self._held: Step | None = None       # the last frame, written once the episode goes on or ends
        self._ended: str | None = None        # why no episode is in progress ("terminated", ...) after a step
        self._closed = False

    @property
    def episodes_written(self) -> int:
        """Episodes in the dataset (a resumed dataset's included)."""
        return self.writer.num_episodes

    @property
    def recording(self) -> bool:
        """Whether an episode is in progress (reset and not yet ended)."""
        return self._obs is not None

    def _snapshot(self) -> bytes:
        """``snapshot(stack under PixelObs).to_bytes()``, with its identity computed once per episode (the model
        files' hashes and the kwargs do not change while an env lives; computing them is most of a snapshot's
        cost)."""
        if self._identity is None:
            self._identity = identity(self._inner)
        state = self._inner.unwrapped.export_state()
        wrappers = [wrapper_state(w) for w in wrapper_stack(self._inner)]
        return Snapshot(self._identity, state, wrappers).to_bytes()

    def _observation(self, obs: Any) -> Observation:
        kept = split_observation(obs, self.info, self._fars)
        if self.info.robot is None:
            return kept
        robot_state = np.asarray(self._base.robot_state(), dtype=np.float32)  # type: ignore[attr-defined]
        return dataclasses.replace(kept, robot_state=robot_state)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if self._closed:
            raise RuntimeError("DatasetRecorder is closed: make a new one (resume=True adds to the dataset)")
        self._cut()
        obs, info = self.env.reset(seed=seed, options=options)
        self._identity = None
        self._obs, self._snap, self._ended = self._observation(obs), self._snapshot(), None
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self._obs is None:
            if self._ended is not None:
                raise gym.error.ResetNeeded(f"DatasetRecorder: the episode ended ({self._ended}); call reset() "
                                            "before step()")
            raise gym.error.ResetNeeded("DatasetRecorder: call reset() before step()")
        stored_action = np.array(action, dtype=self.info.action_dtype).reshape(self.info.action_shape)
        obs, reward, terminated, truncated, info = self.env.step(action)
        nxt = self._observation(obs)
        robot_action = None if self.info.robot is None else \
            np.asarray(self._base.robot_action(), dtype=np.float32)  # type: ignore[attr-defined]
        frame = Step(self._obs, stored_action, float(reward), bool(terminated), bool(truncated), self._snap, nxt,
                     robot_action)
        try:
            if self._held is not None:
                self.writer.add_frame(self._held)
            self._held = frame
            if terminated or truncated:
                self._finish("terminated" if terminated else "truncated", self._snapshot())
            else:
                self._obs, self._snap = nxt, self._snapshot()
        except DatasetWriteError:
            self._drop()
            raise
        return obs, reward, terminated, truncated, info

    def _finish(self, end: str, final_snapshot: bytes) -> None:
        held, self._held = self._held, None
        self._obs, self._snap, self._ended = None, None, end
        if held is None:
            return
        if end == "cut":
            held = dataclasses.replace(held, truncated=True)
        self.writer.add_frame(held)
        self.writer.end_episode(final_snapshot, end)

    def _cut(self) -> None:
        """Write the episode in progress as it is (cut short: its last frame is marked truncated)."""
        if self._held is not None and self._snap is not None:
            try:
                self._finish("cut", self._snap)
            except DatasetWriteError:
                self._drop()
                raise
        self._held, self._obs, self._snap = None, None, None

    def _drop(self) -> None:
        self.writer.abort_episode()
        self._held, self._obs, self._snap, self._ended = None, None, None, "a write failed"

    def snapshot_state(self) -> dict[str, Any]:
        """A recorder holds no simulation state."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """The env jumps to another state: the episode in progress is written as it was (cut), and recording
        starts again at the next ``reset()``."""
        if self._held is not None:
            warnings.warn("DatasetRecorder: a snapshot was restored mid-episode; the episode so far is written (cut) "
                          "and recording resumes at the next reset()", stacklevel=3)
        self._cut()
        self._ended = "a snapshot was restored"

    def close(self) -> None:
        """Write the episode in progress (cut) and finish the dataset. Idempotent."""
        if self._closed:
            return
        try:
            self._cut()
        finally:
            self._closed = True
            self.writer.close()
            super().close()
