"""Ray RLlib PPO on pixels: env runners in other processes, or on other machines, each stepping a batched
pixelrig vector env (every env's cameras drawn in one gl pass), and a CNN per image.

    .venv/bin/python examples/rllib_pixels.py --steps 50000 --env-runners 1 --envs-per-runner 8

CartPole-v0 seen by a camera tracking the cart (48x48 RGB, 3 frames stacked along the channels), no state vector:
the policy must balance from pixels; the run ends with 10 evaluation episodes of the trained policy (deterministic
actions) and of random actions on the same seeds. ``--out FILE.json`` writes the learning curve and both.

On a cluster, start Ray on every node, then run this on the head with ``--address auto``::

    ray start --head --port 6379 --num-cpus 8              # the head node (the learner runs in this script)
    ray start --address HEAD_IP:6379 --num-cpus 16 --num-gpus 2   # each other node
    python examples/rllib_pixels.py --address auto --env-runners 16 --envs-per-runner 16 --gpus-per-runner 0.125

Ray places the runners over the nodes' CPUs (and GPUs). A runner given a GPU (``--gpus-per-runner``: Ray sets its
``CUDA_VISIBLE_DEVICES``) draws with gl on that GPU's EGL device, which pixelrig finds from the CUDA device
(:mod:`pixelrig.render.egl_devices`); without GPUs, gl runs on Mesa's llvmpipe, or tiny where gl gets no context.
A runner that dies (a preempted node, a killed process) is restarted by RLlib and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from pixelrig.integrations.rllib import TRACKING_CAMERA, env_creator, ppo_config

N_STACK = 3
ENV_CONFIG = {"cams": [TRACKING_CAMERA], "frame_stack": N_STACK}


def build(env_runners: int = 1, envs_per_runner: int = 8, seed: int = 0, gpus_per_runner: float = 0.0,
          renderer: str | None = None) -> Any:
    """The PPO algorithm (``ppo_config``'s defaults: 64 steps per env per iteration, minibatches of 256, 4 epochs)
    on CartPole-v0 from the tracking camera's pixels. The learner runs in this process, on one torch thread."""
    import torch

    # one thread: the runners need the other cores, and torch's spinning intra-op threads made the learner's
    # updates about 5x slower on 2 shared cores (as examples/sb3_pixels.py measured for SB3)
    torch.set_num_threads(1)
    env_config = dict(ENV_CONFIG, **({"renderer": renderer} if renderer else {}))
    config = ppo_config(env_config, env_runners=env_runners, envs_per_runner=envs_per_runner).debugging(seed=seed)
    if gpus_per_runner:
        config = config.env_runners(num_gpus_per_env_runner=gpus_per_runner)
    return config.build_algo()


def train(algo: Any, steps: int, log: Any = print) -> tuple[list[int], list[float]]:
    """Train until ``steps`` env steps are sampled; returns (env steps, mean return of RLlib's recent episodes)
    after each iteration."""
    curve_t: list[int] = []
    curve_r: list[float] = []
    start = time.monotonic()
    while not curve_t or curve_t[-1] < steps:
        runners = algo.train()["env_runners"]
        curve_t.append(int(runners["num_env_steps_sampled_lifetime"]))
        curve_r.append(float(runners.get("episode_return_mean", np.nan)))
        if log is not None:
            log(f"{curve_t[-1]:>7} steps, {time.monotonic() - start:5.0f} s: mean return {curve_r[-1]:.1f}")
    return curve_t, curve_r


def evaluate(module: Any | None, seeds: list[int], renderer: str | None = None) -> list[float]:
    """The return of one episode per seed (``reset(seed=s)``), with the module's deterministic actions, or with
    uniformly random actions (drawn from a generator seeded with ``s``) when ``module`` is None; on this process's
    env (the creator's, one env)."""
    import torch

    env_config = dict(ENV_CONFIG, num_envs=1, **({"renderer": renderer} if renderer else {}))
    venv = env_creator(env_config)
    returns = []
    try:
        for seed in seeds:
            obs, _ = venv.reset(seed=seed)
            rng = np.random.default_rng(seed)
            total, done = 0.0, False
            while not done:
                if module is None:
                    action = rng.uniform(-1.0, 1.0, (1, 1)).astype(np.float32)
                else:
                    with torch.no_grad():
                        out = module.forward_inference({"obs": {k: torch.from_numpy(v) for k, v in obs.items()}})
                    dist = module.get_inference_action_dist_cls().from_logits(out["action_dist_inputs"])
                    action = np.clip(dist.to_deterministic().sample().numpy(), -1.0, 1.0).astype(np.float32)
                obs, reward, terminated, truncated, _ = venv.step(action)
                total, done = total + float(reward[0]), bool(terminated[0] or truncated[0])
            returns.append(total)
    finally:
        venv.close()
    return returns


def main() -> None:
    import ray

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=50_000, help="env steps to train for")
    parser.add_argument("--env-runners", type=int, default=1)
    parser.add_argument("--envs-per-runner", type=int, default=8)
    parser.add_argument("--gpus-per-runner", type=float, default=0.0,
                        help="GPUs per env runner (num_gpus_per_env_runner): gl draws on the runner's GPU")
    parser.add_argument("--renderer", default=None, help="default: gl where it gets a context, else tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--address", default=None, help="a Ray cluster's address ('auto': the one this node is in; "
                        "default: start Ray here)")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of the Ray started here (no --address)")
    parser.add_argument("--out", default=None, help="write the curve and the evaluation here (JSON)")
    args = parser.parse_args()
    if args.address:
        ray.init(address=args.address)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False)
    start = time.monotonic()
    algo = build(args.env_runners, args.envs_per_runner, args.seed, args.gpus_per_runner, args.renderer)
    try:
        t, r = train(algo, args.steps)
        minutes = (time.monotonic() - start) / 60
        seeds = list(range(1000, 1000 + args.eval_episodes))
        trained = evaluate(algo.get_module(), seeds, args.renderer)
    finally:
        algo.stop()
        ray.shutdown()
    random = evaluate(None, seeds, args.renderer)
    print(f"mean return first {r[0]:.1f}, last {r[-1]:.1f}; eval {np.mean(trained):.1f} vs random "
          f"{np.mean(random):.1f}; {minutes:.1f} min")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "command": f"examples/rllib_pixels.py --steps {args.steps} --env-runners {args.env_runners} "
                       f"--envs-per-runner {args.envs_per_runner} --seed {args.seed}",
            "minutes": minutes, "t": t, "mean_return": r, "eval_seeds": seeds,
            "eval_returns_deterministic": trained, "eval_returns_random": random}))


if __name__ == "__main__":
    main()
