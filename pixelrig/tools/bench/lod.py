"""Level of detail: the speed of PandaPush's 3-camera rig (rgb + depth + label) at each ``visual_detail``, in one
run, as frames per second and as a ratio to "full", and the fidelity of each detail against "full"
(``benchmarks/lod_speed.py``, the ``lod`` section of ``pixelrig bench``)."""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from typing import Any

import gymnasium as gym

from pixelrig.cameras.spec import Camera
from pixelrig.envs.lod import VISUAL_DETAILS
from pixelrig.render.choice import draws_here
from pixelrig.render.registry import BACKENDS
from pixelrig.tools.bench.common import cell, machine
from pixelrig.tools.bench.fidelity import detail_fidelity
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


def lod_report(renderers: list[str], sizes: list[int], frames: int, repeats: int) -> dict[str, Any]:
    """Speed rows (per renderer and size: median and spread of frames/s per detail, ratios to "full") and fidelity
    rows (PandaPush and PandaReach, each detail against "full": labels equal, depth median, RGB mean)."""
    speed = []
    for renderer in renderers:
        for size in sizes:
            samples = rig_fps(renderer, size, frames, repeats)
            med = {d: statistics.median(v) for d, v in samples.items()}
            speed.append({"renderer": renderer, "size": size, "median_fps": med,
                          "spread_fps": {d: [min(v), max(v)] for d, v in samples.items()},
                          "ratio_to_full": {d: med[d] / med["full"] for d in VISUAL_DETAILS[1:]}})
    fidelity = [{"env": env_id, "detail": detail, **detail_fidelity(env_id, detail)}
                for env_id in ("pixelrig/PandaPush-v0", "pixelrig/PandaReach-v0")
                for detail in VISUAL_DETAILS[1:]]
    return {"speed": speed, "fidelity": fidelity}


def format_lod(report: dict[str, Any]) -> str:
    """The benchmark page's two level-of-detail tables (speed, fidelity) from :func:`lod_report`'s result."""
    lines = ["| backend | size | " + " | ".join(f"{d} fps" for d in VISUAL_DETAILS) + " | "
             + " | ".join(f"{d}/full" for d in VISUAL_DETAILS[1:]) + " |", "|" + "---|" * (2 + 2 * 3 - 1)]
    for r in report["speed"]:
        cells = [cell(r["median_fps"][d], r["spread_fps"][d]) for d in VISUAL_DETAILS]
        ratios = [f"{r['ratio_to_full'][d]:.2f}×" for d in VISUAL_DETAILS[1:]]
        lines.append(f"| {r['renderer']} | {r['size']}² | " + " | ".join(cells + ratios) + " |")
    lines += ["", "| env | detail | label pixels equal | depth median \\|diff\\| | RGB mean \\|diff\\| |",
              "|---|---|---|---|---|"]
    for r in report["fidelity"]:
        lines.append(f"| {r['env']} | {r['detail']} | {100 * r['label']:.1f}% | {1000 * r['depth']:.1f} mm | "
                     f"{r['rgb']:.1f} levels |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lod_speed", description=__doc__)
    parser.add_argument("--sizes", default="84,128")
    parser.add_argument("--renderers", default=",".join(BACKENDS),
                        help="comma list (default: every backend); those that cannot draw here are skipped")
    parser.add_argument("--frames", type=int, default=15)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    renderers = [r for r in args.renderers.split(",") if draws_here(r)]
    print(f"level of detail, PandaPush-v0, 3 cameras, rgb+depth+label, {time.strftime('%Y-%m-%d')}, {machine()}")
    print(format_lod(lod_report(renderers, [int(s) for s in args.sizes.split(",")], args.frames, args.repeats)))
    return 0
