"""Train PPO on pixels with Stable-Baselines3 and plot the learning curve.

    .venv/bin/python examples/sb3_pixels.py --steps 400000 --envs 4 --out docs/sb3_cartpole_pixels.png

writes the curve (the README's figure) and, next to it, docs/sb3_cartpole_pixels.json: the curve's data, the run's
minutes, and 10 evaluation episodes of the trained policy (deterministic) and of random actions on the same seeds.

CartPole-v0 seen by a camera tracking the cart (48x48 RGB, 3 stacked frames so that velocities are visible), no
state vector: the policy must balance from pixels. One process per env (SB3's SubprocVecEnv over pixelrig envs).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import pixelrig
from pixelrig import Camera, PixelObs

# a tracking camera: it follows the cart's position, 1.6 m in front of it, so the pole stays centred and spans
# most of the 48x48 image (a rotation of -90 degrees about x looks along +y with image-down = -z)
CAMERA = Camera("track", width=48, height=48, fov=50.0, near=0.05, far=10.0, mount="cart", follow="position",
                offset=((0.0, -1.6, 0.45), (-0.7071068, 0.0, 0.0, 0.7071068)), modalities=("rgb",))
N_STACK = 3


def make_env(seed: int = 0):
    def _make() -> gym.Env:
        import pixelrig  # noqa: F401 (registers ids in the worker)

        return PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny"), cams=[CAMERA], pixels_only=True)

    return _make


def train_model(steps: int, n_envs: int, seed: int = 0, callbacks: list | None = None,
                batched: bool = False) -> tuple[Any, list[int], list[float]]:
    """Train (with SB3 ``callbacks`` added); returns (the PPO model, timesteps, mean episode return over the last
    20 episodes as training goes). ``batched``: every env in this process, their cameras drawn together
    (``pixelrig.integrations.sb3.make_sb3_vec``), instead of one process per env (SB3's SubprocVecEnv)."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import SubprocVecEnv, VecFrameStack, VecMonitor

    # one torch thread: the env workers need the other cores, and torch's spinning intra-op threads competing
    # with them made training 5x slower on 2 cores (measured: 4096 steps in 189 s with 2 threads, 34 s with 1)
    torch.set_num_threads(1)
    if batched:
        from pixelrig.integrations.sb3 import make_sb3_vec

        inner = make_sb3_vec("pixelrig/CartPole-v0", n_envs, cams=[CAMERA], pixels_only=True)
    else:
        inner = SubprocVecEnv([make_env(i) for i in range(n_envs)], start_method="spawn")
    venv = VecFrameStack(VecMonitor(inner), n_stack=N_STACK)
    curve_t, curve_r, returns = [], [], []

    class Curve(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    returns.append(info["episode"]["r"])
                    curve_t.append(self.num_timesteps)
                    curve_r.append(float(np.mean(returns[-20:])))
            return True

    model = PPO("MultiInputPolicy", venv, n_steps=128, batch_size=256, n_epochs=4, learning_rate=2.5e-4,
                clip_range=0.1, ent_coef=0.01, gamma=0.99, seed=seed, verbose=0)
    try:
        model.learn(total_timesteps=steps, callback=[Curve(), *(callbacks or [])])
    finally:
        venv.close()
    return model, curve_t, curve_r


def train(steps: int, n_envs: int, seed: int = 0) -> tuple[list[int], list[float]]:
    """Train; returns (timesteps, mean episode return over the last 20 episodes) as training goes."""
    _, curve_t, curve_r = train_model(steps, n_envs, seed)
    return curve_t, curve_r


def evaluate(model: Any | None, seeds: list[int]) -> list[float]:
    """The return of one episode per seed (``reset(seed=s)``), with the model's deterministic actions, or with
    uniformly random actions (drawn from a generator seeded with ``s``) when ``model`` is None."""
    from stable_baselines3.common.vec_env import DummyVecEnv, VecFrameStack

    venv = VecFrameStack(DummyVecEnv([make_env()]), n_stack=N_STACK)
    returns = []
    try:
        for seed in seeds:
            venv.seed(seed)
            obs, total, done = venv.reset(), 0.0, False
            rng = np.random.default_rng(seed)
            while not done:
                if model is None:
                    action = rng.uniform(-1.0, 1.0, (1, 1)).astype(np.float32)
                else:
                    action, _ = model.predict(obs, deterministic=True)
                obs, reward, dones, _ = venv.step(action)
                total, done = total + float(reward[0]), bool(dones[0])
            returns.append(total)
    finally:
        venv.close()
    return returns


def plot(t: list[int], r: list[float], path: Path, title: str) -> None:
    from pixelrig.tools.plot import line_chart

    line_chart({"PPO, pixels only": (t, r)}, path, title=title, x_label="env steps",
               y_label="mean return (last 20 episodes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--out", default="docs/sb3_cartpole_pixels.png")
    parser.add_argument("--batched", action="store_true",
                        help="every env in this process, cameras drawn together (gl), not a process per env")
    args = parser.parse_args()
    start = time.time()
    model, t, r = train_model(args.steps, args.envs, args.seed, batched=args.batched)
    minutes = (time.time() - start) / 60
    plot(t, r, Path(args.out),
         f"PPO (SB3) on pixelrig/CartPole-v0 from 48x48 pixels only, {minutes:.0f} min on 2 CPU cores")
    seeds = list(range(1000, 1000 + args.eval_episodes))
    trained, random = evaluate(model, seeds), evaluate(None, seeds)
    Path(args.out).with_suffix(".json").write_text(json.dumps({
        "command": f"examples/sb3_pixels.py --steps {args.steps} --envs {args.envs} --seed {args.seed}",
        "steps": args.steps, "envs": args.envs, "seed": args.seed, "minutes": minutes,
        "t": t, "mean_return": r,
        "eval_seeds": seeds, "eval_returns_deterministic": trained, "eval_returns_random": random,
    }))
    print(f"mean return (last 20) first {r[0] if r else None}, last {r[-1] if r else None}; "
          f"eval {np.mean(trained):.1f} vs random {np.mean(random):.1f}; {minutes:.1f} min -> {args.out}")


if __name__ == "__main__":
    pixelrig.register_envs()
    main()
