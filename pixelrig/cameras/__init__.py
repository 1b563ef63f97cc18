"""Cameras: the ``Camera`` spec, mounts on links, the ``CameraRig`` that renders them, and the sensor models (lens,
noise, stereo, presets, timing)."""

from pixelrig.cameras.noise import SensorNoise
from pixelrig.cameras.rig import CameraRig, as_cameras, camera_spaces
from pixelrig.cameras.spec import MODALITIES, Camera

__all__ = ["MODALITIES", "Camera", "CameraRig", "SensorNoise", "as_cameras", "camera_spaces"]
