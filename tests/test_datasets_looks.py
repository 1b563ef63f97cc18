"""replay(..., looks=...): a recorded dataset re-rendered under new looks has the recording's physics bit for bit
(restored states, actions, rewards, snapshots) and other images; the same looks seed gives the same images, in this
process or in workers."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig.datasets as datasets
from pixelrig import Camera, DatasetRecorder, Lighting, PixelObs, Randomization
from pixelrig.datasets.bullet_file import pose_signature
from pixelrig.datasets.formats import open_dataset
from pixelrig.datasets.rerender import ReplayLooks, SnapshotDrawer

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')

CAM = Camera("front", width=64, height=64, fov=55.0, near=0.05, far=4.0, eye=(0.95, 0.0, 1.25),
             target=(0.5, 0.0, 0.63), modalities=("rgb", "depth"))
RECORDED = Randomization(textures={"cube": "procedural"}, distractors=2)
"""The recording's own looks: a textured cube and two distractors (which new looks hide)."""
LIGHT = Lighting(direction=(0.5, -0.4, 0.8), ambient=0.5, shadows=True)
"""The recording's light (kept by the dataset's env kwargs, and drawn again by a replay without new looks)."""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("looks") / "push.hdf5"
    env = DatasetRecorder(PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=RECORDED,
                                            lighting=LIGHT), cams=[CAM]),
                          path, format="robomimic", task="push", overwrite=True)
    for seed in range(2):
        env.reset(seed=seed)
        env.action_space.seed(seed)
        for _ in range(6):
            env.step(env.action_space.sample())
    env.close()
    return path


def _replayed(src: Path, dst: Path, looks, seed: int = 0, workers: int = 1) -> h5py.File:
    datasets.replay(src, dst, cams=[CAM], overwrite=True, progress=False, workers=workers, looks=looks,
                    looks_seed=seed)
    return h5py.File(dst, "r")


def test_replay_under_three_looks_keeps_the_physics_and_changes_the_images(recorded: Path, tmp_path: Path) -> None:
    runs = {name: _replayed(recorded, tmp_path / f"{name}.hdf5", looks)
            for name, looks in (("recorded", None), ("train", "train"), ("test-hard", "test-hard"),
                                ("light", Randomization(light_azimuth=(0, 90), light_elevation=(20, 30),
                                                        shadows=True)))}
    source = h5py.File(recorded, "r")
    try:
        for e in range(2):
            demo = f"data/demo_{e}"
            base = runs["recorded"][f"{demo}/obs/front_rgb"][()]
            np.testing.assert_array_equal(base, source[f"{demo}/obs/front_rgb"][()])  # the recording, redrawn
            for name, run in runs.items():
                for key in ("actions", "rewards", "dones", "states", "final_state"):
                    assert run[f"{demo}/{key}"][()].tobytes() == source[f"{demo}/{key}"][()].tobytes(), (name, key)
                if name != "recorded":
                    rgb = run[f"{demo}/obs/front_rgb"][()]
                    assert np.abs(rgb.astype(int) - base).mean() > 5, name
    finally:
        source.close()
        for run in runs.values():
            run.close()


def test_the_restored_physics_is_the_recordings_under_new_looks(recorded: Path) -> None:
    """Frame by frame, every recorded body's pose, velocity and link frames are what a replay without new looks
    restores, bit for bit, while the new looks add, hide and remove their own distractors around each restore."""
    reader = open_dataset(recorded)

    assert reader.info.env_kwargs["lighting"]["shadows"] is True  # the light is in the dataset

    def make_pixel(background=False) -> PixelObs:
        return PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny", randomize=RECORDED, lighting=LIGHT),
                        cams=[CAM], pixels_only=True, background=background)

    plain = SnapshotDrawer(make_pixel, (CAM,))
    looks = ReplayLooks.of("test-hard", 3)
    dressed = SnapshotDrawer(lambda: make_pixel(looks.background), (CAM,), looks)
    try:
        for e in range(2):
            for t, stored in enumerate(reader.frames(e)):
                images = []
                for drawer in (plain, dressed):
                    drawer.restore(stored.snapshot, t == 0, f"frame {t}", e)
                    images.append(drawer.pixel.render_rig()["front/rgb"])
                recorded_bodies = len(plain.pixel.unwrapped.body_names)
                a = pose_signature(plain.pixel.unwrapped.client)
                b = pose_signature(dressed.pixel.unwrapped.client)
                assert len(dressed.pixel.unwrapped.body_names) == recorded_bodies + 5  # test-hard adds 5
                assert repr(a) == repr(b[: len(a)])
                assert np.abs(images[0].astype(int) - images[1]).mean() > 5
    finally:
        plain.close()
        dressed.close()
        reader.close()


def test_the_same_looks_seed_gives_the_same_images_in_workers(recorded: Path, tmp_path: Path) -> None:
    one = _replayed(recorded, tmp_path / "a.hdf5", "train", seed=4)
    again = _replayed(recorded, tmp_path / "b.hdf5", "train", seed=4, workers=2)
    other = _replayed(recorded, tmp_path / "c.hdf5", "train", seed=5)
    try:
        for e in range(2):
            key = f"data/demo_{e}/obs/front_rgb"
            np.testing.assert_array_equal(one[key][()], again[key][()])
            assert not np.array_equal(one[key][()], other[key][()])
    finally:
        for f in (one, again, other):
            f.close()


def test_bad_looks_are_refused_before_anything_is_written(recorded: Path, tmp_path: Path) -> None:
    import re

    with pytest.raises(ValueError, match=re.escape("looks='summer' is not a looks preset; presets: ['train', "
                                                   "'test-hard']")):
        datasets.replay(recorded, tmp_path / "x.hdf5", cams=[CAM], progress=False, looks="summer")
    with pytest.raises(ValueError, match=re.escape("looks_seed=-1 must be a whole number >= 0")):
        datasets.replay(recorded, tmp_path / "x.hdf5", cams=[CAM], progress=False, looks="train", looks_seed=-1)
    assert not (tmp_path / "x.hdf5").exists()
