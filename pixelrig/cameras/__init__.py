"""Cameras: the ``Camera`` spec, mounts on links, and the ``CameraRig`` that renders them."""

from pixelrig.cameras.rig import CameraRig, as_cameras, camera_spaces
from pixelrig.cameras.spec import MODALITIES, Camera

__all__ = ["MODALITIES", "Camera", "CameraRig", "as_cameras", "camera_spaces"]
