"""PandaPush's scripted expert: go behind the cube, lower, push it onto the target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pixelrig.experts.base import state_of

TABLE_TOP = 0.625
"""The table top's height in the Panda tasks (m): pybullet_data's table/table.urdf."""

MAX_STEP = 0.05
"""Metres per unit of PandaPush's action (its ``max_step``)."""


class PushExpert:
    """A scripted pushing policy for PandaPush-v0 (for demos and tests): go behind the cube, lower, push.

    Call with the env's state observation (its default layout: gripper position at 0:3, cube position at 6:9,
    target at 18:21), or a dict holding it (a goal env's ``"observation"``, PixelObs' ``"state"``); returns an
    action in [-1, 1]^3. Stateful (its phase): make a new one per episode or call
    :meth:`reset`.

    Args:
        env: accepted, and unused, so that every expert is made alike (``EXPERTS[env_id](env)``).
    """

    task = "pixelrig/PandaPush-v0"

    hover = TABLE_TOP + 0.12
    push_height = TABLE_TOP + 0.03

    def __init__(self, env: Any = None) -> None:
        self.phase = "approach"

    def reset(self) -> None:
        self.phase = "approach"

    def __call__(self, obs: Any) -> np.ndarray:
        if isinstance(obs, Mapping):
            obs = state_of(obs).astype(np.float32)  # the float32 state itself, as without the dict
        ee, cube, target = obs[0:3], obs[6:9], obs[18:21]
        direction = target[:2] - cube[:2]
        direction /= max(np.linalg.norm(direction), 1e-6)
        behind = cube[:2] - 0.07 * direction
        if self.phase == "approach":
            goal = np.array([*behind, self.hover])
            if np.linalg.norm(ee[:2] - behind) < 0.015:
                self.phase = "lower"
        elif self.phase == "lower":
            goal = np.array([*behind, self.push_height])
            if ee[2] < self.push_height + 0.01:
                self.phase = "push"
        else:
            goal = np.array([*(target[:2] - 0.02 * direction), self.push_height])
            if np.linalg.norm(ee[:2] - cube[:2]) > 0.12:  # lost the cube: start over
                self.phase = "approach"
        return np.clip((goal - ee) / MAX_STEP, -1.0, 1.0).astype(np.float32)
