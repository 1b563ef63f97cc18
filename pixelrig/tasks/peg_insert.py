"""``pixelrig/PandaPegInsert-v0``: the Franka Panda picks up a square peg and puts it into a square hole with 2 mm of
clearance each side, turning it to the hole's heading (task-space pose control with the gripper)."""

from __future__ import annotations

import numpy as np
import pybullet as p

from pixelrig.control.rotations import quat_to_matrix
from pixelrig.envs.manipulation import FULL_TURN, PandaManipulationEnv, closeness
from pixelrig.envs.panda import TABLE_TOP
from pixelrig.envs.terms import Term

REGISTRATION = {"id": "pixelrig/PandaPegInsert-v0", "entry_point": "PandaPegInsertEnv", "max_episode_steps": 200}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


PEG_SIDE = 0.02
"""The peg's square cross-section (m)."""

PEG_LENGTH = 0.10
"""The peg's length (m); it starts standing on its end."""

HOLE_SIDE = 0.024
"""The hole's square cross-section (m): 2 mm of clearance each side of the peg."""

BLOCK_SIDE = 0.12
"""The holed block's square footprint (m)."""

BLOCK_HEIGHT = 0.05
"""The holed block's height, the hole's depth (m): it goes through, down to the table."""

PEG_COLOR = (0.95, 0.55, 0.1, 1.0)
BLOCK_COLOR = (0.55, 0.55, 0.6, 1.0)


def block_walls() -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """The four boxes around the hole: ``(half extents, centre)`` each, in the block's frame (its centre)."""
    half, hole, h = BLOCK_SIDE / 2, HOLE_SIDE / 2, BLOCK_HEIGHT / 2
    wall = (half - hole) / 2  # half the thickness of a wall
    return [((half, wall, h), (0.0, hole + wall, 0.0)), ((half, wall, h), (0.0, -hole - wall, 0.0)),
            ((wall, hole, h), (hole + wall, 0.0, 0.0)), ((wall, hole, h), (-hole - wall, 0.0, 0.0))]


