"""Dataset recording and replay (``pixelrig bench --sections datasets``, ``benchmarks/dataset_speed.py``), measured
in one run: ``pixelrig.datasets.replay`` against stepping the same episodes
live with the same rig (plain, and recording the same dataset), the cost of ``DatasetRecorder`` against plain
stepping, and the datasets' sizes per frame.

PandaPush-v0 with its default rig (front, side, wrist at 84×84: rgb, depth, label), the scripted pusher, the same
seeds for every variant. Replay re-renders the recorded dataset with that same rig (so a live run of the same actions
is the alternative it replaces), with ``workers=1`` (all in this process) and ``workers=2`` (a worker process
restores and renders while this one writes; "default_workers" says what ``workers=None`` picks for this dataset);
"rerender_no_dataset" is replay's restore-and-render alone, writing nothing, against "plain" (stepping and rendering
live, writing nothing); "record_<format>" steps live and records the dataset replay writes. Every variant is timed
end to end, from nothing to a closed env or a finished dataset (env construction, ffmpeg and worker start-up
included; this process has imported everything and made a GL context before, a worker process has not); the
variants run interleaved, ``--repeats`` times, and each one's best run is reported (on a shared machine the slower
runs measure other people's work). CPU seconds (this process and its children: ffmpeg, replay workers) are reported
beside wall seconds: they are what a variant costs when the machine is busy. Last, the per-frame costs behind
replay's speed, over the recorded frames: pybullet's full restore of a stored state, replay's restore of its poses,
and the ``env.step`` (physics, no rendering) it replaces.

    .venv/bin/python benchmarks/dataset_speed.py [--renderers tiny,gl] [--episodes 8] [--steps 50] [--repeats 3]
                                                 [--json out/dataset_speed.json]

Needs the datasets extra (pyarrow, h5py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from pixelrig.datasets import DatasetRecorder, replay
from pixelrig.datasets.replay import usable_cpus, worker_count
from pixelrig.experts.push import PushExpert
from pixelrig.wrappers.pixel_obs import PixelObs

ENV_ID = "pixelrig/PandaPush-v0"
FORMATS = ("lerobot", "robomimic")


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
    """CPU time of this process and its finished children (ffmpeg, replay workers): contention-proof, unlike wall
    time on a shared machine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(work: Callable[[], int]) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``work()`` (which returns the frames it made), and those frames."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    frames = work()
    return time.perf_counter() - wall, cpu_seconds() - cpu, frames


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


def restore_costs(renderer: str, source: Path, steps: int) -> dict[str, float]:
    """Milliseconds per frame, over the recorded frames of ``source``: pybullet's full restore of a stored state,
    replay's restore of its poses (:class:`~pixelrig.datasets.bullet_file.PoseRestorer`), and the step it stands in for
    (``env.step`` under the rig, which renders nothing: physics and the task's own Python)."""
    from pixelrig.datasets import open_dataset
    from pixelrig.datasets.bullet_file import PoseRestorer
    from pixelrig.envs.state import restore_bullet
    from pixelrig.snapshots import Snapshot, restore

    reader = open_dataset(source)
    snaps = [Snapshot.from_bytes(f.snapshot) for e in range(reader.num_episodes) for f in reader.frames(e)]
    reader.close()
    env = gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps)
    env.reset(seed=0)
    restore(env, snaps[0], rebuild=True)
    client = env.unwrapped.client
    poses = PoseRestorer(client)
    poses.check(snaps[0].env_state["physics"])
    physics = [s.env_state["physics"] for s in snaps]
    start = time.perf_counter()
    for data in physics:
        restore_bullet(client, data)
    full = (time.perf_counter() - start) / len(physics)
    start = time.perf_counter()
    for data in physics:
        poses.restore(data)
    fast = (time.perf_counter() - start) / len(physics)
    env.close()
    env = gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps)
    stepped, spent = 0, 0.0
    for seed in range(len(physics)):
        obs, _ = env.reset(seed=seed)
        policy, done = PushExpert(), False
        while not done and stepped < len(physics):
            action = policy(obs)
            begin = time.perf_counter()
            obs, _, terminated, truncated, _ = env.step(action)
            spent += time.perf_counter() - begin
            done, stepped = terminated or truncated, stepped + 1
        if stepped >= len(physics):
            break
    env.close()
    return {"pybullet_full_restore": round(full * 1e3, 3), "replay_pose_restore": round(fast * 1e3, 3),
            "env_step_without_rendering": round(spent / stepped * 1e3, 3), "pose_restore_in_use": bool(poses.fast)}


