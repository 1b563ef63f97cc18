"""robomimic HDF5 datasets (the layout robomimic's ``SequenceDataset`` reads), written one episode at a time.

Layout of the file (N frames in demo k; shapes per camera and env)::

    data                    attrs: total (frames in all demos), env_args (JSON: env_name = the gymnasium id,
                            env_type = 2 (robomimic's gym type), env_kwargs, and "pixelrig": the cameras, pixelrig's
                            version, the conventions)
    data/demo_k             attrs: num_samples = N, pixelrig_end ("terminated", "truncated" or "cut"),
                            pixelrig_<name> per episode attribute (pixelrig collect's seed, success)
        actions             (N, A) float32 (Discrete actions: (N, 1) int64)
        rewards             (N,) float64
        dones               (N,) int64: 1 where the step ended the episode (terminated or truncated)
        terminated, truncated   (N,) bool, as the env returned them
        states              (N, L) uint8: frame t's pixelrig snapshot, zero-padded to L bytes (pixelrig's, not
                            MuJoCo's: ``Snapshot.from_bytes(states[t, :states_nbytes[t]])``)
        states_nbytes       (N,) int64
        final_state         (M,) uint8: the snapshot after the last action (next_obs[N-1]'s state)
        obs/<cam>_rgb       (N, H, W, 3) uint8        next_obs/<cam>_rgb    the observation the step returned
        obs/<cam>_depth     (N, H, W, 1) uint16 mm    next_obs/<cam>_depth
        obs/state           (N, S) float32            next_obs/state

Images and states are gzip-compressed, one chunk per frame. No ``mask`` group is written (robomimic's filter keys
are optional).

Crash safety: an episode is written to a staging file beside the dataset (``.<name>.episode.h5``) and copied in
when it ends, the only time the dataset file is open for writing; a process killed mid-episode leaves the dataset
file as the last finished episode left it, and ``resume=True`` deletes the staging file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.datasets.files import check_writable_folder, writing
from pixelrig.datasets.info import DatasetInfo
from pixelrig.datasets.steps import EpisodeAttrs, Observation, Step, StoredStep, check_attrs, plain_attr

ENV_TYPE_GYM = 2
"""robomimic's ``EnvType.GYM_TYPE``."""
CHUNK_FRAMES = 16
ATTR_PREFIX = "pixelrig_"
"""The prefix of pixelrig's own attributes of a ``data/demo_k`` group (``pixelrig_end``, episode attributes)."""
"""Frames buffered in memory between writes to the staging file."""


def _h5py() -> Any:
    try:
        import h5py
    except ImportError:  # pragma: no cover - depends on the install
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled('robomimic datasets need h5py: pip install "pixelrig[datasets]"') from None
    return h5py


def staging_file(path: Path) -> Path:
    """Where the episode in progress of the dataset at ``path`` is written."""
    return path.with_name(f".{path.name}.episode.h5")


def env_args(info: DatasetInfo) -> dict[str, Any]:
    """The ``data.attrs["env_args"]`` dict: robomimic's keys plus pixelrig's description."""
    return {"env_name": info.env_id, "env_type": ENV_TYPE_GYM, "env_kwargs": info.env_kwargs,
            "pixelrig": info.to_json()}


def _obs_keys(info: DatasetInfo) -> dict[str, tuple[tuple[int, ...], str]]:
    keys: dict[str, tuple[tuple[int, ...], str]] = {}
    for cam in info.rgb:
        keys[f"{cam}_rgb"] = (info.image_shape(cam) + (3,), "uint8")
    for cam in info.depth:
        keys[f"{cam}_depth"] = (info.image_shape(cam) + (1,), "uint16")
    if info.state_shape is not None:
        keys["state"] = (info.state_shape, "float32")
    return keys


