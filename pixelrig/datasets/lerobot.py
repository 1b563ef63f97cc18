"""LeRobot v3.0 datasets (the layout LeRobot's ``LeRobotDataset`` reads), written one episode at a time.

Layout (``{c}``/``{f}``: chunk and file index, 3 digits; episode e is chunk ``e // 1000``, file ``e % 1000``: every
episode has its own files, so a finished episode is never rewritten)::

    meta/info.json                      codebase_version "v3.0", fps, features, totals, paths, and "pixelrig":
                                        the env id and kwargs, the cameras, pixelrig's version, the conventions
    meta/stats.json                     per-feature min/max/mean/std/count/q01..q99 (images per channel, in [0, 1])
    meta/tasks.parquet                  task strings (the index) -> task_index
    meta/episodes/chunk-{c}/file-{f}.parquet   one row per episode: episode_index, tasks, length, dataset_from/to
                                        _index, data/ and videos/<key>/ chunk_index, file_index, from/to_timestamp,
                                        meta/episodes/ chunk and file, stats/<feature>/<stat>, pixelrig/end, and
                                        pixelrig/<name> per episode attribute (pixelrig collect's seed, success)
    data/chunk-{c}/file-{f}.parquet     one row per frame: observation.state, action, next.reward,
                                        next.terminated, next.truncated, next.done, observation.depth.<cam>
                                        (uint16 mm), timestamp, frame_index, episode_index, index, task_index
    videos/observation.images.<cam>/chunk-{c}/file-{f}.mp4   H.264, yuv420p, one frame per row, pts = t / fps
    snapshots/chunk-{c}/file-{f}.parquet   pixelrig's: episode_index, frame_index, snapshot (bytes); the frames'
                                        states plus one row (frame_index = length) for the state after the last
                                        action; LeRobot's reader never opens this folder

Crash safety: an episode is written under ``.partial/`` and moved into place when it ends (videos, snapshots, the
episode's metadata row, its data file), then ``stats.json`` and ``info.json`` are replaced atomically. A process
killed mid-episode leaves the finished episodes untouched; ``resume=True`` removes what an unfinished episode left.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.datasets.files import LOW_SPACE, atomic_write_bytes, atomic_write_json, check_writable_folder, writing
from pixelrig.datasets.info import DatasetInfo
from pixelrig.datasets.stats import HistogramStats, aggregate_stats, stats_from_json, stats_to_json, vector_stats
from pixelrig.datasets.steps import EpisodeAttrs, Step, StoredStep, check_attrs, plain_attr
from pixelrig.display.video import VideoStream
from pixelrig.errors import DatasetWriteError

CODEBASE_VERSION = "v3.0"
CHUNKS_SIZE = 1000
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
SNAPSHOTS_PATH = "snapshots/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
OWN_DATA_PATH = "pixelrig/data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
"""With a real robot's features (:attr:`DatasetInfo.robot`): pixelrig's own frame columns, the data file it writes
without one (the env's own state and action, rewards, flags, depth), beside LeRobot's ``data/``."""
OWN_SNAPSHOTS_PATH = "pixelrig/snapshots/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
"""With a real robot's features: the snapshots, under ``pixelrig/``."""
STAGING = ".partial"
ATTR_PREFIX = "pixelrig/"
"""The prefix of pixelrig's own columns in an episode's ``meta/episodes`` row (``pixelrig/end``, attributes)."""
ROW_GROUP = 64
"""Frames per parquet row group: what the writer holds in memory between flushes."""

DEFAULT_FEATURES = {
    "timestamp": {"dtype": "float32", "shape": [1], "names": None},
    "frame_index": {"dtype": "int64", "shape": [1], "names": None},
    "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    "index": {"dtype": "int64", "shape": [1], "names": None},
    "task_index": {"dtype": "int64", "shape": [1], "names": None},
}


def _pa() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the install
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled('LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"') from None
    return pyarrow


def image_key(cam: str) -> str:
    """LeRobot's feature name of camera ``cam``'s RGB video."""
    return f"observation.images.{cam}"


def depth_key(cam: str) -> str:
    """The feature name of camera ``cam``'s depth (uint16 millimetres)."""
    return f"observation.depth.{cam}"


def _place(template: str, episode: int, **kw: str) -> str:
    chunk, file = divmod(episode, CHUNKS_SIZE)
    return template.format(chunk_index=chunk, file_index=file, **kw)


def _even(n: int) -> int:
    return n + n % 2


CODEC_NAMES = {"libsvtav1": "av1", "libaom-av1": "av1", "libx264": "h264", "h264": "h264", "hevc": "hevc"}
"""ffmpeg encoders -> the codec's name in a video feature's ``info`` (what LeRobot reads from the stream)."""


def video_info(h: int, w: int, fps: int, encoder: dict[str, Any]) -> dict[str, Any]:
    """A video feature's ``info`` as LeRobot 0.6 writes it for an RGB camera recorded with ``encoder`` (its
    ``get_video_info``: the stream's size, codec, pixel format, fps and channels, no audio, then the encoder's
    settings, then ``is_depth_map``)."""
    out: dict[str, Any] = {"video.height": h, "video.width": w, "video.codec": CODEC_NAMES[encoder["codec"]],
                           "video.pix_fmt": encoder["pix_fmt"], "video.fps": fps, "video.channels": 3,
                           "has_audio": False}
    for key, value in encoder.items():
        if key != "codec":
            out.setdefault(f"video.{key}", value)
    out["is_depth_map"] = False
    return out


def robot_features(info: DatasetInfo) -> dict[str, dict[str, Any]]:
    """The ``features`` LeRobot's recording code writes for the real robot ``info.robot`` with ``info.rgb``'s
    cameras: ``action`` and ``observation.state`` named for the robot's motors, one video per camera, LeRobot's
    default features."""
    assert info.robot is not None
    robot = info.robot
    feats: dict[str, dict[str, Any]] = {
        "action": {"dtype": "float32", "shape": [len(robot["action_names"])], "names": list(robot["action_names"])},
        "observation.state": {"dtype": "float32", "shape": [len(robot["state_names"])],
                              "names": list(robot["state_names"])},
    }
    for cam in info.rgb:
        h, w = (_even(n) for n in info.image_shape(cam))
        feats[image_key(cam)] = {"dtype": "video", "shape": [h, w, 3], "names": ["height", "width", "channels"],
                                 "info": video_info(h, w, info.fps, robot["video"])}
    return {**feats, **DEFAULT_FEATURES}


def own_info(info: DatasetInfo) -> DatasetInfo:
    """``info`` without a real robot: what pixelrig's own columns are (with a robot, its ``pixelrig/data`` files)."""
    return info if info.robot is None else dataclasses.replace(info, robot=None)


def features(info: DatasetInfo) -> dict[str, dict[str, Any]]:
    """The ``features`` of ``meta/info.json`` for a dataset described by ``info``: a real robot's as LeRobot
    writes them (:func:`robot_features`) when ``info.robot`` is set, else pixelrig's own.

    Videos of odd-sized cameras are padded to even sizes (H.264 yuv420p), with black rows/columns at the
    bottom/right; the video feature's shape is the padded one.
    """
    if info.robot is not None:
        return robot_features(info)
    feats: dict[str, dict[str, Any]] = {}
    for cam in info.rgb:
        h, w = info.image_shape(cam)
        feats[image_key(cam)] = {
            "dtype": "video", "shape": [_even(h), _even(w), 3], "names": ["height", "width", "channels"],
            "info": {"video.height": _even(h), "video.width": _even(w), "video.codec": "h264",
                     "video.pix_fmt": "yuv420p", "video.is_depth_map": False, "video.fps": info.fps,
                     "video.channels": 3, "has_audio": False},
        }
    for cam in info.depth:
        h, w = info.image_shape(cam)
        feats[depth_key(cam)] = {"dtype": "uint16", "shape": [h, w, 1], "names": ["height", "width", "channels"]}
    if info.state_shape is not None:
        feats["observation.state"] = {"dtype": "float32", "shape": list(info.state_shape), "names": None}
    feats["action"] = {"dtype": info.action_dtype, "shape": list(info.action_shape), "names": None}
    feats["next.reward"] = {"dtype": "float32", "shape": [1], "names": None}
    for flag in ("next.terminated", "next.truncated", "next.done"):
        feats[flag] = {"dtype": "bool", "shape": [1], "names": None}
    return {**feats, **DEFAULT_FEATURES}


def _schema(info: DatasetInfo) -> Any:
    """The data files' Arrow schema: what Hugging Face ``datasets`` makes of the features (fixed-size lists for
    vectors, nested lists for Array3D)."""
    pa = _pa()
    fields = []
    for key, ft in features(info).items():
        if ft["dtype"] == "video":
            continue
        value = {"float32": pa.float32(), "int64": pa.int64(), "bool": pa.bool_(), "uint16": pa.uint16()}[ft["dtype"]]
        shape = ft["shape"]
        if shape == [1]:
            fields.append(pa.field(key, value))
        elif len(shape) == 1:
            fields.append(pa.field(key, pa.list_(value, shape[0])))
        else:
            t = value
            for _ in shape:
                t = pa.list_(t)
            fields.append(pa.field(key, t))
    return pa.schema(fields)


SNAPSHOT_SCHEMA_FIELDS = (("episode_index", "int64"), ("frame_index", "int64"), ("snapshot", "binary"))


def _snapshot_schema() -> Any:
    pa = _pa()
    return pa.schema([pa.field(n, getattr(pa, t)()) for n, t in SNAPSHOT_SCHEMA_FIELDS])


def _nested(arrays: np.ndarray) -> Any:
    """(N, d1, ..., dk) numpy -> an Arrow array of N nested lists (list<list<...>>), without Python loops."""
    pa = _pa()
    arr = pa.array(np.ascontiguousarray(arrays).reshape(-1))
    shape = arrays.shape
    for depth in range(len(shape) - 1, 0, -1):
        n_outer = int(np.prod(shape[:depth]))
        offsets = pa.array(np.arange(0, n_outer * shape[depth] + 1, shape[depth], dtype=np.int32))
        arr = pa.ListArray.from_arrays(offsets, arr)
    return arr


def _fixed(vectors: np.ndarray, dtype: Any) -> Any:
    pa = _pa()
    flat = pa.array(np.ascontiguousarray(vectors).reshape(-1), type=dtype)
    return pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])


