"""``pixelrig view``: a window on a robot file or an env id, with an orbiting camera or a rig file's cameras."""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from pixelrig.cameras.rigfile import load_rig
from pixelrig.cameras.spec import Camera
from pixelrig.display.window import DisplayWindow
from pixelrig.wrappers.frame_source import FrameSource
from pixelrig.wrappers.human_window import HumanWindow
from pixelrig.wrappers.pixel_obs import PixelObs


def make_env(source: str, renderer: str | None = None) -> gym.Env:
    """An env id as registered, or a robot file through ``pixelrig/Robot-v0``: position control holding its
    pose where every joint has limits, torque control (limp) otherwise."""
    if source in gym.registry:
        return gym.make(source, renderer=renderer)
    try:
        return gym.make("pixelrig/Robot-v0", source=source, control="position", renderer=renderer)
    except ValueError as exc:
        if "needs joint limits" not in str(exc):
            raise
        return gym.make("pixelrig/Robot-v0", source=source, control="torque", effort_limits=1.0, renderer=renderer)


def orbit_camera(env: gym.Env, t: float, period: float = 12.0) -> Camera:
    """The env's render camera, swung around its target once every ``period`` seconds."""
    view = env.unwrapped.render_view("orbit")
    eye, target = np.array(view.eye), np.array(view.target)
    offset = eye - target
    angle = 2 * math.pi * t / period
    c, s = math.cos(angle), math.sin(angle)
    rotated = np.array([c * offset[0] - s * offset[1], s * offset[0] + c * offset[1], offset[2]])
    return dataclasses.replace(view, eye=tuple((target + rotated).tolist()))


def hold_action(env: gym.Env, policy: str) -> np.ndarray:
    """A zero action (holding targets / no torque), or a random one."""
    if policy == "random":
        return env.action_space.sample()
    base = env.unwrapped
    if getattr(base, "control", None) == "position":
        return base.qpos_qvel()[0].astype(np.float32)
    return np.zeros(env.action_space.shape, env.action_space.dtype)


def run_viewer(source: str, cams: str | Path | None = None, steps: int | None = None, fps: float = 30.0,
               scale: int = 2, policy: str = "hold", renderer: str | None = None, seed: int = 0) -> int:
    """Show ``source`` until the window is closed (or for ``steps`` steps). Returns the number of steps run."""
    env = make_env(source, renderer)
    title = f"pixelrig view: {source}"
    if cams is not None:
        env = HumanWindow(PixelObs(env, cams=load_rig(cams)), fps=fps, scale=scale, title=title)
        window = env.window
    else:
        window = DisplayWindow(title, fps=fps, scale=scale)
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    start, n = time.monotonic(), 0
    try:
        for _ in tqdm(range(steps) if steps else _forever(), desc=f"viewing {source}", total=steps, unit="step"):
            if window.closed:
                break
            result = env.step(hold_action(env, policy))
            n += 1
            if cams is None and window.wants_frame():
                source_ = FrameSource(env, orbit_camera(env, time.monotonic() - start), "pixelrig view")
                window.show(source_.frame(result[0]))
                source_.close()
            if result[2] or result[3]:
                env.reset()
            time.sleep(max(0.0, env.unwrapped.dt - 0.001))  # real time (the window itself never throttles)
    finally:
        window.close()
        env.close()
    return n


def _forever():
    n = 0
    while True:
        yield n
        n += 1
