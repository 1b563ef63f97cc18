"""``pixelrig collect`` throughput: PandaLift's expert into a dataset with the task's default rig (front, side and wrist
at 84², rgb+depth+label; rgb and depth stored), at each worker count, beside the same episodes stepped without a
dataset in one process (what the simulation and the rig cost alone).

Each figure is whole ``collect()`` calls (workers started, every episode run and written, the dataset closed):
episodes per second of wall time. Worker counts take turns within each repeat, so that a machine's changing load
affects them alike; the load average (1 min) before and after is printed with them. Prints JSON. Usage::

    .venv/bin/python benchmarks/collect_speed.py [--episodes 20] [--workers 1,2] [--renderer auto]
                                                 [--format lerobot] [--repeats 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the env ids)
from pixelrig import PixelObs
from pixelrig.datasets.collect import collect
from pixelrig.datasets.collect_workers import run_expert
from pixelrig.experts import LiftExpert
from pixelrig.tools.bench.common import machine

TASK = "pixelrig/PandaLift-v0"


def stepping_only(episodes: int, renderer: str) -> tuple[float, str]:
    """Episodes per second of the expert under PixelObs with the default rig, no dataset, in this process; the
    backend used."""
    env = PixelObs(gym.make(TASK, renderer=renderer))
    expert = LiftExpert(env)
    start = time.perf_counter()
    for seed in range(episodes):
        run_expert(env, expert, seed)
    seconds = time.perf_counter() - start
    backend = env.unwrapped.render_backend.name
    env.close()
    return episodes / seconds, backend


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--renderer", default="auto")
    parser.add_argument("--format", default="lerobot", choices=("lerobot", "robomimic"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    load_before = os.getloadavg()[0]
    rates: dict[int, list[float]] = {w: [] for w in counts}
    success: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="pixelrig-collect-speed-") as tmp:
        for repeat in range(args.repeats):
            for w in counts:
                out = Path(tmp) / f"lift-{w}-{repeat}{'.hdf5' if args.format == 'robomimic' else ''}"
                report = collect(TASK, out, episodes=args.episodes, workers=w, format=args.format,
                                 renderer=args.renderer, progress=False)
                rates[w].append(report.episodes_per_second)
                success[w] = report.success_rate
    alone, backend = stepping_only(args.episodes, args.renderer)
    result = {
        "benchmark": "collect_speed", "date": date.today().isoformat(), "machine": machine(),
        "usable_cpus": len(os.sched_getaffinity(0)), "load_average_1min": {"before": load_before,
                                                                           "after": os.getloadavg()[0]},
        "task": TASK, "rig": "default (front, side, wrist at 84x84)", "renderer": backend, "format": args.format,
        "episodes": args.episodes, "repeats": args.repeats,
        "collect": [{"workers": w, "episodes_per_second": round(statistics.median(rates[w]), 3),
                     "runs": [round(r, 3) for r in rates[w]], "success_rate": success[w]} for w in counts],
        "stepping_only_episodes_per_second": round(alone, 3),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