def _tasks_table(tasks: list[str]) -> Any:
    """meta/tasks.parquet as pandas writes ``DataFrame({"task_index": ...}, index=tasks)`` (LeRobot reads it with
    ``pd.read_parquet`` and looks tasks up in the index)."""
    pa = _pa()
    meta = {"index_columns": ["__index_level_0__"], "column_indexes": [],
            "columns": [{"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
                         "numpy_type": "int64", "metadata": None},
                        {"name": None, "field_name": "__index_level_0__", "pandas_type": "unicode",
                         "numpy_type": "object", "metadata": None}],
            "creator": {"library": "pixelrig"}, "pandas_version": "2.2.0"}
    schema = pa.schema([pa.field("task_index", pa.int64()), pa.field("__index_level_0__", pa.string())],
                       metadata={"pandas": json.dumps(meta)})
    return pa.table({"task_index": list(range(len(tasks))), "__index_level_0__": tasks}, schema=schema)


def _parquet_bytes(table: Any) -> bytes:
    pa = _pa()
    sink = pa.BufferOutputStream()
    pa.parquet.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def check_mp4(path: Path) -> None:
    """Check that an mp4 file is complete: its top-level boxes tile the file and include ``moov`` (ffmpeg writes
    it last; a full disk or a killed ffmpeg leaves it out, and imageio-ffmpeg does not report ffmpeg's failure
    when the file is closed).

    Raises:
        OSError: the file is incomplete (``errno.ENOSPC`` when the disk is nearly full).
    """
    size, offset, boxes = path.stat().st_size, 0, set()
    with open(path, "rb") as f:
        while offset + 8 <= size:
            f.seek(offset)
            head = f.read(16)
            length, kind = int.from_bytes(head[:4], "big"), head[4:8]
            if length == 1:
                length = int.from_bytes(head[8:16], "big")
            elif length == 0:
                length = size - offset
            if length < 8:
                break
            boxes.add(kind)
            offset += length
    if offset != size or not {b"ftyp", b"moov", b"mdat"} <= boxes:
        free = shutil.disk_usage(path.parent).free
        code = errno.ENOSPC if free < LOW_SPACE else errno.EIO
        raise OSError(code, f"video {path.name} is incomplete ({size} bytes, boxes {sorted(boxes)}, "
                            f"{free} bytes free): ffmpeg could not finish it")


