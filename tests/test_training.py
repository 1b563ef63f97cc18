"""Training on pixel observations: SB3 PPO end to end (a few thousand steps, CPU, TinyRenderer) and one Ray
RLlib PPO iteration with two env runners, whose processes also ship a snapshot back bit-exactly."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, Snapshot

CAM = Camera("front", width=48, height=48, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth"))


def test_sb3_ppo_multi_input_policy_on_a_pixel_dict(tmp_path: Path) -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny"), cams=[CAM])])
    model = PPO("MultiInputPolicy", venv, n_steps=512, batch_size=128, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    extractor = model.policy.features_extractor
    assert type(extractor.extractors["front/rgb"]).__name__ == "NatureCNN"  # the rgb image went through a CNN
    model.save(tmp_path / "ppo")
    loaded = PPO.load(tmp_path / "ppo", env=venv)
    obs = venv.reset()
    action, _ = loaded.predict(obs, deterministic=True)
    assert action.shape == (1, 1) and np.all(np.abs(action) <= 1)
    venv.close()


def test_sb3_on_make_vec_workers() -> None:
    """make_vec's factories are picklable: SB3's SubprocVecEnv (spawn) runs them in worker processes."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import SubprocVecEnv

    from pixelrig.vector import EnvFactory

    factories = [EnvFactory("pixelrig/CartPole-v0", cams=(CAM,), renderer="tiny", worker=i) for i in range(2)]
    venv = SubprocVecEnv(factories, start_method="spawn")
    model = PPO("MultiInputPolicy", venv, n_steps=128, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    venv.close()


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_rllib_ppo_iteration_with_two_env_runners(local_ray) -> None:
    from pixelrig.integrations.rllib import ppo_config

    config = ppo_config({"renderer": "tiny", "cams": [{"name": "front", "width": 32, "height": 32,
                                                       "eye": (0.0, -2.6, 0.45), "target": (0.0, 0.0, 0.35),
                                                       "modalities": ("rgb", "depth")}]},
                        env_runners=2, batch=256)
    algo = config.build_algo()
    try:
        spaces = algo.env_runner_group.foreach_env_runner(lambda runner: str(runner.env.single_observation_space),
                                                          local_env_runner=False)
        assert len(spaces) == 2 and all("front/rgb" in s and "front/depth" in s for s in spaces)
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
    finally:
        algo.stop()


def test_snapshot_bytes_travel_between_ray_processes(local_ray) -> None:
    """A Ray worker runs a pixel env, ships its snapshot as bytes; the driver restores it into a fresh env and
    the next step matches the worker's, pixels included."""
    ray = local_ray

    @ray.remote
    def run_remotely(seed: int) -> tuple[bytes, list, dict, float]:
        import gymnasium as gym
        import numpy as np

        import pixelrig

        env = pixelrig.PixelObs(gym.make("pixelrig/PandaPush-v0"), cams=[
            {"name": "front", "eye": (1.0, 0.0, 1.2), "target": (0.5, 0.0, 0.6), "width": 32, "height": 32,
             "modalities": ("rgb", "depth", "label")}])
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(20):
            env.step(rng.uniform(-1, 1, 3).astype(np.float32))
        blob = pixelrig.snapshot(env).to_bytes()
        obs, reward, *_ = env.step(np.array([0.5, -0.2, 0.1], np.float32))
        return blob, sorted(obs), {k: v.tobytes() for k, v in obs.items()}, reward

    blob, keys, remote_obs, remote_reward = ray.get(run_remotely.remote(3))
    env = PixelObs(gym.make("pixelrig/PandaPush-v0"), cams=[
        {"name": "front", "eye": (1.0, 0.0, 1.2), "target": (0.5, 0.0, 0.6), "width": 32, "height": 32,
         "modalities": ("rgb", "depth", "label")}])
    try:
        pixelrig.restore(env, Snapshot.from_bytes(blob))
        obs, reward, *_ = env.step(np.array([0.5, -0.2, 0.1], np.float32))
        assert sorted(obs) == keys and reward == remote_reward
        assert {k: v.tobytes() for k, v in obs.items()} == remote_obs
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.learning
def test_ppo_learns_cartpole_from_pixels_only(tmp_path: Path) -> None:
    """Slow (about 10 minutes on 2 CPU cores): PPO from 48x48 RGB alone (a camera tracking the cart, 3 stacked
    frames) raises CartPole's mean return several-fold; examples/sb3_pixels.py draws the README's curve."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from sb3_pixels import train

    t, r = train(200_000, 4)
    assert max(r) > 3 * r[0], (r[0], max(r))
