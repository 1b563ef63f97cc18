"""pixelrig: pixel observations (RGB, metric depth, labels) for pybullet + gymnasium robot environments.

Importing pixelrig registers its environment ids (``pixelrig/CartPole-v0``, ``pixelrig/PandaPush-v0``, ...).
"""

from pixelrig.cameras import Camera, CameraRig
from pixelrig.datasets import DatasetRecorder
from pixelrig.envs import BulletEnv, Randomization, RobotEnv, register_envs
from pixelrig.render import RendererUnavailable, resolve_renderer
from pixelrig.render.window import DisplayUnavailable
from pixelrig.snapshot import Snapshot, restore, snapshot
from pixelrig.vector import make_vec
from pixelrig.wrappers import BrowserView, HumanWindow, PixelObs, PointCloudObs, VideoRecorder

__version__ = "0.1.0"

register_envs()

__all__ = [
    "BrowserView",
    "BulletEnv",
    "Camera",
    "CameraRig",
    "DatasetRecorder",
    "DisplayUnavailable",
    "HumanWindow",
    "PixelObs",
    "PointCloudObs",
    "Randomization",
    "RendererUnavailable",
    "RobotEnv",
    "Snapshot",
    "VideoRecorder",
    "__version__",
    "make_vec",
    "resolve_renderer",
    "restore",
    "snapshot",
]
