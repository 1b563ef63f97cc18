"""What the dataset formats share: the recorded frame, the dataset's description, depth in millimetres, env
rebuilding for replay, safe creation/overwrite/resume of a dataset path, and write errors that say what happened."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import importlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from pixelrig.cameras.spec import Camera

FORMATS = ("lerobot", "robomimic")
"""The dataset formats: LeRobot v3.0 (a folder) and robomimic HDF5 (one file)."""

DEPTH_UNIT_M = 0.001
"""Depth is stored as uint16 millimetres: metres = stored value × DEPTH_UNIT_M."""

DEPTH_CONVENTION = (
    "uint16 millimetres along the optical axis, rounded to the nearest millimetre (error <= 0.5 mm); 0 = no "
    "surface (background: the camera's far plane or beyond); surfaces nearer than 1 mm read 1, and depths beyond "
    "65.535 m read 65535 (saturated)"
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


# ---- errors -------------------------------------------------------------------------------------------------


class DatasetExistsError(FileExistsError):
    """A dataset (or another file) is already at the path and neither ``overwrite`` nor ``resume`` was given."""


class DatasetWriteError(OSError):
    """Writing the dataset failed (disk full, no permission, read-only file system, ...). Episodes finished
    before the failure are intact; the message says what failed and how to go on."""


def _advice(code: int | None) -> str:
    if code in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full: free space (or record elsewhere) and go on with resume=True"
    if code in (errno.EACCES, errno.EPERM):
        return "no permission to write there: choose a writable path or fix the folder's permissions"
    if code == errno.EROFS:
        return "the file system is read-only: choose a writable path"
    return "check the path and the disk, then go on with resume=True"


def errno_of(exc: BaseException) -> int | None:
    """The errno behind ``exc``: its own, or read from the message of errors that lose it (a broken pipe to
    ffmpeg after ffmpeg hit a full disk, an HDF5 or Arrow error with the C library's text)."""
    text = str(exc)
    if "No space left on device" in text:
        return errno.ENOSPC
    if "Disk quota exceeded" in text:
        return errno.EDQUOT
    if "Read-only file system" in text:
        return errno.EROFS
    if "Permission denied" in text:
        return errno.EACCES
    code = getattr(exc, "errno", None)
    return code if isinstance(code, int) else None


LOW_SPACE = 4 << 20
"""Free bytes under which a failed write is put down to a full disk when the error itself lost its errno (a
broken pipe to ffmpeg, an incomplete video)."""


def _free_bytes(path: Path) -> int | None:
    for folder in (path, *path.parents):
        if folder.exists():
            try:
                return shutil.disk_usage(folder).free
            except OSError:
                return None
    return None


@contextlib.contextmanager
def writing(what: str, path: Path, committed: int) -> Iterator[None]:
    """Turn an ``OSError`` raised while writing into a :class:`DatasetWriteError` that names the file, the cause
    and the fix (``committed`` finished episodes are safe)."""
    try:
        yield
    except DatasetWriteError:
        raise
    except OSError as exc:
        code = errno_of(exc)
        if code in (None, errno.EPIPE, errno.EIO):
            free = _free_bytes(path)
            if free is not None and free < LOW_SPACE:
                code = errno.ENOSPC
        cause = os.strerror(code) if code is not None else f"{type(exc).__name__}: {exc}"
        raise DatasetWriteError(
            code or errno.EIO,
            f"writing {what} at {str(path)!r} failed: {cause}. The {committed} episode(s) finished before are "
            f"intact and readable; {_advice(code)}",
        ) from exc


def check_writable_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents) and check that files can be created in it.

    Raises:
        DatasetWriteError: the folder cannot be created or written (the message names it and the fix).
    """
    with writing("the dataset folder", folder, 0):
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".pixelrig-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary file and a rename: a reader, or a recorder killed at any moment, sees
    the old file or the new one, whole (not fsynced: a power cut may lose the last episode's metadata)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def atomic_write_json(path: Path, data: Any) -> None:
    """:func:`atomic_write_bytes` of indented JSON."""
    atomic_write_bytes(path, (json.dumps(data, indent=4, ensure_ascii=False) + "\n").encode())


# ---- the dataset's description ------------------------------------------------------------------------------


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
        renderer: the backend that drew the images ("tiny", "egl" or "gl").
        cameras: the rig, as ``Camera.to_dict()`` dicts.
        fps: frames per second (LeRobot timestamps are frame_index / fps).
        task: the task description of every frame.
        rgb: cameras whose RGB images are stored.
        depth: cameras whose depth images are stored (see :data:`DEPTH_CONVENTION`).
        state_shape: shape of the env's own observation (None: PixelObs(pixels_only=True), no state).
        action_shape: shape of an action (``()`` for a Discrete action, stored as int64).
        action_dtype: "float32" (Box) or "int64" (Discrete).
        pixelrig_version: the version that wrote the dataset.
        replayed_from: the dataset this one was re-rendered from (None for a recording).
    """

    env_id: str | None
    env_kwargs: dict[str, Any]
    max_episode_steps: int | None
    renderer: str
    cameras: tuple[dict[str, Any], ...]
    fps: int
    task: str
    rgb: tuple[str, ...]
    depth: tuple[str, ...]
    state_shape: tuple[int, ...] | None
    action_shape: tuple[int, ...]
    action_dtype: str
    pixelrig_version: str
    replayed_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly dict, with the conventions spelled out for people reading the file."""
        out = dataclasses.asdict(self)
        out["cameras"] = list(self.cameras)
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
                cameras=tuple(dict(c) for c in data["cameras"]), fps=int(data["fps"]), task=data["task"],
                rgb=tuple(data["rgb"]), depth=tuple(data["depth"]),
                state_shape=None if data["state_shape"] is None else tuple(data["state_shape"]),
                action_shape=tuple(data["action_shape"]), action_dtype=data["action_dtype"],
                pixelrig_version=data["pixelrig_version"], replayed_from=data.get("replayed_from"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"dataset metadata lacks pixelrig's description ({type(exc).__name__}: {exc}): "
                             "was it written by pixelrig's DatasetRecorder?") from None

    def camera(self, name: str) -> Camera:
        """The recorded camera called ``name``."""
        for spec in self.cameras:
            if spec["name"] == name:
                return Camera.from_dict(spec)
        raise KeyError(name)

    def image_shape(self, cam: str) -> tuple[int, int]:
        """(height, width) of camera ``cam``'s images."""
        camera = self.camera(cam)
        return camera.height, camera.width

    def compatible_with(self, other: DatasetInfo) -> str | None:
        """None when ``other`` describes frames that can join this dataset (resume); else what differs."""
        for field in ("env_id", "env_kwargs", "cameras", "fps", "rgb", "depth", "state_shape", "action_shape",
                      "action_dtype"):
            mine, theirs = getattr(self, field), getattr(other, field)
            if json.dumps(mine, sort_keys=True, default=list) != json.dumps(theirs, sort_keys=True, default=list):
                return f"{field}: the dataset has {mine!r}, this recorder has {theirs!r}"
        return None


