"""Ray RLlib on pixelrig pixel observations: PPO with env runners in other processes (or other machines).

    .venv/bin/python examples/rllib_pixels.py --iterations 5 --env-runners 2

The env comes from Ray's env registry (``pixelrig.integrations.rllib.env_creator``), so every env runner builds
its own pixelrig env in its own process (one EGL client per process holds by construction). On a multi-node
cluster, start Ray on each node (``ray start --head`` / ``ray start --address=HEAD:6379``) and pass
``--address auto``. For GPU rendering, add ``.env_runners(num_gpus_per_env_runner=...)`` and
``env_config={"renderer": "egl", "gpu": 0}``: Ray gives each runner its GPU through CUDA_VISIBLE_DEVICES, and
pixelrig maps that GPU to its EGL device before the plugin loads.
"""

from __future__ import annotations

import argparse

from pixelrig.integrations.rllib import ppo_config


def main() -> None:
    import ray

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: start a local Ray)")
    args = parser.parse_args()
    ray.init(address=args.address, include_dashboard=False)
    algo = ppo_config(env_runners=args.env_runners).build_algo()
    for i in range(args.iterations):
        result = algo.train()
        print(f"iteration {i + 1}: episode_return_mean={result['env_runners'].get('episode_return_mean')}")
    algo.stop()
    ray.shutdown()


if __name__ == "__main__":
    main()
