"""Rendering against physics: for every manipulation task with its default rig (three 84² cameras, rgb+depth+label),
the time a step spends rendering over the time it spends in physics, on TinyRenderer, on gl, and on gl batched
(``make_vec(N, vectorization_mode="batched", renderer="gl")``), all measured in one run
(``benchmarks/render_cost.py``; ``pixelrig bench --sections render``).

- **tiny, gl** (one PixelObs env): each step is timed in two parts, the wrapped env's step (physics, the task's
  own observation) and PixelObs's observation of it (rendering, decoding, the wrapper's work): exactly the two
  halves of ``PixelObs.step``, on the same states.
- **gl batched** (N envs): the vector env's step per env, against N bare envs (the same physics, no pixels)
  stepped one by one with the same actions, interleaved in every repeat; rendering is the difference. On 2 cores
  llvmpipe rasterises one part of the envs while the next part steps, so this is the wall time rendering adds,
  which can be less than its CPU time (given beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from pixelrig.tools.bench.common import machine
from pixelrig.vector.make import make_vec
from pixelrig.wrappers.pixel_obs import PixelObs

MODES = ("tiny", "gl", "batched")
WARMUP_STEPS = 2
TARGETS = {"batched_ratio": 1.0, "batched_over_single": 2.0}
"""Issue 35's goals: rendering at most 1.0× physics on gl batched, and N batched envs at least 2× a single gl env's
steps/s."""


def manipulation_tasks() -> list[str]:
    """Every registered Panda task (the manipulation tasks), in ``ENV_SPECS``' order."""
    from pixelrig.tasks import ENV_SPECS

    return [env_id for env_id in ENV_SPECS if env_id.startswith("pixelrig/Panda")]