# ---- frames -----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Observation:
    """What a dataset keeps of one observation.

    Attributes:
        rgb: camera -> (H, W, 3) uint8.
        depth: camera -> (H, W, 1) uint16 millimetres (:data:`DEPTH_CONVENTION`).
        state: the env's own observation (float32), or None.
    """

    rgb: dict[str, np.ndarray]
    depth: dict[str, np.ndarray]
    state: np.ndarray | None


@dataclasses.dataclass(frozen=True)
class Frame:
    """One step: the observation the action was taken in, the action, what the step returned, and the snapshot
    of the state ``obs`` was rendered in. ``next_obs`` is the observation the step returned."""

    obs: Observation
    action: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    snapshot: bytes
    next_obs: Observation


def depth_to_mm(depth: np.ndarray, far: float) -> np.ndarray:
    """Metric depth to stored millimetres.

    Args:
        depth: (H, W, 1) float32 metres along the optical axis, background = ``far`` (PixelObs' depth).
        far: the camera's far plane (m).

    Returns:
        (H, W, 1) uint16 millimetres: round(depth × 1000) clipped to [1, 65535]; 0 where depth >= far
        (background). See :data:`DEPTH_CONVENTION`.
    """
    d = np.asarray(depth, dtype=np.float64)
    mm = np.clip(np.rint(d * 1000.0), 1, 65535).astype(np.uint16)
    mm[d >= far] = 0
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


# ---- what a format does -----------------------------------------------------------------------------------


