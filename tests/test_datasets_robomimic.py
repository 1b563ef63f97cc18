"""DatasetRecorder's robomimic files: the layout read back against robomimic's documented one, the stored snapshots
restoring exactly, and robomimic's own SequenceDataset reading them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pixelrig
from pixelrig import Snapshot
from pixelrig.datasets import (
    depth_to_mm,
    open_dataset,
)
from tests.dataset_runs import (
    ENV_ID,
    STEPS,
    Episode,
    assert_frames_are_the_live_steps,
    make_env,
    run_reader,
)

h5py = pytest.importorskip("h5py", reason='robomimic datasets need h5py: pip install "pixelrig[datasets]"')
pa = pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')


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
