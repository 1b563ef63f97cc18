"""LeRobot's own reader loads what DatasetRecorder writes: ``LeRobotDataset`` (lerobot-dataset 0.4.4, the v3.0 reader
for Python 3.11) in the readers' venv built by ``scripts/lerobot-venv.sh``; skipped with the reason when that venv
is missing, failed instead when PIXELRIG_REQUIRE_LEROBOT=1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pixelrig import Camera
from pixelrig.datasets import depth_to_mm
from tests.dataset_runs import reader_venv_or_skip, record, run_reader
from tests.test_datasets_lerobot import assert_stats_equal, dataset_stats, live_feature_values
from tests.test_datasets_recorder import record_then_kill

pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')

CAMS = [
    Camera("front", width=64, height=48, fov=55.0, near=0.05, far=4.0, eye=(0.95, 0.0, 1.25), target=(0.5, 0.0, 0.63),
           modalities=("rgb", "depth")),
    Camera("wrist", width=32, height=32, mount="panda_hand", offset=((0.07, 0.0, 0.03), (0.0, 0.0, 0.0, 1.0)),
           modalities=("rgb",)),
]

VIDEO_MEAN_TOLERANCE = 6.0
"""Mean |decoded - recorded| per frame, in levels, through LeRobot's torchcodec decoding. H.264 in yuv420p halves
the chroma resolution: measured 2.0 levels at 84×84 and 4.3 at 33×25 (up to 80 levels in single pixels on coloured
edges). Depth is lossless (parquet) and compared exactly."""


def test_lerobot_dataset_loads_what_was_recorded(tmp_path: Path) -> None:
    reader_venv_or_skip()
    root = tmp_path / "push"
    episodes = record(root, "lerobot", [0, 1, 2], cams=CAMS, cut_last=3)
    frames = [o for ep in episodes for o in ep[:-1]]
    lengths = [len(ep) - 1 for ep in episodes]
    got, meta = run_reader("lerobot", root, tmp_path / "lerobot.npz")

    assert meta["len"] == len(frames) == sum(lengths) and meta["num_episodes"] == 3 and meta["fps"] == 24
    assert meta["video_keys"] == ["observation.images.front", "observation.images.wrist"]
    starts = np.cumsum([0, *lengths])
    assert [(e["dataset_from_index"], e["dataset_to_index"]) for e in meta["episodes"]] == \
        [(int(starts[i]), int(starts[i + 1])) for i in range(3)]
    assert meta["tasks"] == ["push the cube"] and set(got["task"]) == {"push the cube"}
    assert "observation.images.front" in meta["stats_keys"]

    np.testing.assert_array_equal(got["episode_index"], np.repeat(np.arange(3), lengths))
    np.testing.assert_array_equal(got["frame_index"], np.concatenate([np.arange(n) for n in lengths]))
    np.testing.assert_array_equal(got["index"], np.arange(len(frames)))
    np.testing.assert_allclose(got["timestamp"], got["frame_index"] / 24, atol=1e-6)
    np.testing.assert_array_equal(got["observation.state"], np.stack([o["state"] for o in frames]))
    np.testing.assert_array_equal(got["next.done"], np.concatenate([[False] * (n - 1) + [True] for n in lengths]))
    np.testing.assert_array_equal(got["observation.depth.front"][..., 0],
                                  np.stack([depth_to_mm(o["front/depth"], 4.0)[..., 0] for o in frames]))
    for cam in ("front", "wrist"):
        video = got[f"observation.images.{cam}"].astype(int)
        recorded = np.stack([o[f"{cam}/rgb"] for o in frames]).astype(int)
        assert video.shape == recorded.shape
        error = np.abs(video - recorded).reshape(len(frames), -1).mean(axis=1)
        assert error.max() < VIDEO_MEAN_TOLERANCE, (cam, error.max())

    # the actions, through LeRobot, are the ones the recorder stored
    from pixelrig.datasets import open_dataset

    reader = open_dataset(root)
    stored = np.stack([f.action for e in range(3) for f in reader.frames(e)])
    np.testing.assert_array_equal(got["action"], stored)

    # ... and, through LeRobot, what the live env was given and returned (rewards cast to the stored float32)
    np.testing.assert_array_equal(got["action"], np.concatenate([ep.actions for ep in episodes]).astype(np.float32))
    np.testing.assert_array_equal(got["next.reward"].reshape(-1),
                                  np.array([r for ep in episodes for r in ep.rewards], np.float32))
    np.testing.assert_array_equal(got["next.terminated"].reshape(-1), [f for ep in episodes for f in ep.terminated])
    np.testing.assert_array_equal(got["next.truncated"].reshape(-1),
                                  [f for ep in episodes for f in ep.stored_truncated()])
    # LeRobot's meta.stats are the statistics of the live run's values (computed with numpy in the test)
    assert_stats_equal(meta["stats"], dataset_stats(live_feature_values(episodes)))


def test_lerobot_dataset_loads_a_dataset_whose_recorder_was_killed(tmp_path: Path) -> None:
    reader_venv_or_skip()
    root = tmp_path / "killed"
    record_then_kill(root, "lerobot", tmp_path)
    _, meta = run_reader("lerobot", root, tmp_path / "killed.npz")
    assert meta["len"] == 8 and meta["num_episodes"] == 2
    assert [e["length"] for e in meta["episodes"]] == [4, 4]