def bench(renderer: str, episodes: int, steps: int, repeats: int, scratch: Path) -> dict[str, Any]:
    def make() -> gym.Env:
        return PixelObs(gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps))

    def live(env_fn: Callable[[], gym.Env]) -> Callable[[], int]:
        def work() -> int:
            env = env_fn()
            try:
                return run(env, episodes)
            finally:
                env.close()  # a recorder finishes its dataset here
        return work

    sources = {"lerobot": scratch / "push", "robomimic": scratch / "push.hdf5"}
    probe = make()
    cams = probe.unwrapped.default_cameras()
    probe.close()

    def replaying(fmt: str, workers: int) -> Callable[[], int]:
        def work() -> int:
            result = replay(sources[fmt], scratch / f"replayed-{fmt}{sources[fmt].suffix}", cams, overwrite=True,
                            progress=False, workers=workers)
            if result.workers != workers:
                raise RuntimeError(f"replay used {result.workers} processes, {workers} were asked for")
            return result.frames
        return work

    def rerendering() -> int:
        """replay's restore and render (in this process) without writing a dataset: what plain stepping does,
        the physics step replaced by a restore (each episode's final state rendered too, as stepping does)."""
        from pixelrig.datasets import open_dataset
        from pixelrig.datasets.rerender import EpisodeEnd, SnapshotDrawer, episode_items

        reader = open_dataset(sources["robomimic"])
        drawer = SnapshotDrawer(lambda: PixelObs(gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps),
                                                 cams=cams, pixels_only=True), tuple(cams))
        try:
            return sum(not isinstance(item, EpisodeEnd) for e in range(reader.num_episodes)
                       for item in episode_items(reader, drawer, e, True, reader.info.state_shape))
        finally:
            drawer.close()
            reader.close()

    variants: dict[str, Callable[[], int]] = {"plain": live(make)}
    for fmt in FORMATS:
        variants[f"record_{fmt}"] = live(lambda fmt=fmt: DatasetRecorder(make(), sources[fmt], format=fmt,
                                                                          overwrite=True))
    variants["rerender_no_dataset"] = rerendering
    for fmt in FORMATS:
        variants[f"replay_{fmt}_workers1"] = replaying(fmt, 1)
        variants[f"replay_{fmt}_workers2"] = replaying(fmt, 2)
    wall: dict[str, list[float]] = {k: [] for k in variants}
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    frames = 0
    for _ in range(repeats):
        for name, work in variants.items():
            wall_s, cpu_s, n = timed(work)
            frames = n if name == "plain" else frames
            if n != frames:
                raise RuntimeError(f"{name} made {n} frames, plain stepping {frames}")
            wall[name].append(wall_s / n)
            cpu[name].append(cpu_s / n)
    best = {k: min(v) for k, v in wall.items()}  # the best run: slower ones measure the machine's other work
    best_cpu = {k: min(v) for k, v in cpu.items()}
    sizes_lr, sizes_rm = folder_bytes(sources["lerobot"]), hdf5_bytes(sources["robomimic"])
    replays = [f"replay_{fmt}_{w}" for fmt in FORMATS for w in ("workers1", "workers2")]
    return {
        "renderer": renderer, "episodes": episodes, "frames": frames, "repeats": repeats,
        "usable_cpus": usable_cpus(), "default_workers": worker_count(None, None, episodes, frames),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "frames_per_s_wall": {k: round(1.0 / v, 1) for k, v in best.items()},
        "cpu_ms_per_frame": {k: round(v * 1e3, 2) for k, v in best_cpu.items()},
        "rerender_speed_vs_plain_stepping_wall": round(best["plain"] / best["rerender_no_dataset"], 2),
        "rerender_cpu_vs_plain_stepping": round(best_cpu["plain"] / best_cpu["rerender_no_dataset"], 2),
        "replay_speed_vs_plain_stepping_wall": {k.removeprefix("replay_"): round(best["plain"] / best[k], 2)
                                                for k in replays},
        "replay_speed_vs_live_recording_wall": {k.removeprefix("replay_"): round(best[f"record_{k.split('_')[1]}"]
                                                                                 / best[k], 2) for k in replays},
        "replay_cpu_vs_live_recording": {k.removeprefix("replay_"): round(best_cpu[f"record_{k.split('_')[1]}"]
                                                                          / best_cpu[k], 2) for k in replays},
        "record_overhead_wall": {f: round(best[f"record_{f}"] / best["plain"] - 1.0, 2) for f in FORMATS},
        "record_overhead_cpu": {f: round(best_cpu[f"record_{f}"] / best_cpu["plain"] - 1.0, 2) for f in FORMATS},
        "restore_ms_per_frame": restore_costs(renderer, sources["robomimic"], steps),
        "lerobot_kb_per_frame": {k: round(v / frames / 1024, 1) for k, v in sorted(sizes_lr.items())},
        "robomimic_kb_per_frame": {k: round(v / frames / 1024, 1) for k, v in sizes_rm.items()},
        "lerobot_total_mb": round(sum(sizes_lr.values()) / 2**20, 2),
        "robomimic_total_mb": round(sizes_rm["file"] / 2**20, 2),
    }


