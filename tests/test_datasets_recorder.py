"""DatasetRecorder in either format: the depth convention, nothing lost when the recorder is killed, never
overwriting by accident, a recorded env still snapshotting, and clear errors for bad arguments, unwritable paths and
full disks."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera
from pixelrig.datasets import (
    DatasetExistsError,
    DatasetRecorder,
    DatasetWriteError,
    depth_to_mm,
    mm_to_depth,
    open_dataset,
    replay,
)
from tests.dataset_runs import (
    ENV_ID,
    NEW_RIG,
    STEPS,
    Episode,
    fail_second_lerobot_episode_with_enospc,
    make_env,
    record,
    tmpfs,
)

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')


# ---- depth convention --------------------------------------------------------------------------------------


def test_depth_is_stored_as_millimetres_with_zero_for_background() -> None:
    depth = np.array([[[0.0005], [0.0014], [1.2344], [1.2346]], [[3.999], [4.0], [70.0], [2.5]]], np.float32)
    mm = depth_to_mm(depth, far=4.0)
    assert mm.dtype == np.uint16 and mm.shape == depth.shape
    assert mm[..., 0].tolist() == [[1, 1, 1234, 1235], [3999, 0, 0, 2500]]
    back = mm_to_depth(mm, far=4.0)
    assert back[1, 1, 0] == 4.0 and abs(float(back[0, 2, 0]) - 1.234) < 1e-6
    assert depth_to_mm(np.array([[[70.0]]], np.float32), far=100.0)[0, 0, 0] == 65535  # saturates


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
