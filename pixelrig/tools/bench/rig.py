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

import contextlib
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
import pybullet as p

from pixelrig.render.convert import rgba_to_rgb, segmentation_to_label, zbuffer_to_depth
from pixelrig.system.output import capture_native_stdout
from pixelrig.tools.bench.common import cell, rig_cameras, timed
from pixelrig.wrappers.pixel_obs import PixelObs

SCENES = {"pandapush": "pixelrig/PandaPush-v0", "cartpole": "pixelrig/CartPole-v0"}
_FLAG = {"tiny": p.ER_TINY_RENDERER, "egl": p.ER_BULLET_HARDWARE_OPENGL}
"""The raw loops' renderer. On gl rows they call pybullet's TinyRenderer: the raw engine is what gl gets past, so a
gl row's rig/raw is its speed-up over raw pybullet in the same run."""


def measure(scene: str, renderer: str, size: int = 84, n_cams: int = 3,
            modalities: tuple[str, ...] = ("rgb", "depth", "label"), frames: int = 20,
            repeats: int = 5, steps: bool = True) -> dict[str, Any]:
    """Time raw / naive / rig (and, with ``steps``, raw+step / PixelObs) for one configuration; returns medians,
    spreads (min..max) and ratios."""
    # the raw loops call getCameraImage directly: on EGL the plugin's "ven = ..." lines would reach stdout
    with capture_native_stdout() if renderer == "egl" else contextlib.nullcontext():
        return _measure(scene, renderer, size, n_cams, modalities, frames, repeats, steps)


def _measure(scene: str, renderer: str, size: int, n_cams: int, modalities: tuple[str, ...], frames: int,
             repeats: int, steps: bool) -> dict[str, Any]:
    env = gym.make(SCENES[scene], renderer=renderer)
    wrapped = PixelObs(env, cams=rig_cameras(env, size, n_cams, modalities), pixels_only=True)
    try:
        wrapped.reset(seed=0)
        client = env.unwrapped.client
        cams = wrapped.rig.cameras
        views = wrapped.rig.views()
        projs = [c.projection_matrix() for c in cams]
        flag = _FLAG.get(renderer, p.ER_TINY_RENDERER)
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

        variants = {"raw": raw, "naive": naive, "rig": wrapped.rig.render}
        if steps:
            variants.update({"raw+step": raw_step, "PixelObs": pixelobs_step})
        for fn in variants.values():  # warm-up
            fn()
        samples: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(repeats):
            for name, fn in variants.items():
                samples[name].append(timed(fn, frames))
    finally:
        wrapped.close()
    med = {k: statistics.median(v) for k, v in samples.items()}
    out = {
        "scene": scene, "renderer": renderer, "size": size, "cameras": n_cams, "modalities": list(modalities),
        "frames_per_sample": frames, "repeats": repeats,
        "median_fps": med,
        "spread_fps": {k: [min(v), max(v)] for k, v in samples.items()},
        "ratio_rig_vs_raw": med["rig"] / med["raw"],
        "ratio_naive_vs_raw": med["naive"] / med["raw"],
    }
    if steps:
        out["ratio_pixelobs_vs_raw_step"] = med["PixelObs"] / med["raw+step"]
    return out


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


def rig_matrix(renderers: list[str], sizes: list[int], cams: list[int], frames: int,
               repeats: int) -> list[dict[str, Any]]:
    """raw / naive / rig frames/s for every backend x camera count x size x modality set (PandaPush)."""
    out = []
    for renderer in renderers:
        for n in cams:
            for size in sizes:
                for mods in (("rgb",), ("rgb", "depth", "label")):
                    out.append(measure("pandapush", renderer, size, n, mods, frames, repeats, steps=False))
    return out


def add_render_comparison(env_ids: list[str], steps: int, repeats: int) -> list[dict[str, Any]]:
    """Env steps/s: PixelObs with the env's render camera vs Gymnasium's AddRenderObservation on the same env."""
    from gymnasium.wrappers import AddRenderObservation

    results = []
    for env_id in env_ids:
        samples: dict[str, list[float]] = {"PixelObs": [], "AddRenderObservation": []}

        def make(kind: str, env_id: str = env_id) -> gym.Env:
            env = gym.make(env_id, render_mode="rgb_array", renderer="tiny")
            if kind == "AddRenderObservation":
                return AddRenderObservation(env, render_only=True)
            cam = env.unwrapped.render_view("render")
            return PixelObs(env, cams=[cam], pixels_only=True)

        for _ in range(repeats):
            for kind in samples:
                env = make(kind)
                env.reset(seed=0)
                action = np.zeros(env.action_space.shape, env.action_space.dtype)
                env.step(action)
                start = time.perf_counter()
                for _ in range(steps):
                    if any(env.step(action)[2:4]):
                        env.reset()
                samples[kind].append(steps / (time.perf_counter() - start))
                env.close()
        med = {k: statistics.median(v) for k, v in samples.items()}
        results.append({"env": env_id, "median_steps_per_s": med,
                        "spread": {k: [min(v), max(v)] for k, v in samples.items()},
                        "ratio": med["PixelObs"] / med["AddRenderObservation"]})
    return results


def soak(frames: int = 20_000, warmup: int = 2_000, every: int = 1_000) -> dict[str, Any]:
    """Step PixelObs(CartPole-v0) (default rig, resets included) for ``frames`` frames sampling RSS: the peak and
    the growth after warm-up, in bytes per frame."""

    def rss() -> int:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))

    env = PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny"))
    env.reset(seed=0)
    action = np.zeros(1, np.float32)
    trace = []
    for i in range(1, frames + 1):
        if any(env.step(action)[2:4]):
            env.reset()
        if i % every == 0:
            trace.append((i, rss()))
    env.close()
    after = [(i, r) for i, r in trace if i >= warmup]
    slope = float(np.polyfit([i for i, _ in after], [r for _, r in after], 1)[0]) if len(after) > 1 else 0.0
    return {"frames": frames, "peak_rss_bytes": max(r for _, r in trace), "rss_trace": trace,
            "growth_bytes_per_frame_after_warmup": slope,
            "growth_bytes_after_warmup": after[-1][1] - after[0][1] if after else 0}


def format_matrix(results: list[dict[str, Any]]) -> str:
    lines = ["| backend | cams | size | modalities | raw fps | naive fps | rig fps | rig/raw | naive/raw |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        m, sp = r["median_fps"], r["spread_fps"]
        lines.append(f"| {r['renderer']} | {r['cameras']} | {r['size']}² | {'+'.join(r['modalities'])} | "
                     f"{cell(m['raw'], sp['raw'])} | {cell(m['naive'], sp['naive'])} | "
                     f"{cell(m['rig'], sp['rig'])} | "
                     f"{r['ratio_rig_vs_raw']:.3f} | {r['ratio_naive_vs_raw']:.3f} |")
    return "\n".join(lines)


def plot_matrix(results: list[dict[str, Any]], path: str) -> None:
    """frames/s of the rig vs resolution, one line per backend x cameras x modalities."""
    from pixelrig.tools.plot import line_chart

    series: dict[str, tuple[list[float], list[float]]] = {}
    for r in results:
        name = f"{r['renderer']} {r['cameras']}cam {'rgb' if r['modalities'] == ['rgb'] else 'rgb+d+l'}"
        xs, ys = series.setdefault(name, ([], []))
        xs.append(r["size"])
        ys.append(r["median_fps"]["rig"])
    line_chart(series, path, title="CameraRig frames/s vs resolution (PandaPush-v0, default detail)",
               x_label="image side (pixels)", y_label="rig frames/s", log_y=True)
