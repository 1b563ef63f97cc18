"""``pixelrig/PandaLift-v0``: lift a 5 cm cube 10 cm above the table with the Panda's gripper."""

from __future__ import annotations

import numpy as np

from pixelrig.envs.manipulation import CUBE_REST, FULL_TURN, RED, PandaManipulationEnv, closeness

REGISTRATION = {"id": "pixelrig/PandaLift-v0", "entry_point": "PandaLiftEnv", "max_episode_steps": 100}
"""What :mod:`pixelrig.tasks` registers for this module (read without importing it)."""


class PandaLiftEnv(PandaManipulationEnv):
    """Lift a 5 cm cube 10 cm above the table (``pixelrig/PandaLift-v0``).

    - Start: a red 5 cm, 0.1 kg cube on the table, x ∈ [0.40, 0.60], y ∈ [-0.15, 0.15], any yaw.
    - Observation (float32, 29): the gripper (``ee_pos``, ``ee_quat``, ``ee_linvel``, ``gripper_opening``) and the
      cube (``cube_pos``, ``cube_quat``, ``cube_linvel``, ``cube_angvel``, ``cube_rel_pos``, ``cube_contacts``),
      as :class:`PandaManipulationEnv` lays them out.
    - Success: the cube's bottom at least :attr:`lift_height` (0.10 m) above the table, i.e. its centre at least
      0.125 m above the table top; the episode then terminates. Registered with a 100-step time limit.
    - Dense stages: ``reach`` (0.25) ``1 - tanh(10 d)`` of the gripper centre's distance to the cube's centre,
      ``grasp`` (0.25) both fingers touch the cube, ``lift`` (0.5) the cube's height above its resting height over
      0.10 m, clipped to [0, 1], counted while grasped.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    - ``goal_obs=True``: the goal is the cube's height (1), how far its centre is above its resting height, capped
      at :attr:`lift_height` + :attr:`distance_threshold` (0.11 m); the desired goal is that cap, 0.11 m; success
      (and sparse reward 0) when they are less than :attr:`distance_threshold` (0.01 m) apart, i.e. the cube
      lifted more than 0.10 m: the task's own success (up to float32 rounding of the height, 1e-8 m). Dense: minus
      the distance, ``-max(0.11 - height, 0)``.
    """

    objects = ("cube",)
    lift_height = 0.10
    """How high the cube's bottom must be above the table (m)."""
    goal_size = 1
    distance_threshold = 0.01
    start_positions = {"cube": ((0.40, -0.15, CUBE_REST), (0.60, 0.15, CUBE_REST))}
    start_yaws = {"cube": FULL_TURN}
    stage_weights = {"reach": 0.25, "grasp": 0.25, "lift": 0.5}
    rig_target = (0.5, 0.0, 0.69)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf", "cube_small.urdf")

    def build_task_objects(self) -> None:
        self.load_cube("cube", RED, (0.5, 0.0))

    def lifted(self) -> float:
        """How far the cube's centre is above its resting height (m)."""
        return float(self.position("cube")[2] - CUBE_REST)

    def is_success(self) -> bool:
        return self.lifted() >= self.lift_height

    def achieved_goal(self) -> np.ndarray:
        return np.array([min(self.lifted(), self.lift_height + self.distance_threshold)])

    def desired_goal(self) -> np.ndarray:
        return np.array([self.lift_height + self.distance_threshold])

    def stages(self) -> dict[str, float]:
        grasp = float(self.grasped("cube"))
        return {"reach": closeness(float(np.linalg.norm(self.position("cube") - self.grasp_centre()))),
                "grasp": grasp, "lift": grasp * float(np.clip(self.lifted() / self.lift_height, 0.0, 1.0))}
