"""Run in the LeRobot 0.6 venv (tests/test_datasets_so101_features.py starts it): what LeRobot's own recording code
writes for a real so101_follower with cameras "front" and "wrist", against a dataset ``pixelrig collect`` wrote.

    python tests/lerobot_so101_checks.py COLLECTED OUT.json WORK_FOLDER [WIDTHxHEIGHT ...]

The reference is built as ``lerobot-record`` builds it: ``make_robot_from_config`` of an ``SO101FollowerConfig``
with OpenCV camera configs of the given sizes (no hardware is touched: the robot is never connected), its features
through the default processors (``aggregate_pipeline_dataset_features``, ``combine_feature_dicts``), then
``LeRobotDataset.create(..., robot_type=robot.name, use_videos=True)`` with the default video encoder, one episode
added with ``add_frame``/``save_episode``. Writes to OUT.json, per size: LeRobot's features and robot_type before
and after the episode; and for the first size (the collected dataset's): the collected dataset's, whether LeRobot's
``features_equal_for_merge`` takes them, and what ``aggregate_datasets`` of the two made (or its error).
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import numpy as np
from lerobot.cameras.opencv import OpenCVCameraConfig
from lerobot.datasets import (
    LeRobotDataset,
    aggregate_datasets,
    aggregate_pipeline_dataset_features,
    create_initial_features,
)
from lerobot.datasets.feature_utils import features_equal_for_merge
from lerobot.processor import make_default_processors
from lerobot.robots import make_robot_from_config
from lerobot.robots.so_follower import SO101FollowerConfig
from lerobot.utils.feature_utils import combine_feature_dicts


class NoHardwareBus:
    """Stands in for ``FeetechMotorsBus``, whose constructor needs the servos' SDK (``lerobot[feetech]``, not in the
    venv) and a port: it keeps the motor table the robot gives it (LeRobot's own, which its features are made of)."""

    def __init__(self, port: str, motors: dict, calibration: dict | None = None, **_: object) -> None:
        self.port, self.motors, self.calibration = port, motors, calibration


def recorded(root: Path, width: int, height: int) -> tuple[dict, str]:
    """A one-episode dataset as lerobot-record writes it for a so101_follower; its features and robot_type."""
    cams = {name: OpenCVCameraConfig(index_or_path=i, width=width, height=height, fps=30)
            for i, name in enumerate(("front", "wrist"))}
    import lerobot.robots.so_follower.so_follower as so_follower

    so_follower.FeetechMotorsBus = NoHardwareBus  # never connected: only its features are read
    robot = make_robot_from_config(SO101FollowerConfig(port="/dev/null", cameras=cams, id="pixelrig_check"))
    teleop_action, _, robot_observation = make_default_processors()
    feats = combine_feature_dicts(
        aggregate_pipeline_dataset_features(pipeline=teleop_action,
                                            initial_features=create_initial_features(action=robot.action_features),
                                            use_videos=True),
        aggregate_pipeline_dataset_features(
            pipeline=robot_observation,
            initial_features=create_initial_features(observation=robot.observation_features), use_videos=True),
    )
    dataset = LeRobotDataset.create("pixelrig/so101_real", 30, root=root, robot_type=robot.name, features=feats,
                                    use_videos=True)
    rng = np.random.default_rng(0)
    for _ in range(4):
        frame = {"task": "pick up the cube"}
        for key, ft in feats.items():
            if ft["dtype"] == "video":
                frame[key] = rng.integers(0, 255, tuple(ft["shape"]), dtype=np.uint8)
            else:
                frame[key] = rng.uniform(-90, 90, tuple(ft["shape"])).astype(np.float32)
        dataset.add_frame(frame)
    dataset.save_episode()
    dataset.finalize()
    info = json.loads((root / "meta" / "info.json").read_text())
    return info["features"], info["robot_type"]


def main() -> None:
    collected, out, work = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    sizes = [tuple(int(n) for n in s.split("x")) for s in sys.argv[4:]]
    result: dict = {"sizes": {}}
    for w, h in sizes:
        feats, robot_type = recorded(work / f"real_{w}x{h}", w, h)
        result["sizes"][f"{w}x{h}"] = {"features": feats, "robot_type": robot_type}
    ours = json.loads((collected / "meta" / "info.json").read_text())
    first = result["sizes"][f"{sizes[0][0]}x{sizes[0][1]}"]
    result["collected"] = {"features": ours["features"], "robot_type": ours["robot_type"], "fps": ours["fps"]}
    result["equal_for_merge"] = features_equal_for_merge(first["features"], ours["features"])
    try:
        aggregate_datasets(["pixelrig/so101_real", "pixelrig/so101_sim"], "pixelrig/so101_mixed",
                           roots=[work / f"real_{sizes[0][0]}x{sizes[0][1]}", collected], aggr_root=work / "mixed")
        mixed = LeRobotDataset("pixelrig/so101_mixed", root=work / "mixed")
        last = mixed[len(mixed) - 1]
        result["aggregated"] = {"episodes": mixed.meta.total_episodes, "frames": len(mixed),
                                "robot_type": mixed.meta.robot_type,
                                "last": {k: list(v.shape) for k, v in last.items() if hasattr(v, "shape")},
                                "last_state": last["observation.state"].tolist()}
    except Exception:  # reported to the test, which fails with it
        result["aggregated"] = {"error": traceback.format_exc()[-4000:]}
    out.write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