def _actions(space: gym.spaces.Box, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(space.low, space.high, (*shape, *space.shape)).astype(np.float32)


def _single(env: PixelObs, actions: np.ndarray, seed: int) -> tuple[float, float, float, float]:
    """(physics s, rendering s, physics CPU s, rendering CPU s) over ``actions`` after a seeded reset and the
    warm-up steps (untimed): each step split into the wrapped env's step and PixelObs's observation of it."""
    env.reset(seed=seed)
    for a in actions[:WARMUP_STEPS]:
        env.step(a)
    physics = render = physics_cpu = render_cpu = 0.0
    for a in actions[WARMUP_STEPS:]:
        c0, t0 = time.process_time(), time.perf_counter()
        obs, _, terminated, truncated, _ = env.env.step(a)
        c1, t1 = time.process_time(), time.perf_counter()
        env.observation(obs)
        c2, t2 = time.process_time(), time.perf_counter()
        physics, render = physics + t1 - t0, render + t2 - t1
        physics_cpu, render_cpu = physics_cpu + c1 - c0, render_cpu + c2 - c1
        if terminated or truncated:
            env.reset()
    return physics, render, physics_cpu, render_cpu


def _bare(envs: Sequence[gym.Env], actions: np.ndarray, seed: int) -> tuple[float, float]:
    """(wall s, CPU s) of stepping the bare envs one by one through ``actions`` (steps, envs, ...) after a seeded
    reset and the warm-up steps (untimed); an env whose episode ended is reset untimed."""
    for i, env in enumerate(envs):
        env.reset(seed=seed + i)
    wall = cpu = 0.0
    for k, batch in enumerate(actions):
        c0, t0 = time.process_time(), time.perf_counter()
        ended = [any(env.step(a)[2:4]) for env, a in zip(envs, batch, strict=True)]
        if k >= WARMUP_STEPS:
            wall, cpu = wall + time.perf_counter() - t0, cpu + time.process_time() - c0
        for env, done in zip(envs, ended, strict=True):
            if done:
                env.reset()
    return wall, cpu


def _batched(venv: gym.vector.VectorEnv, actions: np.ndarray, seed: int) -> tuple[float, float]:
    """(wall s, CPU s) of the vector env's timed steps after a seeded reset and the warm-up steps."""
    venv.reset(seed=seed)
    for batch in actions[:WARMUP_STEPS]:
        venv.step(batch)
    c0, t0 = time.process_time(), time.perf_counter()
    for batch in actions[WARMUP_STEPS:]:
        venv.step(batch)
    return time.perf_counter() - t0, time.process_time() - c0


def measure_task(env_id: str, steps: int = 20, repeats: int = 5, num_envs: int = 16) -> dict[str, Any]:
    """One task's figures (see the module docstring); every repeat runs every mode, in turn, with new actions.

    Returns:
        ``{"env", "cameras", "modes": {mode: {"physics_ms", "render_ms", "ratio", "spread", "steps_per_s",
        "physics_cpu_ms", "render_cpu_ms"}}, "batched_over_single"}``: per env step, medians over the repeats
        (``spread``: the ratio's [min, max]); ``steps_per_s`` is env steps per second.
    """
    singles = {r: PixelObs(gym.make(env_id, renderer=r)) for r in ("tiny", "gl")}
    cams = singles["gl"].rig.cameras
    bare = [gym.make(env_id) for _ in range(num_envs)]
    venv = make_vec(env_id, num_envs, vectorization_mode="batched", renderer="gl", num_workers=1)
    samples: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m in MODES}
    rates: dict[str, list[float]] = {m: [] for m in MODES}
    try:
        rng = np.random.default_rng(0)
        space = singles["gl"].action_space
        n_steps = WARMUP_STEPS + steps
        for r in range(repeats):
            seed = 1000 * r
            for mode in MODES:
                if mode == "batched":
                    actions = _actions(space, rng, (n_steps, num_envs))
                    physics, physics_cpu = _bare(bare, actions, seed)
                    wall, cpu = _batched(venv, actions, seed)
                    count = steps * num_envs
                    physics, physics_cpu, wall, cpu = (x / count for x in (physics, physics_cpu, wall, cpu))
                    sample = (physics, wall - physics, physics_cpu, cpu - physics_cpu)
                    rates[mode].append(1 / wall)
                else:
                    single = _single(singles[mode], _actions(space, rng, (n_steps,)), seed)
                    sample = tuple(x / steps for x in single)  # type: ignore[assignment]
                    rates[mode].append(1 / (sample[0] + sample[1]))
                samples[mode].append(sample)
    finally:
        venv.close()
        for env in [*singles.values(), *bare]:
            env.close()
    modes: dict[str, Any] = {}
    for mode, values in samples.items():
        ratios = [render / physics for physics, render, _, _ in values]
        cpu_ratios = [render_cpu / physics_cpu for _, _, physics_cpu, render_cpu in values]
        modes[mode] = {
            "physics_ms": 1e3 * statistics.median(v[0] for v in values),
            "render_ms": 1e3 * statistics.median(v[1] for v in values),
            "ratio": statistics.median(ratios),
            "spread": [min(ratios), max(ratios)],
            "steps_per_s": statistics.median(rates[mode]),
            "physics_cpu_ms": 1e3 * statistics.median(v[2] for v in values),
            "render_cpu_ms": 1e3 * statistics.median(v[3] for v in values),
            "cpu_ratio": statistics.median(cpu_ratios),
        }
    single, batched = modes["gl"], modes["batched"]
    return {"env": env_id, "cameras": [f"{c.name} {c.width}x{c.height} {'+'.join(c.modalities)}" for c in cams],
            "modes": modes, "batched_over_single": batched["steps_per_s"] / single["steps_per_s"],
            "batched_over_single_cpu": (single["physics_cpu_ms"] + single["render_cpu_ms"])
            / (batched["physics_cpu_ms"] + batched["render_cpu_ms"])}


