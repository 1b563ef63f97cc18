"""``replay``: re-render a recorded dataset with another camera rig from its stored snapshots (restore each frame's
state and render it: no physics is stepped), into a new dataset of either format, in this process or in several
worker processes."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pixelrig.cameras.rig import CameraLike
from pixelrig.cameras.rigfile import rig_cameras
from pixelrig.cameras.spec import Camera
from pixelrig.datasets.formats import DatasetReader, EpisodeWriter, open_dataset, open_writer, writer_class
from pixelrig.datasets.info import DatasetInfo
from pixelrig.datasets.rebuild import MakeEnv, make_recorded_env, recorded_env_args
from pixelrig.datasets.replay_workers import Workers, loadable_elsewhere
from pixelrig.datasets.rerender import EpisodeEnd, Item, ReplayLooks, SnapshotDrawer, episode_items
from pixelrig.datasets.robomimic import RobomimicReader, RobomimicWriter
from pixelrig.datasets.steps import EpisodeAttrs, Observation, Step, StoredStep
from pixelrig.datasets.target import check_format, check_target, detect_format
from pixelrig.envs.presets import LooksPreset
from pixelrig.envs.randomization import Randomization
from pixelrig.errors import DatasetWriteError
from pixelrig.wrappers.pixel_obs import PixelObs

MIN_FRAMES_PER_WORKER = 400
"""workers=None starts no more rendering workers than one per this many frames. A worker takes half a second to two
seconds to start (a Python interpreter, pixelrig's imports, the env, and for gl a GL context whose shaders llvmpipe
compiles), while overlapping rendering with writing saves at most the smaller of the two per frame (with gl,
rendering: a few milliseconds per PandaPush frame): a short dataset does not win the start back."""


@dataclasses.dataclass(frozen=True)
class ReplayResult:
    """What :func:`replay` wrote.

    Attributes:
        path: the new dataset.
        episodes: episodes written.
        frames: frames written.
        seconds: wall time of the replay.
        workers: processes used (1: this one alone; ``n``: this one writing, ``n - 1`` workers rendering).
    """

    path: Path
    episodes: int
    frames: int
    seconds: float
    workers: int = 1


def usable_cpus() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def worker_count(workers: int | None, make_env: MakeEnv | None, episodes: int, frames: int) -> int:
    """How many processes replay uses (this one included): ``workers`` checked, or chosen (None)."""
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers={workers!r} must be a whole number >= 1 (1: everything in this process) or "
                             "None (one process per CPU core, fewer for short datasets)")
        if workers > 1 and make_env is not None:
            why = loadable_elsewhere(make_env)
            if why is not None:
                raise ValueError(f"workers={workers} runs make_env in worker processes, but {why}: define it at "
                                 "the top level of an importable module (or use functools.partial), or pass "
                                 "workers=1")
        if workers > 1 and os.name != "posix":  # pragma: no cover - workers pass a socket to their children
            raise ValueError(f"workers={workers} needs a POSIX system (Linux, macOS): pass workers=1")
        return max(1, min(workers, 1 + episodes))
    if os.name != "posix" or (make_env is not None and loadable_elsewhere(make_env) is not None):
        return 1
    return max(1, min(usable_cpus(), 1 + episodes, 1 + frames // MIN_FRAMES_PER_WORKER))


class _Local:
    """Renders in this process."""

    def __init__(self, reader: DatasetReader, make_pixel: Any, cameras: tuple[Camera, ...],
                 needs_next_obs: bool, looks: ReplayLooks | None, renderings: list[tuple[int, int]]) -> None:
        self.reader, self.needs_next_obs, self.renderings = reader, needs_next_obs, renderings
        self.drawer = SnapshotDrawer(make_pixel, cameras, looks)
        self.backend = self.drawer.backend

    def items(self, j: int) -> Iterator[Item]:
        e, looks_seed = self.renderings[j]
        return episode_items(self.reader, self.drawer, e, self.needs_next_obs, self.reader.info.state_shape,
                             looks_seed)

    def close(self, success: bool) -> None:
        self.drawer.close()


def start_rendering(reader: DatasetReader, src: Path, cameras: tuple[Camera, ...], renderer: str | None,
                    make_env: MakeEnv | None, needs_next_obs: bool, looks: ReplayLooks | None,
                    renderings: list[tuple[int, int]], count: int) -> Any:
    """What re-renders ``renderings`` (``(episode, looks seed)`` pairs) of ``reader``'s dataset under ``looks``:
    this process (``count`` 1) or ``count - 1`` worker processes. Its ``items(j)`` yields rendering ``j``'s items
    (:data:`~pixelrig.datasets.rerender.Item`; take the renderings in order), ``backend`` names the renderer, and
    ``close(success)`` ends it."""

    def make_pixel() -> PixelObs:
        inner = make_env() if make_env is not None else make_recorded_env(reader.info, renderer)
        return PixelObs(inner, cams=cameras, pixels_only=True, renderer=renderer if make_env is not None else None,
                        background=looks.background if looks is not None and looks.background else False)

    if count > 1:
        return Workers(count - 1, src, renderings, [c.to_dict() for c in cameras], renderer, make_env,
                       needs_next_obs, _frame_bytes(cameras), looks)
    return _Local(reader, make_pixel, cameras, needs_next_obs, looks, renderings)


def write_rendered(writer: EpisodeWriter, reader: DatasetReader, e: int, items: Iterable[Item],
                   attrs: Callable[[EpisodeEnd], EpisodeAttrs], frame_done: Callable[[], Any]) -> int:
    """Write a re-rendering of ``reader``'s episode ``e`` (its ``items``) as the writer's next episode, with the
    attributes ``attrs(its end)``; ``frame_done()`` after each frame. Into robomimic from robomimic, the recorded
    snapshots are copied as they are (already compressed). Returns the frames written."""
    if isinstance(writer, RobomimicWriter) and isinstance(reader, RobomimicReader):
        writer.take_snapshots_from(reader.path, f"demo_{e}")
    held: tuple[StoredStep, Observation] | None = None
    frames = 0
    for item in items:
        if isinstance(item, EpisodeEnd):
            if held is not None and item.final is not None:
                last = item.last if item.last is not None else held[1]
                writer.add_frame(_frame(*held, next_obs=last))
                writer.end_episode(item.final, item.end, attrs(item))
            break
        if held is not None:
            writer.add_frame(_frame(*held, next_obs=item[1]))
        held = item
        frames += 1
        frame_done()
    return frames


@contextlib.contextmanager
def staged_writer(dst: Path, fmt: str, info: DatasetInfo, overwrite: bool, what: str) -> Iterator[EpisodeWriter]:
    """A writer of a new dataset written beside ``dst`` under a hidden name and moved to ``dst`` when the block
    ends without error (replacing a dataset of that format there with ``overwrite``); on an error nothing is left
    at ``dst`` (an old dataset there stays as it was), and a write error is a :class:`DatasetWriteError` naming
    ``what`` (the command), ``dst`` and the fix."""
    staged = dst.with_name(f".{dst.stem}.{what}ing-{os.getpid()}{dst.suffix}")  # .push.replaying-123
    _remove(staged)
    try:
        writer = open_writer(staged, fmt, info)
        try:
            yield writer
        except BaseException:
            writer.abort_episode()
            raise
        finally:
            writer.close()
        _commit(staged, dst, fmt, overwrite)
    except DatasetWriteError as exc:
        code = exc.errno or errno.EIO
        raise DatasetWriteError(code, f"{what} could not write {str(dst)!r} ({os.strerror(code)}), so nothing "
                                      f"was left there: {_advice(code, what)}") from exc
    finally:
        _remove(staged)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _commit(staged: Path, dst: Path, fmt: str, overwrite: bool) -> None:
    """Move the finished dataset to ``dst`` (replacing the old one there when ``overwrite``)."""
    action = check_target(dst, fmt, overwrite, resume=False)  # again: something may have appeared meanwhile
    old = None
    if action == "overwrite":
        old = dst.with_name(f".{dst.name}.replaced-{os.getpid()}")
        _remove(old)
        os.replace(dst, old)
    elif dst.is_dir():  # an empty folder
        dst.rmdir()
    os.replace(staged, dst)
    if old is not None:
        _remove(old)


def _frame_bytes(cameras: tuple[Camera, ...]) -> int:
    """About what one re-rendered frame takes in memory: its images and its stored snapshot."""
    images = sum(c.width * c.height * (3 * ("rgb" in c.modalities) + 2 * ("depth" in c.modalities))
                 for c in cameras)
    return images + (128 << 10)


def replay(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    cams: Iterable[CameraLike] | str | os.PathLike[str],
    format: str | None = None,
    renderer: str | None = None,
    make_env: MakeEnv | None = None,
    overwrite: bool = False,
    progress: bool = True,
    workers: int | None = None,
    looks: str | LooksPreset | Randomization | None = None,
    looks_seed: int = 0,
) -> ReplayResult:
    """Re-render the dataset ``src`` with the rig ``cams`` into a new dataset ``dst``.

    Every frame's stored snapshot is restored and the new rig rendered, so the images equal those of a live run
    of the same actions with that rig, bit for bit (same renderer, same machine), whatever ``workers`` is. Actions,
    rewards, flags, states, snapshots and each episode's attributes (:func:`~pixelrig.datasets.collect.collect`'s
    seed and success) are copied; ``dst``'s metadata names the new cameras and ``replayed_from``.
    The new dataset is written beside ``dst`` under a hidden name and moved to ``dst`` when it is complete: if the
    replay fails or is interrupted, nothing is left at ``dst`` (an old dataset there stays as it was).

    Args:
        src: a dataset written by :class:`~pixelrig.datasets.DatasetRecorder` (either format).
        dst: the new dataset (a folder for LeRobot, a ``*.hdf5`` file for robomimic).
        cams: Cameras or camera dicts, or a rig file (JSON/TOML, as ``pixelrig view --cams``); their "rgb" and
            "depth" images are stored.
        format: "lerobot" or "robomimic"; default the format of ``src``.
        renderer: the backend to draw with (any renderer); default the recorded one.
        make_env: a function returning the env to restore into (the stack the recorder had under PixelObs), for
            envs that ``gym.make(env_id, **env_kwargs)`` cannot rebuild (builders, functions as kwargs). With
            ``workers`` > 1 it runs in the worker processes: it must pickle (a module-level function, or a
            ``functools.partial`` of one).
        overwrite: replace a dataset of this format already at ``dst`` (when the new one is complete).
        progress: show a progress bar (tqdm) on stderr.
        workers: processes to use, this one included. 1: everything here. ``n`` > 1: ``n - 1`` worker processes
            restore and render (worker ``k`` takes episodes ``k``, ``k + n - 1``, ...) while this one writes the
            episodes in order, so that rendering and writing overlap. None (default): one per CPU core this
            process may use, with at most one worker per episode and per :data:`MIN_FRAMES_PER_WORKER` frames,
            and 1 when ``make_env`` cannot be sent to another process.
        looks: re-render under new looks: a preset's name ("train", "test-hard"), a
            :class:`~pixelrig.envs.presets.LooksPreset` or a :class:`~pixelrig.Randomization` whose look fields are
            drawn per episode (see :class:`~pixelrig.datasets.rerender.SnapshotDrawer`); the physics restored is
            the recording's, bit for bit. None: the recorded looks (light, textures, distractors; no background).
        looks_seed: the new looks' seed (episode ``e`` draws from ``(looks_seed, e)``): the same seed gives the same
            images.

    Returns:
        What was written.

    Raises:
        FileNotFoundError: no dataset at ``src``.
        ValueError: no camera returns rgb or depth, the env cannot be rebuilt (the message names the fix), a
            snapshot does not belong to the env or is corrupted, a bad ``workers``, or bad ``looks``.
        DatasetExistsError: something is at ``dst`` and ``overwrite`` is False.
        DatasetWriteError: ``dst`` cannot be written (nothing is left there).
        ReplayWorkerError: a worker process died (an error a worker raises is raised here as it is).
    """
    start = time.perf_counter()
    dst = Path(dst)
    cameras = rig_cameras(cams)
    new_looks = ReplayLooks.of(looks, looks_seed)
    rgb = tuple(c.name for c in cameras if "rgb" in c.modalities)
    depth = tuple(c.name for c in cameras if "depth" in c.modalities)
    if not rgb and not depth:
        raise ValueError(f"no camera of {[c.name for c in cameras]} returns 'rgb' or 'depth', the modalities a "
                         "dataset stores: add one to a camera's modalities")
    reader = open_dataset(src)
    try:
        fmt = check_format(format or detect_format(src))
        check_target(dst, fmt, overwrite, resume=False)
        if make_env is None:
            recorded_env_args(reader.info, renderer)  # can the env be rebuilt? (raises naming make_env=)
        lengths = [reader.episode_length(e) for e in range(reader.num_episodes)]
        count = worker_count(workers, make_env, len(lengths), sum(lengths))
        needs_next_obs = bool(writer_class(fmt).needs_next_obs)
        return _replay(reader, Path(src), dst, fmt, cameras, renderer, make_env, overwrite, progress, count,
                       lengths, needs_next_obs, start, new_looks)
    finally:
        reader.close()


def _replay(reader: DatasetReader, src: Path, dst: Path, fmt: str, cameras: tuple[Camera, ...],
            renderer: str | None, make_env: MakeEnv | None, overwrite: bool, progress: bool, count: int,
            lengths: list[int], needs_next_obs: bool, start: float, looks: ReplayLooks | None) -> ReplayResult:
    from tqdm import tqdm

    from pixelrig.version import __version__

    renderings = [(e, looks.seed if looks is not None else 0) for e in range(len(lengths))]
    source = start_rendering(reader, src, cameras, renderer, make_env, needs_next_obs, looks, renderings, count)
    success = False
    try:
        info: DatasetInfo = dataclasses.replace(
            reader.info, cams=tuple(c.to_dict() for c in cameras),
            rgb=tuple(c.name for c in cameras if "rgb" in c.modalities),
            depth=tuple(c.name for c in cameras if "depth" in c.modalities),
            renderer=source.backend, pixelrig_version=__version__, replayed_from=str(src.resolve()),
        )
        frames = 0
        with staged_writer(dst, fmt, info, overwrite, "replay") as writer, \
                tqdm(total=sum(lengths), unit="frame", desc=f"replay {src.name}", disable=not progress) as bar:
            for e in range(len(lengths)):
                frames += write_rendered(writer, reader, e, source.items(e), lambda _, e=e: reader.episode_attrs(e),
                                         bar.update)
        success = True
        return ReplayResult(dst, len(lengths), frames, time.perf_counter() - start, count)
    finally:
        source.close(success)


def _advice(code: int, what: str) -> str:
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"free space (the new dataset is written in full beside dst before it replaces anything) or {what} " \
               "to another disk"
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "choose a writable dst"
    return f"check the path and the disk, then run {what} again"


def _frame(stored: StoredStep, obs: Observation, next_obs: Observation) -> Step:
    if stored.robot_state is not None:  # a dataset with a real robot's features keeps its state and action
        obs = dataclasses.replace(obs, robot_state=stored.robot_state)
    return Step(obs, stored.action, stored.reward, stored.terminated, stored.truncated, stored.snapshot, next_obs,
                stored.robot_action)
