"""``replay``: re-render a recorded dataset with another camera rig from its stored snapshots (restore each frame's
state and render it: no physics is stepped), into a new dataset of either format."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.cameras.rig import CameraLike, as_cameras
from pixelrig.cameras.rigfile import load_rig
from pixelrig.cameras.spec import Camera
from pixelrig.datasets.common import (
    DatasetInfo,
    Frame,
    MakeEnv,
    Observation,
    depth_to_mm,
    detect_format,
    make_recorded_env,
)
from pixelrig.datasets.formats import open_dataset, open_writer
from pixelrig.envs.state import restore_bullet
from pixelrig.snapshot import Snapshot, restore
from pixelrig.wrappers.pixel_obs import PixelObs


@dataclasses.dataclass(frozen=True)
class ReplayResult:
    """What :func:`replay` wrote.

    Attributes:
        path: the new dataset.
        episodes: episodes written.
        frames: frames written.
        seconds: wall time of the replay.
    """

    path: Path
    episodes: int
    frames: int
    seconds: float


class _Renderer:
    """Restores snapshots into the env under a PixelObs and renders the rig.

    The first frame of each episode is a full :func:`~pixelrig.restore` with the world rebuilt (it checks that the
    snapshot belongs to this env, and applies the episode's randomised colours, task state and camera jitter). Later
    frames of the episode only load the physics (``restore_bullet``: every pose, exactly) into that world: an image
    depends on nothing else, and the world, its rig binding and the renderer's uploaded scene stay as they are
    (a full ``import_state`` would mark the scene changed and make the gl renderer upload it again every frame).
    """

    def __init__(self, pixel: PixelObs, fars: dict[str, float], rgb: tuple[str, ...], depth: tuple[str, ...]) -> None:
        self.pixel, self.inner = pixel, pixel.env
        self.fars, self.rgb, self.depth = fars, rgb, depth
        self.identity: dict[str, Any] | None = None

    def restore(self, data: bytes, first: bool, where: str) -> None:
        snap = Snapshot.from_bytes(data)
        if first or snap.identity != self.identity:
            try:
                restore(self.inner, snap, rebuild=True)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}. replay rebuilds the env from the dataset's env id and kwargs; "
                                 "if yours was made differently, pass make_env= (a function returning it, without "
                                 "PixelObs)") from exc
            self.identity = snap.identity
        else:
            restore_bullet(self.inner.unwrapped.client, snap.env_state["physics"])

    def restore_fully(self, data: bytes) -> None:
        """Everything a snapshot holds, Python task state included (for ``observe()``), into the world as it is."""
        self.inner.unwrapped.import_state(Snapshot.from_bytes(data).env_state, rebuild=False)

    def observe(self, data: bytes, first: bool, state: np.ndarray | None, where: str) -> Observation:
        self.restore(data, first, where)
        images = self.pixel.render_rig()
        return Observation(rgb={c: images[f"{c}/rgb"] for c in self.rgb},
                           depth={c: depth_to_mm(images[f"{c}/depth"], self.fars[c]) for c in self.depth},
                           state=state)


def _cameras(cams: Iterable[CameraLike] | str | os.PathLike[str]) -> tuple[Camera, ...]:
    if isinstance(cams, str | os.PathLike):
        return load_rig(cams)
    return as_cameras(cams)


def replay(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    cams: Iterable[CameraLike] | str | os.PathLike[str],
    format: str | None = None,
    renderer: str | None = None,
    make_env: MakeEnv | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> ReplayResult:
    """Re-render the dataset ``src`` with the rig ``cams`` into a new dataset ``dst``.

    Every frame's stored snapshot is restored and the new rig rendered, so the images equal those of a live run
    of the same actions with that rig, bit for bit (same renderer, same machine). Actions, rewards, flags, states
    and snapshots are copied; ``dst``'s metadata names the new cameras and ``replayed_from``.

    Args:
        src: a dataset written by :class:`~pixelrig.datasets.DatasetRecorder` (either format).
        dst: the new dataset (a folder for LeRobot, a ``*.hdf5`` file for robomimic).
        cams: Cameras or camera dicts, or a rig file (JSON/TOML, as ``pixelrig view --cams``); their "rgb" and
            "depth" images are stored.
        format: "lerobot" or "robomimic"; default the format of ``src``.
        renderer: the backend to draw with ("tiny", "egl", "gl", "auto"); default the recorded one.
        make_env: a function returning the env to restore into (the stack the recorder had under PixelObs), for
            envs that ``gym.make(env_id, **env_kwargs)`` cannot rebuild (builders, functions as kwargs).
        overwrite: replace a dataset of this format already at ``dst``.
        progress: show a progress bar (tqdm) on stderr.

    Returns:
        What was written.

    Raises:
        FileNotFoundError: no dataset at ``src``.
        ValueError: no camera returns rgb or depth, the env cannot be rebuilt (the message names the fix), or a
            snapshot does not belong to the env.
        DatasetExistsError: something is at ``dst`` and ``overwrite`` is False.
    """
    from tqdm import tqdm

    start = time.perf_counter()
    reader = open_dataset(src)
    pixel: PixelObs | None = None
    try:
        fmt = format or detect_format(src)
        cameras = _cameras(cams)
        rgb = tuple(c.name for c in cameras if "rgb" in c.modalities)
        depth = tuple(c.name for c in cameras if "depth" in c.modalities)
        if not rgb and not depth:
            raise ValueError(f"no camera of {[c.name for c in cameras]} returns 'rgb' or 'depth', the modalities a "
                             "dataset stores: add one to a camera's modalities")
        inner: gym.Env = make_env() if make_env is not None else make_recorded_env(reader.info, renderer)
        pixel = PixelObs(inner, cams=cameras, pixels_only=True, renderer=renderer if make_env is not None else None)
        import pixelrig

        info: DatasetInfo = dataclasses.replace(
            reader.info, cameras=tuple(c.to_dict() for c in cameras), rgb=rgb, depth=depth,
            renderer=pixel.render_backend.name, pixelrig_version=pixelrig.__version__,
            replayed_from=str(Path(src).resolve()),
        )
        drawer = _Renderer(pixel, {c.name: c.far for c in cameras}, rgb, depth)
        writer = open_writer(dst, fmt, info, overwrite=overwrite)
        frames = 0
        total = sum(reader.episode_length(e) for e in range(reader.num_episodes))
        try:
            with tqdm(total=total, unit="frame", desc=f"replay {Path(src).name}", disable=not progress) as bar:
                for e in range(reader.num_episodes):
                    held: tuple[Any, Observation] | None = None
                    for t, stored in enumerate(reader.frames(e)):
                        obs = drawer.observe(stored.snapshot, t == 0, stored.state, f"episode {e} frame {t}")
                        if held is not None:
                            writer.add_frame(_frame(*held, next_obs=obs))
                        held = (stored, obs)
                        frames += 1
                        bar.update()
                    if held is None:
                        continue
                    final = reader.final_snapshot(e)
                    if writer.needs_next_obs:
                        state = reader.final_state(e)
                        if state is None and info.state_shape is not None:
                            drawer.restore_fully(final)
                            state = np.asarray(pixel.unwrapped.observe(), dtype=np.float32).reshape(
                                info.state_shape)
                        last = drawer.observe(final, False, state, f"episode {e} final state")
                    else:
                        last = held[1]
                    writer.add_frame(_frame(*held, next_obs=last))
                    writer.end_episode(final, reader.episode_end(e))
        except BaseException:
            writer.abort_episode()
            raise
        finally:
            writer.close()
        return ReplayResult(Path(dst), reader.num_episodes, frames, time.perf_counter() - start)
    finally:
        reader.close()
        if pixel is not None:
            pixel.close()


def _frame(stored: Any, obs: Observation, next_obs: Observation) -> Frame:
    return Frame(obs, stored.action, stored.reward, stored.terminated, stored.truncated, stored.snapshot, next_obs)
