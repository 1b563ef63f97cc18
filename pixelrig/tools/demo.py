"""The main job (``pixelrig demo`` / ``make demo``): run a task under a 3-camera rig and write what it saw.

Writes a contact sheet PNG (each camera's rgb | depth colour map | label colour map) and an mp4 of the tiled rig.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import imageio.v2 as imageio
import numpy as np
from tqdm import tqdm

from pixelrig.display.mosaic import tile_rig
from pixelrig.experts.push import PushExpert
from pixelrig.wrappers.pixel_obs import PixelObs
from pixelrig.wrappers.video_recorder import VideoRecorder


@dataclass(frozen=True)
class DemoResult:
    """What the demo wrote and saw."""

    sheet: Path
    video: Path
    frames: int
    episodes: int
    successes: int


def visible_bodies(obs: dict[str, np.ndarray]) -> int:
    """How many (camera, body) pairs the rig's label images show: a measure of how telling a frame is."""
    return sum(len(np.unique(v)) for k, v in obs.items() if k.endswith("/label"))


def run_demo(
    out_dir: str | Path = "out",
    *,
    env_id: str = "pixelrig/PandaPush-v0",
    steps: int = 150,
    seed: int = 0,
    renderer: str | None = None,
    scale: int = 3,
    video: str | Path | None = None,
    sheet_name: str = "demo_sheet.png",
) -> DemoResult:
    """Run ``env_id`` for ``steps`` steps under its default rig with a scripted (PandaPush) or random policy.

    Args:
        out_dir: folder for the outputs (created).
        env_id: a registered pixelrig id.
        steps: number of env steps (episodes are reset as they end).
        seed: seed of the first episode (later ones use seed+1, ...).
        renderer: any renderer, or None for the env's default.
        scale: pixel up-scaling of the tiles in the sheet.
        video: path of the mp4 (or .gif) of the tiled rig, written by :class:`pixelrig.VideoRecorder` as the run
            goes; default ``<out_dir>/demo.mp4``.
        sheet_name: file name of the contact sheet inside ``out_dir``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    video_path, sheet_path = Path(video) if video is not None else out / "demo.mp4", out / sheet_name
    pixels = PixelObs(gym.make(env_id, renderer=renderer))
    env = VideoRecorder(pixels, out, video_path=video_path)
    ranges = {cam.name: (cam.near, cam.far) for cam in pixels.rig.cameras}
    scripted = env_id.startswith("pixelrig/PandaPush")
    policy = PushExpert()
    sheet_frame, sheet_score = None, -1
    episodes, successes = 1, 0
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    for _ in tqdm(range(steps), desc="demo: stepping the rig", unit="step"):
        action = policy(obs["state"]) if scripted else env.action_space.sample()
        obs, _, terminated, truncated, info = env.step(action)
        score = visible_bodies(obs)
        if score > sheet_score:  # the sheet shows the frame where the cameras see the most bodies
            sheet_frame, sheet_score = tile_rig(obs, depth_ranges=ranges, scale=scale), score
        if terminated or truncated:
            successes += int(bool(info.get("is_success", False)))
            episodes += 1
            policy.reset()
            obs, _ = env.reset(seed=seed + episodes - 1)
    imageio.imwrite(sheet_path, sheet_frame)
    frames = env.frames_written
    env.close()
    return DemoResult(sheet_path, video_path, frames, episodes, successes)
