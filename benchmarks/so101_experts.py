"""Each SO-101 expert's success rate and mean episode length over a range of seeds (not a CI test):

    python benchmarks/so101_experts.py pixelrig/SO101Lift-v0 100 600

prints one JSON line: the env id, the seed range, successes, mean length, the first failed seeds with the expert's
phase when the episode ended, and the wall time."""

import json
import sys
import time

import gymnasium as gym
import numpy as np

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig.experts import EXPERTS


def main(env_id: str, low: int, high: int) -> dict:
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
            "mean_len": round(float(np.mean(lengths)), 2), "failed": failed[:20],
            "s": round(time.monotonic() - start, 1)}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))))
