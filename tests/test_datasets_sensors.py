"""Datasets of sensor cameras: the recorded camera metadata keeps every sensor field (it reads back as the same
Camera), and depth without a reading (a noise model's invalid pixels, 0 or NaN) is stored as 0 mm, like the
background."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from pixelrig import Camera, PixelObs
from pixelrig.cameras.noise import SensorNoise
from pixelrig.datasets import DatasetRecorder, depth_to_mm, open_dataset

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')

CAM = Camera("front", eye=(0.0, -1.0, 0.5), target=(0.0, 0.0, 0.4), width=32, height=24, near=0.05, far=6.0,
             intrinsics=(30.0, 30.0, 15.0, 11.0), distortion=(-0.05, 0.0, 0.0, 0.0, 0.0), period=2, latency=1,
             noise=SensorNoise(depth_sigma=(0.001, 0.01), depth_range=(0.3, 2.0), invalid="nan", rgb_sigma=2.0),
             modalities=("rgb", "depth"))


def test_depth_without_a_reading_is_stored_as_zero() -> None:
    depth = np.array([[[0.0], [np.nan], [1.5]], [[6.0], [5.99], [0.0004]]], np.float32)
    assert depth_to_mm(depth, far=6.0)[..., 0].tolist() == [[0, 0, 1500], [0, 5990, 1]]


def test_recorded_metadata_keeps_the_sensor_fields(tmp_path: Path) -> None:
    """A robomimic recording of a camera with intrinsics, distortion, a period, a latency and NaN-invalid noise: its
    stored description reads back as the same Camera, and the stored depth is the observation's in millimetres
    (NaN read as 0, like the sky)."""
    path = tmp_path / "cart.hdf5"
    env = DatasetRecorder(PixelObs(gym.make("pixelrig/CartPole-v0", renderer="tiny", max_episode_steps=5),
                                   cams=[CAM]), path, format="robomimic", task="balance")
    seen = []
    try:
        obs, _ = env.reset(seed=0)
        seen.append(obs)
        for _ in range(5):
            obs, *_ = env.step(np.ones(1, np.float32))
            seen.append(obs)
    finally:
        env.close()
    reader = open_dataset(path)
    try:
        assert reader.info.camera("front") == CAM
    finally:
        reader.close()
    with h5py.File(path, "r") as f:
        meta = json.loads(f["data"].attrs["env_args"])["pixelrig"]
        assert meta["cameras"][0]["noise"]["invalid"] == "nan" and meta["cameras"][0]["latency"] == 1
        stored = f["data/demo_0/obs/front_depth"][()]
    assert np.isnan(seen[0]["front/depth"]).any()  # the sky is out of range: NaN
    for t in range(5):
        np.testing.assert_array_equal(stored[t], depth_to_mm(seen[t]["front/depth"], CAM.far))
    assert (stored[0][np.isnan(seen[0]["front/depth"])] == 0).all()
