"""Draw the README's looks pictures: docs/looks_grid.png, PandaPush's front camera under 16 seeds of looks
randomisation (light, shadows, textures, distractors, a procedural background), and docs/looks_shadows.png, one
shadow-casting light drawn by TinyRenderer (left) and by pixelrig's gl renderer (right) with their difference."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from PIL import Image

import pixelrig  # noqa: F401  (registers the ids)
from pixelrig import Camera, Lighting, PixelObs, Randomization

FRONT = Camera("front", width=128, height=128, fov=55.0, near=0.05, far=4.0, eye=(1.05, 0.0, 1.3),
               target=(0.5, 0.0, 0.63))
LOOKS = Randomization(light_azimuth=(0.0, 360.0), light_elevation=(30.0, 80.0),
                      light_color=((0.8, 0.8, 0.8), (1.2, 1.2, 1.2)), light_ambient=(0.4, 0.75),
                      light_diffuse=(0.2, 0.5), light_specular=(0.0, 0.15), shadows=0.5,
                      textures={"table": "procedural", "ground": "procedural", "cube": "procedural"}, distractors=5)


def grid(renderer: str = "gl", seeds: int = 16, columns: int = 4) -> np.ndarray:
    """The front camera after reset(seed) for each seed, tiled."""
    env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer=renderer, randomize=LOOKS), cams=[FRONT],
                   background="procedural", pixels_only=True)
    try:
        tiles = [env.reset(seed=seed)[0]["front/rgb"] for seed in range(seeds)]
    finally:
        env.close()
    gap = 4
    h, w = tiles[0].shape[:2]
    rows = (seeds + columns - 1) // columns
    out = np.full((rows * (h + gap) - gap, columns * (w + gap) - gap, 3), 255, np.uint8)
    for i, tile in enumerate(tiles):
        r, c = divmod(i, columns)
        out[r * (h + gap):r * (h + gap) + h, c * (w + gap):c * (w + gap) + w] = tile
    return out


def shadows_pair() -> tuple[np.ndarray, float]:
    """The front camera under a light from behind the robot with shadows, tiny | gl | |difference| x 4."""
    light = Lighting(direction=(-0.45, 0.3, 0.85), ambient=0.4, diffuse=0.6, shadows=True)
    images = []
    for renderer in ("tiny", "gl"):
        env = PixelObs(gym.make("pixelrig/PandaPush-v0", renderer=renderer, lighting=light), cams=[FRONT],
                       pixels_only=True)
        try:
            env.reset(seed=3)
            images.append(env.step(np.array([0.5, 0.4, -0.6]))[0]["front/rgb"])
        finally:
            env.close()
    diff = np.abs(images[0].astype(int) - images[1])
    gap = np.full((images[0].shape[0], 4, 3), 255, np.uint8)
    pair = np.concatenate([images[0], gap, images[1], gap, np.clip(diff * 4, 0, 255).astype(np.uint8)], axis=1)
    return pair, float(diff.mean())


def main(folder: str = "docs", scale: int = 2) -> None:
    Path(folder).mkdir(parents=True, exist_ok=True)
    pair, diff = shadows_pair()
    for name, image in (("looks_grid.png", grid()), ("looks_shadows.png", pair)):
        picture = Image.fromarray(image)
        picture.resize((picture.width * scale, picture.height * scale), Image.NEAREST).save(Path(folder) / name)
        print(f"wrote {Path(folder) / name}")
    print(f"tiny against gl under shadows: mean |RGB diff| {diff:.2f} levels")


if __name__ == "__main__":
    main(*sys.argv[1:2])
