"""gl renderer speed against TinyRenderer on PandaPush's default rig (3 cameras, 84², rgb+depth+label), same run.

Prints camera-frames/s for: the tiny rig, the gl rig (one pass for its 3 cameras, what ``CameraRig.render`` does),
and 1/4/16/64 envs' rigs drawn together (``pixelrig.render.backends.submit``: one gl pass). Usage:
``python benchmarks/gl_speed.py [--seconds 2] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from datetime import date

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig.cameras.rig import CameraRig
from pixelrig.render.backends import submit
from pixelrig.render.gl import GlBackend, gl_info

ENV_ID = "pixelrig/PandaPush-v0"


def rate(fn: Callable[[], int], seconds: float) -> float:
    """Frames per second of ``fn`` (which returns the frames it made), after one warm-up call."""
    return rates([fn], seconds)[0]


def rates(fns: list[Callable[[], int]], seconds: float, rounds: int = 8) -> list[float]:
    """Frames per second of each callable, measured in interleaved rounds so that a machine's changing load
    affects them alike (ratios measured in the same run)."""
    for fn in fns:
        fn()
    frames = [0] * len(fns)
    spent = [0.0] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            while time.perf_counter() - start < seconds / rounds:
                frames[i] += fn()
            spent[i] += time.perf_counter() - start
    return [f / t for f, t in zip(frames, spent, strict=True)]


def make(n: int) -> tuple[list, list[CameraRig], list[GlBackend]]:
    """n PandaPush envs (tiny renderer, gl drawn on their clients) with bound gl rigs."""
    envs, rigs, backends = [], [], []
    for i in range(n):
        env = gym.make(ENV_ID, renderer="tiny")
        env.reset(seed=i)
        u = env.unwrapped
        backend = GlBackend(u.client)
        rig = CameraRig(u.default_cameras())
        rig.bind(backend, names=u.body_names)
        envs.append(env)
        rigs.append(rig)
        backends.append(backend)
    return envs, rigs, backends


def draw_together(rigs: list[CameraRig]) -> int:
    """Every rig's cameras drawn together (one gl pass), with the cameras' current views; returns the frames."""
    return sum(len(frames) for frames in submit([(rig.backend, rig.requests()) for rig in rigs]).collect())


def main() -> None:
    """Measure and print; write JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--json", default=None)
    parser.add_argument("--envs", default="1,4,16,64")
    args = parser.parse_args()
    results: dict = {"date": date.today().isoformat(), "machine": platform.processor() or platform.machine(),
                     "gl": gl_info(), "env": ENV_ID, "cameras": "3 x 84x84 rgb+depth+label"}
    base_envs, rigs, _ = make(1)
    u = base_envs[0].unwrapped
    tiny_rig = CameraRig(u.default_cameras())
    tiny_rig.bind(u.render_backend, names=u.body_names)
    n_cams = len(tiny_rig.cameras)
    tiny, gl_rig = rates([lambda: (tiny_rig.render(), n_cams)[1], lambda: (rigs[0].render(), n_cams)[1]],
                         3 * args.seconds)
    results.update(tiny_fps=tiny, gl_rig_fps=gl_rig, gl_rig_ratio=gl_rig / tiny)
    print(f"tiny rig             {tiny:8.0f} camera-frames/s")
    print(f"gl rig (one pass)    {gl_rig:8.0f} camera-frames/s  {gl_rig / tiny:5.2f}x tiny")
    batched = {}
    for n in (int(x) for x in args.envs.split(",")):
        envs, rigs, _ = make(n)
        tiny_n, fps = rates([lambda: (tiny_rig.render(), n_cams)[1],
                             lambda rigs=rigs: draw_together(rigs)], 2 * args.seconds)
        batched[n] = {"camera_frames_per_s": fps, "tiny_camera_frames_per_s": tiny_n, "ratio_to_tiny": fps / tiny_n}
        print(f"gl batched {n:3d} envs   {fps:8.0f} camera-frames/s  {fps / tiny_n:5.2f}x tiny ({tiny_n:.0f})")
        for env in envs:
            env.close()
    results["batched"] = batched
    for env in base_envs:
        env.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
