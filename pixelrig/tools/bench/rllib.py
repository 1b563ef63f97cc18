"""RLlib scaling: env steps/s that RLlib's env runners sample from pixelrig's batched vector envs (1 and 2 runners,
1 and 8 envs each), against the same ``make_vec(..., vectorization_mode="batched")`` stepped in a plain loop, in one
run: RLlib's overhead, and what a cluster should give by the measured per-runner rate.

A runner's sample is RLlib's own (``SingleAgentEnvRunner.sample``, what PPO's training step calls): the envs
stepped, the env-to-module connectors, the episodes kept and returned to the driver, with random actions (RLlib's
bookkeeping alone) and with the policy's actions (the CNN of ``ppo_config`` run on every observation, on the
runner's CPU).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np

from pixelrig.tools.bench.common import cell, machine

ENV_ID = "pixelrig/CartPole-v0"
CLUSTERS = ((4, 16), (16, 32))
"""The (nodes, cores per node) the report projects to."""
INSTALL_HINT = "pip install 'ray[rllib]' torch"


def rllib_missing() -> str | None:
    """What the section needs and cannot import here ("Ray RLlib", "torch"), or None."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        return "Ray RLlib"
    try:
        import torch  # noqa: F401
    except ImportError:
        return "torch"
    return None


def _renderer() -> str:
    from pixelrig.render.choice import probe_gl

    return "gl" if probe_gl().ok else "tiny"


def plain_rate(envs: int, steps: int, renderer: str, cams: list[dict[str, Any]]) -> tuple[float, float]:
    """Env steps/s of ``make_vec(ENV_ID, envs, vectorization_mode="batched")`` stepped with random actions in this
    process (the rigs drawn as RLlib's runners draw them), and the process's CPU milliseconds per env step (every
    thread: llvmpipe rasterises in threads of its own)."""
    from pixelrig.vector.make import make_vec

    venv = make_vec(ENV_ID, envs, cams=cams, renderer=renderer, vectorization_mode="batched", pixels_only=True)
    try:
        venv.reset(seed=0)
        rng = np.random.default_rng(0)
        actions = rng.uniform(-1.0, 1.0, (steps + 3, envs, 1)).astype(np.float32)
        for action in actions[:3]:
            venv.step(action)
        cpu = time.process_time()
        start = time.perf_counter()
        for action in actions[3:]:
            venv.step(action)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        return envs * steps / seconds, 1000 * cpu / (envs * steps)
    finally:
        venv.close()


def timed_sample(runner: Any, steps: int, random_actions: bool, force_reset: bool) -> tuple[list[Any], float]:
    """Runs in an env runner: its ``sample`` and the CPU seconds its process spent on it (every thread)."""
    cpu = time.process_time()
    episodes = runner.sample(num_timesteps=steps, random_actions=random_actions, force_reset=force_reset)
    return episodes, time.process_time() - cpu


def sample_rate(algo: Any, steps_per_runner: int, random_actions: bool,
                force_reset: bool = False) -> tuple[float, float]:
    """Every remote runner samples ``steps_per_runner`` steps at once, episodes returned to the driver: env steps/s
    (wall time of the whole call) and the runners' CPU milliseconds per env step. ``force_reset``: start new
    episodes (RLlib's episodes may not mix random and policy steps)."""
    start = time.perf_counter()
    answers = algo.env_runner_group.foreach_env_runner(
        lambda r: timed_sample(r, steps_per_runner, random_actions, force_reset), local_env_runner=False)
    seconds = time.perf_counter() - start
    steps = sum(len(e) for episodes, _ in answers for e in episodes)
    return steps / seconds, 1000 * sum(cpu for _, cpu in answers) / max(steps, 1)


def _stats(values: list[tuple[float, float]]) -> dict[str, Any]:
    rates = [v[0] for v in values]
    return {"median": statistics.median(rates), "spread": [min(rates), max(rates)],
            "cpu_ms": statistics.median(v[1] for v in values)}


