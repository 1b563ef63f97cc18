"""Opening a dataset of either format for writing (new, overwritten or resumed) or reading, by name or by what is
on disk; the format modules (and pyarrow / h5py) are imported only here, when a dataset is opened."""

from __future__ import annotations

import os
from pathlib import Path

from pixelrig.datasets.common import (
    DatasetInfo,
    DatasetReader,
    EpisodeWriter,
    check_format,
    detect_format,
    prepare_target,
)


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
    check_format(fmt)
    path = Path(path)
    if fmt == "robomimic" and path.suffix.lower() not in (".hdf5", ".h5"):
        raise ValueError(f"a robomimic dataset is one HDF5 file: name it *.hdf5 (got {str(path)!r})")
    resuming = prepare_target(path, fmt, overwrite, resume)
    return writer_class(fmt)(path, info, resume=resuming)


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
        ``episode_length(e)``, ``episode_end(e)``, ``frames(e)`` (actions, rewards, flags, states and snapshots),
        ``final_snapshot(e)``, and per camera ``rgb(e, cam)`` / ``depth(e, cam)``; ``close()`` when done.

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
