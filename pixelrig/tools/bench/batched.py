"""Batched scaling: env steps/s of gl ``make_vec(vectorization_mode="batched")`` at 1, 4, 16 and 64 envs against
TinyRenderer PixelObs envs and the physics-only ceiling, measured in one run (``benchmarks/batched_scaling.py``)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.datasets.replay import usable_cpus
from pixelrig.tools.bench.common import cell, machine, rig_cameras
from pixelrig.vector.make import make_vec
from pixelrig.wrappers.pixel_obs import PixelObs

MODES = ("ceiling", "tiny", "batched")
TARGETS = {"batched_over_tiny": (16, 5.0), "batched_over_ceiling": (64, 0.8)}
"""Issue 13's targets: (env count, ratio) for batched/tiny and batched/ceiling."""
WARMUP_STEPS = 2


def _step_one_by_one(envs: Sequence[gym.Env], step: Callable[[gym.Env, Any], tuple],
                     actions: np.ndarray) -> tuple[float, float]:
    """Wall and process CPU seconds to step every env through ``actions`` (steps, envs, ...), one env after another,
    resetting an env on the step after its episode ended (as a vector env's next-step autoreset does)."""
    ended = [False] * len(envs)
    cpu = time.process_time()
    start = time.perf_counter()
    for batch in actions:
        for i, (env, action) in enumerate(zip(envs, batch, strict=True)):
            if ended[i]:
                env.reset()
                ended[i] = False
            else:
                _, _, terminated, truncated, _ = step(env, action)
                ended[i] = terminated or truncated
    return time.perf_counter() - start, time.process_time() - cpu


def measure(env_id: str = "pixelrig/PandaPush-v0", counts: Sequence[int] = (1, 4, 16, 64), steps: int = 20,
            repeats: int = 3, size: int = 84) -> dict[str, Any]:
    """Env steps/s per env count of three ways to step N envs with the same actions, interleaved in every repeat.

    - ``ceiling``: N bare envs stepped one by one, no rendering (physics and the env's own observation only);
    - ``tiny``: the same N envs under PixelObs (the env's default cameras at ``size``², rgb+depth+label,
      TinyRenderer), stepped one by one;
    - ``batched``: ``make_vec(env_id, N, vectorization_mode="batched", renderer="gl", num_workers=1)`` with the same
      cameras: N envs stepped in this process, every rig drawn in one gl pass.

    Every repeat resets the envs (seeded, not timed), warms up with a few steps, then times ``steps`` steps. The
    process's CPU time (every thread: llvmpipe rasterises in its own) is measured beside the wall time: on a
    machine with C cores a batched process can reach at most C × (physics CPU per step) / (batched CPU per step)
    of the ceiling, whatever overlaps what (``cpu_bound``).

    Args:
        env_id: a registered pixelrig id.
        counts: env counts.
        steps: timed steps per sample (kept within one episode so that no reset is timed).
        repeats: samples per count and mode.
        size: image side in pixels.

    Returns:
        ``{"env", "steps", "repeats", "size", "cameras", "cores", "rows": [{"n", "<mode>": {"median", "spread",
        "cpu_ms"}, ..., "batched_over_tiny", "batched_over_ceiling", "cpu_bound"}], "targets": {...}}``; rates are
        env steps per second, ``cpu_ms`` the median process CPU milliseconds per env step.
    """
    rows = []
    cams: list = []
    cores = usable_cpus()
    for n in counts:
        envs = [gym.make(env_id, renderer="tiny") for _ in range(n)]
        if not cams:
            cams = rig_cameras(envs[0], size, len(envs[0].unwrapped.default_cameras()), ("rgb", "depth", "label"))
        pixel_envs = [PixelObs(env, cams=cams) for env in envs]
        venv = make_vec(env_id, n, cams=cams, vectorization_mode="batched", renderer="gl", num_workers=1)
        samples: dict[str, list[float]] = {mode: [] for mode in MODES}
        cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
        try:
            rng = np.random.default_rng(0)
            shape = venv.single_action_space.shape
            low, high = venv.single_action_space.low, venv.single_action_space.high  # type: ignore[attr-defined]
            for r in range(repeats):
                actions = rng.uniform(low, high, (WARMUP_STEPS + steps, n, *shape)).astype(np.float32)
                warm, timed = actions[:WARMUP_STEPS], actions[WARMUP_STEPS:]
                for mode in MODES:
                    if mode == "batched":
                        venv.reset(seed=1000 * r)
                        for batch in warm:
                            venv.step(batch)
                        cpu_start = time.process_time()
                        start = time.perf_counter()
                        for batch in timed:
                            venv.step(batch)
                        seconds = time.perf_counter() - start
                        cpu_seconds = time.process_time() - cpu_start
                    else:
                        for i, env in enumerate(pixel_envs):
                            env.reset(seed=1000 * r + i)
                        if mode == "ceiling":  # below PixelObs: no pixels
                            _step_one_by_one(pixel_envs, lambda e, a: e.env.step(a), warm)
                            seconds, cpu_seconds = _step_one_by_one(pixel_envs, lambda e, a: e.env.step(a), timed)
                        else:
                            _step_one_by_one(pixel_envs, lambda e, a: e.step(a), warm)
                            seconds, cpu_seconds = _step_one_by_one(pixel_envs, lambda e, a: e.step(a), timed)
                    samples[mode].append(n * steps / seconds)
                    cpu[mode].append(1000 * cpu_seconds / (n * steps))
        finally:
            venv.close()
            for env in pixel_envs:
                env.close()
        row: dict[str, Any] = {"n": n}
        for mode, values in samples.items():
            row[mode] = {"median": statistics.median(values), "spread": [min(values), max(values)],
                         "cpu_ms": statistics.median(cpu[mode])}
        row["batched_over_tiny"] = row["batched"]["median"] / row["tiny"]["median"]
        row["batched_over_ceiling"] = row["batched"]["median"] / row["ceiling"]["median"]
        row["cpu_bound"] = min(1.0, cores * row["ceiling"]["cpu_ms"] / row["batched"]["cpu_ms"])
        rows.append(row)
    targets = {}
    for ratio, (n, goal) in TARGETS.items():
        row = next((r for r in rows if r["n"] == n), None)
        if row is not None:
            targets[ratio] = {"n": n, "value": row[ratio], "target": goal, "met": row[ratio] >= goal}
    return {"env": env_id, "steps": steps, "repeats": repeats, "size": size, "cameras": len(cams), "cores": cores,
            "rows": rows, "targets": targets}


