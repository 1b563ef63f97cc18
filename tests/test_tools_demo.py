"""The main job: `pixelrig demo` writes a contact sheet and an mp4 that read back correctly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import numpy as np

from pixelrig import PixelObs
from pixelrig.experts.push import PushExpert
from pixelrig.tools.demo import run_demo

from .colorings import mosaic_panes


def demo_run_again(steps: int, seed: int = 0) -> tuple[list[dict], list[dict], dict[str, float]]:
    """The run `pixelrig demo` makes (PandaPush under its default rig, TinyRenderer, the scripted expert; episode
    ``i`` seeded ``seed + i``), made again here without the demo's recorder or tiling.

    Returns:
        ``(written, stepped, far)``: the observations behind each video frame (every reset and step, in order),
        those after each step, and each camera's far plane.
    """
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny"))
    far = {cam.name: cam.far for cam in env.rig.cameras}
    policy, episodes = PushExpert(), 1
    obs, _ = env.reset(seed=seed)
    written, stepped = [obs], []
    try:
        for _ in range(steps):
            obs, _, terminated, truncated, _ = env.step(policy(obs["state"]))
            written.append(obs)
            stepped.append(obs)
            if terminated or truncated:
                policy.reset()
                obs, _ = env.reset(seed=seed + episodes)
                episodes += 1
                written.append(obs)
    finally:
        env.close()
    return written, stepped, far


def test_demo_writes_sheet_and_video(tmp_path: Path) -> None:
    """The sheet and every video frame show the run's rig (rgb | depth colours | label colours per camera), compared
    pane by pane with the same run made again here and coloured by the tests' own colourings (tests/colorings.py)."""
    result = run_demo(tmp_path, steps=14, renderer="tiny")
    sheet = iio.imread(result.sheet)
    # 3 cameras x (rgb | depth | label), 84 px tiles scaled 3x
    assert sheet.shape == (3 * 84 * 3, 3 * 84 * 3, 3)
    for r in range(3):
        for c in range(3):
            tile = sheet[r * 252:(r + 1) * 252, c * 252:(c + 1) * 252]
            assert tile.std() > 10, f"tile row {r} col {c} is flat"
    meta = iio.immeta(result.video, plugin="FFMPEG")
    video = list(iio.imiter(result.video, plugin="FFMPEG"))
    assert result.frames == 14 + result.episodes  # every step, plus the first frame of every episode
    assert len(video) == result.frames
    assert video[0].shape == (252, 252, 3)  # the tiled rig at native size: 3 cameras x 3 tiles of 84 px
    assert meta["fps"] == 24
    assert np.mean(video[-1]) > 30

    written, stepped, far = demo_run_again(14)
    assert len(written) == len(video)
    # The sheet is the step whose label images show the most bodies (the first such), tiled and scaled 3x. A PNG
    # is lossless: measured 0.0 on every pane (a depth pane showing the rgb image instead: 54-109 off).
    labels = [sum(len(np.unique(v)) for k, v in obs.items() if k.endswith("/label")) for obs in stepped]
    errors = mosaic_panes(sheet, stepped[labels.index(max(labels))], far, scale=3)
    assert max(errors.values()) < 1.0, f"the sheet: {errors}"
    for k, frame in enumerate(video):
        own = mosaic_panes(frame, written[k], far)
        # H.264 (quality 8, yuv420p: halved chroma resolution) blurs the sharp colour edges of the depth and label
        # panes most: measured mean differences 1.3-2.4 (rgb), 2.2-3.4 (depth), 1.8-5.3 (labels) over the 16
        # frames. A depth pane showing the rgb image is 53-108 off. A video frozen at its first frame is 7.0 off at
        # step 1 and 12-37 after; at step 1 its panes add up to 42 off the step's own mosaic and 21 off frame 0's.
        assert max(own.values()) < 8.0, f"video frame {k}: {own}"
        first = mosaic_panes(frame, written[0], far)
        assert sum(own.values()) <= sum(first.values()), f"video frame {k} is nearer frame 0 than its own step"


def test_cli_demo_prints_what_it_wrote(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pixelrig", "demo", "--out", str(tmp_path), "--steps", "3", "--env",
         "pixelrig/CartPole-v0", "--renderer", "tiny"],
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.startswith(f"wrote {tmp_path}/demo_sheet.png and {tmp_path}/demo.mp4 (4 frames")
    assert (tmp_path / "demo.mp4").stat().st_size > 1000