def measure(renderers: list[str], episodes: int = 8, steps: int = 50, repeats: int = 3) -> list[dict[str, Any]]:
    """:func:`bench` for each renderer, in a scratch folder removed afterwards."""
    scratch = Path(tempfile.mkdtemp(prefix="pixelrig-dataset-bench-"))
    try:
        return [bench(renderer, episodes, steps, repeats, scratch) for renderer in renderers]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def format_datasets(rows: list[dict[str, Any]]) -> str:
    """The benchmark page's table: frames/s of each variant per renderer, replay's speed against a live recording of the
    same dataset, recording's overhead and the datasets' sizes."""
    head = ("| renderer | plain stepping | restore + render (vs plain) | recording LeRobot / robomimic | replay "
            "LeRobot / robomimic (vs recording it live) | replay, 2 processes (vs live) | recording overhead | KB "
            "per frame, LeRobot / robomimic |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        fps, vs_live = r["frames_per_s_wall"], r["replay_speed_vs_live_recording_wall"]
        over = r["record_overhead_wall"]
        kb_lr = sum(r["lerobot_kb_per_frame"].values())
        lines.append(
            f"| {r['renderer']} | {fps['plain']:.1f} | {fps['rerender_no_dataset']:.1f} "
            f"({r['rerender_speed_vs_plain_stepping_wall']:.2f}×) | {fps['record_lerobot']:.1f} / "
            f"{fps['record_robomimic']:.1f} | {fps['replay_lerobot_workers1']:.1f} "
            f"({vs_live['lerobot_workers1']:.2f}×) / {fps['replay_robomimic_workers1']:.1f} "
            f"({vs_live['robomimic_workers1']:.2f}×) | {vs_live['lerobot_workers2']:.2f}× / "
            f"{vs_live['robomimic_workers2']:.2f}× | {100 * over['lerobot']:+.0f}% / {100 * over['robomimic']:+.0f}% | "
            f"{kb_lr:.1f} / {r['robomimic_kb_per_frame']['file']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renderers", default="tiny,gl", help="backends, comma-separated (default: tiny,gl)")
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--steps", type=int, default=50, help="TimeLimit per episode (default: 50)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    results = measure(args.renderers.split(","), args.episodes, args.steps, args.repeats)
    for r in results:
        print(json.dumps(r, indent=1), flush=True)
    print(format_datasets(results))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0