def read_info(path: Path) -> dict[str, Any]:
    """``meta/info.json`` of the dataset at ``path``."""
    return json.loads((path / "meta" / "info.json").read_text())


def _each(fn: Callable[[Any], None], items: list[Any]) -> None:
    """``fn(item)`` for every item, in threads (starting and finishing ffmpeg processes waits on them, not on
    Python: one camera's start or finish then costs what all of them do); the first error is raised."""
    if len(items) <= 1:
        for item in items:
            fn(item)
        return
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        for future in [pool.submit(fn, item) for item in items]:
            future.result()


def _encode(stream: VideoStream, images: list[np.ndarray]) -> None:
    for image in images:
        stream.write(image)
    stream.close()
    check_mp4(stream.path)


def encode_videos(frames: list[Step], info: DatasetInfo) -> dict[str, bytes]:
    """Each RGB camera's video of an episode's frames: the bytes :class:`LeRobotWriter` writes for them (the same
    encoder and settings), for :meth:`LeRobotWriter.write_episode`. A collect worker encodes its own episodes with
    it, so that the writing process only places the files.

    Raises:
        DatasetWriteError: ffmpeg could not finish a file.
    """
    with tempfile.TemporaryDirectory(prefix="pixelrig-videos-") as folder:
        streams = {cam: VideoStream(Path(folder) / f"{image_key(cam)}.mp4", info.fps, _encoder(info))
                   for cam in info.rgb}
        _each(lambda cam: _encode(streams[cam], [f.obs.rgb[cam] for f in frames]), list(streams))
        return {cam: stream.path.read_bytes() for cam, stream in streams.items()}


def _encoder(info: DatasetInfo) -> dict[str, Any] | None:
    """The video encoder of a real robot's dataset (None: pixelrig's H.264)."""
    return None if info.robot is None else info.robot["video"]


