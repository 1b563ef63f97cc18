"""Each SO-101 expert's success rate and mean episode length over ranges of seeds (not a CI test).

    python benchmarks/so101_experts.py pixelrig/SO101Lift-v0 100 600      # one task, one range: one JSON line
    python benchmarks/so101_experts.py --all [--out docs/so101_experts.json] [--docs]

One task: prints the env id, the seed range, successes, mean length, the first failed seeds with the expert's phase
when the episode ended, and the wall time. ``--all`` runs every SO-101 expert (``pixelrig.experts.EXPERTS``' SO101
ids) over seeds 0-99 and 100-599, one episode after another in this process, and writes
``docs/so101_experts.json``: per task and seed range the successes, n, the rate, the mean length (steps, every
episode's), the failed seeds with the phase each ended in and the wall time; the date, the machine and its load (the
1-minute load average before and after, and this process's niceness). ``--docs`` (alone: from the JSON as it is)
writes the experts' table into docs/manipulation.md and README.md between their ``so101-experts`` markers; a test
(tests/test_tasks_so101.py) fails when the pages and the JSON disagree.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import date
from pathlib import Path

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig.experts import EXPERTS
from pixelrig.tools.bench.common import machine

ROOT = Path(__file__).resolve().parent.parent
JSON_PATH = ROOT / "docs" / "so101_experts.json"
PAGES = (ROOT / "docs" / "manipulation.md", ROOT / "README.md")
RANGES = ((0, 100), (100, 600))
START = ("<!-- so101-experts:start (generated from docs/so101_experts.json by python benchmarks/so101_experts.py "
         "--docs) -->")
END = "<!-- so101-experts:end -->"


def main(env_id: str, low: int, high: int, failures: int | None = 20) -> dict:
    """The expert of ``env_id`` over seeds ``low`` .. ``high - 1``; the first ``failures`` failed seeds (None: all)."""
    env = gym.make(env_id)
    successes, lengths, failed = 0, [], []
    start = time.monotonic()
    try:
        for seed in range(low, high):
            obs, _ = env.reset(seed=seed)
            expert = EXPERTS[env_id](env)
            done, steps = False, 0
            while not done:
                obs, _, terminated, truncated, info = env.step(expert(obs))
                done, steps = terminated or truncated, steps + 1
            successes += bool(info["is_success"])
            lengths.append(steps)
            if not info["is_success"]:
                failed.append((seed, expert.phase))
    finally:
        env.close()
    return {"env": env_id, "seeds": [low, high], "success": successes, "n": high - low,
            "mean_len": round(float(np.mean(lengths)), 2), "failed": failed[:failures],
            "s": round(time.monotonic() - start, 1)}


def so101_ids() -> list[str]:
    """Every SO-101 task with an expert, in the docs' order (reach, lift, pick-and-place, stack)."""
    order = ["Reach", "Lift", "PickPlace", "Stack"]
    ids = [i for i in EXPERTS if i.startswith("pixelrig/SO101")]
    return sorted(ids, key=lambda i: (order.index(i[14:-3]) if i[14:-3] in order else len(order), i))


def run_all() -> dict:
    """Every SO-101 expert over :data:`RANGES`: the JSON's content."""
    load_before, start = os.getloadavg()[0], time.monotonic()
    tasks = {}
    for env_id in so101_ids():
        rows = []
        for low, high in RANGES:
            result = main(env_id, low, high, failures=None)
            result.pop("env")
            result["failed"] = [list(f) for f in result["failed"]]
            rows.append({**result, "rate": round(result["success"] / result["n"], 4)})
            print(env_id, json.dumps(rows[-1]), file=sys.stderr)
        tasks[env_id] = {"expert": EXPERTS[env_id].__name__, "ranges": rows}
    return {"benchmark": "so101_experts", "date": date.today().isoformat(), "machine": machine(),
            "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
            "niceness": os.nice(0), "s": round(time.monotonic() - start, 1),
            "command": "python benchmarks/so101_experts.py --all --docs", "tasks": tasks}


def percent(rate: float) -> str:
    """A rate as the docs write it: ``100%``, ``99.8%``."""
    return f"{100 * rate:.1f}".removesuffix(".0") + "%"


def table(result: dict) -> str:
    """The experts' table and the line saying how it was measured (Markdown), between the markers."""
    heads = " | ".join(f"seeds {low}-{high - 1}: success | mean length (steps)" for low, high in RANGES)
    lines = [START, "", f"| expert | {heads} |", "|---" * (1 + 2 * len(RANGES)) + "|"]
    for task in result["tasks"].values():
        cells = " | ".join(f"{percent(r['rate'])} ({r['success']}/{r['n']}) | {r['mean_len']:.1f}"
                           for r in task["ranges"])
        lines.append(f"| `{task['expert']}` | {cells} |")
    load = result["load_average_1min"]
    lines += ["", f"Measured on {result['date']} ({result['machine']}; load {load['before']:.1f} before, "
              f"{load['after']:.1f} after; {result['s']:.0f} s in all) by `{result['command']}`.", "", END]
    return "\n".join(lines)


def write_docs(result: dict) -> None:
    """Put :func:`table` between the markers of every page in :data:`PAGES`."""
    for page in PAGES:
        text = page.read_text()
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        page.write_text(head + table(result) + tail)
        print(f"wrote the experts' table into {page.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 4 and not sys.argv[1].startswith("-"):
        print(json.dumps(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="run every SO-101 expert over seeds 0-99 and 100-599")
    parser.add_argument("--out", type=Path, default=JSON_PATH, help="where --all writes its JSON")
    parser.add_argument("--docs", action="store_true", help="write the table into the docs from the JSON")
    args = parser.parse_args()
    if not (args.all or args.docs):
        parser.error("pass ID LOW HIGH, --all or --docs")
    if args.all:
        found = run_all()
        args.out.write_text(json.dumps(found, indent=2) + "\n")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.docs:
        write_docs(json.loads(args.out.read_text()))