class EpisodeWriter(Protocol):
    """A format's writer: frames go in one at a time, an episode is committed whole by :meth:`end_episode`."""

    path: Path
    info: DatasetInfo
    num_episodes: int
    """Committed episodes (a resumed dataset's included)."""
    needs_next_obs: bool
    """Whether frames' ``next_obs`` is stored (robomimic's next_obs)."""

    def add_frame(self, frame: Frame) -> None:
        """Append a frame to the episode in progress (starting one if none is)."""

    def end_episode(self, final_snapshot: bytes, end: str) -> int:
        """Commit the episode in progress; ``end`` is "terminated", "truncated" or "cut". Returns its index."""

    def abort_episode(self) -> None:
        """Drop the episode in progress (its files are removed)."""

    def close(self) -> None:
        """Finish the dataset (an episode in progress must have been ended or aborted)."""


@dataclasses.dataclass(frozen=True)
class StoredFrame:
    """A frame as read back: everything but the images."""

    action: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    state: np.ndarray | None
    snapshot: bytes


class DatasetReader(Protocol):
    """A format's reader (what replay needs)."""

    path: Path
    info: DatasetInfo
    num_episodes: int

    def episode_length(self, episode: int) -> int:
        """Frames in ``episode``."""

    def episode_end(self, episode: int) -> str:
        """How ``episode`` ended: "terminated", "truncated" or "cut"."""

    def frames(self, episode: int) -> Iterator[StoredFrame]:
        """The episode's frames in order, read in bounded memory."""

    def final_snapshot(self, episode: int) -> bytes:
        """The state after the episode's last action."""

    def final_state(self, episode: int) -> np.ndarray | None:
        """The env's own observation after the last action, when the format stores it (else None)."""

    def close(self) -> None:
        """Release open files."""


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of an existing dataset: a folder with ``meta/info.json`` is LeRobot, an HDF5 file robomimic.

    Raises:
        FileNotFoundError: nothing at ``path``.
        ValueError: something else is there.
    """
    path = Path(path)
    if path.is_dir() and (path / "meta" / "info.json").is_file():
        return "lerobot"
    if path.is_file() and is_hdf5(path):
        return "robomimic"
    if not path.exists():
        raise FileNotFoundError(f"no dataset at {str(path)!r}")
    raise ValueError(f"{str(path)!r} is neither a LeRobot dataset (a folder with meta/info.json) nor a robomimic "
                     "HDF5 file")


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def is_hdf5(path: Path) -> bool:
    """Whether ``path`` starts with the HDF5 signature."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == HDF5_SIGNATURE
    except OSError:
        return False