class _Episode:
    """The episode being written: its streams, open parquet writers and the columns of the next row group."""

    def __init__(self, writer: LeRobotWriter, encoded: dict[str, bytes] | None = None) -> None:
        pa = _pa()
        self.index = writer.num_episodes
        self.staging = writer.path / STAGING
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir(parents=True)
        if encoded is None:  # encoded here, frame by frame
            self.videos = {cam: VideoStream(self.staging / f"{image_key(cam)}.mp4", writer.info.fps,
                                            _encoder(writer.info))
                           for cam in writer.info.rgb}
        else:  # encoded elsewhere (encode_videos): the files are only placed
            self.videos = {}
            for cam in writer.info.rgb:
                (self.staging / f"{image_key(cam)}.mp4").write_bytes(encoded[cam])
        self.data = pa.parquet.ParquetWriter(self.staging / "data.parquet", writer.schema, compression="zstd")
        self.own = None if writer.info.robot is None else \
            pa.parquet.ParquetWriter(self.staging / "own.parquet", writer.own_schema, compression="zstd")
        self.snapshots = pa.parquet.ParquetWriter(self.staging / "snapshots.parquet", _snapshot_schema(),
                                                  compression="zstd")
        self.length = 0
        self.rows: list[Step] = []
        self.snapshot_rows: list[bytes] = []
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.image_stats = {cam: HistogramStats(3, 256, 1.0 / 255.0) for cam in writer.info.rgb}
        self.depth_stats = {cam: HistogramStats(1, 65536) for cam in writer.info.depth}

    def close_files(self) -> None:
        _each(lambda stream: _encode(stream, []), list(self.videos.values()))
        self.data.close()
        if self.own is not None:
            self.own.close()
        self.snapshots.close()