class PandaPegInsertEnv(PandaManipulationEnv):
    """Insert a square peg into a square hole (``pixelrig/PandaPegInsert-v0``).

    - World: PandaEnv's, a peg (2 × 2 × 10 cm, 0.05 kg, friction 1, orange) standing on its end, and a block
      (12 × 12 × 5 cm, grey, fixed to the table) with a square hole through it, 2.4 cm across: 2 mm of clearance
      each side of the peg. The block is four boxes around the hole (one body, ``hole``).
    - Start: the peg at x ∈ [0.40, 0.55], y ∈ [-0.20, -0.08]; the block at x ∈ [0.45, 0.60], y ∈ [0.06, 0.20];
      each at any yaw. A square peg fits its hole only within about ±10° of the hole's heading (modulo 90°), so the
      task controls orientation: ``ee_delta_pose`` with the gripper by default (7 actions: Δxyz × 0.05 m, an
      axis-angle Δrotation × 0.1 rad in the world's axes, the gripper).
    - Observation (float32, 42): the gripper and the peg (``peg_*``) as :class:`PandaManipulationEnv` lays them out,
      then ``hole_pos`` (3, the centre of the hole's opening, on the block's top face), ``hole_quat`` (4, the
      block's orientation), ``peg_bottom_pos`` (3, the centre of the peg's lower end face) and
      ``peg_bottom_rel_pos`` (3, that minus ``hole_pos``).
    - Success: the peg inserted: its lower end at least :attr:`insert_depth` (0.03 m) below the hole's opening and
      inside the hole's square; the episode then terminates. Registered with a 200-step time limit.
    - Dense stages: ``reach`` (0.2) ``1 - tanh(10 d)`` of the gripper centre's distance to the peg's centre,
      ``grasp`` (0.2) both fingers touch the peg, ``align`` (0.3) ``1 - tanh(10 d)`` of the peg's lower end's
      distance to the hole's opening, ``insert`` (0.3) the depth over 0.03 m, clipped to [0, 1], while inside the
      hole's square.
    """

    objects = ("peg",)
    default_control = "ee_delta_pose"
    insert_depth = 0.03
    """How deep the peg's lower end must go below the hole's opening (m)."""
    peg_size = (PEG_SIDE, PEG_SIDE, PEG_LENGTH)
    """The peg's size (m): its square cross-section, then its length."""
    start_positions = {"peg": ((0.40, -0.20, TABLE_TOP + PEG_LENGTH / 2), (0.55, -0.08, TABLE_TOP + PEG_LENGTH / 2)),
                       "hole": ((0.45, 0.06, TABLE_TOP + BLOCK_HEIGHT / 2), (0.60, 0.20, TABLE_TOP + BLOCK_HEIGHT / 2))}
    start_yaws = {"peg": FULL_TURN, "hole": FULL_TURN}
    stage_weights = {"reach": 0.2, "grasp": 0.2, "align": 0.3, "insert": 0.3}
    rig_target = (0.5, 0.0, 0.68)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf")

    def build_task_objects(self) -> None:
        c = self.client
        half = (PEG_SIDE / 2, PEG_SIDE / 2, PEG_LENGTH / 2)
        peg = p.createMultiBody(
            0.05, p.createCollisionShape(p.GEOM_BOX, halfExtents=half, physicsClientId=c),
            p.createVisualShape(p.GEOM_BOX, halfExtents=half, rgbaColor=PEG_COLOR, physicsClientId=c),
            [0.47, -0.14, TABLE_TOP + PEG_LENGTH / 2], physicsClientId=c)
        p.changeDynamics(peg, -1, lateralFriction=1.0, physicsClientId=c)
        self.load_body("peg", peg)
        walls = block_walls()
        block = p.createMultiBody(
            0.0, p.createCollisionShapeArray(
                [p.GEOM_BOX] * 4, halfExtents=[w[0] for w in walls], collisionFramePositions=[w[1] for w in walls],
                physicsClientId=c),
            p.createVisualShapeArray(
                [p.GEOM_BOX] * 4, halfExtents=[w[0] for w in walls], visualFramePositions=[w[1] for w in walls],
                rgbaColors=[BLOCK_COLOR] * 4, physicsClientId=c),
            [0.52, 0.13, TABLE_TOP + BLOCK_HEIGHT / 2], physicsClientId=c)
        self.load_body("hole", block)

    def goal_terms(self) -> list[Term]:
        return [Term("hole_pos", 3), Term("hole_quat", 4, -1.0, 1.0), Term("peg_bottom_pos", 3),
                Term("peg_bottom_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        hole, quat = self.hole_opening()
        bottom = self.peg_bottom()
        return {"hole_pos": hole, "hole_quat": np.clip(quat, -1.0, 1.0), "peg_bottom_pos": bottom,
                "peg_bottom_rel_pos": bottom - hole}

    def hole_opening(self) -> tuple[np.ndarray, np.ndarray]:
        """The centre of the hole's opening (the block's top face) and the block's quaternion xyzw (float64)."""
        pos, quat = self.body_pose("hole")
        return pos + quat_to_matrix(quat) @ [0.0, 0.0, BLOCK_HEIGHT / 2], quat

    def peg_bottom(self) -> np.ndarray:
        """The centre of the peg's lower end face (the end nearer the table's side of its own z axis) (m)."""
        pos, quat = self.body_pose("peg")
        axis = quat_to_matrix(quat)[:, 2] * (PEG_LENGTH / 2)
        return pos - axis if axis[2] >= 0 else pos + axis

    def depth(self) -> tuple[float, bool]:
        """How far the peg's lower end is below the hole's opening (m), and whether it is inside the hole's square
        (in the block's axes)."""
        hole, quat = self.hole_opening()
        offset = quat_to_matrix(quat).T @ (self.peg_bottom() - hole)
        return float(-offset[2]), bool(np.all(np.abs(offset[:2]) < HOLE_SIDE / 2))

    def is_success(self) -> bool:
        depth, inside = self.depth()
        return inside and depth >= self.insert_depth

    def stages(self) -> dict[str, float]:
        depth, inside = self.depth()
        return {"reach": closeness(float(np.linalg.norm(self.position("peg") - self.grasp_centre()))),
                "grasp": float(self.grasped("peg")),
                "align": closeness(float(np.linalg.norm(self.peg_bottom() - self.hole_opening()[0]))),
                "insert": float(inside) * float(np.clip(depth / self.insert_depth, 0.0, 1.0))}
