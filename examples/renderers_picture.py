"""Draw docs/renderers.png: PandaPush's default rig after 40 scripted steps, TinyRenderer (left) and pixelrig's gl
renderer (right), each camera a row of RGB | depth | labels (the README's side-by-side picture)."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

import pixelrig  # noqa: F401  (registers the ids)
from pixelrig import PixelObs
from pixelrig.display.mosaic import tile_rig
from pixelrig.experts.push import PushExpert


def rig_after(renderer: str, steps: int = 40) -> np.ndarray:
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer=renderer))
    try:
        obs, _ = env.reset(seed=2)
        expert = PushExpert()
        for _ in range(steps):
            obs = env.step(expert(obs["state"]))[0]
        return tile_rig(obs)
    finally:
        env.close()


def main(path: str = "docs/renderers.png", scale: int = 2) -> None:
    tiny, gl = rig_after("tiny"), rig_after("gl")
    gap = np.full((tiny.shape[0], 12, 3), 255, np.uint8)
    image = Image.fromarray(np.concatenate([tiny, gap, gl], axis=1))
    image = image.resize((image.width * scale, image.height * scale), Image.NEAREST)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    print(f"wrote {path}: tiny (left) vs gl (right), mean |RGB diff| "
          f"{np.abs(tiny.astype(int) - gl).mean():.2f} levels over the tiles")


if __name__ == "__main__":
    main(*sys.argv[1:2])