def measure(tasks: Sequence[str] | None = None, steps: int = 20, repeats: int = 5,
            num_envs: int = 16) -> dict[str, Any]:
    """:func:`measure_task` for every task (default: :func:`manipulation_tasks`), with the goals' status and the
    machine's load average before and after (on a shared machine, what the wall-time figures were up against)."""
    load = [round(x, 2) for x in os.getloadavg()]
    rows = [measure_task(env_id, steps, repeats, num_envs) for env_id in (tasks or manipulation_tasks())]
    worst_ratio = max(r["modes"]["batched"]["ratio"] for r in rows)
    least_speedup = min(r["batched_over_single"] for r in rows)
    return {"steps": steps, "repeats": repeats, "num_envs": num_envs, "cores": os.cpu_count(),
            "load_average": {"before": load, "after": [round(x, 2) for x in os.getloadavg()]}, "rows": rows,
            "targets": {"batched_ratio": {"value": worst_ratio, "target": TARGETS["batched_ratio"],
                                          "met": worst_ratio <= TARGETS["batched_ratio"]},
                        "batched_over_single": {"value": least_speedup, "target": TARGETS["batched_over_single"],
                                                "met": least_speedup >= TARGETS["batched_over_single"]}}}


def format_render_cost(result: dict[str, Any]) -> str:
    """A markdown table of :func:`measure`'s result: per task, the physics CPU ms per env step, rendering over
    physics per mode in wall time (median [min..max] over the repeats) and in CPU time (every thread of the process,
    llvmpipe's included), and N batched envs' steps/s over a single gl env's (wall; CPU), then the goals."""
    n = result["num_envs"]
    lines = ["| task | physics, CPU ms per step | tiny | gl | gl batched ×" + str(n) + " | tiny, CPU | gl, CPU | "
             f"gl batched ×{n}, CPU | {n} batched / 1 gl, steps/s | same, CPU |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in result["rows"]:
        modes = row["modes"]
        wall = [f"{modes[m]['ratio']:.2f}× [{modes[m]['spread'][0]:.2f}..{modes[m]['spread'][1]:.2f}]" for m in MODES]
        cpu = [f"{modes[m]['cpu_ratio']:.2f}×" for m in MODES]
        lines.append(f"| {row['env'].removeprefix('pixelrig/')} | {modes['gl']['physics_cpu_ms']:.2f} | "
                     + " | ".join(wall + cpu)
                     + f" | {row['batched_over_single']:.2f}× | {row['batched_over_single_cpu']:.2f}× |")
    t = result["targets"]
    ratio, speedup = t["batched_ratio"], t["batched_over_single"]
    lines += ["", f"Goals (wall time): rendering ≤ {ratio['target']:.1f}× physics on gl batched (worst task "
                  f"{ratio['value']:.2f}×: {'met' if ratio['met'] else 'not met'}); {n} batched envs ≥ "
                  f"{speedup['target']:.0f}× a single gl env's steps/s (least {speedup['value']:.2f}×: "
                  f"{'met' if speedup['met'] else 'not met'}). Load average "
                  f"{result['load_average']['before'][0]:.1f} before the run, "
                  f"{result['load_average']['after'][0]:.1f} after, on {result['cores']} cores."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="render_cost", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=None, help="comma list of env ids (default: every manipulation task)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per sample")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--envs", type=int, default=16, help="batched env count")
    parser.add_argument("--quick", action="store_true", help="PandaReach and PandaPush, 4 batched envs, 5 steps, "
                                                             "1 repeat")
    parser.add_argument("--out", default=None, help="write the results here as JSON (docs/render_cost.json is the "
                                                    "docs' source)")
    args = parser.parse_args(argv)
    tasks = args.tasks.split(",") if args.tasks else None
    if args.quick:
        tasks = tasks or ["pixelrig/PandaReach-v0", "pixelrig/PandaPush-v0"]
        args.steps, args.repeats, args.envs = 5, 1, 4
    result = measure(tasks, args.steps, args.repeats, args.envs)
    report = {"date": date.today().isoformat(), "machine": machine(), "pixelrig": version("pixelrig"), **result}
    print(f"rendering against physics, default rigs, {report['date']}, {report['machine']}")
    print(format_render_cost(report))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"(results: {args.out})")
    return 0
