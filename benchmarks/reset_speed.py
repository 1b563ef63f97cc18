"""Reset time per env: the fast path (the kept just-built world put back) against a rebuild from nothing (the
path every reset took before), with and without the default 3-camera PixelObs rig, and raw pybullet measured in
the same run: ``resetSimulation`` plus loading the same files (what a rebuild cannot go below) and
``restoreState`` of an in-memory state (what the fast path cannot go below).

    .venv/bin/python benchmarks/reset_speed.py [--envs pixelrig/PandaPush-v0,...] [--resets 50]
        [--renderer gl] [--out reset_speed.json]

Each figure is the median over ``--resets`` resets (seeds 0, 1, ...), each after one step, so that every reset
has an episode to undo. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import gymnasium as gym
import pybullet as p
import pybullet_data

import pixelrig

DEFAULT_ENVS = ("pixelrig/PandaPush-v0", "pixelrig/PandaLift-v0", "pixelrig/PandaStack-v0", "pixelrig/CartPole-v0")
PANDA_FILES = [("plane.urdf", (0, 0, 0), False), ("@table/table.urdf", (0.5, 0, 0), True),
               ("@franka_panda/panda.urdf", (0, 0, 0.625), True)]
RAW_WORLDS = {
    "pixelrig/PandaPush-v0": [*PANDA_FILES, ("cube_small.urdf", (0.5, 0, 0.65), False)],
    "pixelrig/PandaLift-v0": [*PANDA_FILES, ("cube_small.urdf", (0.5, 0, 0.65), False)],
    "pixelrig/PandaStack-v0": [*PANDA_FILES, ("cube_small.urdf", (0.5, -0.1, 0.65), False),
                               ("cube_small.urdf", (0.5, 0.1, 0.65), False)],
    "pixelrig/CartPole-v0": [("cartpole.urdf", (0, 0, 0), True)],
}
"""The files each env's world loads (pybullet_data; "@": at the env's level of detail, as ``model_file`` gives
them), for the raw pybullet figures."""


def median_ms(times: list[float]) -> float:
    return round(statistics.median(times) * 1e3, 3)


def env_resets(env_id: str, resets: int, fast: bool, renderer: str | None) -> float:
    """Median reset time (ms) of ``env_id`` (with the default rig when ``renderer`` is given)."""
    env: gym.Env = gym.make(env_id, **({"renderer": renderer} if renderer else {}))
    if renderer:
        env = pixelrig.PixelObs(env)
    try:
        env.unwrapped.fast_reset = fast
        env.reset(seed=10_000)  # warm: files cached, the rig bound
        times = []
        for seed in range(resets):
            env.step(env.action_space.sample())
            start = time.perf_counter()
            env.reset(seed=seed)
            times.append(time.perf_counter() - start)
        return median_ms(times)
    finally:
        env.close()


def raw_resets(env_id: str, resets: int) -> dict[str, float]:
    """Raw pybullet in one DIRECT client: resetSimulation + loading the env's files; and restoreState of a saved
    state."""
    env = gym.make(env_id)
    files = [(env.unwrapped.model_file(name[1:]) if name.startswith("@") else name, pos, fixed)
             for name, pos, fixed in RAW_WORLDS[env_id]]
    env.close()
    c = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=c)

        def build() -> None:
            p.resetSimulation(physicsClientId=c)
            p.setPhysicsEngineParameter(deterministicOverlappingPairs=1, physicsClientId=c)
            for name, pos, fixed in files:
                p.loadURDF(name, pos, useFixedBase=fixed, physicsClientId=c)

        build()
        rebuild = []
        for _ in range(resets):
            start = time.perf_counter()
            build()
            rebuild.append(time.perf_counter() - start)
        state = p.saveState(physicsClientId=c)
        restore = []
        for _ in range(resets):
            p.stepSimulation(physicsClientId=c)
            start = time.perf_counter()
            p.restoreState(stateId=state, physicsClientId=c)
            restore.append(time.perf_counter() - start)
        return {"raw_rebuild_ms": median_ms(rebuild), "raw_restore_ms": median_ms(restore)}
    finally:
        p.disconnect(physicsClientId=c)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", default=",".join(DEFAULT_ENVS))
    parser.add_argument("--resets", type=int, default=50)
    parser.add_argument("--renderer", default="gl", help="the rig's renderer for the 'with cameras' figures")
    parser.add_argument("--out", default="reset_speed.json")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for env_id in args.envs.split(","):
        row: dict[str, Any] = {"env": env_id}
        if env_id in RAW_WORLDS:
            row.update(raw_resets(env_id, args.resets))
        for cams, renderer in (("", None), ("_rig", args.renderer)):
            row[f"rebuild{cams}_ms"] = env_resets(env_id, args.resets, False, renderer)
            row[f"fast{cams}_ms"] = env_resets(env_id, args.resets, True, renderer)
            row[f"speedup{cams}"] = round(row[f"rebuild{cams}_ms"] / row[f"fast{cams}_ms"], 1)
        if "raw_rebuild_ms" in row:
            row["fast_vs_raw_rebuild"] = round(row["fast_ms"] / row["raw_rebuild_ms"], 3)
            row["fast_vs_raw_restore"] = round(row["fast_ms"] / row["raw_restore_ms"], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    header = ("env", "raw_rebuild_ms", "raw_restore_ms", "rebuild_ms", "fast_ms", "speedup", "rebuild_rig_ms",
              "fast_rig_ms", "speedup_rig")
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row.get(k, "-")) for k in header))
    with open(args.out, "w") as f:
        json.dump({"resets": args.resets, "renderer": args.renderer, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
