"""The README's picture of cameras as sensors (docs/sensors.png): one PandaPush state seen by a RealSense D435
preset (424x240) over the table: its RGB and the same view through a wide-angle lens with barrel distortion; exact
depth, depth through a noise model (distance-squared noise, quantisation, a valid range, dropouts at edges and
grazing angles: invalid pixels white) and active-stereo depth (SGBM over the projected dot pattern: holes white),
with the stereo error against exact depth.

    .venv/bin/python examples/sensors_picture.py [--out docs/sensors.png] [--renderer tiny]

Needs matplotlib (the ``bench`` extra).
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import Camera, PixelObs
from pixelrig.cameras.noise import SensorNoise
from pixelrig.display.colors import colorize_depth

ENV_ID = "pixelrig/PandaPush-v0"
POSE = {"eye": (1.1, -0.3, 1.3), "target": (0.45, 0.0, 0.62)}
NOISE = SensorNoise(depth_sigma=(0.002, 0.015), depth_step=0.004, depth_range=(0.3, 2.2), edge_dropout=0.6,
                    edge_threshold=0.04, grazing_dropout=0.6, grazing_angle=72.0)
"""Stronger than the D435's own (whose 3.6 mm at 1 m would not show in a picture): visible on purpose."""


def cameras() -> list[Camera]:
    sensor = Camera.preset("d435", name="d435", resolution=(424, 240), modalities=("rgb", "depth", "depth_stereo"),
                           **POSE)
    noisy = Camera.preset("d435", name="noisy", resolution=(424, 240), modalities=("depth",), noise=NOISE, **POSE)
    wide = Camera("wide", width=424, height=240, intrinsics=(190.0, 190.0, 211.5, 119.5),
                  distortion=(-0.28, 0.07, 0.0, 0.0, 0.0), near=0.05, far=12.0, modalities=("rgb",), **POSE)
    return [sensor, noisy, wide]


def observe(renderer: str) -> tuple[dict, dict]:
    """The observation (noise drawn) and the exact images of a PandaPush state mid-push."""
    env = PixelObs(gym.make(ENV_ID, renderer=renderer), cams=cameras(), pixels_only=True)
    try:
        obs, _ = env.reset(seed=3)
        for _ in range(10):
            obs, *_ = env.step(np.array([0.0, 0.0, -0.5], np.float32))
        return obs, env.render_rig()
    finally:
        env.close()


def depth_picture(depth: np.ndarray, far: float, lo: float, hi: float) -> np.ndarray:
    """Depth coloured (near yellow, far blue), background black, invalid readings (0) white."""
    d = depth[..., 0]
    out = colorize_depth(d, near=lo, far=hi, background=far)
    out[~(d > 0)] = 255
    return out


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="docs/sensors.png")
    parser.add_argument("--renderer", default="tiny")
    args = parser.parse_args()
    obs, exact = observe(args.renderer)
    far = 12.0
    depth = exact["d435/depth"][..., 0]
    lo, hi = float(depth.min()), 2.2
    stereo = obs["d435/depth_stereo"]  # deterministic: the exact images' stereo pair
    near_surfaces = (depth < hi) & (stereo[..., 0] > 0)
    err = np.where(near_surfaces, np.abs(stereo[..., 0] - depth), np.nan)
    noisy = obs["noisy/depth"]
    invalid = float(np.mean(noisy[..., 0] == 0))
    band = 48  # the left columns SGBM cannot match (48 disparities for the preset's 0.28 m minimum at 424 px)
    surfaces = depth[:, band:] < hi
    holes = float(np.mean(stereo[:, band:, 0][surfaces] == 0))
    panels = [
        (exact["d435/rgb"], "RGB (D435 preset, 424x240)"),
        (obs["wide/rgb"], "RGB, wide lens, k1 = -0.28, k2 = 0.07"),
        (depth_picture(exact["d435/depth"], far, lo, hi), "exact depth"),
        (depth_picture(noisy, far, lo, hi), f"noisy depth (invalid {invalid:.0%}: white)"),
        (depth_picture(stereo, far, lo, hi), f"active stereo, SGBM (holes: white; {holes:.0%} beyond the left band)"),
        (None, f"|stereo - exact| within {hi} m (median {np.nanmedian(err) * 1000:.1f} mm, p90 "
               f"{np.nanpercentile(err, 90) * 1000:.1f} mm)"),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(15, 6.2))
    for ax, (image, title) in zip(axes.ravel(), panels, strict=True):
        if image is None:
            shown = ax.imshow(np.minimum(err * 1000.0, 30.0), cmap="magma", vmin=0.0, vmax=30.0)
            fig.colorbar(shown, ax=ax, fraction=0.03, label="mm (30+ saturated)")
        else:
            ax.imshow(image)
        ax.set_title(title, fontsize=10)
        ax.axis("off")
    fig.suptitle(f"PandaPush through a RealSense D435 preset ({args.renderer}); depth {lo:.2f} m (yellow) to "
                 f"{hi:.2f} m (blue) and beyond, background black", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.out, dpi=72)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
