"""References the camera property tests share: pixel grids, OpenCV's projection, and a rig that needs no renderer."""

from __future__ import annotations

import math

import cv2
import numpy as np

from pixelrig.cameras.rig import CameraRig


def grid(width: int, height: int) -> np.ndarray:
    """(H*W, 2) pixel coordinates (col, row), row-major."""
    cols, rows = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    return np.stack([cols.ravel(), rows.ravel()], axis=1)


def opencv_project(norm: np.ndarray, k: np.ndarray, dist) -> np.ndarray:
    """(N, 2) normalised undistorted points -> (N, 2) distorted pixels, by ``cv2.projectPoints``."""
    obj = np.concatenate([norm, np.ones((len(norm), 1))], axis=1)
    uv, _ = cv2.projectPoints(obj, np.zeros(3), np.zeros(3), k, np.asarray(dist, dtype=np.float64))
    return uv[:, 0, :]


class UnboundRig(CameraRig):
    """A rig whose rays are its cameras' pinhole rays without binding a renderer (the timeline needs nothing else)."""

    def rays(self, i: int) -> np.ndarray:
        cam = self.cameras[i]
        f = 0.5 * cam.height / math.tan(math.radians(cam.fov) / 2.0)
        cols, rows = np.meshgrid(np.arange(cam.width) - (cam.width - 1) / 2,
                                 np.arange(cam.height) - (cam.height - 1) / 2)
        return np.stack([cols / f, rows / f])