def format_batched(result: dict[str, Any]) -> str:
    """A markdown table of :func:`measure`'s result (env steps/s: median [min..max]; process CPU ms per env step)
    and the targets' status."""
    lines = ["| envs | physics only | tiny, one by one | gl batched | batched/tiny | batched/ceiling | CPU ms per "
             "env step: physics, gl batched | best batched/ceiling the CPU allows |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        cells = [cell(r[mode]["median"], r[mode]["spread"]) for mode in MODES]
        lines.append(f"| {r['n']} | " + " | ".join(cells)
                     + f" | {r['batched_over_tiny']:.2f}× | {100 * r['batched_over_ceiling']:.0f}% | "
                       f"{r['ceiling']['cpu_ms']:.2f}, {r['batched']['cpu_ms']:.2f} | {100 * r['cpu_bound']:.0f}% |")
    notes = []
    for ratio, t in result["targets"].items():
        value = f"{t['value']:.2f}×" if ratio == "batched_over_tiny" else f"{100 * t['value']:.0f}%"
        goal = f"{t['target']:.0f}×" if ratio == "batched_over_tiny" else f"{100 * t['target']:.0f}%"
        notes.append(f"{ratio.replace('_over_', '/')} at {t['n']} envs {value} (target ≥ {goal}: "
                     f"{'met' if t['met'] else 'not met'})")
    if notes:
        lines += ["", "; ".join(notes) + f". The last column is {result['cores']} cores × physics CPU / batched CPU "
                  "(CPU time of every thread of the process, llvmpipe's rasteriser included): no overlap of work on "
                  "this machine's cores could do better."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="batched_scaling", description=__doc__)
    parser.add_argument("--env", default="pixelrig/PandaPush-v0")
    parser.add_argument("--counts", default="1,4,16,64")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", type=int, default=84)
    args = parser.parse_args(argv)
    counts = [int(c) for c in args.counts.split(",")]
    result = measure(args.env, counts, args.steps, args.repeats, args.size)
    print(f"batched scaling, {args.env}, {result['cameras']} cameras {args.size}², rgb+depth+label, env steps/s "
          f"(median [min..max] of {args.repeats}), {time.strftime('%Y-%m-%d')}, {machine()}")
    print(format_batched(result))
    return 0
