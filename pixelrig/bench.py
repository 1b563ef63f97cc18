"""Rig throughput against raw pybullet, measured in the same run (``pixelrig bench``, benchmarks/rig_throughput.py).

For one scene and camera rig it times, interleaved over several repeats:

- ``raw``: the limit -- a bare loop of ``getCameraImage`` calls, one per camera, with precomputed matrices and the
  same flags the rig uses, no conversion;
- ``naive``: a rig that calls ``getCameraImage`` once per modality (what a quick wrapper does);
- ``rig``: :class:`pixelrig.CameraRig` ``render()`` (view matrices, one call per camera, metres and labels);
- ``raw+step``: ``env.step`` followed by the raw loop;
- ``PixelObs``: ``PixelObs.step`` (the same work through the wrapper).

Figures are rig frames per second (one frame = every camera once); the table gives the median and the spread
(min..max) over repeats and the ratios ``rig / raw`` and ``PixelObs / raw+step``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import statistics
import time
from collections.abc import Callable
from datetime import date
from typing import Any

import gymnasium as gym
import numpy as np
import pybullet as p

from pixelrig.cameras.spec import Camera
from pixelrig.render.choice import probe_egl
from pixelrig.render.convert import rgba_to_rgb, segmentation_to_label, zbuffer_to_depth
from pixelrig.wrappers.pixel_obs import PixelObs

SCENES = {"pandapush": "pixelrig/PandaPush-v0", "cartpole": "pixelrig/CartPole-v0"}
_FLAG = {"tiny": p.ER_TINY_RENDERER, "egl": p.ER_BULLET_HARDWARE_OPENGL}


def rig_cameras(env: gym.Env, size: int, n_cams: int, modalities: tuple[str, ...]) -> list[Camera]:
    """The env's default cameras (repeated if needed) at ``size``² with ``modalities``."""
    base = [Camera.from_dict(c) for c in env.unwrapped.default_cameras()]
    cams = [base[i % len(base)] for i in range(n_cams)]
    return [dataclasses.replace(c, name=f"{c.name}{i}", width=size, height=size, modalities=modalities)
            for i, c in enumerate(cams)]


def _timed(fn: Callable[[], Any], frames: int) -> float:
    start = time.perf_counter()
    for _ in range(frames):
        fn()
    return frames / (time.perf_counter() - start)


def measure(scene: str, renderer: str, size: int = 84, n_cams: int = 3,
            modalities: tuple[str, ...] = ("rgb", "depth", "label"), frames: int = 20,
            repeats: int = 5) -> dict[str, Any]:
    """Time raw / naive / rig / raw+step / PixelObs for one configuration; returns medians, spreads, ratios."""
    env = gym.make(SCENES[scene], renderer=renderer)
    wrapped = PixelObs(env, cams=rig_cameras(env, size, n_cams, modalities), pixels_only=True)
    try:
        wrapped.reset(seed=0)
        client = env.unwrapped.client
        cams = wrapped.rig.cameras
        views = wrapped.rig.views()
        projs = [c.projection_matrix() for c in cams]
        flag = _FLAG[renderer]
        action = np.zeros(env.action_space.shape, np.float32)

        def raw() -> None:
            for cam, view, proj in zip(cams, views, projs, strict=True):
                seg = p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX if "label" in cam.modalities \
                    else p.ER_NO_SEGMENTATION_MASK
                p.getCameraImage(cam.width, cam.height, view, proj, renderer=flag, flags=seg, physicsClientId=client)

        def naive() -> None:
            out = {}
            for cam, view, proj in zip(cams, wrapped.rig.views(), projs, strict=True):
                for mod in cam.modalities:
                    seg = p.ER_SEGMENTATION_MASK_OBJECT_AND_LINKINDEX if mod == "label" \
                        else p.ER_NO_SEGMENTATION_MASK
                    _, _, rgba, z, s = p.getCameraImage(cam.width, cam.height, view, proj, renderer=flag,
                                                        flags=seg, physicsClientId=client)
                    if mod == "rgb":
                        out[mod] = rgba_to_rgb(rgba)
                    elif mod == "depth":
                        out[mod] = zbuffer_to_depth(z, cam.near, cam.far)
                    else:
                        out[mod] = segmentation_to_label(s)

        def raw_step() -> None:
            env.step(action)
            raw()

        def pixelobs_step() -> None:
            wrapped.step(action)

        variants = {"raw": raw, "naive": naive, "rig": wrapped.rig.render, "raw+step": raw_step,
                    "PixelObs": pixelobs_step}
        for fn in variants.values():  # warm-up
            fn()
        samples: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(repeats):
            for name, fn in variants.items():
                samples[name].append(_timed(fn, frames))
    finally:
        wrapped.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "scene": scene, "renderer": renderer, "size": size, "cameras": n_cams, "modalities": list(modalities),
        "frames_per_sample": frames, "repeats": repeats,
        "median_fps": med,
        "spread_fps": {k: [min(v), max(v)] for k, v in samples.items()},
        "ratio_rig_vs_raw": med["rig"] / med["raw"],
        "ratio_naive_vs_raw": med["naive"] / med["raw"],
        "ratio_pixelobs_vs_raw_step": med["PixelObs"] / med["raw+step"],
    }


def format_table(results: list[dict[str, Any]]) -> str:
    """A Markdown table of results (frames/s: median [min..max])."""
    head = ("| scene | backend | cams×size | raw fps | naive fps | rig fps | raw+step fps | PixelObs fps | "
            "rig/raw | naive/raw | PixelObs/(raw+step) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        cell = {k: f"{r['median_fps'][k]:.1f} [{r['spread_fps'][k][0]:.1f}..{r['spread_fps'][k][1]:.1f}]"
                for k in r["median_fps"]}
        lines.append(
            f"| {r['scene']} | {r['renderer']} | {r['cameras']}×{r['size']}² | {cell['raw']} | {cell['naive']} | "
            f"{cell['rig']} | {cell['raw+step']} | {cell['PixelObs']} | {r['ratio_rig_vs_raw']:.3f} | "
            f"{r['ratio_naive_vs_raw']:.3f} | {r['ratio_pixelobs_vs_raw_step']:.3f} |"
        )
    return "\n".join(lines)


def machine() -> str:
    """One line describing this machine."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, pybullet {p.getAPIVersion()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pixelrig bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", default="pandapush,cartpole", help="comma list of " + ",".join(SCENES))
    parser.add_argument("--renderers", default="tiny,egl", help="comma list; egl is skipped where unavailable")
    parser.add_argument("--size", type=int, default=84)
    parser.add_argument("--cams", type=int, default=3)
    parser.add_argument("--frames", type=int, default=20, help="rig frames per timing sample")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    renderers = [r for r in args.renderers.split(",") if r != "egl" or probe_egl().ok]
    results = [measure(scene, r, args.size, args.cams, frames=args.frames, repeats=args.repeats)
               for scene in args.scenes.split(",") for r in renderers]
    print(f"pixelrig bench, {date.today().isoformat()}, {machine()}")
    print(format_table(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date.today().isoformat(), "machine": machine(), "results": results}, f, indent=2)
    return 0
