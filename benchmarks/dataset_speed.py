"""Dataset recording and replay, measured in one run: the cost of ``DatasetRecorder`` against plain stepping (same
episodes, same rig, same backend), ``pixelrig.datasets.replay`` against live stepping with the same rig, and the
datasets' sizes per frame.

PandaPush-v0 with its default rig (front, side, wrist at 84×84: rgb, depth, label), the scripted pusher, the same
seeds for every variant; the variants run interleaved, ``--repeats`` times, and the median is reported.

    .venv/bin/python benchmarks/dataset_speed.py [--renderers tiny,gl] [--episodes 5] [--steps 40] [--repeats 3]
                                                 [--json out/dataset_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

import pixelrig  # noqa: F401  (registers the ids)
from pixelrig import PixelObs
from pixelrig.datasets import DatasetRecorder, open_dataset, replay
from pixelrig.envs.panda import PushExpert

ENV_ID = "pixelrig/PandaPush-v0"


def run(env: gym.Env, episodes: int) -> int:
    """The scripted pusher for ``episodes`` episodes (seeds 0..); returns the steps taken."""
    steps = 0
    for seed in range(episodes):
        obs, _ = env.reset(seed=seed)
        policy, done = PushExpert(), False
        while not done:
            obs, _, terminated, truncated, _ = env.step(policy(obs["state"]))
            done, steps = terminated or truncated, steps + 1
    return steps


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (ffmpeg): contention-proof, unlike wall time on a
    shared machine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed_steps(make: Any, episodes: int) -> tuple[float, float, int]:
    """Wall and CPU seconds per step of ``run`` on a fresh env from ``make()``, ``close()`` included (it
    finishes the dataset); construction and a warm-up reset are not timed."""
    env = make()
    env.reset(seed=0)  # warm-up: first reset builds the world and caches
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        steps = run(env, episodes)
    finally:
        env.close()
    return (time.perf_counter() - wall) / steps, (cpu_seconds() - cpu) / steps, steps


def folder_bytes(path: Path) -> dict[str, int]:
    """Bytes per top-level part of a LeRobot folder (videos, data, snapshots, meta)."""
    out: dict[str, int] = {}
    for file in path.rglob("*"):
        if file.is_file():
            part = file.relative_to(path).parts[0]
            out[part] = out.get(part, 0) + file.stat().st_size
    return out


def hdf5_bytes(path: Path) -> dict[str, int]:
    """Stored (compressed) bytes per kind of dataset in a robomimic file: obs, next_obs, states, the rest."""
    import h5py

    out = {"obs": 0, "next_obs": 0, "states": 0, "other": 0, "file": path.stat().st_size}

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset):
            kind = name.split("/")[2] if name.count("/") >= 2 else "other"
            kind = kind if kind in ("obs", "next_obs") else ("states" if kind in ("states", "final_state") else "other")
            out[kind] += obj.id.get_storage_size()

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return out


def bench(renderer: str, episodes: int, steps: int, repeats: int, scratch: Path) -> dict[str, Any]:
    def plain() -> gym.Env:
        return PixelObs(gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps))

    def recorder(fmt: str, path: Path) -> Any:
        return lambda: DatasetRecorder(plain(), path, format=fmt, overwrite=True)

    lr, rm = scratch / "push", scratch / "push.hdf5"
    cams = plain().unwrapped.default_cameras()
    names = ("plain", "record_lerobot", "record_robomimic", "replay_lerobot", "replay_robomimic")
    times: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    frames = 0
    for _ in range(repeats):
        for name, make in (("plain", plain), ("record_lerobot", recorder("lerobot", lr)),
                           ("record_robomimic", recorder("robomimic", rm))):
            wall_s, cpu_s, frames = timed_steps(make, episodes)
            times[name].append(wall_s)
            cpu[name].append(cpu_s)
        for fmt, src in (("lerobot", lr), ("robomimic", rm)):
            before = cpu_seconds()
            result = replay(src, scratch / f"replayed-{fmt}{src.suffix}", cams, renderer=renderer, overwrite=True,
                            progress=False)
            times[f"replay_{fmt}"].append(result.seconds / result.frames)
            cpu[f"replay_{fmt}"].append((cpu_seconds() - before) / result.frames)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    reader = open_dataset(lr)
    n_frames = sum(reader.episode_length(e) for e in range(reader.num_episodes))
    sizes_lr, sizes_rm = folder_bytes(lr), hdf5_bytes(rm)
    return {
        "renderer": renderer, "episodes": episodes, "frames": frames, "repeats": repeats,
        "wall_ms_per_step": {k: round(v * 1e3, 2) for k, v in med.items()},
        "cpu_ms_per_step": {k: round(v * 1e3, 2) for k, v in med_cpu.items()},
        "record_overhead_wall": {f: round(med[f"record_{f}"] / med["plain"] - 1.0, 2)
                                 for f in ("lerobot", "robomimic")},
        "record_overhead_cpu": {f: round(med_cpu[f"record_{f}"] / med_cpu["plain"] - 1.0, 2)
                                for f in ("lerobot", "robomimic")},
        "replay_speed_vs_live_recording_wall": {f: round(med[f"record_{f}"] / med[f"replay_{f}"], 2)
                                                for f in ("lerobot", "robomimic")},
        "replay_speed_vs_plain_stepping_wall": {f: round(med["plain"] / med[f"replay_{f}"], 2)
                                                for f in ("lerobot", "robomimic")},
        "lerobot_kb_per_frame": {k: round(v / n_frames / 1024, 1) for k, v in sorted(sizes_lr.items())},
        "robomimic_kb_per_frame": {k: round(v / n_frames / 1024, 1) for k, v in sizes_rm.items()},
        "lerobot_total_mb": round(sum(sizes_lr.values()) / 2**20, 2),
        "robomimic_total_mb": round(sizes_rm["file"] / 2**20, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renderers", default="tiny,gl", help="backends, comma-separated (default: tiny,gl)")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40, help="TimeLimit per episode (default: 40)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    results = []
    scratch = Path(tempfile.mkdtemp(prefix="pixelrig-dataset-bench-"))
    try:
        for renderer in args.renderers.split(","):
            results.append(bench(renderer, args.episodes, args.steps, args.repeats, scratch))
            print(json.dumps(results[-1], indent=1), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