def _obs_values(obs: Observation, info: DatasetInfo) -> dict[str, np.ndarray]:
    out = {f"{cam}_rgb": obs.rgb[cam] for cam in info.rgb}
    out.update({f"{cam}_depth": obs.depth[cam] for cam in info.depth})
    if info.state_shape is not None and obs.state is not None:
        out["state"] = obs.state
    return out


class _Episode:
    """The staging file of the episode being written and the frames not yet written to it."""

    def __init__(self, writer: RobomimicWriter, snapshots_from: tuple[Path, str] | None) -> None:
        h5py = _h5py()
        self.path = staging_file(writer.path)
        self.path.unlink(missing_ok=True)
        self.file = h5py.File(self.path, "w")
        self.demo = self.file.create_group("demo")
        info = writer.info
        self.sets: dict[str, Any] = {}

        def make(name: str, shape: tuple[int, ...], dtype: str, compress: bool = True) -> None:
            chunks = (1, *shape) if len(shape) >= 2 else (256, *shape)  # a frame per chunk for images
            self.sets[name] = self.demo.create_dataset(
                name, shape=(0, *shape), maxshape=(None, *shape), dtype=dtype, chunks=chunks,
                **({"compression": "gzip", "shuffle": dtype != "uint8"} if compress else {}))

        make("actions", info.action_shape, info.action_dtype, compress=False)
        make("rewards", (), "float64", compress=False)
        make("dones", (), "int64", compress=False)
        make("terminated", (), "bool", compress=False)
        make("truncated", (), "bool", compress=False)
        make("states_nbytes", (), "int64", compress=False)
        for group in ("obs", "next_obs"):
            for key, (shape, dtype) in _obs_keys(info).items():
                make(f"{group}/{key}", shape, dtype, compress=key != "state")
        self.states: Any = None
        self.length = 0
        self.pending: list[Step] = []
        self.snapshots_from = snapshots_from

    def write_states(self, snapshots: list[bytes]) -> None:
        width = max(len(s) for s in snapshots)
        if self.states is None:
            chunk = min(max(width, 1 << 16), 1 << 20)
            self.states = self.demo.create_dataset("states", shape=(0, width), maxshape=(None, None), dtype="uint8",
                                                   chunks=(1, chunk), compression="gzip")
        if width > self.states.shape[1]:
            self.states.resize(width, axis=1)
        rows = np.zeros((len(snapshots), self.states.shape[1]), dtype=np.uint8)
        for i, s in enumerate(snapshots):
            rows[i, :len(s)] = np.frombuffer(s, dtype=np.uint8)
        start = self.states.shape[0]
        self.states.resize(start + len(snapshots), axis=0)
        self.states[start:] = rows


