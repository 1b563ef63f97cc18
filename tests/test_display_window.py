"""Windows on a real X server (Xvfb): what they show, how they close, what happens without a display, and that
nothing a window does changes the simulation."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import time

import gymnasium as gym
import numpy as np
import pytest
from PIL import ImageGrab

import pixelrig
from pixelrig import Camera, HumanWindow, PixelObs, VideoRecorder
from pixelrig.display.window import DisplayWindow
from pixelrig.errors import DisplayUnavailable

from .colorings import mosaic_panes
from .conftest import assert_trees_equal, gl_or_skip, physics_state


def window_geometry(title: str) -> tuple[int, int, int, int] | None:
    """(x, y, width, height) of the window with this title, from xwininfo; None while there is none."""
    out = subprocess.run(["xwininfo", "-name", title], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    value = {k: int(re.search(rf"{k}:\s+(-?\d+)", out.stdout).group(1))
             for k in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height")}
    return (value["Absolute upper-left X"], value["Absolute upper-left Y"], value["Width"], value["Height"])


def screenshot_of(display: str, title: str, timeout: float = 15.0, expect: np.ndarray | None = None,
                  shape: tuple[int, ...] | None = None) -> np.ndarray:
    """The pixels of a window, taken from the X server's screen once it shows ``expect`` (or, without it, once
    it has ``shape`` and is not black). The window opens at its first frame, so this waits for it."""
    deadline = time.monotonic() + timeout
    shot = np.zeros((0, 0, 3), np.uint8)
    while time.monotonic() < deadline:
        geometry = window_geometry(title)
        if geometry is not None:
            x, y, w, h = geometry
            shot = np.asarray(ImageGrab.grab(xdisplay=display))[y:y + h, x:x + w, :3]
            if expect is not None:
                if shot.shape == expect.shape and np.abs(shot.astype(int) - expect).mean() < 1.0:
                    break
            elif (shape is None or shot.shape == shape) and shot.mean() > 5:
                break
        time.sleep(0.1)
    return shot


def test_window_shows_the_frame_sent_at_its_scale(xvfb: str) -> None:
    frame = np.zeros((60, 80, 3), np.uint8)
    frame[:, :40] = (255, 40, 0)
    frame[20:40, 50:70] = (0, 200, 90)
    with DisplayWindow("pixelrig test: frame", fps=60, scale=3) as window:
        assert window.show(frame)
        expected = np.repeat(np.repeat(frame, 3, axis=0), 3, axis=1)
        shot = screenshot_of(xvfb, "pixelrig test: frame", expect=expected)
        assert shot.shape == (180, 240, 3), "window size is the frame size times the scale"
        assert np.abs(shot.astype(int) - expected).mean() < 1.0
    assert window.closed and window.close_reason == "closed by the program"


def test_human_window_shows_the_tiled_rig(xvfb: str) -> None:
    """The window shows the rig's frame; each of its panes (a camera's rgb, depth colours, label colours) is
    compared with the one made from the raw observations by the tests' own colourings (tests/colorings.py)."""
    pixels = PixelObs(gym.make("pixelrig/PandaPush-v0"))
    far = {cam.name: cam.far for cam in pixels.rig.cameras}
    env = HumanWindow(pixels, scale=1, title="pixelrig test: rig")
    try:
        obs, _ = env.reset(seed=0)
        expected = env.frame_source.frame(obs)
        assert expected.shape == (3 * 84, 3 * 84, 3)  # 3 cameras x (rgb | depth | label)
        shot = screenshot_of(xvfb, "pixelrig test: rig", expect=expected)
        assert np.abs(shot.astype(int) - expected).mean() < 1.0
        assert shot.std() > 20, "not a blank frame"
        errors = mosaic_panes(shot, obs, far)
        # The screen shows the frame's pixels as they are: measured 0.0 on every pane. A depth pane showing the
        # rgb image instead is 55-106 grey levels off.
        assert max(errors.values()) < 1.0, errors
    finally:
        env.close()


def test_closing_the_window_is_reported_not_raised(xvfb: str) -> None:
    env = HumanWindow(gym.make("pixelrig/CartPole-v0"), fps=100, title="pixelrig test: close")
    try:
        env.reset(seed=0)
        env.step(np.zeros(1, np.float32))
        assert screenshot_of(xvfb, "pixelrig test: close").mean() > 5
        wid = subprocess.run(["xdotool", "search", "--name", "pixelrig test: close"], check=True,
                             capture_output=True, text=True).stdout.split()[0]
        subprocess.run(["xdotool", "windowfocus", "--sync", wid, "key", "--window", wid, "q"], check=True,
                       capture_output=True)  # a real key press, through the X server
        deadline = time.monotonic() + 10
        while not env.closed and time.monotonic() < deadline:
            time.sleep(0.05)
        assert env.closed and env.close_reason == "closed by the user (q or Esc)"
        for _ in range(5):
            env.step(np.zeros(1, np.float32))  # training goes on
    finally:
        env.close()


