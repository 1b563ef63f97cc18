"""Wrappers: ``PixelObs`` (camera-rig observations), ``HumanWindow`` (a window that only looks) and
``VideoRecorder`` (streamed episode videos)."""

from pixelrig.wrappers.human_window import HumanWindow
from pixelrig.wrappers.pixel_obs import PixelObs
from pixelrig.wrappers.video_recorder import VideoRecorder

__all__ = ["HumanWindow", "PixelObs", "VideoRecorder"]
