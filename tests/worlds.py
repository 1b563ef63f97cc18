"""Tiny worlds for analytic tests, built on BulletEnv from a builder function."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pybullet as p

from pixelrig.envs.base import BulletEnv
from pixelrig.envs.scenes import TasklessEnv

ARM_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base">
    <inertial><origin xyz="0 0 0.5"/><mass value="1"/>
      <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>
  </link>
  <link name="arm">
    <inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0.2 0 0"/><geometry><box size="0.4 0.05 0.05"/></geometry></visual>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="0 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1.5" upper="1.5" effort="10" velocity="1"/>
  </joint>
</robot>
"""


def write_arm_urdf(folder: Path) -> str:
    """Write the test arm URDF: base link 'base' (centre of mass 0.5 m along its z), link 'arm' on a hinge
    about x at the base origin."""
    path = folder / "arm.urdf"
    path.write_text(ARM_URDF)
    return str(path)


class BuiltByFunctionEnv(TasklessEnv):
    """A task-less env whose world is ``build(env)``."""

    def __init__(self, build: Callable[[BuiltByFunctionEnv], None], renderer: str | None = None, **kwargs: Any) -> None:
        self._build = build
        super().__init__(renderer=renderer, **kwargs)

    def build_world(self) -> None:
        self._build(self)


def plane(env: BulletEnv) -> None:
    env.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=env.client))


def arm_world(folder: Path, renderer: str | None = None) -> BuiltByFunctionEnv:
    """The ground, and the test arm (:func:`write_arm_urdf`, written into ``folder``) with its base 2 m up, flipped
    so that the base's and the arm's +z point down at the ground; its hinge is about x. The arm's body id is
    ``env.arm``."""
    urdf = write_arm_urdf(folder)

    def build(env: BuiltByFunctionEnv) -> None:
        plane(env)
        env.arm = env.load_body("arm", p.loadURDF(urdf, [0, 0, 2.0], [1, 0, 0, 0], useFixedBase=True,
                                                  physicsClientId=env.client))

    return BuiltByFunctionEnv(build, renderer=renderer)


def box_at(env: BulletEnv, name: str, pos: tuple[float, float, float], half: float = 0.2) -> int:
    c = env.client
    col = p.createCollisionShape(p.GEOM_BOX, halfExtents=[half] * 3, physicsClientId=c)
    vis = p.createVisualShape(p.GEOM_BOX, halfExtents=[half] * 3, rgbaColor=(0.8, 0.2, 0.1, 1), physicsClientId=c)
    return env.load_body(name, p.createMultiBody(0.0, col, vis, pos, physicsClientId=c))
