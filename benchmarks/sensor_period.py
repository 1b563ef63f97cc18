"""What ``Camera(period=k)`` saves: PandaPush's default rig (front, side, wrist at 84², rgb+depth+label) with every
camera at period k = 1, 2, 4, 8, against the bare env (physics only), per renderer.

All envs step the same actions in lockstep, one step each in turn (so that a machine's changing load affects them
alike). Each repeat times ``--steps`` steps (a multiple of every period) per env; the render cost per step is the
env's mean step time minus the bare env's, and the figure is the median over repeats. With period k only one step
in k draws, so the render cost should fall about k-fold (the held pictures are copied, which costs microseconds).
Usage::

    .venv/bin/python benchmarks/sensor_period.py [--renderers tiny,gl] [--steps 48] [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
from datetime import date

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import Camera, PixelObs
from pixelrig.tools.bench.common import machine

ENV_ID = "pixelrig/PandaPush-v0"
PERIODS = (1, 2, 4, 8)


def measure(renderer: str, steps: int, repeats: int) -> dict:
    """Mean ms per step of the bare env and of PixelObs at each period, median over repeats."""
    bare = gym.make(ENV_ID, renderer=renderer)
    envs = {"bare": bare}
    for k in PERIODS:
        env = gym.make(ENV_ID, renderer=renderer)
        cams = [dataclasses.replace(Camera.from_dict(c), width=84, height=84, modalities=("rgb", "depth", "label"),
                                    period=k) for c in env.unwrapped.default_cameras()]
        envs[f"period {k}"] = PixelObs(env, cams=cams)
    try:
        for env in envs.values():
            env.reset(seed=0)
        rng = np.random.default_rng(0)
        means: dict[str, list[float]] = {key: [] for key in envs}
        for _ in range(repeats):
            spent = dict.fromkeys(envs, 0.0)
            for _ in range(steps):
                action = rng.uniform(-1.0, 1.0, bare.action_space.shape).astype(np.float32)
                for key, env in envs.items():
                    start = time.perf_counter()
                    _, _, terminated, truncated, _ = env.step(action)
                    spent[key] += time.perf_counter() - start
                    if terminated or truncated:
                        env.reset()
            for key in envs:
                means[key].append(spent[key] / steps)
        physics = statistics.median(means["bare"])
        rows = []
        for k in PERIODS:
            step = statistics.median(means[f"period {k}"])
            rows.append({"period": k, "step_ms": 1000 * step, "render_ms": 1000 * (step - physics)})
        for row in rows:
            row["render_speedup"] = rows[0]["render_ms"] / row["render_ms"]
        return {"renderer": renderer, "cameras": 3, "size": 84, "steps": steps, "repeats": repeats,
                "physics_ms": 1000 * physics, "periods": rows}
    finally:
        for env in envs.values():
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renderers", default="tiny,gl")
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    results = [measure(r, args.steps, args.repeats) for r in args.renderers.split(",")]
    for res in results:
        print(f"{res['renderer']}: physics {res['physics_ms']:.2f} ms/step")
        for row in res["periods"]:
            print(f"  period {row['period']}: {row['step_ms']:.2f} ms/step, render {row['render_ms']:.2f} ms/step "
                  f"({row['render_speedup']:.2f}x cheaper than period 1)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": date.today().isoformat(), "machine": machine(), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
