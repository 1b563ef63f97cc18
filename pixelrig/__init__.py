"""pixelrig: pixel observations (RGB, metric depth, labels) for pybullet + gymnasium robot environments.

Importing pixelrig registers its environment ids (``pixelrig/CartPole-v0``, ``pixelrig/PandaPush-v0``, ...) and
nothing heavier: the names below load their modules (pybullet among them) on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pixelrig.system.lazy import lazy_exports
from pixelrig.tasks import register_envs
from pixelrig.version import __version__

_EXPORTS: dict[str, str] = {
    "BrowserView": "pixelrig.wrappers.browser_view",
    "BulletEnv": "pixelrig.envs.base",
    "Camera": "pixelrig.cameras.spec",
    "CameraRig": "pixelrig.cameras.rig",
    "DatasetExistsError": "pixelrig.errors",
    "DatasetRecorder": "pixelrig.datasets.recorder",
    "DatasetWriteError": "pixelrig.errors",
    "DisplayUnavailable": "pixelrig.errors",
    "HelperFailed": "pixelrig.errors",
    "HumanWindow": "pixelrig.wrappers.human_window",
    "JointConfig": "pixelrig.control.registry",
    "Lighting": "pixelrig.render.lighting",
    "PixelObs": "pixelrig.wrappers.pixel_obs",
    "PointCloudObs": "pixelrig.wrappers.point_cloud",
    "PolicyError": "pixelrig.errors",
    "PortInUseError": "pixelrig.errors",
    "Randomization": "pixelrig.envs.randomization",
    "RendererUnavailable": "pixelrig.errors",
    "ReplayWorkerError": "pixelrig.errors",
    "RobotEnv": "pixelrig.envs.robot",
    "SensorNoise": "pixelrig.cameras.noise",
    "Snapshot": "pixelrig.snapshots",
    "TaskSpaceConfig": "pixelrig.control.task_space",
    "VideoRecorder": "pixelrig.wrappers.video_recorder",
    "evaluate": "pixelrig.evaluation.run",
    "make_vec": "pixelrig.vector.make",
    "resolve_renderer": "pixelrig.render.choice",
    "restore": "pixelrig.snapshots",
    "snapshot": "pixelrig.snapshots",
}
"""Every public name and the module that defines it (imported when the name is first used)."""

if TYPE_CHECKING:
    from pixelrig.cameras.noise import SensorNoise
    from pixelrig.cameras.rig import CameraRig
    from pixelrig.cameras.spec import Camera
    from pixelrig.control.registry import JointConfig
    from pixelrig.control.task_space import TaskSpaceConfig
    from pixelrig.datasets.recorder import DatasetRecorder
    from pixelrig.envs.base import BulletEnv
    from pixelrig.envs.randomization import Randomization
    from pixelrig.envs.robot import RobotEnv
    from pixelrig.errors import (
        DatasetExistsError,
        DatasetWriteError,
        DisplayUnavailable,
        HelperFailed,
        PolicyError,
        PortInUseError,
        RendererUnavailable,
        ReplayWorkerError,
    )
    from pixelrig.evaluation.run import evaluate
    from pixelrig.render.choice import resolve_renderer
    from pixelrig.render.lighting import Lighting
    from pixelrig.snapshots import Snapshot, restore, snapshot
    from pixelrig.vector.make import make_vec
    from pixelrig.wrappers.browser_view import BrowserView
    from pixelrig.wrappers.human_window import HumanWindow
    from pixelrig.wrappers.pixel_obs import PixelObs
    from pixelrig.wrappers.point_cloud import PointCloudObs
    from pixelrig.wrappers.video_recorder import VideoRecorder


__getattr__, __dir__ = lazy_exports("pixelrig", _EXPORTS, globals())

register_envs()

__all__ = [
    "BrowserView",
    "BulletEnv",
    "Camera",
    "CameraRig",
    "DatasetExistsError",
    "DatasetRecorder",
    "DatasetWriteError",
    "DisplayUnavailable",
    "HelperFailed",
    "HumanWindow",
    "JointConfig",
    "Lighting",
    "PixelObs",
    "PointCloudObs",
    "PolicyError",
    "PortInUseError",
    "Randomization",
    "RendererUnavailable",
    "ReplayWorkerError",
    "RobotEnv",
    "SensorNoise",
    "Snapshot",
    "TaskSpaceConfig",
    "VideoRecorder",
    "__version__",
    "evaluate",
    "make_vec",
    "resolve_renderer",
    "restore",
    "snapshot",
]