class LeRobotWriter:
    """Writes a LeRobot v3.0 dataset (see the module docstring), one episode at a time.

    Args:
        path: the dataset folder.
        info: what the frames hold.
        resume: add episodes to the dataset already at ``path`` (its description must match ``info``).

    Raises:
        ValueError: resuming a dataset whose env, cameras or shapes differ (the message names the difference).
        DatasetWriteError: the folder cannot be written.
    """

    needs_next_obs = False

    def __init__(self, path: Path, info: DatasetInfo, resume: bool = False) -> None:
        self.path, self.info = Path(path), info
        self.schema = _schema(info)
        self.own_schema = _schema(own_info(info))
        self.features = features(info)
        self._episode: _Episode | None = None
        check_writable_folder(self.path)
        if resume:
            meta = read_info(self.path)
            stored = DatasetInfo.from_json(meta.get("pixelrig", {}))
            why = stored.compatible_with(info)
            if why is not None:
                raise ValueError(f"cannot resume {str(self.path)!r}: {why}; record into another path")
            self.meta = meta
            self.meta["pixelrig"] = {**meta["pixelrig"], "pixelrig_version": info.pixelrig_version}
            self.num_episodes = int(meta["total_episodes"])
            stats_file = self.path / "meta" / "stats.json"
            self.stats = stats_from_json(json.loads(stats_file.read_text())) \
                if stats_file.is_file() and self.num_episodes else None
            self.tasks = self._read_tasks()
            self._remove_unfinished()
        else:
            self.num_episodes, self.stats, self.tasks = 0, None, []
            self.meta = {
                "codebase_version": CODEBASE_VERSION,
                "robot_type": None if info.robot is None else info.robot["robot_type"], "total_episodes": 0,
                "total_frames": 0, "total_tasks": 0, "chunks_size": CHUNKS_SIZE, "data_files_size_in_mb": 100,
                "video_files_size_in_mb": 200, "fps": info.fps, "splits": {}, "data_path": DATA_PATH,
                "video_path": VIDEO_PATH if info.rgb else None, "features": self.features,
                "pixelrig": info.to_json(),
            }
            with writing("meta/info.json", self.path, 0):
                atomic_write_json(self.path / "meta" / "info.json", self.meta)

    # ---- resume ----

    def _read_tasks(self) -> list[str]:
        file = self.path / "meta" / "tasks.parquet"
        if not file.is_file():
            return []
        table = _pa().parquet.read_table(file)
        order = np.argsort(table.column("task_index").to_numpy())
        names = table.column("__index_level_0__").to_pylist()
        return [names[i] for i in order]

    def _remove_unfinished(self) -> None:
        """Delete what an episode that never finished left (a killed recorder): staging, and files of episodes
        at or past ``total_episodes``."""
        shutil.rmtree(self.path / STAGING, ignore_errors=True)
        for folder in ("data", "snapshots", "meta/episodes", "videos", "pixelrig"):
            for file in (self.path / folder).rglob("file-*.*") if (self.path / folder).is_dir() else ():
                try:
                    chunk = int(file.parent.name.removeprefix("chunk-"))
                    index = chunk * CHUNKS_SIZE + int(file.stem.removeprefix("file-"))
                except ValueError:
                    continue
                if index >= self.num_episodes:
                    file.unlink()

    # ---- writing ----

    def write_episode(self, frames: list[Step], final_snapshot: bytes, end: str, attrs: EpisodeAttrs | None = None,
                      videos: dict[str, bytes] | None = None) -> int:
        """Write a whole episode: :meth:`add_frame` for each frame, then :meth:`end_episode`.

        Args:
            frames: the episode's frames.
            final_snapshot, end, attrs: as :meth:`end_episode` takes them.
            videos: the episode's videos as :func:`encode_videos` made them from ``frames`` (one per RGB camera):
                placed as they are instead of encoding the frames here. None: encoded here.

        Returns:
            The episode's index.

        Raises:
            RuntimeError: an episode is in progress.
            ValueError: ``videos`` holds other cameras than the dataset's.
        """
        if self._episode is not None:
            raise RuntimeError("write_episode() while an episode is in progress: end or abort it first")
        if videos is not None:
            if sorted(videos) != sorted(self.info.rgb):
                raise ValueError(f"videos for cameras {sorted(videos)}: this dataset's RGB cameras are "
                                 f"{sorted(self.info.rgb)}")
            with writing(f"episode {self.num_episodes}", self.path, self.num_episodes):
                self._episode = _Episode(self, videos)
        try:
            for frame in frames:
                self.add_frame(frame)
            return self.end_episode(final_snapshot, end, attrs)
        except BaseException:
            self.abort_episode()
            raise

    def add_frame(self, frame: Step) -> None:
        """Append a frame to the episode in progress (starting one if none is)."""
        with writing(f"episode {self.num_episodes}", self.path, self.num_episodes):
            if self._episode is None:
                self._episode = _Episode(self)
            ep = self._episode
            if ep.length == 0:  # the first frame starts one ffmpeg per camera: start them side by side
                _each(lambda cam: ep.videos[cam].write(frame.obs.rgb[cam]), list(ep.videos))
            else:
                for cam, stream in ep.videos.items():
                    stream.write(frame.obs.rgb[cam])
            for cam in self.info.rgb:
                ep.image_stats[cam].add(frame.obs.rgb[cam])
            for cam in self.info.depth:
                ep.depth_stats[cam].add(frame.obs.depth[cam])
            ep.rows.append(frame)
            ep.snapshot_rows.append(frame.snapshot)
            ep.length += 1
            if len(ep.rows) >= ROW_GROUP:
                self._flush()

    def _flush(self, final_snapshot: bytes | None = None) -> None:
        pa = _pa()
        ep = self._episode
        if ep is None:
            return
        rows = ep.rows
        if rows:
            n, start = len(rows), ep.length - len(rows)
            columns: dict[str, Any] = {}
            for cam in self.info.depth:
                columns[depth_key(cam)] = _nested(np.stack([f.obs.depth[cam] for f in rows]))
            vectors: dict[str, np.ndarray] = {}
            if self.info.state_shape is not None:
                vectors["observation.state"] = np.stack([f.obs.state for f in rows]).astype(np.float32)
            vectors["action"] = np.stack([np.asarray(f.action).reshape(self.info.action_shape) for f in rows])
            vectors["next.reward"] = np.array([f.reward for f in rows], dtype=np.float32)
            vectors["next.terminated"] = np.array([f.terminated for f in rows], dtype=bool)
            vectors["next.truncated"] = np.array([f.truncated for f in rows], dtype=bool)
            vectors["next.done"] = vectors["next.terminated"] | vectors["next.truncated"]
            frame_index = np.arange(start, start + n, dtype=np.int64)
            vectors["timestamp"] = (frame_index / self.info.fps).astype(np.float32)
            vectors["frame_index"] = frame_index
            vectors["episode_index"] = np.full(n, ep.index, dtype=np.int64)
            vectors["index"] = frame_index + int(self.meta["total_frames"])
            vectors["task_index"] = np.full(n, self.tasks.index(self.info.task) if self.info.task in self.tasks
                                            else len(self.tasks), dtype=np.int64)
            if self.info.robot is None:
                self._write_rows(ep.data, self.schema, columns, vectors, ep)
            else:  # LeRobot's columns with the robot's state and action; pixelrig's own beside them
                self._write_rows(ep.own, self.own_schema, columns, vectors, None)  # type: ignore[arg-type]
                robot = {key: vectors[key] for key in DEFAULT_FEATURES}
                robot["observation.state"] = np.stack([f.obs.robot_state for f in rows]).astype(np.float32)
                robot["action"] = np.stack([f.robot_action for f in rows]).astype(np.float32)
                self._write_rows(ep.data, self.schema, {}, robot, ep)
            ep.rows = []
        snaps = ep.snapshot_rows + ([final_snapshot] if final_snapshot is not None else [])
        if snaps:
            first = ep.length - len(ep.snapshot_rows)
            table = pa.table({"episode_index": np.full(len(snaps), ep.index, dtype=np.int64),
                              "frame_index": np.arange(first, first + len(snaps), dtype=np.int64),
                              "snapshot": pa.array(snaps, type=pa.binary())}, schema=_snapshot_schema())
            ep.snapshots.write_table(table)
            ep.snapshot_rows = []

    @staticmethod
    def _write_rows(file: Any, schema: Any, columns: dict[str, Any], vectors: dict[str, np.ndarray],
                    ep: _Episode | None) -> None:
        """Write a row group of ``schema``'s columns (``columns`` plus ``vectors`` as Arrow arrays); ``ep`` keeps
        the vectors for the episode's statistics."""
        pa = _pa()
        columns = dict(columns)
        for key, value in vectors.items():
            field = schema.field(key)
            columns[key] = _fixed(value, field.type.value_type) if pa.types.is_fixed_size_list(field.type) \
                else pa.array(value, type=field.type)
            if ep is not None:
                ep.vectors.setdefault(key, []).append(value)
        file.write_table(pa.table([columns[f.name] for f in schema], schema=schema))

    def end_episode(self, final_snapshot: bytes, end: str, attrs: EpisodeAttrs | None = None) -> int:
        """Finish the episode in progress and move it into the dataset (see the module docstring).

        Args:
            final_snapshot: the state after the last action.
            end: "terminated", "truncated" or "cut" (stored as ``pixelrig/end``).
            attrs: values stored with the episode, each as a column ``pixelrig/<name>`` of its ``meta/episodes``
                row (:func:`~pixelrig.datasets.steps.check_attrs`).

        Returns:
            The episode's index.
        """
        ep = self._episode
        if ep is None or ep.length == 0:
            raise RuntimeError("end_episode() with no frames recorded")
        extra = check_attrs(attrs)
        with writing(f"episode {ep.index}", self.path, self.num_episodes):
            self._flush(final_snapshot)
            ep.close_files()
            self._commit(ep.index, ep.length, self._episode_stats(ep), end, extra)
        self._episode = None
        shutil.rmtree(self.path / STAGING, ignore_errors=True)
        return ep.index

    def _episode_stats(self, ep: _Episode) -> dict[str, dict[str, np.ndarray]]:
        stats: dict[str, dict[str, np.ndarray]] = {}
        for cam in self.info.rgb:
            stats[image_key(cam)] = ep.image_stats[cam].stats()
        for cam in self.info.depth if self.info.robot is None else ():  # depth is a feature of pixelrig's own
            stats[depth_key(cam)] = ep.depth_stats[cam].stats()
        for key, parts in ep.vectors.items():
            values = np.concatenate(parts).astype(np.float64)
            stats[key] = vector_stats(values if values.ndim > 1 else values[:, None])
        return stats

    def copy_episode(self, source: LeRobotReader, episode: int, attrs: EpisodeAttrs | None = None) -> int:
        """Add ``source``'s episode ``episode`` as it is stored (its video, data and snapshot files copied byte for
        byte, its statistics and end kept) with the attributes ``attrs`` instead of its own. The data files number
        their frames across the dataset, so the episode keeps its place: the episodes before it must be ``source``'s
        (as when a new dataset starts with ``source``'s episodes in order).

        Returns:
            The episode's index (``episode``).

        Raises:
            RuntimeError: an episode is in progress.
            ValueError: ``source`` records something else, or the episode would not keep its place.
        """
        if self._episode is not None:
            raise RuntimeError("copy_episode() while an episode is in progress: end or abort it first")
        why = source.info.compatible_with(self.info) or \
            (None if source.info.task == self.info.task else f"task: {source.info.task!r}, not {self.info.task!r}")
        row = source.episode_row(episode)
        if why is not None:
            raise ValueError(f"cannot copy an episode of {str(source.path)!r}: {why}")
        if (episode, int(row["dataset_from_index"])) != (self.num_episodes, int(self.meta["total_frames"])):
            raise ValueError(f"episode {episode} of {str(source.path)!r} starts at frame {row['dataset_from_index']}: "
                             f"it can only follow that dataset's episodes before it (this one has "
                             f"{self.num_episodes} episodes, {self.meta['total_frames']} frames)")
        extra = check_attrs(attrs)
        staging = self.path / STAGING
        with writing(f"episode {episode}", self.path, self.num_episodes):
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            files = {f"{image_key(cam)}.mp4": source.video_file(episode, cam) for cam in self.info.rgb}
            files["snapshots.parquet"] = source.path / _place(source.snapshot_path, episode)
            files["data.parquet"] = source.path / _place(DATA_PATH, episode)
            if self.info.robot is not None:
                files["own.parquet"] = source.data_file(episode)
            for name, file in files.items():
                shutil.copyfile(file, staging / name)
            self._commit(episode, int(row["length"]), source.episode_stats(episode), source.episode_end(episode),
                         extra)
        shutil.rmtree(staging, ignore_errors=True)
        return episode

    def _commit(self, e: int, n: int, stats: dict[str, dict[str, np.ndarray]], end: str,
                attrs: dict[str, bool | int | float | str]) -> None:
        """Move the staged episode ``e`` of ``n`` frames into the dataset, with its statistics, end and attributes,
        then the dataset's statistics and ``info.json``."""
        pa = _pa()
        root, staging = self.path, self.path / STAGING
        new_task = self.info.task not in self.tasks
        if new_task:
            self.tasks.append(self.info.task)
            atomic_write_bytes(root / "meta" / "tasks.parquet", _parquet_bytes(_tasks_table(self.tasks)))
        for cam in self.info.rgb:
            target = root / _place(VIDEO_PATH, e, video_key=image_key(cam))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / f"{image_key(cam)}.mp4", target)
        target = root / _place(SNAPSHOTS_PATH if self.info.robot is None else OWN_SNAPSHOTS_PATH, e)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / "snapshots.parquet", target)
        if self.info.robot is not None:
            target = root / _place(OWN_DATA_PATH, e)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / "own.parquet", target)

        chunk, file = divmod(e, CHUNKS_SIZE)
        first = int(self.meta["total_frames"])
        row: dict[str, Any] = {
            "episode_index": e, "tasks": [self.info.task], "length": n,
            "data/chunk_index": chunk, "data/file_index": file,
            "dataset_from_index": first, "dataset_to_index": first + n,
        }
        for cam in self.info.rgb:
            key = image_key(cam)
            row.update({f"videos/{key}/chunk_index": chunk, f"videos/{key}/file_index": file,
                        f"videos/{key}/from_timestamp": 0.0, f"videos/{key}/to_timestamp": n / self.info.fps})
        row.update({"meta/episodes/chunk_index": chunk, "meta/episodes/file_index": file})
        for key, s in stats_to_json(stats).items():
            for name, value in s.items():
                row[f"stats/{key}/{name}"] = value
        row[f"{ATTR_PREFIX}end"] = end
        row.update({f"{ATTR_PREFIX}{name}": value for name, value in attrs.items()})
        table = pa.table({k: [v] for k, v in row.items()})
        atomic_write_bytes(root / _place(EPISODES_PATH, e), _parquet_bytes(table))
        target = root / _place(DATA_PATH, e)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / "data.parquet", target)

        self.stats = stats if self.stats is None else aggregate_stats([self.stats, stats])
        atomic_write_json(root / "meta" / "stats.json", stats_to_json(self.stats))
        self.num_episodes = e + 1
        self.meta.update(total_episodes=self.num_episodes, total_frames=first + n, total_tasks=len(self.tasks),
                         splits={"train": f"0:{self.num_episodes}"})
        atomic_write_json(root / "meta" / "info.json", self.meta)

    def abort_episode(self) -> None:
        """Drop the episode in progress and its staged files."""
        ep, self._episode = self._episode, None
        if ep is not None:
            try:
                ep.close_files()
            except (OSError, DatasetWriteError):
                pass  # the episode is being dropped: a file that cannot be finished is deleted below anyway
        shutil.rmtree(self.path / STAGING, ignore_errors=True)

    def close(self) -> None:
        """Finish the dataset (an unfinished episode is dropped: end it first to keep it)."""
        self.abort_episode()


