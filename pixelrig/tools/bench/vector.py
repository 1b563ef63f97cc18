"""Vector scaling: env steps per second of ``make_vec`` with 1 and 2 async workers (one process each), pixels
included, measured in one run (``benchmarks/vector_scaling.py``)."""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from pixelrig.tools.bench.common import machine
from pixelrig.vector.make import make_vec


def steps_per_second(env_id: str, workers: int, steps: int) -> float:
    """Total env steps/s (all workers) over ``steps`` vector steps after a warm-up."""
    venv = make_vec(env_id, workers)
    try:
        venv.reset(seed=0)
        action = np.zeros(venv.action_space.shape, venv.action_space.dtype)
        for _ in range(3):
            venv.step(action)
        start = time.perf_counter()
        for _ in range(steps):
            venv.step(action)
        return workers * steps / (time.perf_counter() - start)
    finally:
        venv.close()


def measure(env_id: str, steps: int, repeats: int, max_workers: int = 2) -> dict[str, Any]:
    samples: dict[int, list[float]] = {n: [] for n in range(1, max_workers + 1)}
    for _ in range(repeats):
        for n in samples:
            samples[n].append(steps_per_second(env_id, n, steps))
    med = {n: statistics.median(v) for n, v in samples.items()}
    return {"env": env_id, "median": med, "spread": {n: (min(v), max(v)) for n, v in samples.items()},
            "scaling": med[max_workers] / med[1]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vector_scaling", description=__doc__)
    parser.add_argument("--envs", default="pixelrig/PandaPush-v0,pixelrig/CartPole-v0")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"vector scaling (default rigs, async: a worker process per env), {time.strftime('%Y-%m-%d')}, {machine()}")
    print("| env | 1 worker steps/s | 2 workers steps/s | scaling |")
    print("|---|---|---|---|")
    for env_id in args.envs.split(","):
        r = measure(env_id, args.steps, args.repeats)
        cells = [f"{r['median'][n]:.1f} [{r['spread'][n][0]:.1f}..{r['spread'][n][1]:.1f}]" for n in (1, 2)]
        print(f"| {env_id} | {cells[0]} | {cells[1]} | {r['scaling']:.2f}× |")
    return 0
