"""PixelObs(background=...): the background pixels (label -1, and background_bodies) show an image, a folder's
image, a video's frame (one per step, looping) or a procedural image, drawn per episode from PixelObs's own generator;
everything else (the other pixels, depth, labels, the simulation, the env's RNG) is unchanged; snapshots carry it;
bad sources are refused naming the fix."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

from pixelrig import Camera, PixelObs, restore, snapshot
from pixelrig.render.procedural import procedural_image

CAMS = [Camera("view", width=64, height=48, eye=(1.3, -0.9, 1.2), target=(0.4, 0.0, 0.55),
               modalities=("rgb", "depth", "label"))]
"""A camera that sees the sky, the ground, the table and the robot."""


def _video(path: Path, frames: int = 6) -> np.ndarray:
    import imageio.v3 as iio

    video = np.zeros((frames, 32, 48, 3), np.uint8)  # sides that are multiples of 16: ffmpeg keeps them
    for i in range(frames):
        video[i, :, 6 * i:6 * i + 6] = (255, 40 * i, 0)
        video[i, ..., 2] = 30 * i
    iio.imwrite(path, video, **({"fps": 10} if path.suffix == ".mp4" else {}))
    return video


def _env(**kwargs) -> PixelObs:
    return PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny"), cams=CAMS, **kwargs)


def test_background_fills_the_background_pixels_only() -> None:
    image = procedural_image("checkers", 5, (48, 64))
    plain, filled = _env(), _env(background=image)
    try:
        a, _ = plain.reset(seed=0)
        b, _ = filled.reset(seed=0)
        sky = a["view/label"][..., 0] == -1
        assert 0.05 < sky.mean() < 0.6
        np.testing.assert_array_equal(b["view/rgb"][sky], image[sky])
        np.testing.assert_array_equal(b["view/rgb"][~sky], a["view/rgb"][~sky])
        for key in ("view/depth", "view/label", "state"):
            np.testing.assert_array_equal(a[key], b[key])
        for _ in range(5):
            action = filled.action_space.sample()
            a, b = plain.step(action)[0], filled.step(action)[0]
            np.testing.assert_array_equal(a["state"], b["state"])
        assert plain.unwrapped.np_random.bit_generator.state == filled.unwrapped.np_random.bit_generator.state
    finally:
        plain.close()
        filled.close()


def test_background_bodies_are_filled_too_and_only_their_pixels() -> None:
    plain, filled = _env(), _env(background="marble", background_bodies=("ground", "tab*"))
    try:
        a, _ = plain.reset(seed=1)
        b, _ = filled.reset(seed=1)
        names = filled.get_wrapper_attr("label_names")
        covered = np.isin(a["view/label"][..., 0], [-1] + [k for k, v in names.items() if v in ("ground", "table")])
        assert covered.mean() > 0.3 and (~covered).mean() > 0.03  # the Panda, the cube and the target stay
        np.testing.assert_array_equal(b["view/rgb"][~covered], a["view/rgb"][~covered])
        assert np.abs(b["view/rgb"][covered].astype(int) - a["view/rgb"][covered]).mean() > 20
    finally:
        plain.close()
        filled.close()


def test_a_video_plays_one_frame_per_step_looping_from_a_seeded_start(tmp_path: Path) -> None:
    video = _video(tmp_path / "clip.mp4")
    env = _env(background=str(tmp_path / "clip.mp4"))
    try:
        obs, _ = env.reset(seed=3)
        sky = obs["view/label"][..., 0] == -1
        start = env.background.choice[0]
        seen = [obs["view/rgb"]]
        for _ in range(len(video) + 2):
            seen.append(env.step(np.zeros(3))[0]["view/rgb"])
        frames = env.background.video  # as read back (mp4 is lossy)
        assert np.abs(frames.astype(int) - video).mean() < 8
        for t, rgb in enumerate(seen):
            expected = cv2.resize(frames[(start + t) % len(frames)], (64, 48), interpolation=cv2.INTER_LINEAR)
            np.testing.assert_array_equal(rgb[sky], expected[sky], err_msg=f"step {t}")
        np.testing.assert_array_equal(seen[1][sky], seen[1 + len(frames)][sky])  # it loops
        assert not np.array_equal(seen[1][sky], seen[2][sky])
        env.reset(seed=3)
        assert env.background.choice[0] == start  # the same seed, the same start
    finally:
        env.close()


def test_a_folder_gives_an_image_per_episode_from_the_wrappers_own_generator(tmp_path: Path) -> None:
    for i in range(4):
        Image.fromarray(procedural_image("gradient", i, (30, 40))).save(tmp_path / f"{i}.png")
    env = _env(background=tmp_path)
    try:
        picks = []
        for seed in (0, 1, 2, 3, 0):
            env.reset(seed=seed)
            picks.append(env.background.choice[0])
        assert picks[0] == picks[-1] and len(set(picks)) > 1
        state = env.background.rng.bit_generator.state
        env.reset()  # unseeded: the wrapper's generator goes on
        assert env.background.rng.bit_generator.state != state
    finally:
        env.close()


def test_a_snapshot_carries_the_background(tmp_path: Path) -> None:
    _video(tmp_path / "clip.gif")
    env = _env(background=str(tmp_path / "clip.gif"))
    other = _env(background=str(tmp_path / "clip.gif"))
    try:
        env.reset(seed=5)
        for _ in range(3):
            env.step(np.zeros(3))
        snap = snapshot(env)
        expected = [env.step(np.full(3, 0.2))[0]["view/rgb"] for _ in range(3)]
        other.reset(seed=9)
        restore(other, snap)
        got = [other.step(np.full(3, 0.2))[0]["view/rgb"] for _ in range(3)]
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b)
    finally:
        env.close()
        other.close()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"background": "clouds"}, "PixelObs: background='clouds' is neither a folder, an image (.png, .jpg, .jpeg, "
                               ".bmp), a video (.mp4"),
    ({"background": 3}, "PixelObs: background=3 must be an image array, the path of an image"),
    ({"background_bodies": ("ground",)}, "PixelObs: background_bodies=('ground',) needs background=...: give an "
                                         "image, a folder, a video or 'procedural'"),
    ({"background": "noise", "background_bodies": ("grund",)}, "PixelObs: background_bodies names 'grund', which is "
                                                               "no body here"),
])
def test_bad_backgrounds_are_refused(kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        _env(**kwargs)


def test_an_unreadable_video_or_an_empty_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "broken.mp4").write_bytes(b"this is not a video")
    with pytest.raises(ValueError, match=re.escape(f"PixelObs: cannot read the video {str(tmp_path / 'broken.mp4')!r}")
                       ) as err:
        _env(background=tmp_path / "broken.mp4")
    assert "give a video imageio reads (mp4 needs imageio-ffmpeg)" in str(err.value)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=re.escape("holds no .png/.jpg/.jpeg/.bmp files: put images there")):
        _env(background=empty)
