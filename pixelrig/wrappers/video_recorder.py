"""``VideoRecorder``: stream episodes to mp4 or gif files as they run, one frame in memory at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from pixelrig.display.video import FORMATS, VideoStream
from pixelrig.wrappers.frame_source import CameraChoice, FrameSource


def capped_cubic_video_schedule(episode_id: int) -> bool:
    """Gymnasium's default schedule: episodes 0, 1, 8, 27, ..., 729, then every 1000th.

    Gymnasium's own ``gymnasium.utils.save_video.capped_cubic_video_schedule`` lives in a module that raises
    ``DependencyNotInstalled`` on import unless moviepy is installed, which pixelrig does not need; a test checks
    that this one decides exactly as Gymnasium's does."""
    if episode_id < 1000:
        return int(round(episode_id ** (1.0 / 3))) ** 3 == episode_id
    return episode_id % 1000 == 0


class VideoRecorder(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record episodes as video files, streamed frame by frame.

    One file per recorded episode, named ``<folder>/<name_prefix>-episode-<n>.<mp4|gif>`` (episodes counted from
    0 at the first reset). A file is complete when its episode ends (terminated or truncated), at the next
    reset, at ``close()``, and at interpreter exit.

    Args:
        env: a pixelrig env (possibly under PixelObs) or any env whose ``unwrapped.client`` is a pybullet client.
        folder: where the files go (created).
        episode_trigger: ``episode_trigger(n) -> bool`` picks the episodes to record; default Gymnasium's
            capped cubic schedule (0, 1, 8, 27, ..., then every 1000th).
        fps: frames per second of the files; default the env's ``metadata["render_fps"]``.
        camera: as for :class:`HumanWindow`: None records the tiled rig of a PixelObs underneath, or the env's
            render camera; a name records that camera; a ``Camera`` is rendered for the recorder alone.
        name_prefix: file name prefix.
        video_format: "mp4" (H.264) or "gif".
        video_path: record every frame of every episode into this one file instead (the trigger is ignored).
    """

    def __init__(
        self,
        env: gym.Env,
        folder: str | Path,
        episode_trigger: Callable[[int], bool] | None = None,
        fps: float | None = None,
        camera: CameraChoice = None,
        name_prefix: str = "rl-video",
        video_format: str = "mp4",
        video_path: str | Path | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, folder=str(folder), episode_trigger=episode_trigger, fps=fps, camera=camera,
            name_prefix=name_prefix, video_format=video_format, video_path=video_path,
        )
        gym.Wrapper.__init__(self, env)
        if video_format not in FORMATS:
            raise ValueError(f"video_format must be one of {FORMATS}: got {video_format!r}")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.episode_trigger = episode_trigger or capped_cubic_video_schedule
        self.fps = float(fps if fps is not None else env.metadata.get("render_fps", 30))
        self.name_prefix, self.video_format = name_prefix, video_format
        self.video_path = Path(video_path) if video_path is not None else None
        self.frame_source = FrameSource(env, camera, "VideoRecorder")
        self.episode_id = -1
        self.videos: list[Path] = []
        """Every file started so far, in order."""
        self._stream: VideoStream | None = None

    @property
    def recording(self) -> bool:
        """Whether frames are being written now."""
        return self._stream is not None

    @property
    def frames_written(self) -> int:
        """Frames written to the current file (0 when not recording)."""
        return self._stream.frames if self._stream is not None else 0

    def _start(self) -> None:
        path = self.video_path or self.folder / f"{self.name_prefix}-episode-{self.episode_id}.{self.video_format}"
        self._stream = VideoStream(path, self.fps)
        self.videos.append(path)

    def _finish(self) -> None:
        if self._stream is not None:
            self._stream.close()
        self._stream = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_id += 1
        if self.video_path is None:
            self._finish()
            if self.episode_trigger(self.episode_id):
                self._start()
        elif self._stream is None:
            self._start()
        if self._stream is not None:
            self._stream.write(self.frame_source.frame(obs))
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        result = self.env.step(action)
        if self._stream is not None:
            self._stream.write(self.frame_source.frame(result[0]))
            if (result[2] or result[3]) and self.video_path is None:
                self._finish()
        return result

    def snapshot_state(self) -> dict[str, Any]:
        """A recorder holds no simulation state."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def close(self) -> None:
        self._finish()
        self.frame_source.close()
        super().close()