def test_window_process_death_is_reported(xvfb: str) -> None:
    env = HumanWindow(gym.make("pixelrig/CartPole-v0"), title="pixelrig test: crash")
    try:
        env.reset(seed=0)
        env.window._helper.proc.kill()
        env.window._helper.proc.wait()
        assert env.closed and env.close_reason.startswith("the window process died (exit code -9")
        env.step(np.zeros(1, np.float32))
    finally:
        env.close()


def test_step_never_waits_for_the_window(xvfb: str) -> None:
    """A frozen window (its process stopped) does not slow stepping: every frame still goes to shared memory
    at once (each step renders a 64x64 frame, which takes longer than the 1 ms fps interval)."""
    cam = Camera("small", width=64, height=64, eye=(0, -3, 0.5), target=(0, 0, 0.3))
    env = HumanWindow(gym.make("pixelrig/CartPole-v0"), camera=cam, fps=1000, title="pixelrig test: frozen")
    try:
        env.reset(seed=0)
        env.window._helper.proc.send_signal(19)  # SIGSTOP: the window process hangs
        shown = env.window.frames_shown
        start = time.monotonic()
        for _ in range(50):
            time.sleep(0.0011)
            env.step(np.zeros(1, np.float32))
        assert time.monotonic() - start < 5.0
        assert env.window.frames_shown - shown == 50, "every step handed its frame over without waiting"
        env.window._helper.proc.send_signal(18)  # SIGCONT
    finally:
        env.close()


def test_render_mode_human_uses_a_window(xvfb: str) -> None:
    env = gym.make("pixelrig/CartPole-v0", render_mode="human")
    try:
        env.reset(seed=0)
        for _ in range(3):
            env.step(np.zeros(1, np.float32))
        assert env.render() is None
        shot = screenshot_of(xvfb, "pixelrig: CartPoleEnv", shape=(480, 640, 3))
        assert shot.shape == (480, 640, 3) and shot.std() > 10  # the 320x240 render camera, scaled 2x
    finally:
        env.close()


def test_no_display_is_a_clear_error_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    fix = "set DISPLAY to a running X server (e.g. export DISPLAY=:0), run under a virtual one (xvfb-run -a"
    with pytest.raises(DisplayUnavailable, match=re.escape("no display: DISPLAY is not set. To show a window, " + fix)):
        HumanWindow(gym.make("pixelrig/CartPole-v0"))
    with pytest.raises(DisplayUnavailable, match="render_mode='rgb_array' or pixelrig.VideoRecorder"):
        gym.make("pixelrig/CartPole-v0", render_mode="human")


def test_unreachable_display_is_a_clear_error_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", ":4321")  # no X server there
    with pytest.raises(DisplayUnavailable, match=re.escape("could not open a window on DISPLAY=':4321'")):
        DisplayWindow("pixelrig test: nowhere", startup_timeout=20)


def test_unknown_camera_name_lists_the_cameras(xvfb: str) -> None:
    with pytest.raises(ValueError, match=re.escape("HumanWindow: unknown camera 'top'; cameras here: ['front', "
                                                   "'side', 'wrist']")):
        HumanWindow(gym.make("pixelrig/PandaPush-v0"), camera="top")


def _trajectory(env: gym.Env, steps: int) -> list:
    """Per step: the sim's obs (state part), reward, flags, info, and the full physics state."""
    rng = np.random.default_rng(0)
    out = []
    obs, info = env.reset(seed=3)
    for t in range(steps):
        obs, reward, terminated, truncated, info = env.step(rng.uniform(-1, 1, env.action_space.shape)
                                                            .astype(np.float32))
        state = obs["state"] if isinstance(obs, dict) else obs
        out.append((state, reward, terminated, truncated, info, physics_state(env.unwrapped.client)))
        if terminated or truncated:
            env.reset(seed=t)
    return out


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_render_purity_300_steps(xvfb: str, tmp_path, renderer: str) -> None:
    """300 steps with nothing, PixelObs, a HumanWindow on a real X server and a VideoRecorder: physics,
    observations, rewards and infos are bitwise identical, on TinyRenderer and on gl."""
    if renderer == "gl":
        gl_or_skip()
    env_id = "pixelrig/Ant-v0"

    def small(env: gym.Env) -> list[Camera]:
        return [dataclasses.replace(Camera.from_dict(c), width=32, height=32) for c in env.unwrapped.default_cameras()]

    plain = gym.make(env_id, renderer="tiny")
    base = gym.make(env_id, renderer=renderer)
    stacks = {
        "PixelObs": PixelObs(base, cams=small(base)),
        "HumanWindow": HumanWindow(gym.make(env_id, renderer=renderer), fps=1000, title="pixelrig test: purity"),
        "VideoRecorder": VideoRecorder(gym.make(env_id, renderer=renderer), tmp_path, episode_trigger=lambda n: True),
    }
    try:
        reference = _trajectory(plain, 300)
        for name, env in stacks.items():
            assert_trees_equal(reference, _trajectory(env, 300), name)
        assert stacks["HumanWindow"].window.frames_shown > 50 and not stacks["HumanWindow"].closed
        assert stacks["VideoRecorder"].videos
    finally:
        plain.close()
        for env in stacks.values():
            env.close()


def test_public_api() -> None:
    assert pixelrig.HumanWindow is HumanWindow and pixelrig.VideoRecorder is VideoRecorder
