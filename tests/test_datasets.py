"""DatasetRecorder and replay: the layouts read back against LeRobot v3.0's and robomimic's documented layouts,
replay bit-exact against a live run of the same actions with the new rig (tiny and gl), nothing lost when the
recorder is killed, never overwriting by accident, and clear errors for unwritable paths and full disks."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import subprocess
import sys
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
from pixelrig.envs.panda import PushExpert
from tests.conftest import gl_or_skip

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


def run_episodes(env: gym.Env, seeds: list[int], cut_last: int | None = None,
                 actions: list[list[np.ndarray]] | None = None) -> list[list[dict]]:
    """Step episodes with the scripted pusher (or given actions); the last episode is cut after ``cut_last``
    steps when given. Returns, per episode, the observations the actions were taken in plus the final one."""
    episodes = []
    for i, seed in enumerate(seeds):
        obs, _ = env.reset(seed=seed)
        policy, seen, done, t = PushExpert(), [obs], False, 0
        while not done:
            if cut_last is not None and i == len(seeds) - 1 and t == cut_last:
                break
            action = actions[i][t] if actions is not None else policy(obs["state"])
            obs, _, terminated, truncated, _ = env.step(action)
            seen.append(obs)
            done, t = terminated or truncated, t + 1
            if actions is not None and t == len(actions[i]):
                break
        episodes.append(seen)
    return episodes


def record(path: Path, fmt: str, seeds: list[int], renderer: str = "tiny", cams: list[Camera] = RIG,
           cut_last: int | None = None, actions: list[list[np.ndarray]] | None = None, **kw) -> list[list[dict]]:
    env = DatasetRecorder(make_env(renderer, cams), path, format=fmt, task="push the cube", **kw)
    try:
        return run_episodes(env, seeds, cut_last, actions)
    finally:
        env.close()


@pytest.fixture(scope="module")
def robomimic_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[dict]]]:
    """Two episodes: one to its TimeLimit, one cut by close() after 3 steps."""
    path = tmp_path_factory.mktemp("rm") / "push.hdf5"
    return path, record(path, "robomimic", [0, 1], cut_last=3)


@pytest.fixture(scope="module")
def lerobot_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[dict]]]:
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


def test_robomimic_layout(robomimic_run: tuple[Path, list[list[dict]]]) -> None:
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


def test_robomimic_states_restore_exactly(robomimic_run: tuple[Path, list[list[dict]]]) -> None:
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


def test_robomimic_sequence_dataset_reads_it(robomimic_run: tuple[Path, list[list[dict]]], tmp_path: Path) -> None:
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


def test_lerobot_layout(lerobot_run: tuple[Path, list[list[dict]]]) -> None:
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
        snaps = pq.read_table(path / f"snapshots/chunk-000/file-{e:03d}.parquet")
        assert snaps.column("frame_index").to_pylist() == list(range(n + 1))  # + the state after the last action
        start += n
    assert not (path / ".partial").exists()

    reader = open_dataset(path)
    for e, seen in enumerate(episodes):
        np.testing.assert_array_equal(reader.depth(e, "front"),
                                      np.stack([depth_to_mm(o["front/depth"], 4.0) for o in seen[:-1]]))
        video = np.stack(list(reader.rgb(e, "front"))).astype(int)
        assert video.shape == (len(seen) - 1, 32, 40, 3)
        error = np.abs(video - np.stack([o["front/rgb"] for o in seen[:-1]]).astype(int)).mean()
        assert error < VIDEO_MEAN_TOLERANCE, error


VIDEO_MEAN_TOLERANCE = 8.0
"""Mean |decoded - recorded| per frame, in levels. H.264 in yuv420p halves the chroma resolution, which on images
this small (40×32, 24×24) smears coloured edges: measured 2.0 levels at 84×84 and 4.3 at 33×25, up to 80 levels in
single edge pixels. Depth is lossless (parquet) and compared exactly."""


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


def test_replay_of_a_randomised_env_is_exact(tmp_path: Path) -> None:
    """Randomised colours, camera jitter (of the new rig too) and body positions: the env is rebuilt from the
    recorded kwargs (a Randomization dataclass) and each episode's draw comes back with its first snapshot."""
    from pixelrig import Randomization

    randomize = Randomization(link_colors=True, camera_position=0.01, camera_rotation=0.02,
                              body_position={"cube": ((0.40, -0.15, 0.65), (0.60, 0.15, 0.65))})

    def randomised(cams: list[Camera]) -> gym.Env:
        return PixelObs(gym.make(ENV_ID, renderer="tiny", max_episode_steps=4, randomize=randomize), cams=cams)

    env = DatasetRecorder(randomised(RIG), tmp_path / "src.hdf5", format="robomimic")
    run_episodes(env, [7, 8])
    env.close()
    reader = open_dataset(tmp_path / "src.hdf5")
    actions = [[f.action for f in reader.frames(e)] for e in range(2)]
    assert reader.info.env_kwargs["randomize"]["__dataclass__"] == "pixelrig.envs.randomization:Randomization"
    reader.close()
    replay(tmp_path / "src.hdf5", tmp_path / "new.hdf5", NEW_RIG, progress=False)
    live = run_episodes(randomised(NEW_RIG), [7, 8], actions=actions)
    new = open_dataset(tmp_path / "new.hdf5")
    for e, seen in enumerate(live):
        np.testing.assert_array_equal(new.rgb(e, "top"), np.stack([o["top/rgb"] for o in seen[:-1]]))
        np.testing.assert_array_equal(new.rgb(e, "top", "next_obs"), np.stack([o["top/rgb"] for o in seen[1:]]))
    new.close()


def test_cli_replay(robomimic_run: tuple[Path, list[list[dict]]], tmp_path: Path,
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


@pytest.mark.parametrize("fmt", ["lerobot", "robomimic"])
def test_killed_recorder_keeps_finished_episodes_and_resumes(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / ("push.hdf5" if fmt == "robomimic" else "push")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), fmt], stdout=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("MID"):
                break
        os.kill(child.pid, signal.SIGKILL)  # mid-episode 2, its videos streaming
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

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


def test_existing_datasets_are_never_overwritten_by_accident(lerobot_run: tuple[Path, list[list[dict]]],
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
    import pixelrig.datasets.lerobot as lerobot

    calls = {"n": 0}
    real = lerobot._Episode.__init__

    def failing_init(self: lerobot._Episode, writer: lerobot.LeRobotWriter) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "[Errno 28] Error writing bytes to file. Detail: No space left on device")
        real(self, writer)

    monkeypatch.setattr(lerobot._Episode, "__init__", failing_init)
    written, exc = fill_until_full(tmp_path / "ds", "lerobot")
    assert written == 1 and exc.errno == errno.ENOSPC and "the disk is full" in str(exc)
    assert open_dataset(tmp_path / "ds").num_episodes == 1
