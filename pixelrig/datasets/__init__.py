"""Datasets people train on, from pixelrig envs: ``DatasetRecorder`` writes LeRobot v3.0 folders and robomimic HDF5
files as episodes run, with each step's snapshot; ``replay`` re-renders them with another camera rig;
``augment`` adds re-rendered copies of each episode under new looks; ``pixelrig.datasets.collect.collect`` runs a task's
scripted expert into one, from worker processes.

Importing this package is light: pyarrow (LeRobot) and h5py (robomimic), the ``pixelrig[datasets]`` extra, are
imported when a dataset is opened, tqdm when ``replay``, ``augment`` or ``collect`` runs.
"""

from pixelrig.datasets.augment import AugmentResult, augment
from pixelrig.datasets.formats import open_dataset
from pixelrig.datasets.info import DEPTH_CONVENTION, FORMATS, DatasetInfo
from pixelrig.datasets.recorder import DatasetRecorder, recording_info
from pixelrig.datasets.replay import ReplayResult, replay
from pixelrig.datasets.steps import depth_to_mm, mm_to_depth
from pixelrig.errors import DatasetExistsError, DatasetWriteError, ReplayWorkerError

__all__ = [
    "AugmentResult",
    "DEPTH_CONVENTION",
    "FORMATS",
    "DatasetExistsError",
    "DatasetInfo",
    "DatasetRecorder",
    "DatasetWriteError",
    "ReplayResult",
    "ReplayWorkerError",
    "augment",
    "depth_to_mm",
    "mm_to_depth",
    "open_dataset",
    "recording_info",
    "replay",
]
