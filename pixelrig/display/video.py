"""Streaming video files: frames go to ffmpeg (imageio-ffmpeg) as they come, so memory holds one frame."""

from __future__ import annotations

import weakref
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

import imageio_ffmpeg
import numpy as np

FORMATS = ("mp4", "gif")


def even_pad(img: np.ndarray) -> np.ndarray:
    """Pad an image with black to even height and width (H.264 with yuv420p needs both even)."""
    h, w = img.shape[:2]
    return img if h % 2 == 0 and w % 2 == 0 else np.pad(img, ((0, h % 2), (0, w % 2), (0, 0)))


def _finish(writer: Generator[Any, Any, Any]) -> None:
    writer.close()  # ffmpeg flushes and writes the trailer: a complete, playable file


class VideoStream:
    """An mp4 (H.264) or gif file written frame by frame.

    Args:
        path: output file; its extension (.mp4 or .gif) picks the format.
        fps: frames per second.
        encoder: an mp4's encoder instead of H.264: ``codec`` (an ffmpeg encoder: "libsvtav1"), ``pix_fmt``
            and ffmpeg's ``-g``, ``-crf`` and ``-preset`` when given (None: left out), as LeRobot's
            ``VideoEncoderConfig`` names them.

    The first frame fixes the size; later frames must have it. The file is complete after :meth:`close`, which
    also runs when the object is garbage-collected or the interpreter exits.
    """

    def __init__(self, path: str | Path, fps: float, encoder: Mapping[str, Any] | None = None) -> None:
        self.path = Path(path)
        self.encoder = None if encoder is None else dict(encoder)
        fmt = self.path.suffix.lower().lstrip(".")
        if fmt not in FORMATS:
            raise ValueError(f"video file {str(path)!r}: extension must be one of {FORMATS}")
        if not (isinstance(fps, int | float) and fps > 0):
            raise ValueError(f"fps={fps!r} must be a positive number")
        self.format, self.fps = fmt, float(fps)
        self.frames = 0
        self._writer: Generator[Any, Any, Any] | None = None
        self._finalizer: weakref.finalize | None = None
        self._shape: tuple[int, ...] | None = None

    def write(self, frame: np.ndarray) -> None:
        """Append an (H, W, 3) uint8 RGB frame."""
        frame = even_pad(np.asarray(frame, dtype=np.uint8)) if self.format == "mp4" else np.asarray(frame, np.uint8)
        if self._writer is None:
            self._open(frame.shape)
        elif frame.shape != self._shape:
            raise ValueError(f"{self.path.name}: frame shape {frame.shape} differs from the first frame's "
                             f"{self._shape}")
        self._writer.send(np.ascontiguousarray(frame))  # type: ignore[union-attr]
        self.frames += 1

    def _open(self, shape: tuple[int, ...]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        h, w = shape[:2]
        if self.format == "mp4" and self.encoder is not None:
            e = self.encoder
            params = [arg for key in ("g", "crf", "preset") if e.get(key) is not None
                      for arg in (f"-{key}", str(e[key]))]
            kwargs = {"codec": e["codec"], "pix_fmt_out": e.get("pix_fmt", "yuv420p"), "quality": None,
                      "output_params": params}
        elif self.format == "mp4":
            kwargs = {"codec": "libx264", "pix_fmt_out": "yuv420p", "quality": 8}
        else:
            kwargs = {"codec": "gif", "pix_fmt_out": "rgb8"}
        writer = imageio_ffmpeg.write_frames(str(self.path), (w, h), fps=self.fps, macro_block_size=1,
                                             ffmpeg_log_level="error", **kwargs)
        writer.send(None)
        self._writer, self._shape = writer, shape
        self._finalizer = weakref.finalize(self, _finish, writer)

    def close(self) -> None:
        """Finish the file (idempotent)."""
        if self._finalizer is not None:
            self._finalizer()
        self._writer = None

    def __enter__(self) -> VideoStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
