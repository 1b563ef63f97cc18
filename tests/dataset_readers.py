"""Run by tests in the readers' venv (``scripts/lerobot-venv.sh``, ``.venv-lerobot``), never imported by pixelrig:
load a dataset with LeRobot's own ``LeRobotDataset`` or robomimic's ``SequenceDataset`` and save what the reader
returned as an .npz file, for the test (in the main venv) to compare with what pixelrig recorded.

Usage: python tests/dataset_readers.py lerobot DATASET_FOLDER OUT.npz
       python tests/dataset_readers.py robomimic DATASET.hdf5 OUT.npz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def read_lerobot(root: Path, out: Path) -> None:
    """Every item of the dataset through ``LeRobotDataset.__getitem__`` (videos decoded by torchcodec)."""
    from ledataset.datasets.lerobot_dataset import LeRobotDataset

    ds = LeRobotDataset("pixelrig/test", root=root, video_backend="torchcodec")
    arrays: dict[str, list[np.ndarray]] = {}
    for i in range(len(ds)):
        item = ds[i]
        for key, value in item.items():
            if key == "task":
                arrays.setdefault(key, []).append(np.array(value))
                continue
            arr = value.numpy()
            if key in ds.meta.video_keys:  # float32 in [0, 1], (C, H, W): back to uint8 (H, W, C)
                arr = np.clip(np.rint(arr * 255.0), 0, 255).astype(np.uint8).transpose(1, 2, 0)
            arrays.setdefault(key, []).append(arr)
    episodes = ds.meta.episodes
    meta = {
        "len": len(ds), "num_episodes": ds.num_episodes, "fps": ds.fps, "video_keys": ds.meta.video_keys,
        "camera_keys": ds.meta.camera_keys,
        "episodes": [{k: episodes[e][k] for k in ("episode_index", "length", "dataset_from_index",
                                                    "dataset_to_index")} for e in range(len(episodes))],
        "stats_keys": sorted(ds.meta.stats) if ds.meta.stats is not None else None,
        "stats": None if ds.meta.stats is None else {
            key: {name: np.asarray(value).tolist() for name, value in s.items()} for key, s in ds.meta.stats.items()},
        "tasks": list(ds.meta.tasks.index),
    }
    np.savez(out, **{k: np.stack(v) for k, v in arrays.items()}, __meta__=np.array(json.dumps(meta)))


def read_robomimic(path: Path, out: Path) -> None:
    """Every sample of every demo through robomimic's ``SequenceDataset`` (seq_length 1, next_obs loaded)."""
    import h5py
    import robomimic.utils.obs_utils as obs_utils
    from robomimic.utils.dataset import SequenceDataset

    with h5py.File(path, "r") as f:
        keys = sorted(f["data/demo_0/obs"].keys())
    rgb = [k for k in keys if k.endswith("_rgb")]
    obs_utils.initialize_obs_utils_with_obs_specs({"obs": {"rgb": rgb, "low_dim": [k for k in keys if k not in rgb]}})
    ds = SequenceDataset(hdf5_path=str(path), obs_keys=keys, dataset_keys=("actions", "rewards", "dones"),
                         load_next_obs=True, hdf5_cache_mode=None, hdf5_use_swmr=True)
    arrays: dict[str, list[np.ndarray]] = {}
    for i in range(len(ds)):
        item = ds[i]
        for group in ("obs", "next_obs"):
            for key, value in item[group].items():
                arrays.setdefault(f"{group}/{key}", []).append(np.asarray(value)[0])
        for key in ("actions", "rewards", "dones"):
            arrays.setdefault(key, []).append(np.asarray(item[key])[0])
    meta = {"len": len(ds), "demos": list(ds.demos), "n_demos": ds.n_demos, "keys": keys}
    np.savez(out, **{k: np.stack(v) for k, v in arrays.items()}, __meta__=np.array(json.dumps(meta)))


if __name__ == "__main__":
    kind, source, target = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    {"lerobot": read_lerobot, "robomimic": read_robomimic}[kind](source, target)
    print("read", kind, source)