class LeRobotReader:
    """Reads back what :class:`LeRobotWriter` wrote (the parts replay and tests need), in bounded memory.

    Args:
        path: the dataset folder.

    Raises:
        FileNotFoundError: no ``meta/info.json``.
        ValueError: not written by pixelrig (no "pixelrig" description in info.json).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not (self.path / "meta" / "info.json").is_file():
            raise FileNotFoundError(f"no LeRobot dataset at {str(self.path)!r} (meta/info.json is missing)")
        self.meta = read_info(self.path)
        self.info = DatasetInfo.from_json(self.meta.get("pixelrig", {}))
        self.num_episodes = int(self.meta["total_episodes"])
        robot = self.info.robot is not None
        self._own_data = OWN_DATA_PATH if robot else DATA_PATH
        self.snapshot_path = OWN_SNAPSHOTS_PATH if robot else SNAPSHOTS_PATH
        """Where the episodes' snapshot files are (a template of :func:`_place`)."""
        self._rows: dict[int, dict[str, Any]] = {}

    def _check(self, episode: int) -> None:
        if not 0 <= episode < self.num_episodes:
            raise IndexError(f"episode {episode} is not in {str(self.path)!r}: it has episodes "
                             f"0..{self.num_episodes - 1}")

    def episode_row(self, episode: int) -> dict[str, Any]:
        """The episode's row of ``meta/episodes`` (without stats)."""
        self._check(episode)
        if episode not in self._rows:
            table = _pa().parquet.read_table(self.path / _place(EPISODES_PATH, episode))
            self._rows[episode] = {k: v[0] for k, v in table.to_pydict().items() if not k.startswith("stats/")}
        return self._rows[episode]

    def episode_length(self, episode: int) -> int:
        """Frames in ``episode``."""
        return int(self.episode_row(episode)["length"])

    def episode_stats(self, episode: int) -> dict[str, dict[str, np.ndarray]]:
        """The episode's statistics as its ``meta/episodes`` row stores them (``stats/<feature>/<stat>``)."""
        self._check(episode)
        table = _pa().parquet.read_table(self.path / _place(EPISODES_PATH, episode))
        stats: dict[str, dict[str, Any]] = {}
        for column, value in table.to_pydict().items():
            if column.startswith("stats/"):
                key, name = column.removeprefix("stats/").rsplit("/", 1)
                stats.setdefault(key, {})[name] = value[0]
        return stats_from_json(stats)

    def episode_end(self, episode: int) -> str:
        """"terminated", "truncated" or "cut"."""
        return str(self.episode_row(episode)[f"{ATTR_PREFIX}end"])

    def episode_attrs(self, episode: int) -> dict[str, bool | int | float | str]:
        """What ``end_episode(attrs=...)`` stored with ``episode`` (its ``pixelrig/<name>`` columns but ``end``)."""
        row = self.episode_row(episode)
        return {key.removeprefix(ATTR_PREFIX): plain_attr(value) for key, value in row.items()
                if key.startswith(ATTR_PREFIX) and key != f"{ATTR_PREFIX}end"}

    def data_file(self, episode: int) -> Path:
        """The episode's parquet file of pixelrig's own columns (``data/``'s, or ``pixelrig/data/``'s with a real
        robot's features)."""
        self._check(episode)
        return self.path / _place(self._own_data, episode)

    def video_file(self, episode: int, cam: str) -> Path:
        """The episode's video of camera ``cam``."""
        self._check(episode)
        return self.path / _place(VIDEO_PATH, episode, video_key=image_key(cam))

    def _snapshots(self, episode: int) -> Iterator[bytes]:
        file = _pa().parquet.ParquetFile(self.path / _place(self.snapshot_path, episode))
        for batch in file.iter_batches(batch_size=ROW_GROUP, columns=["snapshot"]):
            yield from batch.column(0).to_pylist()

    def frames(self, episode: int) -> Iterator[StoredStep]:
        """The episode's frames (actions, rewards, flags, states, snapshots), in order."""
        self._check(episode)
        columns = ["action", "next.reward", "next.terminated", "next.truncated"]
        has_state = self.info.state_shape is not None
        if has_state:
            columns.append("observation.state")
        data = _pa().parquet.ParquetFile(self.data_file(episode))
        snaps = self._snapshots(episode)
        robot = self._robot_columns(episode)
        for batch in data.iter_batches(batch_size=ROW_GROUP, columns=columns):
            cols = batch.to_pydict()
            for i in range(batch.num_rows):
                robot_state, robot_action = next(robot)
                yield StoredStep(
                    action=np.asarray(cols["action"][i], dtype=self.info.action_dtype).reshape(self.info.action_shape),
                    reward=float(cols["next.reward"][i]), terminated=bool(cols["next.terminated"][i]),
                    truncated=bool(cols["next.truncated"][i]),
                    state=np.asarray(cols["observation.state"][i], dtype=np.float32) if has_state else None,
                    snapshot=next(snaps), robot_state=robot_state, robot_action=robot_action,
                )

    def _robot_columns(self, episode: int) -> Iterator[tuple[np.ndarray | None, np.ndarray | None]]:
        """The frames' real-robot state and action (LeRobot's ``data/`` columns), or Nones without a robot."""
        if self.info.robot is None:
            while True:
                yield None, None
        file = _pa().parquet.ParquetFile(self.path / _place(DATA_PATH, episode))
        for batch in file.iter_batches(batch_size=ROW_GROUP, columns=["observation.state", "action"]):
            cols = batch.to_pydict()
            for state, action in zip(cols["observation.state"], cols["action"], strict=True):
                yield np.asarray(state, np.float32), np.asarray(action, np.float32)

    def final_snapshot(self, episode: int) -> bytes:
        """The state after the episode's last action."""
        self._check(episode)
        file = _pa().parquet.ParquetFile(self.path / _place(self.snapshot_path, episode))
        group = file.read_row_group(file.num_row_groups - 1, columns=["snapshot"])  # the last row is the final state
        return group.column(0)[-1].as_py()

    def final_state(self, episode: int) -> np.ndarray | None:
        """The env's own observation after the last action: not stored in LeRobot datasets (None)."""
        return None

    def depth(self, episode: int, cam: str) -> np.ndarray:
        """(N, H, W, 1) uint16 millimetres of camera ``cam`` over the episode."""
        table = _pa().parquet.read_table(self.data_file(episode), columns=[depth_key(cam)])
        h, w = self.info.image_shape(cam)
        flat = table.column(0).combine_chunks().flatten().flatten().flatten().to_numpy()
        return flat.reshape(-1, h, w, 1)

    def rgb(self, episode: int, cam: str) -> Iterator[np.ndarray]:
        """Camera ``cam``'s decoded video frames, (H, W, 3) uint8, padding removed (video: lossy)."""
        import imageio_ffmpeg

        h, w = self.info.image_shape(cam)
        reader = imageio_ffmpeg.read_frames(str(self.video_file(episode, cam)))
        meta = next(reader)
        width, height = meta["size"]
        for raw in reader:
            yield np.frombuffer(raw, np.uint8).reshape(height, width, 3)[:h, :w]

    def close(self) -> None:
        """Nothing stays open between calls."""
