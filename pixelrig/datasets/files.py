"""Writing a dataset's files safely: atomic replacement, a writable folder, and write errors (a full disk, no
permission, a read-only file system) turned into a :class:`~pixelrig.errors.DatasetWriteError` that names the cause
and the fix."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pixelrig.errors import DatasetWriteError


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
