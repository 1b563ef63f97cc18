"""Snapshot/restore latency and size against pybullet's own saveBullet-to-disk + restoreState(fileName), in one run
(``benchmarks/snapshot_latency.py``).

``pixelrig restore`` restores into the env the snapshot came from (the search / branching use): the world is
reused when that is exact. ``world rebuilt`` is the other path, taken when the target env has contacts the
snapshot did not (e.g. restoring into an env that ran another episode)."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import pybullet as p

from pixelrig.snapshots import Snapshot, restore, snapshot
from pixelrig.tools.bench.common import machine


def _times(fn: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def measure(env_id: str, warmup_steps: int = 200, repeats: int = 50) -> dict[str, Any]:
    """Milliseconds (median and min..max) of each operation, and sizes in bytes."""
    env = gym.make(env_id)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(warmup_steps):
        if any(env.step(env.action_space.sample())[2:4]):
            env.reset()
    client = env.unwrapped.client
    snap = snapshot(env)
    blob = snap.to_bytes()
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:  # a real disk, as a user's saveBullet would
        path = os.path.join(folder, "state.bullet")

        def raw_save() -> None:
            p.saveBullet(path, physicsClientId=client)

        def raw_restore() -> None:
            p.restoreState(fileName=path, physicsClientId=client)

        raw_save()
        raw_size = os.path.getsize(path)
        results = {
            "pybullet saveBullet (disk)": _times(raw_save, repeats),
            "pybullet restoreState(fileName)": _times(raw_restore, repeats),
            "pixelrig snapshot": _times(lambda: snapshot(env), repeats),
            "Snapshot.to_bytes": _times(lambda: Snapshot(snap.identity, snap.env_state, snap.wrapper_states)
                                        .to_bytes(), repeats),
            "Snapshot.from_bytes": _times(lambda: Snapshot.from_bytes(blob), repeats),
            "pixelrig restore": _times(lambda: restore(env, snap), repeats),
            "pixelrig restore, world rebuilt": _times(lambda: restore(env, snap, rebuild=True), max(3, repeats // 5)),
        }
    env.close()
    med = {k: statistics.median(v) for k, v in results.items()}
    return {
        "env": env_id, "repeats": repeats,
        "median_ms": med, "spread_ms": {k: [min(v), max(v)] for k, v in results.items()},
        "pybullet_round_trip_ms": med["pybullet saveBullet (disk)"] + med["pybullet restoreState(fileName)"],
        "pixelrig_round_trip_ms": med["pixelrig snapshot"] + med["pixelrig restore"],
        "snapshot_bytes": len(blob), "bullet_file_bytes": raw_size,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="snapshot_latency", description=__doc__)
    parser.add_argument("--envs", default="pixelrig/HalfCheetah-v0,pixelrig/PandaPush-v0")
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args(argv)
    print(f"snapshot latency, {time.strftime('%Y-%m-%d')}, {machine()}")
    print("| env | operation | median ms | min..max ms |")
    print("|---|---|---|---|")
    for env_id in args.envs.split(","):
        r = measure(env_id, repeats=args.repeats)
        for op, ms in r["median_ms"].items():
            lo, hi = r["spread_ms"][op]
            print(f"| {env_id} | {op} | {ms:.3f} | {lo:.3f}..{hi:.3f} |")
        print(f"| {env_id} | **round trip: pybullet / pixelrig** | {r['pybullet_round_trip_ms']:.3f} / "
              f"{r['pixelrig_round_trip_ms']:.3f} | |")
        print(f"| {env_id} | size: .bullet file / snapshot | {r['bullet_file_bytes']} / {r['snapshot_bytes']} "
              "bytes | |")
    return 0