def check_format(fmt: str) -> str:
    """``fmt`` if it is a known format, else a ValueError listing them."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}: got {fmt!r}")
    return fmt


def check_target(path: Path, fmt: str, overwrite: bool, resume: bool) -> str | None:
    """What writing a dataset at ``path`` would do to what is there, without touching anything.

    Returns:
        None: nothing is there (or an empty folder); "resume": add to the dataset there; "overwrite": replace it.

    Raises:
        ValueError: overwrite and resume together.
        DatasetExistsError: something is there and neither flag allows touching it.
        FileExistsError: overwrite=True but what is there is not a dataset of this format (never deleted).
    """
    if overwrite and resume:
        raise ValueError("overwrite=True and resume=True contradict each other: overwrite replaces the dataset, "
                         "resume adds episodes to it; pass one")
    exists = path.exists() and not (path.is_dir() and not any(path.iterdir()))
    if not exists:
        return None
    is_dataset = detect_quietly(path) == fmt
    if resume:
        if not is_dataset:
            raise FileExistsError(f"resume=True but {str(path)!r} is not a {fmt} dataset: pick its path, or a new one")
        return "resume"
    if not overwrite:
        what = f"a {fmt} dataset" if is_dataset else "something"
        raise DatasetExistsError(f"{what} already exists at {str(path)!r}: pass overwrite=True to replace it, "
                                 "resume=True to add episodes to it, or another path")
    if not is_dataset:
        raise FileExistsError(f"overwrite=True but {str(path)!r} is not a {fmt} dataset, so it is not deleted: "
                              "remove it yourself or pick another path")
    return "overwrite"


def prepare_target(path: Path, fmt: str, overwrite: bool, resume: bool) -> bool:
    """Decide what to do with an existing path before writing a dataset there (see :func:`check_target`), and
    remove the old dataset when overwriting.

    Returns:
        True to resume the dataset at ``path`` (it exists), False to start a new one (nothing is there now).
    """
    action = check_target(path, fmt, overwrite, resume)
    if action is None:
        return False
    if action == "resume":
        return True
    with writing("(removing the old dataset)", path, 0):
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return False


def detect_quietly(path: Path) -> str | None:
    """:func:`detect_format`, or None."""
    try:
        return detect_format(path)
    except (FileNotFoundError, ValueError):
        return None


# ---- the env a dataset came from ---------------------------------------------------------------------------


def rebuild_kwargs(described: Mapping[str, Any]) -> dict[str, Any]:
    """Turn stored env kwargs (as snapshots describe them) back into arguments for ``gym.make``.

    Plain JSON values are taken as they are; pixelrig dataclasses (``Randomization``) are rebuilt, their lists
    turned back into tuples.

    Raises:
        ValueError: a kwarg cannot be rebuilt (a function, or an object that is not a pixelrig dataclass); the
            message names it and the fix (``make_env=``).
    """
    return {key: _rebuild(value, key) for key, value in described.items()}


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _rebuild(value: Any, where: str) -> Any:
    if isinstance(value, list):
        return [_rebuild(v, where) for v in value]
    if not isinstance(value, dict):
        return value
    if "__dataclass__" in value:
        module, _, qualname = str(value["__dataclass__"]).partition(":")
        if not module.startswith("pixelrig."):
            raise ValueError(f"env kwarg {where!r} is a {value['__dataclass__']} object, which a dataset cannot "
                             "rebuild: pass make_env=lambda: gym.make(...) to replay")
        cls = getattr(importlib.import_module(module), qualname)
        fields = {k: _tuples(_rebuild(v, where)) for k, v in value.items() if k != "__dataclass__"}
        return cls(**fields)
    if "__callable__" in value or "__repr__" in value:
        what = value.get("__callable__") or value.get("__repr__")
        raise ValueError(f"env kwarg {where!r} was {what}, which a dataset cannot rebuild: pass "
                         "make_env=lambda: gym.make(...) (the same id and kwargs) to replay")
    return {k: _rebuild(v, where) for k, v in value.items()}


def make_recorded_env(info: DatasetInfo, renderer: str | None) -> gym.Env:
    """A fresh env like the one a dataset was recorded from (the stack under PixelObs), for replay.

    Args:
        info: the dataset's description.
        renderer: the backend to draw with; None keeps the recorded one.

    Raises:
        ValueError: the dataset has no env id, or kwargs that cannot be rebuilt (the message names the fix).
    """
    import pixelrig  # noqa: F401  (registers the pixelrig ids)

    env_id, kwargs = recorded_env_args(info, renderer)
    return gym.make(env_id, **kwargs)


def recorded_env_args(info: DatasetInfo, renderer: str | None) -> tuple[str, dict[str, Any]]:
    """The ``gym.make`` id and kwargs of :func:`make_recorded_env` (checks that the env can be rebuilt without
    making it).

    Raises:
        ValueError: as :func:`make_recorded_env`.
    """
    if info.env_id is None:
        raise ValueError("the dataset's env was not made by gym.make (no env id recorded): pass make_env= (a "
                         "function returning the same env, without PixelObs) to replay")
    kwargs = rebuild_kwargs(info.env_kwargs)
    kwargs.pop("render_mode", None)  # replay draws its own images: never a window
    kwargs["renderer"] = renderer or info.renderer
    if info.max_episode_steps is not None:
        kwargs["max_episode_steps"] = info.max_episode_steps
    return info.env_id, kwargs


# ---- streaming statistics (LeRobot's meta/stats.json) -------------------------------------------------------

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
"""The quantiles LeRobot's stats carry (q01, q10, q50, q90, q99)."""


def _quantile_key(q: float) -> str:
    return f"q{int(round(q * 100)):02d}"


def vector_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """LeRobot's per-feature statistics of (N, ...) values over the first axis: min, max, mean, std, count and
    the :data:`QUANTILES` (exact, inverted CDF)."""
    v = np.asarray(values, dtype=np.float64)
    out = {"min": v.min(axis=0), "max": v.max(axis=0), "mean": v.mean(axis=0), "std": v.std(axis=0),
           "count": np.array([v.shape[0]], dtype=np.int64)}
    for q in QUANTILES:
        out[_quantile_key(q)] = np.quantile(v, q, axis=0, method="inverted_cdf")
    return out


