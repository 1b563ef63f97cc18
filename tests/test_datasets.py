"""DatasetRecorder and replay: the layouts read back against LeRobot v3.0's and robomimic's documented layouts,
replay bit-exact against a live run of the same actions with the new rig (tiny and gl), nothing lost when the
recorder is killed, never overwriting by accident, and clear errors for unwritable paths and full disks."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, Snapshot
from pixelrig.datasets import (
    DatasetExistsError,
    DatasetRecorder,
    DatasetWriteError,
    depth_to_mm,
    mm_to_depth,
    open_dataset,
    replay,
)
from pixelrig.experts.push import PushExpert
from tests.conftest import bang_bang_action, gl_or_skip

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')
import pyarrow.parquet as pq  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
READER_VENV = Path(os.environ.get("LEROBOT_VENV", REPO / ".venv-lerobot"))  # as scripts/lerobot-venv.sh takes it
ENV_ID = "pixelrig/PandaPush-v0"
STEPS = 6  # TimeLimit of the recorded episodes: short, so the suite stays quick

RIG = [
    Camera("front", width=40, height=32, fov=55.0, near=0.05, far=4.0, eye=(0.95, 0.0, 1.25), target=(0.5, 0.0, 0.63),
           modalities=("rgb", "depth", "label")),
    Camera("wrist", width=24, height=24, mount="panda_hand", offset=((0.07, 0.0, 0.03), (0.0, 0.0, 0.0, 1.0)),
           far=2.0, modalities=("rgb",)),
]
NEW_RIG = [
    Camera("top", width=32, height=24, eye=(0.5, 0.0, 1.6), target=(0.5, 0.0, 0.6), up=(1.0, 0.0, 0.0), far=3.0,
           modalities=("rgb", "depth")),
]


def make_env(renderer: str = "tiny", cams: list[Camera] = RIG, steps: int = STEPS) -> gym.Env:
    return PixelObs(gym.make(ENV_ID, renderer=renderer, max_episode_steps=steps), cams=cams)


class Episode(list[dict]):
    """One live episode: the observations the actions were taken in plus the final one (a list, as before), and
    what each ``env.step`` was given and returned, for comparing a dataset with the run that produced it.

    Attributes:
        actions: the actions taken, as passed to ``env.step``.
        rewards: the rewards ``env.step`` returned.
        terminated: its ``terminated`` flags.
        truncated: its ``truncated`` flags.
        cut: whether the episode was stopped before it ended (``cut_last``, or the given actions ran out): a
            recorder then stores its last frame as truncated.
    """

    def __init__(self, observations: list[dict]) -> None:
        super().__init__(observations)
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.terminated: list[bool] = []
        self.truncated: list[bool] = []
        self.cut = False

    def stored_truncated(self) -> list[bool]:
        """The ``truncated`` flags a recorder stores: the live ones, and the last one set when the episode was
        cut."""
        return self.truncated[:-1] + [self.truncated[-1] or self.cut]


def run_episodes(env: gym.Env, seeds: list[int], cut_last: int | None = None,
                 actions: list[list[np.ndarray]] | None = None) -> list[Episode]:
    """Step episodes with the scripted pusher (or given actions); the last episode is cut after ``cut_last``
    steps when given. Returns, per episode, the observations the actions were taken in plus the final one, with
    the actions, rewards and flags of each step (:class:`Episode`)."""
    episodes = []
    for i, seed in enumerate(seeds):
        obs, _ = env.reset(seed=seed)
        policy, seen, done, t = PushExpert(), Episode([obs]), False, 0
        while not done:
            if cut_last is not None and i == len(seeds) - 1 and t == cut_last:
                seen.cut = True
                break
            action = actions[i][t] if actions is not None else policy(obs["state"])
            seen.actions.append(np.array(action, copy=True))
            obs, reward, terminated, truncated, _ = env.step(action)
            seen.append(obs)
            seen.rewards.append(float(reward))
            seen.terminated.append(bool(terminated))
            seen.truncated.append(bool(truncated))
            done, t = terminated or truncated, t + 1
            if actions is not None and t == len(actions[i]) and not done:
                seen.cut = True
                break
        episodes.append(seen)
    return episodes


def record_env(env: gym.Env, path: Path, fmt: str, seeds: list[int], cut_last: int | None = None,
               actions: list[list[np.ndarray]] | None = None, **kw) -> list[Episode]:
    """Record :func:`run_episodes` of ``env`` into a dataset at ``path`` (``kw`` go to DatasetRecorder), closed
    at the end."""
    recorder = DatasetRecorder(env, path, format=fmt, **{"task": "push the cube", **kw})
    try:
        return run_episodes(recorder, seeds, cut_last, actions)
    finally:
        recorder.close()


def record(path: Path, fmt: str, seeds: list[int], renderer: str = "tiny", cams: list[Camera] = RIG,
           cut_last: int | None = None, actions: list[list[np.ndarray]] | None = None, **kw) -> list[Episode]:
    return record_env(make_env(renderer, cams), path, fmt, seeds, cut_last, actions, **kw)


@pytest.fixture(scope="module")
def robomimic_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Episode]]:
    """Two episodes: one to its TimeLimit, one cut by close() after 3 steps."""
    path = tmp_path_factory.mktemp("rm") / "push.hdf5"
    return path, record(path, "robomimic", [0, 1], cut_last=3)


@pytest.fixture(scope="module")
def lerobot_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Episode]]:
    path = tmp_path_factory.mktemp("lr") / "push"
    return path, record(path, "lerobot", [0, 1], cut_last=3)


# ---- depth convention --------------------------------------------------------------------------------------


def test_depth_is_stored_as_millimetres_with_zero_for_background() -> None:
    depth = np.array([[[0.0005], [0.0014], [1.2344], [1.2346]], [[3.999], [4.0], [70.0], [2.5]]], np.float32)
    mm = depth_to_mm(depth, far=4.0)
    assert mm.dtype == np.uint16 and mm.shape == depth.shape
    assert mm[..., 0].tolist() == [[1, 1, 1234, 1235], [3999, 0, 0, 2500]]
    back = mm_to_depth(mm, far=4.0)
    assert back[1, 1, 0] == 4.0 and abs(float(back[0, 2, 0]) - 1.234) < 1e-6
    assert depth_to_mm(np.array([[[70.0]]], np.float32), far=100.0)[0, 0, 0] == 65535  # saturates


# ---- robomimic ---------------------------------------------------------------------------------------------


def test_robomimic_layout(robomimic_run: tuple[Path, list[Episode]]) -> None:
    path, episodes = robomimic_run
    with h5py.File(path, "r") as f:
        data = f["data"]
        assert sorted(data) == ["demo_0", "demo_1"]
        lengths = [len(ep) - 1 for ep in episodes]
        assert lengths == [STEPS, 3]
        assert int(data.attrs["total"]) == sum(lengths)
        args = json.loads(data.attrs["env_args"])
        assert args["env_name"] == ENV_ID and args["env_type"] == 2 and isinstance(args["env_kwargs"], dict)
        meta = args["pixelrig"]
        assert meta["pixelrig_version"] == pixelrig.__version__ and meta["renderer"] == "tiny"
        assert [c["name"] for c in meta["cameras"]] == ["front", "wrist"] and meta["task"] == "push the cube"
        assert "millimetres" in meta["conventions"]["depth"]
        for k, (demo, seen) in enumerate(zip((data["demo_0"], data["demo_1"]), episodes, strict=True)):
            n = len(seen) - 1
            assert int(demo.attrs["num_samples"]) == n
            assert demo["actions"].shape == (n, 3) and demo["actions"].dtype == np.float32
            assert demo["rewards"].shape == (n,) and demo["dones"].shape == (n,)
            assert demo["dones"][()].tolist() == [0] * (n - 1) + [1]  # both end: TimeLimit, then cut by close()
            assert demo["truncated"][-1] and not demo["terminated"][-1]
            # what the live env was given and returned, as stored: actions float32, rewards float64 (no rounding)
            assert demo["rewards"].dtype == np.float64 and 0.0 not in seen.rewards  # PushExpert's are all < 0
            assert demo["rewards"][()].tolist() == seen.rewards
            np.testing.assert_array_equal(demo["actions"][()], np.stack(seen.actions).astype(np.float32))
            assert demo["terminated"][()].tolist() == seen.terminated
            assert demo["truncated"][()].tolist() == seen.stored_truncated()
            assert demo.attrs["pixelrig_end"] == ("truncated" if k == 0 else "cut")
            assert set(demo["obs"]) == set(demo["next_obs"]) == {"front_rgb", "front_depth", "wrist_rgb", "state"}
            assert demo["obs/front_rgb"].shape == (n, 32, 40, 3) and demo["obs/front_rgb"].dtype == np.uint8
            assert demo["obs/front_depth"].shape == (n, 32, 40, 1) and demo["obs/front_depth"].dtype == np.uint16
            assert demo["obs/wrist_rgb"].shape == (n, 24, 24, 3)
            for t in range(n):  # frame t holds the observation its action was taken in; next_obs what it returned
                np.testing.assert_array_equal(demo["obs/front_rgb"][t], seen[t]["front/rgb"])
                np.testing.assert_array_equal(demo["next_obs/front_rgb"][t], seen[t + 1]["front/rgb"])
                np.testing.assert_array_equal(demo["obs/front_depth"][t], depth_to_mm(seen[t]["front/depth"], 4.0))
                np.testing.assert_array_equal(demo["obs/state"][t], seen[t]["state"])
            assert demo["states"].shape[0] == n and demo["states"].dtype == np.uint8
            assert demo["states_nbytes"].shape == (n,) and "label" not in str(list(demo["obs"]))
    assert_frames_are_the_live_steps(path, episodes, np.float64)


def assert_frames_are_the_live_steps(path: Path, episodes: list[Episode], reward_dtype: type[np.floating]) -> None:
    """``open_dataset(path).frames(e)`` read back each live step: its action, its reward (the live float cast to
    the format's ``reward_dtype``) and flags (the last one truncated where the episode was cut)."""
    reader = open_dataset(path)
    try:
        assert reader.num_episodes == len(episodes)
        for e, seen in enumerate(episodes):
            frames = list(reader.frames(e))
            assert [f.reward for f in frames] == [float(reward_dtype(r)) for r in seen.rewards]
            assert [f.action.tolist() for f in frames] == [np.asarray(a, np.float32).tolist() for a in seen.actions]
            assert [f.terminated for f in frames] == seen.terminated
            assert [f.truncated for f in frames] == seen.stored_truncated()
    finally:
        reader.close()


def test_robomimic_states_restore_exactly(robomimic_run: tuple[Path, list[Episode]]) -> None:
    """Each stored snapshot restores into a fresh env to the state its frame's observation was rendered in."""
    path, episodes = robomimic_run
    reader = open_dataset(path)
    env = make_env()
    try:
        frames = list(reader.frames(0))
        for t in (0, len(frames) - 1):
            pixelrig.restore(env.env, Snapshot.from_bytes(frames[t].snapshot))
            np.testing.assert_array_equal(env.render_rig()["front/rgb"], episodes[0][t]["front/rgb"])
        pixelrig.restore(env.env, Snapshot.from_bytes(reader.final_snapshot(0)))
        np.testing.assert_array_equal(env.render_rig()["front/rgb"], episodes[0][-1]["front/rgb"])
    finally:
        env.close()
        reader.close()


def reader_venv_or_skip() -> Path:
    """The readers' venv's python; skips (fails with PIXELRIG_REQUIRE_LEROBOT=1) when the venv is not built (its
    build stamp, written last by scripts/lerobot-venv.sh, is missing)."""
    python, stamp = READER_VENV / "bin" / "python", READER_VENV / ".pixelrig-stamp"
    if not (python.is_file() and stamp.is_file()):
        if os.environ.get("PIXELRIG_REQUIRE_LEROBOT") == "1":
            pytest.fail(f"PIXELRIG_REQUIRE_LEROBOT=1 but {READER_VENV} is not built: run scripts/lerobot-venv.sh")
        pytest.skip(f"the real readers' venv is not built ({stamp} missing): run scripts/lerobot-venv.sh")
    return python


def run_reader(kind: str, dataset: Path, out: Path) -> tuple[dict, dict]:
    """Load ``dataset`` with the real reader in the readers' venv; returns (arrays, meta)."""
    python = reader_venv_or_skip()
    env = {**os.environ, "HF_HOME": str(out.parent / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PYTHONPATH": ""}
    proc = subprocess.run([str(python), str(REPO / "tests" / "dataset_readers.py"), kind, str(dataset), str(out)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-4000:]
    with np.load(out) as z:
        arrays = {k: z[k] for k in z.files if k != "__meta__"}
        meta = json.loads(str(z["__meta__"]))
    return arrays, meta


def test_robomimic_sequence_dataset_reads_it(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    """robomimic's own SequenceDataset (0.3.0, in the readers' venv) loads every sample as recorded."""
    path, episodes = robomimic_run
    arrays, meta = run_reader("robomimic", path, tmp_path / "rm.npz")
    assert meta["demos"] == ["demo_0", "demo_1"] and meta["len"] == sum(len(ep) - 1 for ep in episodes)
    with h5py.File(path, "r") as f:
        for key in ("actions", "rewards", "dones"):
            expected = np.concatenate([f[f"data/demo_{k}/{key}"][()] for k in range(2)])
            np.testing.assert_array_equal(arrays[key], expected)
        for group in ("obs", "next_obs"):
            for key in ("front_rgb", "front_depth", "wrist_rgb", "state"):
                expected = np.concatenate([f[f"data/demo_{k}/{group}/{key}"][()] for k in range(2)])
                np.testing.assert_array_equal(arrays[f"{group}/{key}"], expected)


# ---- LeRobot ------------------------------------------------------------------------------------------------


def test_lerobot_layout(lerobot_run: tuple[Path, list[Episode]]) -> None:
    path, episodes = lerobot_run
    info = json.loads((path / "meta" / "info.json").read_text())
    lengths = [len(ep) - 1 for ep in episodes]
    assert info["codebase_version"] == "v3.0" and info["fps"] == 24
    assert info["total_episodes"] == 2 and info["total_frames"] == sum(lengths) and info["total_tasks"] == 1
    assert info["splits"] == {"train": "0:2"}
    assert info["data_path"] == "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    assert info["video_path"] == "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    feats = info["features"]
    assert feats["observation.images.front"]["dtype"] == "video"
    assert feats["observation.images.front"]["shape"] == [32, 40, 3]
    assert feats["observation.depth.front"] == {"dtype": "uint16", "shape": [32, 40, 1],
                                                "names": ["height", "width", "channels"]}
    assert feats["observation.state"]["shape"] == [list(episodes[0][0]["state"].shape)[0]]
    assert feats["action"] == {"dtype": "float32", "shape": [3], "names": None}
    assert list(feats)[-5:] == ["timestamp", "frame_index", "episode_index", "index", "task_index"]
    assert info["pixelrig"]["env_id"] == ENV_ID

    tasks = pq.read_table(path / "meta" / "tasks.parquet")
    assert tasks.column("__index_level_0__").to_pylist() == ["push the cube"]
    assert tasks.column("task_index").to_pylist() == [0]
    stats = json.loads((path / "meta" / "stats.json").read_text())
    assert np.array(stats["observation.images.front"]["mean"]).shape == (3, 1, 1)
    assert stats["action"]["count"] == [sum(lengths)] and len(stats["action"]["q50"]) == 3
    live = live_feature_values(episodes)
    assert_stats_equal(stats, dataset_stats(live))

    start = 0
    for e, seen in enumerate(episodes):
        n = len(seen) - 1
        row = pq.read_table(path / f"meta/episodes/chunk-000/file-{e:03d}.parquet").to_pylist()[0]
        assert row["episode_index"] == e and row["length"] == n and row["tasks"] == ["push the cube"]
        assert (row["dataset_from_index"], row["dataset_to_index"]) == (start, start + n)
        assert row["data/file_index"] == e and row["videos/observation.images.front/file_index"] == e
        assert row["videos/observation.images.front/from_timestamp"] == 0.0
        assert row["videos/observation.images.front/to_timestamp"] == pytest.approx(n / 24)
        assert row["pixelrig/end"] == ("truncated" if e == 0 else "cut")
        table = pq.read_table(path / f"data/chunk-000/file-{e:03d}.parquet")
        assert table.schema.field("action").type == pa.list_(pa.float32(), 3)
        assert table.schema.field("next.reward").type == pa.float32()
        assert table.column("index").to_pylist() == list(range(start, start + n))
        assert table.column("frame_index").to_pylist() == list(range(n))
        assert table.column("timestamp").to_pylist() == pytest.approx([t / 24 for t in range(n)])
        assert table.column("next.done").to_pylist() == [False] * (n - 1) + [True]
        # what the live env was given and returned: the reward cast to the stored float32, the action as stored
        assert 0.0 not in seen.rewards  # PushExpert's rewards are all < 0: a reward lost as 0.0 shows
        assert table.column("next.reward").to_pylist() == [float(np.float32(r)) for r in seen.rewards]
        np.testing.assert_array_equal(np.array(table.column("action").to_pylist(), np.float32),
                                      np.stack(seen.actions).astype(np.float32))
        assert table.column("next.terminated").to_pylist() == seen.terminated
        assert table.column("next.truncated").to_pylist() == seen.stored_truncated()
        assert_stats_equal(episode_stats_of_row(row), {k: feature_stats(v) for k, v in live[e].items()})
        snaps = pq.read_table(path / f"snapshots/chunk-000/file-{e:03d}.parquet")
        assert snaps.column("frame_index").to_pylist() == list(range(n + 1))  # + the state after the last action
        start += n
    assert not (path / ".partial").exists()

    assert_frames_are_the_live_steps(path, episodes, np.float32)
    reader = open_dataset(path)
    for e, seen in enumerate(episodes):
        np.testing.assert_array_equal(reader.depth(e, "front"),
                                      np.stack([depth_to_mm(o["front/depth"], 4.0) for o in seen[:-1]]))
        for cam, shape in (("front", (32, 40, 3)), ("wrist", (24, 24, 3))):
            video = np.stack(list(reader.rgb(e, cam))).astype(int)
            assert video.shape == (len(seen) - 1, *shape)
            recorded = np.stack([o[f"{cam}/rgb"] for o in seen[:-1]]).astype(int)
            error = np.abs(video - recorded).mean()
            assert error < VIDEO_MEAN_TOLERANCE, error
            apart = assert_video_frames_match(video, recorded)
            if cam == "front":  # the arm moves in view: a video stuck on its first frame would be told apart
                assert apart[0].max() > VIDEO_FRAME_TOLERANCE, apart[0]


VIDEO_MEAN_TOLERANCE = 8.0
"""Mean |decoded - recorded| per frame, in levels. H.264 in yuv420p halves the chroma resolution, which on images
this small (40×32, 24×24) smears coloured edges: measured 2.0 levels at 84×84 and 4.3 at 33×25, up to 80 levels in
single edge pixels. Depth is lossless (parquet) and compared exactly."""

VIDEO_FRAME_TOLERANCE = 4.0
"""Mean |decoded - recorded| of each single frame of :func:`lerobot_run`'s videos, in levels. Measured frame by
frame: 2.51 to 2.87 for the front camera (40×32), 1.41 to 1.65 for the wrist camera (24×24); 4.0 leaves 1.1 levels
for another x264 build. A video stuck on its episode's first frame (measured with that mutation) errs by 8.0 and
8.2 levels on the front camera's last frames, 5.9 on average over each episode, which VIDEO_MEAN_TOLERANCE lets
through (episode 0's first and last recorded frames differ by 5.9 levels, episode 1's by 6.0)."""


def assert_video_frames_match(video: np.ndarray, recorded: np.ndarray) -> np.ndarray:
    """Each decoded frame t is within :data:`VIDEO_FRAME_TOLERANCE` of recorded frame t, and nearer to it than to
    every other recorded frame s that differs from frame t by more than that (a frozen, repeated or reordered video
    fails: its frame t is nearer to another recorded frame). Measured on :func:`lerobot_run`: decoded frame t is
    3.2 to 5.5 levels nearer to recorded frame t than to such a frame s.

    Returns:
        The recorded frames' mean absolute differences, (N, N), in levels.
    """
    n = len(recorded)
    flat_video, flat_recorded = video.reshape(n, -1).astype(int), recorded.reshape(n, -1).astype(int)
    error = np.abs(flat_video[:, None] - flat_recorded[None]).mean(axis=2)  # [t, s]: decoded t vs recorded s
    apart = np.abs(flat_recorded[:, None] - flat_recorded[None]).mean(axis=2)
    own = np.diag(error)
    assert own.max() < VIDEO_FRAME_TOLERANCE, f"decoded frames err by {np.round(own, 2)} levels"
    for t in range(n):
        for s in np.flatnonzero(apart[t] > VIDEO_FRAME_TOLERANCE):
            assert error[t, t] < error[t, s], (f"decoded frame {t} is nearer to recorded frame {s} "
                                               f"({error[t, s]:.2f} levels) than to its own ({error[t, t]:.2f})")
    return apart


# ---- LeRobot's statistics, computed here from the live run with plain numpy ---------------------------------

STAT_QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}
"""The quantiles LeRobot's stats carry."""


def live_feature_values(episodes: list[Episode], fps: int = 24) -> list[dict[str, np.ndarray]]:
    """Per episode, the values of every LeRobot feature in the live run, as the data files define them: (frames,
    samples per frame, channels) float64 arrays. An image's samples are its pixels (RGB / 255, depth in
    millimetres); a vector has one sample per frame and a channel per entry (float32 features cast to float32
    first, as stored). For rigs named as :data:`RIG`: "front" with RGB and depth (far 4 m), "wrist" with RGB."""
    def image(frames: list[np.ndarray]) -> np.ndarray:
        stacked = np.stack(frames).astype(np.float64)
        return stacked.reshape(len(frames), -1, stacked.shape[-1])

    def vector(values: object) -> np.ndarray:
        array = np.asarray(values).astype(np.float64)
        return array.reshape(len(array), 1, -1)

    out, start = [], 0
    for e, seen in enumerate(episodes):
        obs, n = seen[:-1], len(seen) - 1
        t = np.arange(n)
        truncated = seen.stored_truncated()
        out.append({
            "observation.images.front": image([o["front/rgb"] for o in obs]) / 255.0,
            "observation.images.wrist": image([o["wrist/rgb"] for o in obs]) / 255.0,
            "observation.depth.front": image([depth_to_mm(o["front/depth"], 4.0) for o in obs]),
            "observation.state": vector(np.stack([np.asarray(o["state"], np.float32) for o in obs])),
            "action": vector(np.stack(seen.actions).astype(np.float32)),
            "next.reward": vector(np.array(seen.rewards, np.float32)),
            "next.terminated": vector(seen.terminated),
            "next.truncated": vector(truncated),
            "next.done": vector(np.logical_or(seen.terminated, truncated)),
            "timestamp": vector((t / fps).astype(np.float32)),
            "frame_index": vector(t),
            "episode_index": vector(np.full(n, e)),
            "index": vector(start + t),
            "task_index": vector(np.zeros(n)),
        })
        start += n
    return out


def feature_stats(values: np.ndarray) -> dict[str, np.ndarray]:
    """min, max, mean, std (population), count (frames) and the quantiles (inverted CDF: the smallest value with
    at least that share of samples at or below it) per channel, over all frames and samples of ``values``."""
    channels = np.ascontiguousarray(values.reshape(-1, values.shape[-1]).T)  # rows: numpy sums them pairwise
    out = {"min": channels.min(axis=1), "max": channels.max(axis=1), "mean": channels.mean(axis=1),
           "std": channels.std(axis=1), "count": np.array([len(values)])}
    for name, q in STAT_QUANTILES.items():
        out[name] = np.quantile(channels, q, axis=1, method="inverted_cdf")
    return out


def dataset_stats(episodes: list[dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
    """``meta/stats.json`` as LeRobot aggregates it: min, max, mean, std and count over every frame of every
    episode; each quantile the frame-count-weighted mean of the episodes' quantiles."""
    out = {}
    for key in episodes[0]:
        parts = [ep[key] for ep in episodes]
        stats = feature_stats(np.concatenate(parts))
        per_episode = [feature_stats(p) for p in parts]
        counts = np.array([len(p) for p in parts], np.float64)
        for name in STAT_QUANTILES:
            each = np.stack([s[name] for s in per_episode])
            stats[name] = (each * counts[:, None]).sum(axis=0) / counts.sum()
        out[key] = stats
    return out


def episode_stats_of_row(row: dict) -> dict[str, dict[str, object]]:
    """The per-episode stats of a ``meta/episodes`` row (its ``stats/<feature>/<stat>`` columns)."""
    out: dict[str, dict[str, object]] = {}
    for column, value in row.items():
        if column.startswith("stats/"):
            feature, name = column.removeprefix("stats/").rsplit("/", 1)
            out.setdefault(feature, {})[name] = value
    return out


STATS_RTOL = 1e-11
"""Relative difference allowed between stored and recomputed statistics: float64 rounding only (the writer counts
image levels in histograms and combines the episodes' means and variances; this test sums all values at once).
Measured on :func:`lerobot_run`: per episode at most 2.8e-16; over the dataset at most 1.1e-13, the std of a
state entry that barely moves (3.1e-5 around 0.65: combining variances loses digits there), all else 1.5e-15."""


def assert_stats_equal(stored: dict, expected: dict[str, dict[str, np.ndarray]]) -> None:
    """Stored stats (JSON lists) equal ``expected``: the same features and statistics, counts exactly, the rest
    up to float64 rounding; images and depth per channel with shape (C, 1, 1), vectors with shape (C,)."""
    assert sorted(stored) == sorted(expected)
    for key, want in expected.items():
        assert sorted(stored[key]) == sorted(want), key
        for name, value in want.items():
            got = np.asarray(stored[key][name])
            if name == "count":
                assert got.tolist() == value.tolist(), (key, name, got, value)
                continue
            image = key.startswith(("observation.images.", "observation.depth."))
            assert got.shape == ((len(value), 1, 1) if image else value.shape), (key, name, got.shape)
            np.testing.assert_allclose(got.reshape(-1), value, rtol=STATS_RTOL, atol=0, err_msg=f"{key} {name}")


# ---- replay -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_replay_equals_a_live_run_with_the_new_rig(renderer: str, tmp_path: Path) -> None:
    """Re-rendered images equal, bit for bit, those of a live run of the recorded actions with the new rig, in both
    formats (LeRobot's video compared frame for frame with a live LeRobot recording: same pixels in, same video)."""
    if renderer == "gl":
        gl_or_skip()
    src = tmp_path / "src.hdf5"
    recorded = record(src, "robomimic", [3, 4], renderer=renderer)
    reader = open_dataset(src)
    actions = [[f.action for f in reader.frames(e)] for e in range(reader.num_episodes)]
    reader.close()

    replayed_rm = replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False)
    replay(src, tmp_path / "new", NEW_RIG, format="lerobot", progress=False)
    assert (replayed_rm.episodes, replayed_rm.frames) == (2, sum(len(a) for a in actions))
    live = record(tmp_path / "live", "lerobot", [3, 4], renderer=renderer, cams=NEW_RIG, actions=actions)
    assert [len(ep) for ep in live] == [len(ep) for ep in recorded]

    new = open_dataset(tmp_path / "new.hdf5")
    assert new.info.replayed_from == str(src.resolve()) and new.info.renderer == renderer
    for e, seen in enumerate(live):
        np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
        np.testing.assert_array_equal(new.rgb(e, "top", "next_obs"), np.stack([o["top/rgb"] for o in seen[1:]]))
        np.testing.assert_array_equal(new.depth(e, "top"),
                                      np.stack([depth_to_mm(o["top/depth"], 3.0) for o in seen[:-1]]))
    new.close()
    replayed, live_lr = open_dataset(tmp_path / "new"), open_dataset(tmp_path / "live")
    for e in range(2):
        np.testing.assert_array_equal(replayed.depth(e, "top"), live_lr.depth(e, "top"))
        np.testing.assert_array_equal(np.stack(list(replayed.rgb(e, "top"))), np.stack(list(live_lr.rgb(e, "top"))))
        assert [f.action.tolist() for f in replayed.frames(e)] == [a.tolist() for a in actions[e]]


def test_replay_of_a_randomised_env_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomised colours, camera jitter (of the new rig too) and body positions: the env is rebuilt from the
    recorded kwargs (a Randomization dataclass) and each episode's draw comes back with its first snapshot, restored
    into the world as the last episode left it (not rebuilt: the same parameters are randomised), so every
    randomised value must be set again."""
    from pixelrig import Randomization
    from pixelrig.envs.base import BulletEnv

    rebuilds: list[int] = []
    rebuild = BulletEnv._rebuild

    def counted(self: BulletEnv) -> None:
        rebuilds.append(self.client)
        rebuild(self)

    randomize = Randomization(link_colors=True, camera_position=0.01, camera_rotation=0.02,
                              body_position={"cube": ((0.40, -0.15, 0.65), (0.60, 0.15, 0.65))})

    def randomised(cams: list[Camera]) -> gym.Env:
        return PixelObs(gym.make(ENV_ID, renderer="tiny", max_episode_steps=4, randomize=randomize), cams=cams)

    record_env(randomised(RIG), tmp_path / "src.hdf5", "robomimic", [7, 8])
    reader = open_dataset(tmp_path / "src.hdf5")
    actions = [[f.action for f in reader.frames(e)] for e in range(2)]
    assert reader.info.env_kwargs["randomize"]["__dataclass__"] == "pixelrig.envs.randomization:Randomization"
    reader.close()
    monkeypatch.setattr(BulletEnv, "_rebuild", counted)
    replay(tmp_path / "src.hdf5", tmp_path / "new.hdf5", NEW_RIG, progress=False)
    monkeypatch.undo()
    assert len(rebuilds) == 2  # making the env, and the first episode (its world held no randomised values yet)
    live = run_episodes(randomised(NEW_RIG), [7, 8], actions=actions)
    new = open_dataset(tmp_path / "new.hdf5")
    for e, seen in enumerate(live):
        np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
        np.testing.assert_array_equal(new.rgb(e, "top", "next_obs"), np.stack([o["top/rgb"] for o in seen[1:]]))
    new.close()


def test_cli_replay(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> None:
    from pixelrig.tools.cli import main

    rig = tmp_path / "rig.toml"
    rig.write_text(textwrap.dedent("""
        [[cameras]]
        name = "top"
        width = 32
        height = 24
        eye = [0.5, 0.0, 1.6]
        target = [0.5, 0.0, 0.6]
        up = [1.0, 0.0, 0.0]
        far = 3.0
        modalities = ["rgb", "depth"]
    """))
    src, episodes = robomimic_run
    dst = tmp_path / "top.hdf5"
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet"]) == 0
    assert "2 episodes" in capsys.readouterr().out
    reader = open_dataset(dst)
    assert reader.info.rgb == ("top",) and reader.episode_length(1) == 3
    reader.close()
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet", "--overwrite", "--workers", "0"]) == 2
    assert "workers=0 must be a whole number >= 1" in capsys.readouterr().err
    assert main(["replay", str(src), str(dst), "--cams", str(rig), "--quiet", "--overwrite", "--workers", "1"]) == 0
    assert "1 process)" in capsys.readouterr().out


# ---- replay: fast restore, worker processes, failures ---------------------------------------------------------


def stepped_states(n: int) -> tuple[gym.Env, list[bytes]]:
    """A PandaPush env and the .bullet states of its first n steps (the pusher's actions: the gripper meets the
    cube, so contacts change along the way)."""
    from pixelrig.envs.state import save_bullet

    env = make_env(steps=n + 1)
    obs, _ = env.reset(seed=2)
    policy, states = PushExpert(), []
    for _ in range(n):
        obs, *_ = env.step(policy(obs["state"]))
        states.append(save_bullet(env.unwrapped.client))
    return env, states


def test_pose_restore_equals_pybullets_full_restore() -> None:
    """The cut-down .bullet restore sets every pose, velocity and link frame as pybullet's full restore does, and
    the images are equal; PoseRestorer proves it before using it, and anything that is not a .bullet file is
    restored whole."""
    from pixelrig.datasets.bullet_file import PoseRestorer, pose_chunks, pose_signature
    from pixelrig.envs.state import restore_bullet

    env, states = stepped_states(12)
    client = env.unwrapped.client
    restorer = PoseRestorer(client)
    restore_bullet(client, states[0])
    assert restorer.fast is None and restorer.check(states[0]) is True and restorer.fast is True
    for i, state in enumerate(states):
        cut = pose_chunks(state)
        assert cut is not None and len(cut) < len(state) / 2
        restore_bullet(client, state)
        full, image = pose_signature(client), env.render_rig()["front/rgb"]
        restore_bullet(client, states[(i + 5) % len(states)])  # somewhere else
        restorer.restore(state)
        assert pose_signature(client) == full
        np.testing.assert_array_equal(env.render_rig()["front/rgb"], image)
    assert pose_chunks(b"not a bullet file") is None and pose_chunks(states[0][:5000]) is None
    env.close()


def test_physics_of_reads_only_the_physics_and_checks_like_from_bytes() -> None:
    """What replay reads per frame: the snapshot's identity and .bullet state, with the same checks as a full
    parse (a flipped byte is a checksum error, foreign bytes are named)."""
    from pixelrig.snapshots import physics_of

    env = make_env()
    env.reset(seed=1)
    env.step(env.action_space.sample())
    data = pixelrig.snapshot(env).to_bytes()
    env.close()
    snap = Snapshot.from_bytes(data)
    assert physics_of(data) == (snap.identity, snap.env_state["physics"])
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        physics_of(bytes(flipped))
    with pytest.raises(ValueError, match="not a pixelrig snapshot"):
        physics_of(b"GIF89a" + bytes(100))


def test_images_allow_restoring_in_place_only_with_the_same_randomised_values() -> None:
    from pixelrig import Randomization

    env = gym.make(ENV_ID, renderer="tiny", randomize=Randomization(link_colors=True))
    env.reset(seed=2)
    state = pixelrig.snapshot(env).env_state
    base = env.unwrapped
    env.reset(seed=3)  # other colours, the same links randomised
    assert base.can_show_in_place(state)
    fewer = {**state, "randomization": {k: (v[1:] if isinstance(v, list) else v)
                                        for k, v in state["randomization"].items()}}
    assert fewer != state and not base.can_show_in_place(fewer)
    env.close()


def test_pybullet_caches_state_files_by_name() -> None:
    """Why restore_bullet names every state file afresh and empties pybullet's file cache now and then: pybullet
    keeps each file it reads, by name, until its client disconnects, and serves the old contents for a name it has
    seen even after the file changed."""
    import pybullet as pb

    from pixelrig.datasets.bullet_file import pose_signature

    env, states = stepped_states(4)
    client = env.unwrapped.client
    path = Path(tempfile.mkdtemp()) / "state.bullet"
    try:
        path.write_bytes(states[0])
        pb.restoreState(fileName=str(path), physicsClientId=client)
        first = pose_signature(client)
        path.write_bytes(states[3])
        pb.restoreState(fileName=str(path), physicsClientId=client)
        assert pose_signature(client) == first  # states[0] again, not states[3]
    finally:
        shutil.rmtree(path.parent)
        env.close()


def test_pose_restore_falls_back_when_it_would_not_be_exact() -> None:
    from pixelrig.datasets.bullet_file import PoseRestorer, pose_signature

    env, states = stepped_states(3)
    client = env.unwrapped.client
    restorer = PoseRestorer(client)
    restorer.restore(states[0])
    assert restorer.check(states[2]) is False  # the world is in states[0]'s state, not states[2]'s: they differ
    assert restorer.fast is False
    expected = pose_signature(client)  # the check restored states[2] in full after its failed comparison
    restorer.restore(states[1])
    restorer.restore(states[2])
    assert pose_signature(client) == expected
    env.close()


def datasets_equal(a: Path, b: Path) -> None:
    """Two replayed datasets hold the same bytes (robomimic: every array and attribute; LeRobot: every table, the
    metadata and the decoded videos)."""
    if a.suffix == ".hdf5":
        with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
            names: list[str] = []
            fa.visit(names.append)
            other: list[str] = []
            fb.visit(other.append)
            assert names == other
            for name in names:
                assert dict(fa[name].attrs) == dict(fb[name].attrs), name
                if isinstance(fa[name], h5py.Dataset):
                    assert fa[name][()].tobytes() == fb[name][()].tobytes(), name
        return
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        if rel.suffix == ".parquet":
            assert pq.read_table(a / rel).equals(pq.read_table(b / rel)), rel
        elif rel.suffix == ".json":
            assert json.loads((a / rel).read_text()) == json.loads((b / rel).read_text()), rel
    ra, rb = open_dataset(a), open_dataset(b)
    for e in range(ra.num_episodes):
        for cam in ra.info.rgb:
            np.testing.assert_array_equal(np.stack(list(ra.rgb(e, cam))), np.stack(list(rb.rgb(e, cam))))


@pytest.mark.parametrize("renderer", ["tiny", "gl"])
def test_replay_in_worker_processes_equals_replay_in_this_one(renderer: str, tmp_path: Path) -> None:
    """Worker processes write the same bytes as replaying in this process, episodes in order (workers=3: worker 0
    renders episodes 0 and 2, worker 1 episode 1), in both formats; and they equal the recording where the rig is
    the recorded one."""
    if renderer == "gl":
        gl_or_skip()
    src = tmp_path / "src.hdf5"
    record(src, "robomimic", [0, 1, 2], renderer=renderer, cut_last=2)
    for fmt, suffix, counts in (("robomimic", ".hdf5", (2, 3)), ("lerobot", "", (3,))):
        one = replay(src, tmp_path / f"one{suffix}", NEW_RIG, format=fmt, progress=False, workers=1)
        assert one.workers == 1 and one.frames == 2 * STEPS + 2
        for n in counts:
            many = replay(src, tmp_path / f"many{suffix}", NEW_RIG, format=fmt, progress=False, workers=n,
                          overwrite=True)
            assert many.workers == n and many.frames == one.frames
            datasets_equal(tmp_path / f"one{suffix}", tmp_path / f"many{suffix}")
    again = replay(src, tmp_path / "again.hdf5", RIG, progress=False, workers=2)
    assert again.workers == 2
    reader = open_dataset(src)
    for copy in ("one", "one.hdf5", "again.hdf5"):  # snapshots copied (robomimic to robomimic: compressed as they are)
        replayed = open_dataset(tmp_path / copy)
        for e in range(3):
            assert [f.snapshot for f in replayed.frames(e)] == [f.snapshot for f in reader.frames(e)]
            assert replayed.final_snapshot(e) == reader.final_snapshot(e)
        replayed.close()
    recorded = open_dataset(tmp_path / "again.hdf5")
    for e in range(3):
        for group in ("obs", "next_obs"):
            for cam in ("front", "wrist"):
                np.testing.assert_array_equal(recorded.rgb(e, cam, group), reader.rgb(e, cam, group))
            np.testing.assert_array_equal(recorded.depth(e, "front", group), reader.depth(e, "front", group))
    reader.close()
    recorded.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.hdf5", "many", "many.hdf5", "one", "one.hdf5",
                                                          "src.hdf5"]


def test_copied_snapshots_must_be_the_episodes(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    """A robomimic writer told to copy an episode's snapshots from another file checks that they are that
    episode's (same count and sizes) before it commits the episode."""
    from pixelrig.datasets.formats import open_writer
    from pixelrig.datasets.steps import Observation, Step

    src, _ = robomimic_run
    reader = open_dataset(src)
    obs = Observation(rgb={c: reader.rgb(0, c)[0] for c in reader.info.rgb},
                      depth={c: reader.depth(0, c)[0] for c in reader.info.depth},
                      state=reader.demo(0)["obs/state"][0])
    writer = open_writer(tmp_path / "x.hdf5", "robomimic", reader.info)
    writer.take_snapshots_from(src, "demo_1")  # 3 frames, and episode 0 has 6
    for f in reader.frames(0):
        writer.add_frame(Step(obs, f.action, f.reward, f.terminated, f.truncated, f.snapshot, obs))
    with pytest.raises(RuntimeError, match=re.escape("must come before the episode's first frame")):
        writer.take_snapshots_from(src, "demo_0")
    with pytest.raises(ValueError, match=re.escape(f"{src}:demo_1 does not hold the snapshots of the episode")):
        writer.end_episode(reader.final_snapshot(0), "truncated")
    writer.abort_episode()
    writer.close()
    reader.close()
    check = open_dataset(tmp_path / "x.hdf5")
    assert check.num_episodes == 0
    check.close()


def test_default_worker_count() -> None:
    """One process per usable core, with at most one worker per episode and per MIN_FRAMES_PER_WORKER frames; 1
    when make_env cannot go to another process."""
    import functools

    from pixelrig.datasets.replay import MIN_FRAMES_PER_WORKER, usable_cpus, worker_count

    cpus = usable_cpus()
    big = 100 * MIN_FRAMES_PER_WORKER
    assert worker_count(None, None, 1000, big) == min(cpus, 101)
    assert worker_count(None, None, 2, big) == min(cpus, 3)
    assert worker_count(None, None, 50, 2 * MIN_FRAMES_PER_WORKER - 1) == min(cpus, 2)
    assert worker_count(None, None, 50, MIN_FRAMES_PER_WORKER - 1) == 1
    assert worker_count(None, lambda: gym.make(ENV_ID), 50, big) == 1
    assert worker_count(None, functools.partial(gym.make, ENV_ID), 50, big) == min(cpus, 51)
    assert worker_count(5, None, 2, big) == 3  # never more workers than episodes
    assert worker_count(1, lambda: gym.make(ENV_ID), 50, big) == 1


@pytest.mark.parametrize("workers", [0, -1, 2.0, True, "2"])
def test_bad_workers_value_is_named(workers: object, robomimic_run: tuple[Path, list[Episode]],
                                    tmp_path: Path) -> None:
    src, _ = robomimic_run
    with pytest.raises(ValueError, match=re.escape(f"workers={workers!r} must be a whole number >= 1 (1: everything "
                                                   "in this process) or None")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=workers)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_workers_need_a_make_env_that_pickles(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    src, _ = robomimic_run
    with pytest.raises(ValueError, match=re.escape("workers=2 runs make_env in worker processes, but it cannot be "
                                                   "pickled") + ".*" + re.escape("or pass workers=1")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=2,
               make_env=lambda: gym.make(ENV_ID, renderer="tiny", max_episode_steps=STEPS))
    assert list(tmp_path.iterdir()) == []


def corrupt_snapshot(path: Path, episode: int, frame: int) -> None:
    with h5py.File(path, "r+") as f:
        states = f[f"data/demo_{episode}/states"]
        row = states[frame]
        row[200] ^= 0xFF
        states[frame] = row


@pytest.mark.parametrize("workers", [1, 3])
def test_a_failing_replay_leaves_nothing_behind(workers: int, robomimic_run: tuple[Path, list[Episode]],
                                                tmp_path: Path) -> None:
    """A corrupted snapshot in episode 1 (rendered by worker 1 with workers=3) is raised in the caller with the
    episode and frame, after episode 0 was written: nothing is left at dst, and an old dataset there (overwrite=True)
    stays as it was."""
    src = tmp_path / "src.hdf5"
    shutil.copy(robomimic_run[0], src)
    corrupt_snapshot(src, 1, 2)
    with pytest.raises(ValueError, match=re.escape("episode 1 frame 2: snapshot is corrupted or truncated")):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=workers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.hdf5"]

    old = tmp_path / "old"
    replay(robomimic_run[0], old, NEW_RIG, format="lerobot", progress=False, workers=1)
    before = {p.relative_to(old): p.read_bytes() for p in old.rglob("*") if p.is_file()}
    with pytest.raises(ValueError, match=re.escape("episode 1 frame 2: snapshot is corrupted")):
        replay(src, old, NEW_RIG, format="lerobot", progress=False, workers=workers, overwrite=True)
    assert {p.relative_to(old): p.read_bytes() for p in old.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "src.hdf5"]


def test_an_interrupted_replay_leaves_nothing_behind(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C in the middle of episode 1 (episode 0 written): nothing at dst, the old dataset there unchanged."""
    import pixelrig.datasets.rerender as rerender

    src, _ = robomimic_run
    old = tmp_path / "old.hdf5"
    replay(src, old, NEW_RIG, progress=False, workers=1)
    before = old.read_bytes()
    calls, real = {"n": 0}, rerender.SnapshotDrawer.observe

    def interrupted(self: rerender.SnapshotDrawer, *args: object) -> object:
        calls["n"] += 1
        if calls["n"] == STEPS + 2:
            raise KeyboardInterrupt
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(rerender.SnapshotDrawer, "observe", interrupted)
    for dst in (tmp_path / "new.hdf5", old):
        calls["n"] = 0
        with pytest.raises(KeyboardInterrupt):
            replay(src, dst, NEW_RIG, progress=False, workers=1, overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.hdf5"] and old.read_bytes() == before


def env_dying_on_third_pose_restore() -> gym.Env:
    """make_env for replay workers: the worker process exits (code 7) at its third per-frame pose restore."""
    import itertools

    from pixelrig.datasets import bullet_file as poses

    calls, real = itertools.count(), poses.PoseRestorer.restore

    def restore(self: poses.PoseRestorer, data: bytes) -> None:
        if next(calls) == 2:
            os._exit(7)
        real(self, data)

    poses.PoseRestorer.restore = restore  # type: ignore[method-assign]  # in the worker process only
    return gym.make(ENV_ID, renderer="tiny", max_episode_steps=STEPS)


def test_a_worker_that_dies_is_a_clear_error(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path) -> None:
    from pixelrig.datasets import ReplayWorkerError

    src, _ = robomimic_run
    with pytest.raises(ReplayWorkerError, match=r"replay worker 0 \(pid \d+\) died with exit code 7 while rendering "
                                                r"episode 0"):
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, workers=2, make_env=env_dying_on_third_pose_restore)
    assert list(tmp_path.iterdir()) == []


def fail_second_lerobot_episode_with_enospc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The LeRobot writer's second episode fails to open with ENOSPC, as pyarrow reports a full disk (where no tmpfs
    can be mounted)."""
    import pixelrig.datasets.lerobot as lerobot

    calls = {"n": 0}
    real = lerobot._Episode.__init__

    def failing_init(self: lerobot._Episode, writer: lerobot.LeRobotWriter) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "[Errno 28] Error writing bytes to file. Detail: No space left on device")
        real(self, writer)

    monkeypatch.setattr(lerobot._Episode, "__init__", failing_init)


def test_a_full_disk_during_replay_leaves_nothing(robomimic_run: tuple[Path, list[Episode]], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fail_second_lerobot_episode_with_enospc(monkeypatch)
    src, _ = robomimic_run
    dst = tmp_path / "new"
    with pytest.raises(DatasetWriteError, match=re.escape(f"replay could not write {str(dst)!r} (No space left on "
                                                          "device), so nothing was left there: free space")):
        replay(src, dst, NEW_RIG, format="lerobot", progress=False, workers=1)
    assert list(tmp_path.iterdir()) == []


# ---- nothing lost --------------------------------------------------------------------------------------------

CHILD = """
import sys, gymnasium as gym, numpy as np
from pixelrig import Camera, PixelObs
from pixelrig.datasets import DatasetRecorder
cams = [Camera("front", width=32, height=24, eye=(1.0, 0.0, 1.2), target=(0.5, 0.0, 0.6), modalities=("rgb", "depth"))]
env = DatasetRecorder(PixelObs(gym.make("pixelrig/PandaPush-v0", renderer="tiny", max_episode_steps=4), cams=cams),
                      sys.argv[1], format=sys.argv[2])
for seed in range(2):
    env.reset(seed=seed)
    for _ in range(4):
        env.step(np.zeros(3, np.float32))
env.reset(seed=2)
env.step(np.zeros(3, np.float32))
env.step(np.zeros(3, np.float32))
print("MID", flush=True)
import time; time.sleep(120)
"""


def record_then_kill(path: Path, fmt: str, cwd: Path) -> int:
    """Run :data:`CHILD` recording into ``path``, SIGKILL it mid-episode 2 (its videos streaming); its return code."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), fmt], stdout=subprocess.PIPE, text=True,
                             cwd=cwd)
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("MID"):
                break
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    return child.returncode


@pytest.mark.parametrize("fmt", ["lerobot", "robomimic"])
def test_killed_recorder_keeps_finished_episodes_and_resumes(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / ("push.hdf5" if fmt == "robomimic" else "push")
    assert record_then_kill(path, fmt, tmp_path) == -signal.SIGKILL

    reader = open_dataset(path)
    assert reader.num_episodes == 2 and [reader.episode_length(e) for e in range(2)] == [4, 4]
    assert len(list(reader.frames(1))) == 4
    reader.close()
    if fmt == "lerobot":
        assert (path / ".partial").is_dir()  # the unfinished episode's files, which no reader looks at
        assert sorted(p.name for p in (path / "data").rglob("*.parquet")) == ["file-000.parquet", "file-001.parquet"]
    else:
        assert (path.parent / f".{path.name}.episode.h5").is_file()
        with h5py.File(path, "r") as f:
            assert sorted(f["data"]) == ["demo_0", "demo_1"] and int(f["data"].attrs["total"]) == 8

    cams = [Camera("front", width=32, height=24, eye=(1.0, 0.0, 1.2), target=(0.5, 0.0, 0.6),
                   modalities=("rgb", "depth"))]
    env = DatasetRecorder(make_env(cams=cams, steps=4), path, format=fmt, resume=True)
    env.reset(seed=5)
    for _ in range(4):
        env.step(np.zeros(3, np.float32))
    env.close()
    reader = open_dataset(path)
    assert reader.num_episodes == 3 and reader.episode_length(2) == 4
    reader.close()
    assert not (path / ".partial").exists() and not (path.parent / f".{path.name}.episode.h5").exists()


def test_existing_datasets_are_never_overwritten_by_accident(lerobot_run: tuple[Path, list[Episode]],
                                                             tmp_path: Path) -> None:
    path, _ = lerobot_run
    before = (path / "meta" / "info.json").read_bytes()
    with pytest.raises(DatasetExistsError, match=re.escape(f"a lerobot dataset already exists at {str(path)!r}: "
                                                            "pass overwrite=True")):
        DatasetRecorder(make_env(), path)
    assert (path / "meta" / "info.json").read_bytes() == before
    with pytest.raises(ValueError, match="overwrite=True and resume=True contradict"):
        DatasetRecorder(make_env(), path, overwrite=True, resume=True)
    with pytest.raises(ValueError, match=re.escape("cannot resume") + ".*cameras"):
        DatasetRecorder(make_env(cams=NEW_RIG), path, resume=True)
    stranger = tmp_path / "notes"
    stranger.mkdir()
    (stranger / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="is not a lerobot dataset, so it is not deleted"):
        DatasetRecorder(make_env(), stranger, overwrite=True)
    assert (stranger / "keep.txt").read_text() == "mine"
    fresh = tmp_path / "fresh"
    record(fresh, "lerobot", [0])
    record(fresh, "lerobot", [1], overwrite=True)
    assert open_dataset(fresh).num_episodes == 1


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("wrap it as DatasetRecorder(PixelObs(env), path)")):
        DatasetRecorder(gym.make(ENV_ID), tmp_path / "x")
    with pytest.raises(ValueError, match=re.escape("format must be one of ('lerobot', 'robomimic'): got 'zarr'")):
        DatasetRecorder(make_env(), tmp_path / "x", format="zarr")
    with pytest.raises(ValueError, match=re.escape("name it *.hdf5")):
        DatasetRecorder(make_env(), tmp_path / "x.zarr", format="robomimic")
    with pytest.raises(ValueError, match=re.escape("fps=23.5 must be a positive whole number")):
        DatasetRecorder(make_env(), tmp_path / "x", fps=23.5)
    with pytest.raises(FileNotFoundError, match="no dataset at"):
        replay(tmp_path / "nothing", tmp_path / "y", NEW_RIG, progress=False)


def test_a_recorded_env_still_snapshots(tmp_path: Path) -> None:
    """snapshot/restore of the whole stack, recorder included: restoring mid-episode writes the episode so far."""
    env = DatasetRecorder(make_env(), tmp_path / "d")
    env.reset(seed=0)
    env.step(np.zeros(3, np.float32))
    snap = pixelrig.snapshot(env)
    env.step(np.zeros(3, np.float32))
    with pytest.warns(UserWarning, match="the episode so far is written"):
        pixelrig.restore(env, snap)
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.step(np.zeros(3, np.float32))
    env.close()
    reader = open_dataset(tmp_path / "d")
    assert reader.num_episodes == 1 and reader.episode_length(0) == 2 and reader.episode_end(0) == "cut"


# ---- unwritable paths and full disks -------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path | None]:
    """A tmpfs mounted at ``where`` (root only); yields None where mounting is not permitted."""
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        yield None
        return
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_unwritable_path_is_a_clear_error(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    with pytest.raises(DatasetWriteError, match=re.escape(f"writing the dataset folder at {str(afile / 'ds')!r} "
                                                          "failed: Not a directory")):
        DatasetRecorder(make_env(), afile / "ds")
    with tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        if ro is None:
            pytest.skip("mount is not permitted here: the read-only case needs root")
        with pytest.raises(DatasetWriteError, match="Read-only file system.*choose a writable path"):
            DatasetRecorder(make_env(), ro / "ds.hdf5", format="robomimic")


def fill_until_full(path: Path, fmt: str) -> tuple[int, DatasetWriteError]:
    env = DatasetRecorder(make_env(), path, format=fmt)
    try:
        for seed in range(200):
            env.reset(seed=seed)
            for _ in range(STEPS):
                env.step(np.zeros(3, np.float32))
    except DatasetWriteError as exc:
        return env.episodes_written, exc
    finally:
        with contextlib.suppress(DatasetWriteError):
            env.close()
    raise AssertionError("the disk never filled up")


@pytest.mark.parametrize("fmt", ["lerobot", "robomimic"])
def test_full_disk_is_a_clear_error_and_keeps_finished_episodes(fmt: str, tmp_path: Path) -> None:
    """A real full disk: a 1 MiB tmpfs (root only; skipped elsewhere, see the injected test below)."""
    with tmpfs(tmp_path / "small", "size=1m") as small:
        if small is None:
            pytest.skip("mount is not permitted here: test_injected_enospc covers a full disk instead")
        path = small / ("ds.hdf5" if fmt == "robomimic" else "ds")
        written, exc = fill_until_full(path, fmt)
        assert exc.errno == errno.ENOSPC and "No space left on device" in str(exc)
        assert f"The {written} episode(s) finished before are intact" in str(exc) and "resume=True" in str(exc)
        assert written >= 1
        reader = open_dataset(path)
        assert reader.num_episodes == written
        assert all(len(list(reader.frames(e))) == STEPS for e in range(written))
        reader.close()


def test_injected_enospc_at_the_write_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ENOSPC raised by the parquet writer (as pyarrow reports a full disk), where no tmpfs can be mounted."""
    fail_second_lerobot_episode_with_enospc(monkeypatch)
    written, exc = fill_until_full(tmp_path / "ds", "lerobot")
    assert written == 1 and exc.errno == errno.ENOSPC and "the disk is full" in str(exc)
    assert open_dataset(tmp_path / "ds").num_episodes == 1


# ---- beyond PandaPush: other robot files, bang-bang actions -------------------------------------------------

SIDE = [Camera("side", width=40, height=32, eye=(0.0, 1.8, 1.0), target=(0.0, 0.0, 0.4), far=4.0,
               modalities=("rgb", "depth"))]


@pytest.mark.parametrize(("source", "control", "renderer"), [
    ("kuka_iiwa/model.urdf", "torque", "tiny"),
    ("r2d2.urdf", "velocity", "tiny"),
    ("mjcf/ant.xml", "torque", "gl"),
])
def test_replay_of_other_robots_at_full_effort_equals_a_live_run(source: str, control: str, renderer: str,
                                                                tmp_path: Path) -> None:
    """A robot file from pybullet_data, driven at the bounds of its action space through ``pixelrig/Robot-v0``,
    recorded with one camera and replayed with a new side camera: the images equal a live run of the
    same actions with that camera, rgb bit for bit (robomimic stores images without loss) and depth to the
    millimetre it is stored in, episode by episode."""
    if renderer == "gl":
        gl_or_skip()
    steps = 40

    def make(cams: list[Camera]) -> gym.Env:
        return PixelObs(gym.make("pixelrig/Robot-v0", source=source, control=control, renderer=renderer,
                                 max_episode_steps=steps), cams=cams)

    front = [Camera("front", width=32, height=24, eye=(1.6, 0.0, 1.2), target=(0.0, 0.0, 0.4), far=4.0,
                    modalities=("rgb", "depth"))]
    src, dst = tmp_path / "src.hdf5", tmp_path / "side.hdf5"
    recorded = make(front)
    rngs = [np.random.default_rng(seed) for seed in (0, 1)]
    actions = [[bang_bang_action(recorded.action_space, rng) for _ in range(steps)] for rng in rngs]
    record_env(recorded, src, "robomimic", [0, 1], actions=actions, task="full effort")
    replay(src, dst, SIDE, progress=False)

    live = make(SIDE)
    try:
        seen = run_episodes(live, [0, 1], actions=actions)
    finally:
        live.close()
    new = open_dataset(dst)
    try:
        assert new.num_episodes == 2 and [new.episode_length(e) for e in range(2)] == [steps, steps]
        for e, episode in enumerate(seen):
            rgb = np.stack([o["side/rgb"] for o in episode[:-1]])
            assert (rgb.max(axis=-1) > 0).mean() > 0.5, "the side camera should see the floor and the robot"
            assert len({frame.tobytes() for frame in rgb}) > steps // 4, "the robot should move in view"
            np.testing.assert_array_equal(new.rgb(e, "side"), rgb)
            np.testing.assert_array_equal(new.rgb(e, "side", "next_obs"),
                                          np.stack([o["side/rgb"] for o in episode[1:]]))
            np.testing.assert_array_equal(new.depth(e, "side"),
                                          np.stack([depth_to_mm(o["side/depth"], 4.0) for o in episode[:-1]]))
            assert [f.action.tolist() for f in new.frames(e)] == [a.tolist() for a in actions[e]]
        moved = [np.abs(episode[-1]["state"] - episode[0]["state"]).max() for episode in seen]
        assert min(moved) > 0.05, f"full effort should move the robot: state changed by {moved}"
    finally:
        new.close()


def test_a_wrapper_stack_replay_cannot_rebuild_is_named_with_the_fix(tmp_path: Path) -> None:
    """An env wrapped by hand (``TimeLimit`` over an unwrapped env) records a wrapper stack that ``gym.make(id)``
    does not rebuild: replay says so, naming both stacks and ``make_env=``, and leaves no destination behind;
    with ``make_env=`` building the same stack it replays."""
    def by_hand() -> gym.Env:
        return gym.wrappers.TimeLimit(gym.make(ENV_ID, renderer="tiny").unwrapped, max_episode_steps=STEPS)

    src = tmp_path / "src.hdf5"
    record_env(PixelObs(by_hand(), cams=RIG), src, "robomimic", [0])
    with pytest.raises(ValueError, match="make_env=") as caught:
        replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False)
    assert re.search(r"its wrapper stack: \[[^]]*TimeLimit'\]; this env's: \[[^]]*TimeLimit', [^]]*OrderEnforcing",
                     str(caught.value)), "both wrapper stacks should be named"
    assert not (tmp_path / "new.hdf5").exists()
    done = replay(src, tmp_path / "new.hdf5", NEW_RIG, progress=False, make_env=by_hand)
    assert (done.episodes, done.frames) == (1, STEPS)
