"""An SO-101 task's LeRobot dataset takes a real so101_follower's features (issue 38 item 4).

- here: ``pixelrig collect`` writes LeRobot's columns in ``data/`` (the state and action in the real robot's units:
  degrees, the jaw 0-100) and pixelrig's own under ``pixelrig/`` (the env's state and action, rewards, flags, depth,
  snapshots), which pixelrig reads back as it reads any dataset;
- in the LeRobot 0.6 venv (``LEROBOT_ENV_VENV``, scripts/lerobot-env-venv.sh; tests/lerobot_so101_checks.py): the
  features equal those LeRobot's own recording code writes for a so101_follower with the same cameras (at the
  collected size and at the default 640x480), and ``aggregate_datasets`` takes the two datasets together. Skipped
  with the reason when the venv is not built; failed instead when PIXELRIG_REQUIRE_LEROBOT_ENV=1 (CI).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from pixelrig.datasets import open_dataset
from pixelrig.datasets.collect import collect
from pixelrig.datasets.lerobot import features

pytest.importorskip("pyarrow", reason='LeRobot datasets need pyarrow: pip install "pixelrig[datasets]"')

REPO = Path(__file__).resolve().parents[1]
RIG = REPO / "examples" / "rigs" / "so101_train.toml"
VENVS = [Path(os.environ["LEROBOT_ENV_VENV"])] if os.environ.get("LEROBOT_ENV_VENV") else \
    [REPO / ".venv-lerobot-env", Path.home() / ".cache" / "pixelrig" / "venv-lerobot-env"]
"""Where the LeRobot 0.6 venv is looked for (the plugin's tests read LEROBOT_ENV_VENV too)."""
LEROBOT_COLUMNS = ["action", "observation.state", "timestamp", "frame_index", "episode_index", "index", "task_index"]


@pytest.fixture(scope="module")
def lift(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two SO101Lift expert episodes at 128x96 (seeds 0 and 1), TinyRenderer."""
    out = tmp_path_factory.mktemp("so101") / "lift"
    collect("pixelrig/SO101Lift-v0", out, episodes=2, cams=RIG, renderer="tiny", progress=False)
    return out


def test_lerobot_columns_hold_the_real_robot_state_and_action_and_pixelrigs_live_under_its_prefix(lift: Path) -> None:
    import pyarrow.parquet as pq

    meta = json.loads((lift / "meta" / "info.json").read_text())
    assert meta["robot_type"] == "so_follower" and meta["fps"] == 30
    data = pq.read_table(lift / "data" / "chunk-000" / "file-000.parquet")
    assert data.schema.names == LEROBOT_COLUMNS
    names = sorted(str(p.relative_to(lift)) for p in lift.rglob("*") if p.is_file())
    assert [n for n in names if not n.startswith(("data/", "meta/", "videos/"))] == [
        "pixelrig/data/chunk-000/file-000.parquet", "pixelrig/data/chunk-000/file-001.parquet",
        "pixelrig/snapshots/chunk-000/file-000.parquet", "pixelrig/snapshots/chunk-000/file-001.parquet"]
    episodes = pq.read_table(lift / "meta" / "episodes" / "chunk-000" / "file-000.parquet").schema.names
    assert {n for n in episodes if n.startswith("pixelrig")} == {"pixelrig/end", "pixelrig/seed", "pixelrig/success"}
    assert not any(k.startswith(("next.", "observation.depth")) for k in json.loads(
        (lift / "meta" / "stats.json").read_text()))

    reader = open_dataset(lift)
    env = gym.make("pixelrig/SO101Lift-v0")
    try:
        layout = env.unwrapped.observation_layout
        frames = list(reader.frames(0))
        state = np.array(data.column("observation.state").to_pylist()[:len(frames)], np.float32)
        action = np.array(data.column("action").to_pylist()[:len(frames)], np.float32)
        own = np.stack([f.state for f in frames])
        # the state is the task's joint_pos term (degrees, the jaw 0-100), as the real so101_follower reports it
        np.testing.assert_array_equal(state, own[:, layout["joint_pos"]])
        assert state[0, -1] == pytest.approx(100.0) and np.abs(state[:, :5]).max() < 180.0
        # the action is the motors' targets after each step in the same units; the env's own action is pixelrig's
        assert np.abs(action[:, :5] - state[:, :5]).max() < 30.0
        assert 0.0 <= action[:, 5].min() <= action[:, 5].max() <= 100.0
        np.testing.assert_array_equal(np.stack([f.robot_state for f in frames]), state)
        np.testing.assert_array_equal(np.stack([f.robot_action for f in frames]), action)
        assert frames[0].action.shape == (6,) and np.abs(np.stack([f.action for f in frames])).max() <= 1.0
        assert frames[-1].terminated and reader.episode_attrs(0) == {"seed": 0, "success": True}
        assert reader.depth(0, "front").shape == (len(frames), 96, 128, 1)
        # the snapshots restore: frame 3's state, restored, observes as recorded
        from pixelrig import Snapshot, restore

        restore(env, Snapshot.from_bytes(frames[3].snapshot))
        obs = env.unwrapped.observe()
        np.testing.assert_array_equal(np.asarray(obs, np.float32), frames[3].state)
    finally:
        env.close()


def lerobot_venv_or_skip() -> Path:
    """The LeRobot 0.6 venv's python; skips (fails with PIXELRIG_REQUIRE_LEROBOT_ENV=1) when none is built."""
    for venv in VENVS:
        python = venv / "bin" / "python"
        if python.is_file() and subprocess.run([str(python), "-c", "import lerobot.datasets"],
                                               capture_output=True).returncode == 0:
            return python
    if os.environ.get("PIXELRIG_REQUIRE_LEROBOT_ENV") == "1":
        pytest.fail(f"PIXELRIG_REQUIRE_LEROBOT_ENV=1 but no LeRobot venv at {[str(v) for v in VENVS]}: run make "
                    "lerobot (scripts/lerobot-env-venv.sh)")
    pytest.skip(f"no LeRobot 0.6 venv at {[str(v) for v in VENVS]} (LEROBOT_ENV_VENV)")


@pytest.mark.slow
@pytest.mark.lerobot_env
def test_features_are_lerobot_records_for_a_so101_follower_and_lerobot_aggregates_both(lift: Path,
                                                                                        tmp_path: Path) -> None:
    python = lerobot_venv_or_skip()
    out = tmp_path / "checks.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "PYTHONPATH": "", "TQDM_DISABLE": "1"}
    proc = subprocess.run([str(python), str(REPO / "tests" / "lerobot_so101_checks.py"), str(lift), str(out),
                           str(tmp_path), "128x96", "640x480"], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    got = json.loads(out.read_text())
    small, big = got["sizes"]["128x96"], got["sizes"]["640x480"]
    assert got["collected"]["features"] == small["features"]
    assert got["collected"]["robot_type"] == small["robot_type"] and got["collected"]["fps"] == 30
    assert got["equal_for_merge"]
    # the default 640x480 rig's features, as the writer makes them, are LeRobot's at that size
    reader = open_dataset(lift)
    env0 = gym.make("pixelrig/SO101Lift-v0")
    try:
        default = tuple(c.to_dict() for c in env0.unwrapped.default_cameras())
    finally:
        env0.close()
    assert features(dataclasses.replace(reader.info, cams=default)) == big["features"]
    mixed = got["aggregated"]
    assert "error" not in mixed, mixed.get("error")
    assert mixed["episodes"] == 3 and mixed["robot_type"] == "so_follower"
    assert mixed["last"]["observation.state"] == [6] and mixed["last"]["observation.images.wrist"] == [3, 96, 128]
