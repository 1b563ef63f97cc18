"""The main job: `pixelrig demo` writes a contact sheet and an mp4 that read back correctly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from pixelrig.tools.demo import run_demo


def test_demo_writes_sheet_and_video(tmp_path: Path) -> None:
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


def test_cli_demo_prints_what_it_wrote(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pixelrig", "demo", "--out", str(tmp_path), "--steps", "3", "--env",
         "pixelrig/CartPole-v0", "--renderer", "tiny"],
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.startswith(f"wrote {tmp_path}/demo_sheet.png and {tmp_path}/demo.mp4 (4 frames")
    assert (tmp_path / "demo.mp4").stat().st_size > 1000
