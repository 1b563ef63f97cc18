"""Level-of-detail speed: PandaPush's 3-camera rig (rgb + depth + label) at each ``visual_detail``, in one run, as
frames per second and as a ratio to "full" (``benchmarks/lod_speed.py``)."""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from typing import Any

import gymnasium as gym

from pixelrig.bench import machine
from pixelrig.cameras.spec import Camera
from pixelrig.envs.lod import VISUAL_DETAILS
from pixelrig.render.choice import probe_egl
from pixelrig.wrappers.pixel_obs import PixelObs


def rig_fps(renderer: str, size: int, frames: int, repeats: int) -> dict[str, list[float]]:
    """Rig frames/s samples per visual_detail, the details interleaved in every repeat (one env at a time: one
    EGL client per process)."""
    samples: dict[str, list[float]] = {d: [] for d in VISUAL_DETAILS}
    for _ in range(repeats):
        for detail in VISUAL_DETAILS:
            env = gym.make("pixelrig/PandaPush-v0", renderer=renderer, visual_detail=detail)
            cams = [dataclasses.replace(Camera.from_dict(c), width=size, height=size,
                                        modalities=("rgb", "depth", "label"))
                    for c in env.unwrapped.default_cameras()]
            wrapped = PixelObs(env, cams=cams, pixels_only=True)
            wrapped.reset(seed=0)
            wrapped.rig.render()
            start = time.perf_counter()
            for _ in range(frames):
                wrapped.rig.render()
            samples[detail].append(frames / (time.perf_counter() - start))
            wrapped.close()
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lod_speed", description=__doc__)
    parser.add_argument("--sizes", default="84,128")
    parser.add_argument("--renderers", default="tiny,egl", help="egl is skipped where unavailable")
    parser.add_argument("--frames", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    renderers = [r for r in args.renderers.split(",") if r != "egl" or probe_egl().ok]
    print(f"level of detail, PandaPush-v0, 3 cameras, rgb+depth+label, {time.strftime('%Y-%m-%d')}, {machine()}")
    print("| backend | size | " + " | ".join(f"{d} fps" for d in VISUAL_DETAILS) + " | "
          + " | ".join(f"{d}/full" for d in VISUAL_DETAILS[1:]) + " |")
    print("|" + "---|" * (2 + 2 * len(VISUAL_DETAILS) - 1))
    for renderer in renderers:
        for size in (int(s) for s in args.sizes.split(",")):
            samples = rig_fps(renderer, size, args.frames, args.repeats)
            med: dict[str, Any] = {d: statistics.median(v) for d, v in samples.items()}
            cells = [f"{med[d]:.1f} [{min(samples[d]):.1f}..{max(samples[d]):.1f}]" for d in VISUAL_DETAILS]
            ratios = [f"{med[d] / med['full']:.2f}×" for d in VISUAL_DETAILS[1:]]
            print(f"| {renderer} | {size}² | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    return 0
