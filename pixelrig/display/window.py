"""A display window in a separate process, fed through shared memory so that showing never blocks the caller.

The window can only look: it has no way to send anything back but the fact that it was closed. A slow, frozen or
closed window never slows or stops the process that feeds it: :meth:`DisplayWindow.show` copies the frame into a
shared buffer (dropping whatever frame the window had not shown yet) and returns.
"""

from __future__ import annotations

import os
import sys
import time
from multiprocessing import shared_memory

import numpy as np

from pixelrig.errors import DisplayUnavailable, HelperFailed
from pixelrig.system.process import Helper, free_shared

_MODULE = "pixelrig.display.window_main"
_REASONS = {0: "closed by the program", 10: "closed by the user (q or Esc)", 11: "closed by the user (window)"}


_FIX = ("set DISPLAY to a running X server (e.g. export DISPLAY=:0), run under a virtual one "
        "(xvfb-run -a python ...), or record instead: render_mode='rgb_array' or pixelrig.VideoRecorder")


def check_display() -> None:
    """Raise :class:`DisplayUnavailable` when there is obviously no display (Linux without DISPLAY/WAYLAND)."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise DisplayUnavailable(f"no display: DISPLAY is not set. To show a window, {_FIX}")


class DisplayWindow:
    """A window in its own process showing RGB frames.

    Args:
        title: window title.
        fps: the most frames per second :meth:`show` passes on (others are dropped, never waited for); the window
            also redraws at this rate.
        scale: integer pixel up-scaling in the window.
        startup_timeout: seconds to wait for the window to open.

    Raises:
        DisplayUnavailable: no display, or the window process could not open a window; the message says why and
            names the fix. Raised here, at construction, never later from :meth:`show`.
    """

    def __init__(self, title: str = "pixelrig", fps: float = 30.0, scale: int = 1,
                 startup_timeout: float = 20.0) -> None:
        if not (isinstance(fps, int | float) and fps > 0):
            raise ValueError(f"fps={fps!r} must be a positive number")
        if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= 16:
            raise ValueError(f"scale={scale!r} must be an integer in [1, 16]")
        check_display()
        self.title, self.fps, self.scale = title, float(fps), scale
        try:  # its stderr (Qt chatter; the cause of a crash) is kept for messages
            self._helper = Helper.start(_MODULE, {"title": title, "scale": scale, "fps": self.fps},
                                        what="the window process", timeout=startup_timeout)
        except HelperFailed as exc:
            raise DisplayUnavailable(f"could not open a window on DISPLAY={os.environ.get('DISPLAY')!r}: "
                                     f"{exc.summary}. To show a window, {_FIX}") from None
        self._shape: tuple[int, int, int] | None = None
        self._seq: np.ndarray | None = None
        self._frame: np.ndarray | None = None
        self._last_push = 0.0
        self.frames_shown = 0
        """Frames passed to the window process (after the fps limit)."""

    @property
    def closed(self) -> bool:
        """True once the window is gone: closed by the user (q, Esc, the window's close button), by
        :meth:`close`, or because its process died. Showing frames then does nothing."""
        return not self._helper.alive

    @property
    def close_reason(self) -> str | None:
        """Why the window went away (None while it is open)."""
        code = self._helper.poll()
        if code is None:
            return None
        return _REASONS.get(code, f"the window process died (exit code {code}; {self._helper.stderr_tail()})")

    def wants_frame(self) -> bool:
        """Whether :meth:`show` would pass a frame on now (open, and the fps limit allows). Check it before
        rendering a frame that would only be dropped."""
        return not self.closed and time.monotonic() - self._last_push >= 1.0 / self.fps

    def show(self, frame: np.ndarray) -> bool:
        """Pass an (H, W, 3) uint8 RGB frame to the window without waiting. Returns False when the frame was
        dropped (fps limit, or the window is closed)."""
        if not self.wants_frame():
            return False
        frame = np.asarray(frame)
        if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            raise ValueError(f"DisplayWindow.show needs an (H, W, 3) uint8 frame: got {frame.shape} {frame.dtype}")
        if frame.shape != self._shape:
            self._attach(frame.shape)  # type: ignore[arg-type]
        seq = self._seq
        seq[0] += 1  # odd: writing
        self._frame[...] = frame
        seq[0] += 1  # even: complete
        self._last_push = time.monotonic()
        self.frames_shown += 1
        return True

    def _attach(self, shape: tuple[int, int, int]) -> None:
        shm = shared_memory.SharedMemory(create=True, size=8 + int(np.prod(shape)))
        self._seq = self._frame = None
        buffers = self._helper.shared  # freed when the window process stops
        for old in buffers:  # the window keeps its own mapping of an old buffer until it switches
            free_shared(old)
        buffers[:] = [shm]
        self._seq = np.ndarray((1,), np.uint64, shm.buf, 0)
        self._seq[0] = 0
        self._frame = np.ndarray(shape, np.uint8, shm.buf, 8)
        self._shape = shape
        try:
            self._helper.send(("buffer", shm.name, shape[0], shape[1]))
        except HelperFailed:
            pass  # the window died; `closed` reports it

    def close(self) -> None:
        """Close the window (idempotent)."""
        self._seq = self._frame = None
        self._helper.stop(3.0)

    def __enter__(self) -> DisplayWindow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
