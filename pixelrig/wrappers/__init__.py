"""Wrappers: ``PixelObs`` (camera-rig observations), ``PointCloudObs`` (a fused point cloud), ``HumanWindow`` (a
window that only looks), ``BrowserView`` (a web page that only looks) and ``VideoRecorder`` (streamed episode
videos)."""

from pixelrig.wrappers.browser_view import BrowserView, VectorBrowserView
from pixelrig.wrappers.human_window import HumanWindow
from pixelrig.wrappers.pixel_obs import PixelObs
from pixelrig.wrappers.point_cloud import PointCloudObs
from pixelrig.wrappers.video_recorder import VideoRecorder

__all__ = ["BrowserView", "HumanWindow", "PixelObs", "PointCloudObs", "VectorBrowserView", "VideoRecorder"]
