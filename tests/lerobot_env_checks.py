"""Run by tests/test_plugins_lerobot_env_venv.py in the plugin venv (``make lerobot``, LeRobot 0.6), never imported by
pixelrig: the ``--env.type=pixelrig`` config as LeRobot finds it, against a dataset ``pixelrig collect`` wrote, read
by LeRobot's own reader; what it finds goes to a JSON file for the test to check.

Usage: python tests/lerobot_env_checks.py DATASET_FOLDER OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def features(root: Path) -> dict[str, Any]:
    """The config's policy features and the dataset's; the first frame of episode 0 through LeRobot's reader and the
    env (reset with that episode's seed) through LeRobot's observation processing and the env processor; the
    errors for a bad task and a mismatched dataset."""
    import numpy as np
    import pyarrow.parquet as pq
    import torch
    from lerobot.datasets import LeRobotDataset, LeRobotDatasetMetadata
    from lerobot.envs.configs import EnvConfig
    from lerobot.envs.factory import make_env, make_env_config, make_env_pre_post_processors
    from lerobot.envs.utils import close_envs, env_to_policy_features, preprocess_observation
    from lerobot.utils.feature_utils import dataset_to_policy_features
    from lerobot.utils.import_utils import register_third_party_plugins

    register_third_party_plugins()
    out: dict[str, Any] = {"types": sorted(EnvConfig.get_known_choices())}
    cfg = make_env_config("pixelrig", task="PandaLift-v0", renderer="tiny", dataset=str(root))

    def described(feats: dict) -> dict[str, list]:
        return {k: [ft.type.name, list(ft.shape)] for k, ft in feats.items()}

    out["env_features"] = described(env_to_policy_features(cfg))
    meta = LeRobotDatasetMetadata("pixelrig/check", root=root)
    out["dataset_features"] = described(dataset_to_policy_features(meta.features))

    seed = int(pq.read_table(next((root / "meta" / "episodes").rglob("*.parquet"))).column("pixelrig/seed")[0].as_py())
    item = LeRobotDataset("pixelrig/check", root=root, episodes=[0], video_backend="torchcodec")[0]
    envs = make_env(cfg, n_envs=1)
    try:
        vec = envs["pixelrig"][0]
        raw, info = vec.reset(seed=[seed])
        out["reset_info_is_success"] = np.asarray(info["is_success"]).tolist()
        obs = preprocess_observation(raw)
        obs["task"] = list(vec.call("task_description"))
        pre, _ = make_env_pre_post_processors(cfg, policy_cfg=None)
        obs = pre(obs)
    finally:
        close_envs(envs)
    out["task"] = obs["task"]
    out["dataset_task"] = item["task"]
    compared: dict[str, Any] = {}
    for key, value in item.items():
        if not key.startswith("observation."):
            continue
        mine = obs.get(key)
        theirs = value.to(torch.float32)
        if mine is None:
            compared[key] = "missing in the env"
            continue
        mine = mine[0].to(torch.float32)
        compared[key] = {"env_shape": list(mine.shape), "dataset_shape": list(theirs.shape),
                         "max_abs": float((mine - theirs).abs().max()) if mine.shape == theirs.shape else None,
                         "mean_abs": float((mine - theirs).abs().mean()) if mine.shape == theirs.shape else None}
    out["values"] = compared
    out["env_only"] = sorted(k for k in obs if k.startswith("observation.") and k not in item)

    errors = {}
    for name, kwargs in {"task": {"task": "PandaLoft-v0"},
                         "dataset": {"task": "PandaLift-v0", "image_size": 48, "dataset": str(root)}}.items():
        try:
            make_env_config("pixelrig", **kwargs)
        except Exception as exc:  # noqa: BLE001 - reported to the test as it is
            errors[name] = f"{type(exc).__name__}: {exc}"
    out["errors"] = errors
    return out


if __name__ == "__main__":
    result = features(Path(sys.argv[1]))
    Path(sys.argv[2]).write_text(json.dumps(result, indent=2))