class HistogramStats:
    """Exact statistics of integer images, per channel, from running histograms (memory: one histogram).

    Args:
        channels: channels per pixel.
        levels: number of integer levels (256 for uint8, 65536 for uint16).
        scale: stats are reported as value × scale (1/255 for LeRobot's images).
    """

    def __init__(self, channels: int, levels: int, scale: float = 1.0) -> None:
        self.hist = np.zeros((channels, levels), dtype=np.int64)
        self.frames = 0
        self.scale = scale

    def add(self, image: np.ndarray) -> None:
        """Count one (H, W, C) image."""
        flat = np.asarray(image).reshape(-1, self.hist.shape[0])
        levels = self.hist.shape[1]
        for c in range(self.hist.shape[0]):
            self.hist[c] += np.bincount(flat[:, c], minlength=levels)
        self.frames += 1

    def stats(self) -> dict[str, np.ndarray]:
        """min, max, mean, std, quantiles with shape (C, 1, 1) and count (frames) with shape (1,)."""
        levels = np.arange(self.hist.shape[1], dtype=np.float64)
        total = self.hist.sum(axis=1)
        nonzero = [np.flatnonzero(h) for h in self.hist]
        mean = (self.hist * levels).sum(axis=1) / total
        var = (self.hist * (levels[None, :] - mean[:, None]) ** 2).sum(axis=1) / total
        cdf = np.cumsum(self.hist, axis=1)
        out = {"min": np.array([n[0] for n in nonzero], dtype=np.float64),
               "max": np.array([n[-1] for n in nonzero], dtype=np.float64),
               "mean": mean, "std": np.sqrt(var)}
        for q in QUANTILES:
            out[_quantile_key(q)] = np.array([np.searchsorted(cdf[c], q * total[c]) for c in range(len(total))],
                                             dtype=np.float64)
        shaped = {k: (v * self.scale).reshape(-1, 1, 1) for k, v in out.items()}
        shaped["count"] = np.array([self.frames], dtype=np.int64)
        return shaped


def aggregate_stats(parts: Sequence[Mapping[str, Mapping[str, np.ndarray]]]) -> dict[str, dict[str, np.ndarray]]:
    """Combine per-episode stats as LeRobot does: exact min, max, mean and std; quantiles as count-weighted means
    of the episodes' quantiles."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key in parts[0]:
        stats = [p[key] for p in parts if key in p]
        counts = np.array([float(s["count"][0]) for s in stats])
        total = counts.sum()
        w = counts.reshape((-1,) + (1,) * np.asarray(stats[0]["mean"]).ndim)
        means = np.stack([s["mean"] for s in stats])
        mean = (means * w).sum(axis=0) / total
        var = ((np.stack([s["std"] for s in stats]) ** 2 + (means - mean) ** 2) * w).sum(axis=0) / total
        agg = {"min": np.stack([s["min"] for s in stats]).min(axis=0),
               "max": np.stack([s["max"] for s in stats]).max(axis=0),
               "mean": mean, "std": np.sqrt(var), "count": np.array([int(total)], dtype=np.int64)}
        for q in QUANTILES:
            k = _quantile_key(q)
            agg[k] = (np.stack([s[k] for s in stats]) * w).sum(axis=0) / total
        out[key] = agg
    return out


def stats_to_json(stats: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, dict[str, Any]]:
    """Stats as nested lists (JSON); NaN never appears (empty features are skipped by the caller)."""
    out: dict[str, dict[str, Any]] = {}
    for key, s in stats.items():
        out[key] = {}
        for name, value in s.items():
            arr = np.asarray(value)
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ValueError(f"stats of {key!r}: {name} is not finite")
            out[key][name] = arr.tolist()
    return out


def stats_from_json(data: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, np.ndarray]]:
    """Inverse of :func:`stats_to_json`."""
    return {k: {n: np.asarray(v) for n, v in s.items()} for k, s in data.items()}


MakeEnv = Callable[[], gym.Env]
"""A function returning the env a dataset was recorded from (the stack under PixelObs), for replay."""
