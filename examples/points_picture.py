"""The README's picture of the 3D outputs (docs/points.png): PandaPush's fused point cloud coloured by body label,
and each camera's normals as colours, from the gl renderer's geometry and estimated from depth on tiny.

    .venv/bin/python examples/points_picture.py [--out docs/points.png] [--size 160] [--points 6000]

Needs matplotlib (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import dataclasses

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import Camera, PixelObs, PointCloudObs
from pixelrig.display.colors import label_palette

ENV_ID = "pixelrig/PandaPush-v0"
MODALITIES = ("rgb", "label", "points", "normal")


def observe(renderer: str, size: int, num_points: int, steps: int = 12) -> tuple[dict, dict[int, str], list[str]]:
    """A PandaPush observation mid-push with points, normals and the fused cloud, on ``renderer``."""
    env = gym.make(ENV_ID, renderer=renderer)
    cams = [dataclasses.replace(Camera.from_dict(c), width=size, height=size, modalities=MODALITIES)
            for c in env.unwrapped.default_cameras()]
    env = PointCloudObs(PixelObs(env, cams=cams), num_points=num_points, exclude=("ground",),
                        bounds=((0.0, -0.45, 0.6), (1.0, 0.45, 1.6)), seed=0)
    try:
        obs, _ = env.reset(seed=3)
        for _ in range(steps):  # the expert's first moves, so the arm reaches over the table
            obs, *_ = env.step(np.array([0.0, 0.0, -0.5], np.float32))
        return obs, env.get_wrapper_attr("label_names"), [c.name for c in cams]
    finally:
        env.close()


def normal_colors(normal: np.ndarray) -> np.ndarray:
    """World normals to colours: (n + 1) / 2 as RGB, background black."""
    hit = np.linalg.norm(normal, axis=-1) > 0
    out = ((normal + 1.0) * 0.5 * 255.0).clip(0, 255).astype(np.uint8)
    out[~hit] = 0
    return out


def main() -> None:
    """Render, draw, save."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="docs/points.png")
    parser.add_argument("--size", type=int, default=160)
    parser.add_argument("--points", type=int, default=6000)
    args = parser.parse_args()
    gl, names, cams = observe("gl", args.size, args.points)
    tiny, _, _ = observe("tiny", args.size, args.points)

    fig = plt.figure(figsize=(15, 7.2), dpi=110)
    grid = fig.add_gridspec(3, 4, width_ratios=[2.6, 1, 1, 1], wspace=0.05, hspace=0.12)
    ax = fig.add_subplot(grid[:, 0], projection="3d")
    xyz, label = gl["pointcloud/xyz"], gl["pointcloud/label"][:, 0]
    palette = label_palette(max(names) + 1) / 255.0
    ax.scatter(xyz[:, 0], xyz[:, 1], xyz[:, 2], c=palette[label], s=2.0, depthshade=False)
    ax.set_box_aspect(np.ptp(xyz, axis=0))
    ax.view_init(elev=24, azim=-150)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    ax.set_title(f"PointCloudObs: {len(xyz)} points from {', '.join(cams)},\nground excluded, coloured by label",
                 fontsize=10)
    present = sorted(set(label.tolist()))
    ax.legend(handles=[Patch(color=palette[i], label=names[i]) for i in present], loc="upper left", fontsize=8)
    for row, cam in enumerate(cams):
        for col, (title, img) in enumerate([
            ("rgb", gl[f"{cam}/rgb"]),
            ("normal (gl: geometry)", normal_colors(gl[f"{cam}/normal"])),
            ("normal (tiny: from depth)", normal_colors(tiny[f"{cam}/normal"])),
        ]):
            a = fig.add_subplot(grid[row, col + 1])
            a.imshow(img, interpolation="nearest")
            a.set_xticks([])
            a.set_yticks([])
            if row == 0:
                a.set_title(title, fontsize=9)
            if col == 0:
                a.set_ylabel(cam)
    fig.savefig(args.out, bbox_inches="tight")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