def measure(runners: Sequence[int] = (1, 2), envs: Sequence[int] = (1, 8), steps: int = 400, repeats: int = 3,
            size: int = 48) -> dict[str, Any]:
    """Sampled env steps/s per (runners, envs per runner), policy and random actions, beside plain batched stepping
    of the same envs; see the module's docstring.

    Wall rates on a shared machine move with its load; CPU time per env step (the plain loop's process, or the
    runners' processes: every thread, llvmpipe's included) moves less, and is what the cluster projection uses:
    one core gives ``1000 / cpu_ms`` env steps/s.

    Args:
        runners: remote env runner counts (Ray, unless one runs already, is started here with as many CPUs as the
            largest, and stopped at the end).
        envs: envs per runner.
        steps: env steps per runner per sample (a vector step counts ``envs``).
        repeats: samples per configuration (median, min..max).
        size: the tracking camera's image side (CartPole-v0, RGB, as the learning tests see it).

    Returns:
        ``{"env", "renderer", "size", "steps", "repeats", "date", "cores", "machine", "rows": [{"runners", "envs",
        "plain", "random", "policy"} (each {"median", "spread", "cpu_ms"}), "per_runner", "efficiency",
        "cpu_efficiency"], "per_core": {"envs", "steps_per_s"}, "scaling": [{"envs", "runners", "ratio"}],
        "projection": [{"nodes", "cores", "steps_per_s"}]}``.
    """
    import ray

    from pixelrig.datasets.replay import usable_cpus
    from pixelrig.integrations.rllib import TRACKING_CAMERA, ppo_config

    renderer = _renderer()
    cams = [dict(TRACKING_CAMERA, width=size, height=size)]
    plain: dict[int, list[tuple[float, float]]] = {n: [] for n in envs}
    for _ in range(repeats):
        for n in envs:
            plain[n].append(plain_rate(n, max(steps // n, 10), renderer, cams))
    rows = []
    own = not ray.is_initialized()  # a Ray already running here (a caller's) is used as it is
    if own:
        ray.init(num_cpus=max(runners), include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for r in runners:
            for n in envs:
                algo = ppo_config({"cams": cams, "renderer": renderer}, env_runners=r, envs_per_runner=n).build_algo()
                try:
                    samples: dict[str, list[tuple[float, float]]] = {"random": [], "policy": []}
                    for mode in samples:  # a warm-up starting new episodes in this mode, then the timed samples
                        sample_rate(algo, 4 * n, random_actions=mode == "random", force_reset=True)
                        for _ in range(repeats):
                            samples[mode].append(sample_rate(algo, steps, random_actions=mode == "random"))
                finally:
                    algo.stop()
                row: dict[str, Any] = {"runners": r, "envs": n, "plain": _stats(plain[n])}
                row.update({mode: _stats(values) for mode, values in samples.items()})
                row["per_runner"] = row["policy"]["median"] / r
                row["efficiency"] = row["per_runner"] / row["plain"]["median"]
                row["cpu_efficiency"] = row["plain"]["cpu_ms"] / row["policy"]["cpu_ms"]
                rows.append(row)
    finally:
        if own:
            ray.shutdown()
    best = min((row for row in rows if row["runners"] == 1), key=lambda row: row["policy"]["cpu_ms"])
    per_core = 1000 / best["policy"]["cpu_ms"]
    scaling = []
    for n in envs:
        by = {row["runners"]: row["policy"]["median"] for row in rows if row["envs"] == n}
        if 1 in by and max(runners) > 1:
            scaling.append({"envs": n, "runners": max(runners), "ratio": by[max(runners)] / by[1]})
    return {"env": ENV_ID, "renderer": renderer, "size": size, "steps": steps, "repeats": repeats,
            "date": date.today().isoformat(), "cores": usable_cpus(), "machine": machine(), "rows": rows,
            "per_core": {"envs": best["envs"], "steps_per_s": per_core}, "scaling": scaling,
            "projection": [{"nodes": nodes, "cores": cores, "steps_per_s": nodes * cores * per_core}
                           for nodes, cores in CLUSTERS]}


def format_rllib(result: dict[str, Any]) -> str:
    """A markdown table of :func:`measure`'s result and the cluster projection (with its assumption)."""
    lines = ["| runners | envs per runner | make_vec batched, plain loop | RLlib sample, random actions | RLlib "
             "sample, policy | per runner | RLlib/plain per runner | CPU ms per env step: plain, random, policy |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        cells = [cell(r[m]["median"], r[m]["spread"]) for m in ("plain", "random", "policy")]
        cpu = ", ".join(f"{r[m]['cpu_ms']:.2f}" for m in ("plain", "random", "policy"))
        lines.append(f"| {r['runners']} | {r['envs']} | " + " | ".join(cells)
                     + f" | {r['per_runner']:.1f} | {100 * r['efficiency']:.0f}% | {cpu} |")
    one = result["per_core"]
    scaling = ", ".join(f"{s['runners']} runners {s['ratio']:.2f}× 1 runner with {s['envs']} env"
                        f"{'s' if s['envs'] > 1 else ''} each" for s in result["scaling"])
    projection = "; ".join(f"{p['nodes']} nodes × {p['cores']} cores ≈ {p['steps_per_s']:,.0f} steps/s"
                           for p in result["projection"])
    lines += ["", f"Env steps/s (median [min..max] of {result['repeats']}), policy steps running the CNN of "
              "`ppo_config` on the runner's CPU; the plain loop steps the same envs in one process (1 runner's "
              "worth); CPU ms count every thread of the process (the plain loop's, or the runners'), llvmpipe's "
              f"rasteriser included. On this machine's {result['cores']} cores: {scaling}. A cluster should give "
              f"nodes × cores × {one['steps_per_s']:.0f} steps/s (one core's worth: 1000 / the CPU ms per policy "
              f"step of 1 runner with {one['envs']} envs, the cheapest measured): {projection}; assuming one runner "
              "per core, its rendering on that core (a GPU takes the rasterising off it), and a learner on other "
              "resources that keeps up."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rllib_scaling", description=__doc__)
    parser.add_argument("--runners", default="1,2")
    parser.add_argument("--envs", default="1,8")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    result = measure([int(r) for r in args.runners.split(",")], [int(e) for e in args.envs.split(",")], args.steps,
                     args.repeats)
    print(f"RLlib scaling, {result['env']} (48² tracking camera, {result['renderer']}), {time.strftime('%Y-%m-%d')}, "
          f"{result['machine']}")
    print(format_rllib(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