class RobomimicWriter:
    """Writes a robomimic HDF5 dataset (see the module docstring), one episode at a time.

    Args:
        path: the HDF5 file.
        info: what the frames hold.
        resume: add demos to the file already at ``path`` (its description must match ``info``).

    Raises:
        ValueError: resuming a file whose env, cameras or shapes differ, or whose demos are not demo_0..demo_{n-1}.
        DatasetWriteError: the file cannot be written.
    """

    needs_next_obs = True

    def __init__(self, path: Path, info: DatasetInfo, resume: bool = False) -> None:
        h5py = _h5py()
        self.path, self.info = Path(path), info
        self._episode: _Episode | None = None
        self._snapshots_from: tuple[Path, str] | None = None
        check_writable_folder(self.path.parent)
        staging_file(self.path).unlink(missing_ok=True)  # what a killed recorder left
        if resume:
            reader = RobomimicReader(self.path)
            try:
                why = reader.info.compatible_with(info)
                self.num_episodes = reader.num_episodes
            finally:
                reader.close()
            if why is not None:
                raise ValueError(f"cannot resume {str(self.path)!r}: {why}; record into another path")
        else:
            self.num_episodes = 0
            tmp = self.path.with_name(f".{self.path.name}.new")
            with writing("the HDF5 file", self.path, 0):
                with h5py.File(tmp, "w") as f:
                    data = f.create_group("data")
                    data.attrs["total"] = 0
                    data.attrs["env_args"] = json.dumps(env_args(info))
                os.replace(tmp, self.path)

    def take_snapshots_from(self, source: Path, demo: str) -> None:
        """Copy the next episode's snapshots (``states`` and ``final_state``) from ``demo`` of the robomimic file
        ``source`` when it ends, compressed as they are there, instead of compressing its frames' snapshots again:
        replay's episodes carry the recorded snapshots. ``end_episode`` checks that they are the frames' (same
        count and sizes). Call it before the episode's first frame.

        Raises:
            RuntimeError: an episode is in progress.
        """
        if self._episode is not None:
            raise RuntimeError("take_snapshots_from() must come before the episode's first frame")
        self._snapshots_from = (Path(source), demo)

    def add_frame(self, frame: Step) -> None:
        """Append a frame to the episode in progress (starting one if none is)."""
        with writing(f"episode {self.num_episodes}", staging_file(self.path), self.num_episodes):
            if self._episode is None:
                self._episode = _Episode(self, self._snapshots_from)
                self._snapshots_from = None
            self._episode.pending.append(frame)
            if len(self._episode.pending) >= CHUNK_FRAMES:
                self._flush()

    def _flush(self) -> None:
        ep = self._episode
        if ep is None or not ep.pending:
            return
        frames, n, start = ep.pending, len(ep.pending), ep.length
        columns: dict[str, np.ndarray] = {
            "actions": np.stack([np.asarray(f.action, self.info.action_dtype).reshape(self.info.action_shape)
                                 for f in frames]),
            "rewards": np.array([f.reward for f in frames], dtype=np.float64),
            "terminated": np.array([f.terminated for f in frames], dtype=bool),
            "truncated": np.array([f.truncated for f in frames], dtype=bool),
            "states_nbytes": np.array([len(f.snapshot) for f in frames], dtype=np.int64),
        }
        columns["dones"] = (columns["terminated"] | columns["truncated"]).astype(np.int64)
        for key in _obs_keys(self.info):
            columns[f"obs/{key}"] = np.stack([_obs_values(f.obs, self.info)[key] for f in frames])
            columns[f"next_obs/{key}"] = np.stack([_obs_values(f.next_obs, self.info)[key] for f in frames])
        for name, values in columns.items():
            ds = ep.sets[name]
            ds.resize(start + n, axis=0)
            ds[start:] = values
        if ep.snapshots_from is None:
            ep.write_states([f.snapshot for f in frames])
        ep.length += n
        ep.pending = []

    def end_episode(self, final_snapshot: bytes, end: str, attrs: EpisodeAttrs | None = None) -> int:
        """Finish the episode in progress and copy it into the dataset file as ``demo_<k>``.

        Args:
            final_snapshot: the state after the last action.
            end: "terminated", "truncated" or "cut" (stored as ``pixelrig_end``).
            attrs: values stored with the episode, each as the attribute ``pixelrig_<name>`` of ``demo_<k>``
                (:func:`~pixelrig.datasets.steps.check_attrs`).

        Returns:
            The episode's index k.
        """
        h5py = _h5py()
        ep = self._episode
        if ep is None or ep.length + len(ep.pending) == 0:
            raise RuntimeError("end_episode() with no frames recorded")
        extra = check_attrs(attrs)
        k = self.num_episodes
        with writing(f"episode {k}", self.path, k):
            self._flush()
            if ep.snapshots_from is None:
                ep.demo.create_dataset("final_state", data=np.frombuffer(final_snapshot, dtype=np.uint8),
                                       compression="gzip")
            else:
                self._copy_snapshots(ep, *ep.snapshots_from, final_snapshot)
            ep.demo.attrs["num_samples"] = ep.length
            ep.demo.attrs[f"{ATTR_PREFIX}end"] = end
            for name, value in extra.items():
                ep.demo.attrs[f"{ATTR_PREFIX}{name}"] = value
            ep.file.close()
            with h5py.File(ep.path, "r") as src, h5py.File(self.path, "a") as dst:
                dst.copy(src["demo"], dst["data"], name=f"demo_{k}")
                dst["data"].attrs["total"] = int(dst["data"].attrs["total"]) + ep.length
                dst["data"].attrs["env_args"] = json.dumps(env_args(self.info))
            ep.path.unlink()
        self._episode = None
        self.num_episodes = k + 1
        return k

    def copy_episode(self, source: RobomimicReader, episode: int, attrs: EpisodeAttrs | None = None) -> int:
        """Add ``source``'s episode ``episode`` as it is stored (its ``demo`` group copied whole: every array, its
        compression and its end) as the next ``demo_<k>``, with the attributes ``attrs`` instead of its own.

        Returns:
            The episode's index k.

        Raises:
            RuntimeError: an episode is in progress.
            ValueError: ``source`` records something else.
        """
        h5py = _h5py()
        if self._episode is not None:
            raise RuntimeError("copy_episode() while an episode is in progress: end or abort it first")
        why = source.info.compatible_with(self.info)
        if why is not None:
            raise ValueError(f"cannot copy an episode of {str(source.path)!r}: {why}")
        extra = check_attrs(attrs)
        k = self.num_episodes
        with writing(f"episode {k}", self.path, k), h5py.File(self.path, "a") as dst:
            dst.copy(source.demo(episode), dst["data"], name=f"demo_{k}")
            demo = dst["data"][f"demo_{k}"]
            for key in [key for key in demo.attrs if key.startswith(ATTR_PREFIX) and key != f"{ATTR_PREFIX}end"]:
                del demo.attrs[key]
            for name, value in extra.items():
                demo.attrs[f"{ATTR_PREFIX}{name}"] = value
            dst["data"].attrs["total"] = int(dst["data"].attrs["total"]) + int(demo.attrs["num_samples"])
            dst["data"].attrs["env_args"] = json.dumps(env_args(self.info))
        self.num_episodes = k + 1
        return k

    def _copy_snapshots(self, ep: _Episode, source: Path, demo: str, final_snapshot: bytes) -> None:
        h5py = _h5py()
        with h5py.File(source, "r") as f:
            group = f["data"][demo]
            nbytes = group["states_nbytes"][()]
            if (group["states"].shape[0] != ep.length or not np.array_equal(nbytes, ep.sets["states_nbytes"][()])
                    or group["final_state"].shape != (len(final_snapshot),)):
                raise ValueError(f"{source}:{demo} does not hold the snapshots of the episode being written "
                                 f"({group['states'].shape[0]} states for {ep.length} frames, or other sizes)")
            ep.demo.copy(group["states"], "states")
            ep.demo.copy(group["final_state"], "final_state")

    def abort_episode(self) -> None:
        """Drop the episode in progress (its staging file is deleted)."""
        ep, self._episode = self._episode, None
        if ep is not None:
            try:
                ep.file.close()
            except (OSError, RuntimeError):
                pass  # the staging file is deleted next whatever state HDF5 left it in
            ep.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Finish the dataset (an unfinished episode is dropped: end it first to keep it)."""
        self.abort_episode()


def demo_names(data: Any) -> list[str]:
    """The ``demo_<k>`` names of a ``data`` group, by k."""
    names = [n for n in data if n.startswith("demo_") and n[5:].isdigit()]
    return sorted(names, key=lambda n: int(n[5:]))


class RobomimicReader:
    """Reads back what :class:`RobomimicWriter` wrote (the parts replay and tests need).

    Args:
        path: the HDF5 file.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a robomimic file written by pixelrig, or demos not numbered demo_0..demo_{n-1}.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        h5py = _h5py()
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no robomimic dataset at {str(self.path)!r}")
        self.file = h5py.File(self.path, "r")
        try:
            data = self.file["data"]
            args = json.loads(data.attrs["env_args"])
        except (KeyError, json.JSONDecodeError) as exc:
            self.file.close()
            raise ValueError(f"{str(self.path)!r} is not a robomimic dataset (no data.attrs['env_args']: "
                             f"{exc})") from None
        self.env_args = args
        self.info = DatasetInfo.from_json(args.get("pixelrig", {}))
        names = demo_names(data)
        if names != [f"demo_{k}" for k in range(len(names))]:
            self.file.close()
            raise ValueError(f"{str(self.path)!r}: demos {names} are not demo_0..demo_{len(names) - 1}")
        self.num_episodes = len(names)

    def demo(self, episode: int) -> Any:
        """The h5py group of ``episode``."""
        if not 0 <= episode < self.num_episodes:
            raise IndexError(f"episode {episode} is not in {str(self.path)!r}: it has episodes "
                             f"0..{self.num_episodes - 1}")
        return self.file["data"][f"demo_{episode}"]

    def episode_length(self, episode: int) -> int:
        """Frames in ``episode``."""
        return int(self.demo(episode).attrs["num_samples"])

    def episode_end(self, episode: int) -> str:
        """"terminated", "truncated" or "cut"."""
        return str(plain_attr(self.demo(episode).attrs[f"{ATTR_PREFIX}end"]))

    def episode_attrs(self, episode: int) -> dict[str, bool | int | float | str]:
        """What ``end_episode(attrs=...)`` stored with ``episode`` (its ``pixelrig_<name>`` attributes but ``end``)."""
        attrs = self.demo(episode).attrs
        return {key.removeprefix(ATTR_PREFIX): plain_attr(attrs[key]) for key in sorted(attrs)
                if key.startswith(ATTR_PREFIX) and key != f"{ATTR_PREFIX}end"}

    def frames(self, episode: int) -> Iterator[StoredStep]:
        """The episode's frames (actions, rewards, flags, states, snapshots), in order, CHUNK_FRAMES at a time."""
        demo = self.demo(episode)
        n = self.episode_length(episode)
        has_state = self.info.state_shape is not None
        for start in range(0, n, CHUNK_FRAMES):
            stop = min(start + CHUNK_FRAMES, n)
            actions, rewards = demo["actions"][start:stop], demo["rewards"][start:stop]
            term, trunc = demo["terminated"][start:stop], demo["truncated"][start:stop]
            states, nbytes = demo["states"][start:stop], demo["states_nbytes"][start:stop]
            obs_state = demo["obs/state"][start:stop] if has_state else None
            for i in range(stop - start):
                yield StoredStep(action=actions[i], reward=float(rewards[i]), terminated=bool(term[i]),
                                  truncated=bool(trunc[i]), state=None if obs_state is None else obs_state[i],
                                  snapshot=states[i, :nbytes[i]].tobytes())

    def final_snapshot(self, episode: int) -> bytes:
        """The state after the episode's last action."""
        return self.demo(episode)["final_state"][()].tobytes()

    def final_state(self, episode: int) -> np.ndarray | None:
        """The env's own observation after the last action (``next_obs/state[-1]``), or None."""
        demo = self.demo(episode)
        return demo["next_obs/state"][-1] if "next_obs/state" in demo else None

    def rgb(self, episode: int, cam: str, group: str = "obs") -> np.ndarray:
        """(N, H, W, 3) uint8 RGB of camera ``cam`` (``group="next_obs"``: the observations the steps returned)."""
        return self.demo(episode)[f"{group}/{cam}_rgb"][()]

    def depth(self, episode: int, cam: str, group: str = "obs") -> np.ndarray:
        """(N, H, W, 1) uint16 millimetres of camera ``cam``."""
        return self.demo(episode)[f"{group}/{cam}_depth"][()]

    def close(self) -> None:
        """Close the file."""
        self.file.close()
