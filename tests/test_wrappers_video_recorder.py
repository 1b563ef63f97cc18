"""Video export: streamed mp4/gif files that read back with the right frame count, size and fps; one file per
episode with predictable names; complete after close() and after interpreter exit; Gymnasium's RecordVideo."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import imageio_ffmpeg
import numpy as np
import pytest

from pixelrig import Camera, PixelObs, VideoRecorder
from pixelrig.display.video import VideoStream
from pixelrig.wrappers.video_recorder import capped_cubic_video_schedule

from .colorings import mosaic_panes


def frames_of(path: Path) -> list[np.ndarray]:
    return list(iio.imiter(path, plugin="FFMPEG" if path.suffix == ".mp4" else "pillow"))


def run_episodes(env: gym.Env, episodes: int, max_steps: int = 10_000,
                 rendered: list[list[np.ndarray]] | None = None) -> list[int]:
    """Run whole episodes (zero actions); returns each episode's step count.

    Args:
        env: the env (an env made with ``render_mode="rgb_array"`` when ``rendered`` is given).
        episodes: how many episodes, seeded 0, 1, ...
        max_steps: the most steps of one episode.
        rendered: when given, gets per episode the env's own ``render()`` after the reset and after every step.
    """
    lengths = []
    for e in range(episodes):
        env.reset(seed=e)
        frames = [env.render()] if rendered is not None else []
        steps, done = 0, False
        while not done and steps < max_steps:
            _, _, terminated, truncated, _ = env.step(np.zeros(env.action_space.shape, np.float32))
            steps, done = steps + 1, terminated or truncated
            if rendered is not None:
                frames.append(env.render())
        lengths.append(steps)
        if rendered is not None:
            rendered.append(frames)
    return lengths


def assert_frames_follow(video: list[np.ndarray], rendered: list[np.ndarray], what: str) -> None:
    """Each frame of an mp4 is the frame rendered at its step, up to H.264's loss, and not an earlier one.

    Measured on CartPole's 320x240 render camera (2 episodes of 30 steps, libx264 at quality 8, yuv420p): the mean
    absolute difference of a decoded frame from its own rendered frame is 1.06-1.09 grey levels (the colour edges
    lose most, to the halved chroma resolution), so 2.0 bounds it. The pole moves little in a step (frames 0 and 30
    differ by 0.8-1.0 on average), so a video frozen at the reset frame would be within that bound too: on the
    pixels where a rendered frame differs from the reset frame by more than 40 levels (1 to 426 of them here), the
    decoded frame must be nearer its own frame than the reset frame (measured: 5.9-56.5 from its own, 112-172 from
    the reset frame; a frozen video: 160-172 from its own, 4-15 from the reset frame).
    """
    assert len(video) == len(rendered), f"{what}: {len(video)} frames, {len(rendered)} rendered"
    for k, (got, want) in enumerate(zip(video, rendered, strict=True)):
        diff = np.abs(got.astype(np.float64) - want)
        assert diff.mean() < 2.0, f"{what}, frame {k}: mean difference {diff.mean():.2f} from the rendered frame"
        changed = np.abs(want.astype(np.int64) - rendered[0]).max(axis=-1) > 40
        if changed.any():
            own = diff[changed].mean()
            first = np.abs(got.astype(np.float64) - rendered[0])[changed].mean()
            assert own < first, (f"{what}, frame {k}: where the scene moved, {own:.1f} from its own step's frame, "
                                 f"{first:.1f} from the reset frame")
    moved = (np.abs(rendered[-1].astype(np.int64) - rendered[0]).max(axis=-1) > 40).sum()
    assert moved >= 100, f"{what}: the scene hardly moved ({moved} pixels): a frozen video would go unseen"


def test_given_no_camera_the_video_is_what_render_draws_at_its_size(tmp_path: Path) -> None:
    """The recorder's default view is the env's render camera at ``render()``'s size (``render_view()``, docs/api.md):
    an env made with ``render_width=160, render_height=96`` gives a 160x96 video of the frames ``render()``
    returns."""
    env = VideoRecorder(gym.make("pixelrig/CartPole-v0", max_episode_steps=8, render_mode="rgb_array",
                                 render_width=160, render_height=96), tmp_path / "videos", fps=25)
    view = env.unwrapped.render_view()
    assert (view.width, view.height, view.modalities) == (160, 96, ("rgb",))
    rendered: list[list[np.ndarray]] = []
    run_episodes(env, 1, rendered=rendered)
    env.close()
    frames = frames_of(tmp_path / "videos" / "rl-video-episode-0.mp4")
    assert rendered[0][0].shape == frames[0].shape == (96, 160, 3)
    assert all(np.abs(got.astype(float) - want).mean() < 2.0 for got, want in zip(frames, rendered[0], strict=True))


def test_one_mp4_per_episode_reads_back(tmp_path: Path) -> None:
    """The files hold the frames the env rendered, step by step (its own render(), which the recorder does not
    use, is the reference)."""
    env = VideoRecorder(gym.make("pixelrig/CartPole-v0", max_episode_steps=30, render_mode="rgb_array"),
                        tmp_path / "videos", episode_trigger=lambda n: n in (0, 2), fps=25)
    rendered: list[list[np.ndarray]] = []
    lengths = run_episodes(env, 3, rendered=rendered)
    env.close()
    names = sorted(p.name for p in (tmp_path / "videos").iterdir())
    assert names == ["rl-video-episode-0.mp4", "rl-video-episode-2.mp4"]
    for episode in (0, 2):
        path = tmp_path / "videos" / f"rl-video-episode-{episode}.mp4"
        frames = frames_of(path)
        assert len(frames) == lengths[episode] + 1  # the reset frame and one per step
        assert frames[0].shape == (240, 320, 3)  # the env's render camera
        assert iio.immeta(path, plugin="FFMPEG")["fps"] == 25
        assert np.mean(frames[-1]) > 30
        assert_frames_follow(frames, rendered[episode], path.name)


def test_gif_of_the_tiled_rig(tmp_path: Path) -> None:
    """The gif shows each step's rig, tiled: its rgb, depth colours and label colours, compared pane by pane with
    the colourings written again in the tests (tests/colorings.py) from the raw observations."""
    pixels = PixelObs(gym.make("pixelrig/CartPole-v0"))
    far = {cam.name: cam.far for cam in pixels.rig.cameras}
    env = VideoRecorder(pixels, tmp_path, video_format="gif", fps=10, name_prefix="rig")
    seen = [env.reset(seed=0)[0]]
    for _ in range(4):
        seen.append(env.step(np.zeros(1, np.float32))[0])
    env.close()
    frames = iio.imread(tmp_path / "rig-episode-0.gif", index=None)
    assert frames.shape == (5, 84, 3 * 84, 3)  # one camera: rgb | depth | label
    assert iio.immeta(tmp_path / "rig-episode-0.gif")["duration"] == 100
    for k, (frame, obs) in enumerate(zip(frames, seen, strict=True)):
        errors = mosaic_panes(frame, obs, far)
        # The gif's rgb8 pixels keep 8 levels of red and green and 4 of blue (steps of 36 and 85): up to 18 and 43
        # levels off. Measured mean differences: rgb 17.3, depth 6.9, labels 4.4; a depth pane showing the rgb
        # image instead is 196 off.
        assert max(errors.values()) < 25.0, f"frame {k}: {errors}"


def test_single_camera_by_name(tmp_path: Path) -> None:
    env = VideoRecorder(PixelObs(gym.make("pixelrig/PandaPush-v0")), tmp_path, camera="wrist")
    env.reset(seed=0)
    env.step(np.zeros(3, np.float32))
    env.close()
    frames = frames_of(tmp_path / "rl-video-episode-0.mp4")
    assert len(frames) == 2 and frames[0].shape == (84, 84, 3)


def test_file_is_complete_after_interpreter_exit(tmp_path: Path) -> None:
    """No close(): the recorder's finaliser still finishes the file when the interpreter exits."""
    code = (
        "import gymnasium as gym, numpy as np, pixelrig, sys\n"
        f"env = pixelrig.VideoRecorder(gym.make('pixelrig/CartPole-v0'), {str(tmp_path)!r})\n"
        "env.reset(seed=0)\n"
        "for _ in range(7): env.step(np.zeros(1, np.float32))\n"
        "sys.exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    assert len(frames_of(tmp_path / "rl-video-episode-0.mp4")) == 8


def _rss_bytes() -> int:
    """This process's resident set size, from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class _FrameEnv(gym.Env):
    """An endless episode of fresh 256x256 frames under the key "cam/rgb" (a PixelObs-like Dict, no pybullet),
    so that the recorder, not rendering, is what runs."""

    SIZE = 256

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Dict(
            {"cam/rgb": gym.spaces.Box(0, 255, (self.SIZE, self.SIZE, 3), np.uint8)})
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        ramp = np.add.outer(np.arange(self.SIZE), np.arange(self.SIZE)).astype(np.uint8)
        self._base = np.stack([ramp, ramp.T, 255 - ramp], axis=-1)
        self._t = 0

    def _obs(self) -> dict[str, np.ndarray]:
        self._t += 1
        return {"cam/rgb": np.roll(self._base, self._t, axis=1)}  # a new array every step, as a renderer gives

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action: np.ndarray) -> tuple[dict, float, bool, bool, dict]:
        return self._obs(), 0.0, False, False, {}


def _record_and_measure(folder: str) -> None:
    """Run in a fresh process by the test below: one 3000-frame episode of 256x256 frames; after a 300-frame
    warm-up, print how much the traced Python/numpy memory and the RSS grew over the last 2700 frames."""
    import json
    import tracemalloc

    env = VideoRecorder(_FrameEnv(), Path(folder), camera="cam", fps=30)
    action = np.zeros(1, np.float32)
    try:
        env.reset(seed=0)
        for _ in range(300):
            env.step(action)
        tracemalloc.start()
        traced, rss = tracemalloc.get_traced_memory()[0], _rss_bytes()
        for _ in range(2700):
            env.step(action)
        rss_growth, (traced_after, traced_peak) = _rss_bytes() - rss, tracemalloc.get_traced_memory()
        written = env.frames_written if env.recording else -1
    finally:
        env.close()
    print(json.dumps({"traced_growth": traced_after - traced, "traced_peak": traced_peak - traced,
                      "rss_growth": rss_growth, "frames_written": written}))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="RSS is read from /proc (Linux)")
def test_memory_holds_one_frame(tmp_path: Path) -> None:
    """Frames are streamed to ffmpeg as they come. One 3000-frame episode at 256x256: holding its frames would
    take 590 MB. After a 300-frame warm-up, the live Python/numpy memory (tracemalloc: exact, whatever the
    allocator does) ends less than two frames above where it started (the env's newest observation, and 96 KB of
    Python's tuple free list, 2,000 tuples at most) and never holds more than 3 frames at once; RSS grows by less
    than 10 frames' worth (1.97 MB). Measured in a fresh process: in the suite's long-lived one, RSS once grew
    9.6 MB over the same frames on a fresh CI-like machine."""
    import json

    frame_bytes = _FrameEnv.SIZE * _FrameEnv.SIZE * 3
    code = f"from tests.test_wrappers_video_recorder import _record_and_measure; _record_and_measure({str(tmp_path)!r})"
    run = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["frames_written"] == 3001
    assert got["traced_growth"] < 2 * frame_bytes, f"the recorder kept {got['traced_growth']} bytes of frames"
    assert got["traced_peak"] < 3 * frame_bytes, f"{got['traced_peak']} bytes of frames were held at once"
    assert got["rss_growth"] < 10 * frame_bytes, f"RSS grew {got['rss_growth'] / 1e6:.1f} MB over 2700 frames"
    frames, _ = imageio_ffmpeg.count_frames_and_secs(str(tmp_path / "rl-video-episode-0.mp4"))
    assert frames == 3001  # every frame reached the file


@pytest.mark.parametrize("kwargs,message", [
    ({"video_format": "avi"}, "video_format must be one of ('mp4', 'gif'): got 'avi'"),
    ({"camera": "nope"}, "VideoRecorder: unknown camera 'nope'; cameras here: ['front']"),
    ({"camera": {"name": "c", "eye": (0, 0, 1)}}, "Camera 'c': needs eye and target"),
])
def test_bad_recorder_arguments(tmp_path: Path, kwargs, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        VideoRecorder(gym.make("pixelrig/CartPole-v0"), tmp_path, **kwargs)


def test_stream_rejects_changing_frame_size(tmp_path: Path) -> None:
    with VideoStream(tmp_path / "x.mp4", fps=10) as stream:
        stream.write(np.zeros((10, 10, 3), np.uint8))
        with pytest.raises(ValueError, match=re.escape("frame shape (20, 10, 3) differs from the first frame's")):
            stream.write(np.zeros((20, 10, 3), np.uint8))


def test_schedule_matches_gymnasium() -> None:
    from gymnasium.utils.save_video import capped_cubic_video_schedule as gymnasium_schedule  # needs moviepy

    assert [n for n in range(1001) if capped_cubic_video_schedule(n)] == [0, 1, 8, 27, 64, 125, 216, 343, 512,
                                                                          729, 1000]
    assert all(capped_cubic_video_schedule(n) == gymnasium_schedule(n) for n in range(20_000))


def test_gymnasium_record_video_works_on_pixelrig_envs(tmp_path: Path) -> None:
    env = gym.wrappers.RecordVideo(gym.make("pixelrig/CartPole-v0", render_mode="rgb_array",
                                            max_episode_steps=20), str(tmp_path / "rv"), disable_logger=True)
    lengths = run_episodes(env, 1)
    env.close()
    (video,) = (tmp_path / "rv").glob("*.mp4")
    frames = frames_of(video)
    assert len(frames) == lengths[0] + 1 and frames[0].shape == (240, 320, 3)


def test_recorder_with_own_camera(tmp_path: Path) -> None:
    cam = Camera("top", width=40, height=30, eye=(0, 0, 4), target=(0, 0, 0), up=(0, 1, 0),
                 modalities=("rgb", "depth", "label"))
    env = VideoRecorder(gym.make("pixelrig/CartPole-v0"), tmp_path, camera=cam)
    env.reset(seed=0)
    env.close()
    assert frames_of(tmp_path / "rl-video-episode-0.mp4")[0].shape == (30, 120, 3)  # tiled: rgb | depth | label
