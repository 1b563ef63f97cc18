"""``HumanWindow``: watch a run in a window that cannot change it.

Frames come from the offscreen rig (never a pybullet GUI connection, whose mouse can drag bodies and whose
renderer differs). They are shown by a separate process fed through shared memory. ``step()`` never waits for
the display: a slow, frozen or closed window never slows or stops training, and closing the window is reported
through :attr:`HumanWindow.closed`, not raised.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from pixelrig.display.window import DisplayWindow
from pixelrig.wrappers.frame_source import CameraChoice, FrameSource


class HumanWindow(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Show the run in a window (a separate process).

    Args:
        env: a pixelrig env (or any env whose ``unwrapped.client`` is a pybullet client), possibly wrapped in
            PixelObs.
        camera: None shows the tiled rig when the observations are a PixelObs Dict (each camera's rgb | depth |
            labels, names drawn on), otherwise the env's render camera; a camera name shows that camera's RGB;
            a ``Camera`` (or camera dict) is rendered for the window alone.
        fps: the most frames per second sent to the window; frames in between are not even rendered.
        scale: integer pixel up-scaling in the window.
        title: window title (default: the env id).

    Raises:
        DisplayUnavailable: there is no display (the message names the fix: set DISPLAY, use xvfb-run, or
            record with render_mode="rgb_array" / VideoRecorder), raised here at construction.

    Attributes:
        closed: True once the user closed the window (q, Esc, the close button) or its process died;
            stepping goes on undisturbed.
        close_reason: why it closed (None while open).
    """

    def __init__(self, env: gym.Env, camera: CameraChoice = None, fps: float = 30.0, scale: int = 2,
                 title: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, camera=camera, fps=fps, scale=scale, title=title)
        gym.Wrapper.__init__(self, env)
        self.frame_source = FrameSource(env, camera, "HumanWindow")
        name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        try:
            self.window = DisplayWindow(title or f"pixelrig: {name}", fps=fps, scale=scale)
        except BaseException:
            self.frame_source.close()
            raise

    @property
    def closed(self) -> bool:
        """True once the window is gone (closed by the user, or its process died)."""
        return self.window.closed

    @property
    def close_reason(self) -> str | None:
        """Why the window went away, or None while it is open."""
        return self.window.close_reason

    def _show(self, obs: Any) -> None:
        if self.window.wants_frame():
            self.window.show(self.frame_source.frame(obs))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._show(obs)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        result = self.env.step(action)
        self._show(result[0])
        return result

    def snapshot_state(self) -> dict[str, Any]:
        """A window holds no simulation state."""
        return {}

    def restore_snapshot_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def close(self) -> None:
        self.window.close()
        self.frame_source.close()
        super().close()
