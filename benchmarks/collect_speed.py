"""``pixelrig collect`` throughput: PandaLift's expert into a dataset with the task's default rig (front, side and wrist
at 84², rgb+depth+label; rgb and depth stored), at each worker count, beside the same episodes stepped without a
dataset in one process (what the simulation and the rig cost alone).

Each figure is one whole ``collect()`` call (workers started, every episode run and written, the dataset closed),
in a fresh process: episodes per second of wall time, as collect reports it. ``--baseline TREE`` also runs the same
calls with the pixelrig of another source tree (e.g. a git worktree of the commit before a change), so that before
and after are measured in one run. Worker counts and trees take turns within each repeat, so that a machine's
changing load affects them alike; the load average (1 min) before and after is recorded. Prints JSON; ``--json``
also writes it (docs/collect_speed.json: docs/benchmark.md's collect table is held to it by a test). Usage::

    .venv/bin/python benchmarks/collect_speed.py [--episodes 20] [--workers 1,2] [--renderers gl,tiny]
        [--format lerobot] [--repeats 3] [--baseline ../pixelrig-before] [--json docs/collect_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from pixelrig.tools.bench.common import machine

TASK = "pixelrig/PandaLift-v0"
HERE = Path(__file__).resolve().parent.parent

_COLLECT = f"""
import json, sys
from pixelrig.datasets.collect import collect
out, workers, fmt, renderer, episodes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
report = collect({TASK!r}, out, episodes=episodes, workers=workers, format=fmt, renderer=renderer, progress=False)
print(json.dumps({{"eps": report.episodes_per_second, "success": report.success_rate}}))
"""

_STEPPING = f"""
import json, sys, time
import gymnasium as gym
import pixelrig
from pixelrig import PixelObs
from pixelrig.datasets.collect_workers import run_expert
from pixelrig.experts import EXPERTS
renderer, episodes = sys.argv[1], int(sys.argv[2])
env = PixelObs(gym.make({TASK!r}, renderer=renderer))
expert = EXPERTS[{TASK!r}](env)
start = time.perf_counter()
for seed in range(episodes):
    run_expert(env, expert, seed)
seconds = time.perf_counter() - start
print(json.dumps({{"eps": episodes / seconds, "backend": env.unwrapped.render_backend.name}}))
env.close()
"""


def _child(tree: Path, code: str, *args: str) -> dict:
    """Run ``code`` with the pixelrig of ``tree``; its last stdout line as JSON."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child in {tree} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--renderers", default="gl,tiny", help="comma-separated renderers")
    parser.add_argument("--format", default="lerobot", choices=("lerobot", "robomimic"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None, help="another source tree to measure alongside")
    parser.add_argument("--json", default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    trees = {"now": HERE, **({"before": args.baseline.resolve()} if args.baseline else {})}
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pixelrig-collect-speed-") as tmp:
        for renderer in args.renderers.split(","):
            rates: dict[tuple[str, int], list[float]] = {(t, w): [] for t in trees for w in counts}
            success: dict[tuple[str, int], float] = {}
            for repeat in range(args.repeats):
                for w in counts:
                    for t, tree in trees.items():
                        out = Path(tmp) / f"{renderer}-{t}-{w}-{repeat}{'.hdf5' if args.format == 'robomimic' else ''}"
                        r = _child(tree, _COLLECT, str(out), str(w), args.format, renderer, str(args.episodes))
                        rates[t, w].append(r["eps"])
                        success[t, w] = r["success"]
            alone = _child(HERE, _STEPPING, renderer, str(args.episodes))
            row = {"renderer": renderer, "backend": alone["backend"],
                   "stepping_only_episodes_per_second": round(alone["eps"], 3)}
            for t in trees:
                row[t] = [{"workers": w, "episodes_per_second": round(statistics.median(rates[t, w]), 3),
                           "runs": [round(r, 3) for r in rates[t, w]], "success_rate": success[t, w]}
                          for w in counts]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    result = {
        "benchmark": "collect_speed", "date": date.today().isoformat(), "machine": machine(),
        "usable_cpus": len(os.sched_getaffinity(0)), "load_average_1min": {"before": load_before,
                                                                           "after": os.getloadavg()[0]},
        "task": TASK, "rig": "default (front, side, wrist at 84x84)", "format": args.format,
        "episodes": args.episodes, "repeats": args.repeats,
        "baseline": None if args.baseline is None else "the commit before workers encoded their videos",
        "rows": rows,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
