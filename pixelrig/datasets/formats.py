"""The two formats behind one interface: what a format's writer and reader do (:class:`EpisodeWriter`,
:class:`DatasetReader`), and opening a dataset of either format for writing (new, overwritten or resumed) or
reading. The format modules (and pyarrow / h5py) are imported only when a dataset is
opened."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from pixelrig.datasets.info import DatasetInfo
from pixelrig.datasets.steps import EpisodeAttrs, Step, StoredStep
from pixelrig.datasets.target import check_format, detect_format, prepare_target


class EpisodeWriter(Protocol):
    """A format's writer: frames go in one at a time, an episode is committed whole by :meth:`end_episode`."""

    path: Path
    info: DatasetInfo
    num_episodes: int
    """Committed episodes (a resumed dataset's included)."""
    needs_next_obs: bool
    """Whether frames' ``next_obs`` is stored (robomimic's next_obs)."""

    def add_frame(self, frame: Step) -> None:
        """Append a frame to the episode in progress (starting one if none is)."""

    def end_episode(self, final_snapshot: bytes, end: str, attrs: EpisodeAttrs | None = None) -> int:
        """Commit the episode in progress; ``end`` is "terminated", "truncated" or "cut"; ``attrs`` are stored with
        it (:func:`~pixelrig.datasets.steps.check_attrs`). Returns its index."""

    def abort_episode(self) -> None:
        """Drop the episode in progress (its files are removed)."""

    def close(self) -> None:
        """Finish the dataset (an episode in progress must have been ended or aborted)."""


class DatasetReader(Protocol):
    """A format's reader (what replay needs)."""

    path: Path
    info: DatasetInfo
    num_episodes: int

    def episode_length(self, episode: int) -> int:
        """Frames in ``episode``."""

    def episode_end(self, episode: int) -> str:
        """How ``episode`` ended: "terminated", "truncated" or "cut"."""

    def episode_attrs(self, episode: int) -> dict[str, bool | int | float | str]:
        """What ``end_episode(attrs=...)`` stored with ``episode`` (empty when nothing was)."""

    def frames(self, episode: int) -> Iterator[StoredStep]:
        """The episode's frames in order, read in bounded memory."""

    def final_snapshot(self, episode: int) -> bytes:
        """The state after the episode's last action."""

    def final_state(self, episode: int) -> np.ndarray | None:
        """The env's own observation after the last action, when the format stores it (else None)."""

    def close(self) -> None:
        """Release open files."""


def open_writer(path: str | os.PathLike[str], fmt: str, info: DatasetInfo, overwrite: bool = False,
                resume: bool = False) -> EpisodeWriter:
    """A writer for a dataset of format ``fmt`` at ``path``.

    Args:
        path: a folder (LeRobot) or an HDF5 file (robomimic).
        fmt: "lerobot" or "robomimic".
        info: what the frames hold.
        overwrite: replace a dataset of this format already at ``path`` (anything else there is never deleted).
        resume: add episodes to the dataset at ``path`` (nothing there: a new dataset).

    Raises:
        DatasetExistsError: something is at ``path`` and neither flag was given.
        ValueError: an unknown format, both flags, or resuming a dataset that records something else.
        DatasetWriteError: the path cannot be written.
    """
    path = check_dataset_path(path, fmt)
    resuming = prepare_target(path, fmt, overwrite, resume)
    return writer_class(fmt)(path, info, resume=resuming)


def check_dataset_path(path: str | os.PathLike[str], fmt: str) -> Path:
    """``path`` as a Path, if a dataset of format ``fmt`` can be written there (nothing is touched).

    Raises:
        ValueError: an unknown format, or a robomimic path not named ``*.hdf5`` / ``*.h5``.
    """
    check_format(fmt)
    path = Path(path)
    if fmt == "robomimic" and path.suffix.lower() not in (".hdf5", ".h5"):
        raise ValueError(f"a robomimic dataset is one HDF5 file: name it *.hdf5 (got {str(path)!r})")
    return path


def writer_class(fmt: str) -> type:
    """The writer class of format ``fmt`` (its ``needs_next_obs`` says whether next observations are stored).

    Raises:
        ValueError: an unknown format.
    """
    check_format(fmt)
    if fmt == "lerobot":
        from pixelrig.datasets.lerobot import LeRobotWriter

        return LeRobotWriter
    from pixelrig.datasets.robomimic import RobomimicWriter

    return RobomimicWriter


def open_dataset(path: str | os.PathLike[str]) -> DatasetReader:
    """Open a dataset written by pixelrig (either format, told apart by what is on disk) for reading.

    Returns:
        A ``LeRobotReader`` or ``RobomimicReader``: ``info`` (:class:`DatasetInfo`), ``num_episodes``,
        ``episode_length(e)``, ``episode_end(e)``, ``episode_attrs(e)``, ``frames(e)`` (actions, rewards, flags,
        states and snapshots), ``final_snapshot(e)``, and per camera ``rgb(e, cam)`` / ``depth(e, cam)``; ``close()``
        when done.

    Raises:
        FileNotFoundError: nothing at ``path``.
        ValueError: not a dataset of either format, or not written by pixelrig.
    """
    fmt = detect_format(path)
    if fmt == "lerobot":
        from pixelrig.datasets.lerobot import LeRobotReader

        return LeRobotReader(path)
    from pixelrig.datasets.robomimic import RobomimicReader

    return RobomimicReader(path)
