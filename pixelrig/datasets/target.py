"""What is at a dataset's path: which format it holds (told apart on disk), and what writing there does to it:
nothing, resume it, or replace it (never anything that is not a dataset of that format)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pixelrig.datasets.files import writing
from pixelrig.datasets.info import FORMATS
from pixelrig.errors import DatasetExistsError


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
