"""Capturing what native code (pybullet, its plugins, GL drivers) writes to a file descriptor."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

_libc = ctypes.CDLL(None)
_captures: dict[int, tuple[int, Any]] = {}  # fd -> (pid, temporary file) reused by capture_native_output


def _capture_file(fd: int) -> Any:
    pid, tmp = _captures.get(fd, (None, None))
    # A forked child must not share its parent's file; and at exit, a capture made after _close_capture_files ran
    # (an env closed by a finalizer that runs later, e.g. one torch registered first) needs a new one.
    if pid != os.getpid() or tmp.closed:
        tmp = tempfile.TemporaryFile()
        _captures[fd] = (os.getpid(), tmp)
    return tmp


@atexit.register
def _close_capture_files() -> None:
    for pid, tmp in _captures.values():
        if pid == os.getpid():
            tmp.close()


@contextlib.contextmanager
def capture_native_output(fd: int = 1, drop: re.Pattern[str] | None = None) -> Iterator[list[str]]:
    """Capture what native code writes to a file descriptor (1 = stdout, 2 = stderr) while the block runs.

    Afterwards the lines matching ``drop`` (e.g. the EGL plugin's chatter) are discarded and any other text
    (another thread printing meanwhile) is passed on to the real descriptor; with ``drop=None`` nothing is passed
    on. Yields a list that holds the
    captured text once the block exits. Set ``PIXELRIG_DEBUG=1`` to see everything captured on stderr.
    """
    (sys.stdout if fd == 1 else sys.stderr).flush()
    _libc.fflush(None)
    tmp = _capture_file(fd)
    tmp.seek(0)
    tmp.truncate()
    saved = os.dup(fd)
    box: list[str] = []
    os.dup2(tmp.fileno(), fd)
    try:
        yield box
    finally:
        _libc.fflush(None)
        os.dup2(saved, fd)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", errors="replace")
        box.append(text)
        others = "".join(line for line in text.splitlines(True) if drop is None or not drop.match(line))
        if others and drop is not None:
            os.write(saved, others.encode())
        os.close(saved)
        if os.environ.get("PIXELRIG_DEBUG"):
            sys.stderr.write(text)


PLUGIN_CHATTER = re.compile(
    r"^(ven = |Loaded EGL|GL_[A-Z_]+=|Version = |Vendor = |Renderer = |Destroy EGL|EGL device choice|"
    r"eglInitialize|eglQueryString|Not a valid|failed to EGL)"
)
"""The lines pybullet's EGL renderer plugin prints on stdout when it loads, draws its first frames and unloads."""


def capture_native_stdout() -> contextlib.AbstractContextManager[list[str]]:
    """Keep the EGL plugin's chatter (:data:`PLUGIN_CHATTER`) off stdout, passing any other text on (see
    :func:`capture_native_output`): around a pybullet call that may load, use or unload the plugin."""
    return capture_native_output(1, drop=PLUGIN_CHATTER)
