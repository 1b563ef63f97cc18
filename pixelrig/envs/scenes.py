"""Task-less scenes: ``TasklessEnv`` (a world and cameras, no task) and the primitives scene of the analytic and
golden tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import BulletEnv


class TasklessEnv(BulletEnv):
    """A world to look at, with no task: a 1-D action that does nothing, a constant observation, reward 0.
    Subclasses implement :meth:`build_world` only."""

    def __init__(self, **common: Any) -> None:
        super().__init__(**common)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.observation_space = spaces.Box(-np.inf, np.inf, (1,), np.float32)

    def reset_task(self, options: dict[str, Any]) -> None:
        pass

    def apply_action(self, action: Any) -> None:
        pass

    def observe(self) -> np.ndarray:
        return np.zeros(1, np.float32)


class PrimitivesEnv(TasklessEnv):
    """A ground plane with a red box, a blue sphere and a yellow cylinder, all static; no task.

    Body ids: ground 0, box 1, sphere 2, cylinder 3. The box's top face is at z = 0.4 m, centred on the origin.
    """

    def build_world(self) -> None:
        c = self.client
        self.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=c))
        shapes = [
            ("box", p.GEOM_BOX, {"halfExtents": (0.2, 0.2, 0.2)}, (0.0, 0.0, 0.2), (0.85, 0.15, 0.1, 1)),
            ("sphere", p.GEOM_SPHERE, {"radius": 0.15}, (0.55, 0.35, 0.15), (0.1, 0.3, 0.9, 1)),
            ("cylinder", p.GEOM_CYLINDER, {"radius": 0.12, "height": 0.5}, (-0.5, -0.35, 0.25), (0.95, 0.8, 0.1, 1)),
        ]
        for name, geom, size, pos, rgba in shapes:
            vis_size = {("length" if k == "height" else k): v for k, v in size.items()}  # pybullet's naming
            col = p.createCollisionShape(geom, physicsClientId=c, **size)
            vis = p.createVisualShape(geom, rgbaColor=rgba, physicsClientId=c, **vis_size)
            self.load_body(name, p.createMultiBody(0.0, col, vis, pos, physicsClientId=c))

    def default_cameras(self) -> list[Camera]:
        rgbdl = ("rgb", "depth", "label")
        return [Camera.from_dict(c) for c in [
            {"name": "top", "eye": (0.0, 0.0, 3.0), "target": (0.0, 0.0, 0.0), "up": (0.0, 1.0, 0.0), "fov": 60.0,
             "width": 64, "height": 64, "near": 0.1, "far": 10.0, "modalities": rgbdl},
            {"name": "oblique", "eye": (1.6, -1.6, 1.3), "target": (0.0, 0.0, 0.2), "fov": 50.0,
             "width": 96, "height": 72, "near": 0.1, "far": 10.0, "modalities": rgbdl},
        ]]
