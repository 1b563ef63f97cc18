"""The Franka Panda's table-top world, shared by the Panda tasks (:mod:`pixelrig.tasks`): the table, the arm, its
Cartesian end-effector control (pybullet's inverse kinematics by default, pixelrig's task-space controllers and a
gripper on request), its cameras."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.control.base import Motors
from pixelrig.control.gripper import GRIPPER_PRESETS, Gripper
from pixelrig.control.ik import PybulletIK
from pixelrig.control.registry import CONTROLLERS, control_config
from pixelrig.control.task_space import EE_CONTROLS, TaskSpaceConfig, TaskSpaceControl, TaskSpaceController, arm_chain
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.controlled import Controlled
from pixelrig.envs.goals import GoalObserved
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.terms import GripperLinks, Term, gripper_opening

DEFAULT_DETAIL = "simplified"
"""visual_detail of the Panda tasks unless given: at 84x84 on TinyRenderer it renders the 3-camera rig over 5x
faster than "full" with 98% of label pixels equal, depth equal and RGB within a few levels (README, level of
detail); "collision" is faster still but loses the Panda's dark joints (RGB off by ~17 levels)."""

TABLE_TOP = 0.625
"""Height of pybullet_data's table/table.urdf top surface (m)."""

ARM_JOINTS = (0, 1, 2, 3, 4, 5, 6)
FINGER_JOINTS = (9, 10)
FINGER_RANGE = (0.0, 0.04)  # each finger's travel (m): closed .. open
FINGERS = GripperLinks(FINGER_JOINTS, frozenset(FINGER_JOINTS))
EE_LINK = 11  # panda_grasptarget: between the finger tips
NEUTRAL = (0.0, 0.41, 0.0, -1.85, 0.0, 2.26, 0.79)
ARM_FORCES = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)
FINGER_FORCE = 20.0
"""Force limit (N) of each finger closed without a gripper (the file's effort limit)."""
GRIPPER_FORCE = 20.0
"""Force limit (N) of each finger with ``gripper="panda"``."""
DOWN = p.getQuaternionFromEuler((np.pi, 0.0, 0.0))  # gripper pointing at the table


class PandaEnv(GoalObserved, Controlled, BulletEnv):
    """Shared world and controller of the Panda tasks.

    - World: ground plane, pybullet_data's table (top at z = 0.625 m), the Franka Panda (franka_panda/panda.urdf,
      fixed base at the table's near edge), plus what the task adds.
    - Time: time step 1/240 s, 10 physics steps per ``step()`` (dt ≈ 0.042 s).
    - Cameras see the Panda at ``visual_detail="simplified"`` by default (its visual meshes decimated to
      ``visual_budget`` = 100 triangles each); physics is the same at every detail.
    - Action (``control="pybullet_ik"``, the default): ``Box(-1, 1, (3,))``, a displacement of the gripper centre
      from where it is, in metres × ``max_step`` (0.05 m). The target is clipped to the workspace, turned into joint
      targets by pybullet's inverse kinematics (gripper pointing down) and tracked by its position controller.
    - ``control="ee_delta_pos"`` / ``"ee_delta_pose"`` / ``"ee_pose"``: pixelrig's task-space controllers
      (:mod:`pixelrig.control.task_space`) on ``panda_grasptarget`` (the gripper centre): Δxyz × ``max_step``; Δxyz and
      an axis-angle Δrotation × ``max_rot_step`` (0.1 rad), in the world's axes or, with ``ee_frame="ee"``, the
      gripper's; or an absolute position in the workspace box and a quaternion xyzw. Deltas move the last target
      (``ee_target``, task state), which starts at the gripper's pose. The null-space pull's rest pose is the
      neutral pose. The Panda's joint velocity limits (2.2-2.6 rad/s) let the gripper move about 0.8 m/s, so full
      deltas (1.2 m/s) are followed at about 70% of that.
    - ``gripper="panda"`` adds one action dimension, last: the target opening in [-1, 1] (-1 closed, 1 open,
      each finger 0-4 cm): the same position target for both fingers every step, ``GRIPPER_FORCE`` (20 N) each,
      and a gear constraint that keeps them symmetric (:func:`pixelrig.control.gripper.couple_gripper`); episodes
      start open. Without it (the default) the fingers stay closed.
    - The observation gains, at its end, the gripper's quaternion xyzw (4) with ``ee_delta_pose`` / ``ee_pose``
      and the gap between the fingers (1, m) with ``gripper="panda"``; nothing without them.
    - ``goal_obs=True`` (the tasks with goals: :data:`~pixelrig.envs.terms.GOAL_TASKS`): the observation is a goal
      ``Dict`` and the reward the goal's own (:class:`~pixelrig.envs.goals.GoalObserved`).
    """

    metadata = {**BulletEnv.metadata, "render_fps": 24}
    controls: tuple[str, ...] = ("pybullet_ik", *EE_CONTROLS)
    """The control families the Panda tasks take: pybullet's IK (the v0 behaviour) and task space."""

    max_step = 0.05
    max_rot_step = 0.1
    workspace_low = np.array([0.25, -0.35, TABLE_TOP + 0.02])
    workspace_high = np.array([0.85, 0.35, TABLE_TOP + 0.45])

    def __init__(self, control: str = "pybullet_ik", gripper: str | None = None, ee_frame: str | None = None,
                 visual_detail: str = DEFAULT_DETAIL, visual_budget: int = DEFAULT_BUDGET, **common: Any) -> None:
        """``common``: BulletEnv's options (render_mode, renderer, gpu, randomize, ...)."""
        config = control_config(control, self.controls)
        if gripper is not None and gripper != "panda":
            raise ValueError(f"gripper must be None (fingers closed) or 'panda' (its two fingers, "
                             f"{GRIPPER_PRESETS['panda']}): got {gripper!r}")
        if ee_frame is not None and control not in ("ee_delta_pos", "ee_delta_pose"):
            raise ValueError(f"ee_frame={ee_frame!r} applies to control='ee_delta_pos' or 'ee_delta_pose': got "
                             f"control={control!r}")
        self.control = control
        self.has_gripper = gripper is not None
        self.control_config = None if config is None else TaskSpaceConfig(
            control, ee_frame=ee_frame or "world", max_delta_pos=self.max_step, max_delta_rot=self.max_rot_step,
            workspace=(tuple(self.workspace_low), tuple(self.workspace_high)))
        self.ee_target: np.ndarray | None = None
        """The task-space target (position and quaternion xyzw of panda_grasptarget), or None with pybullet_ik."""
        super().__init__(time_step=1.0 / 240.0, frame_skip=10, visual_detail=visual_detail,
                         visual_budget=visual_budget, **common)
        low, high = self.controller.action_bounds()
        if self.has_gripper:
            low, high = np.append(low, -1.0), np.append(high, 1.0)
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    @property
    def gripper_in_action(self) -> bool:
        return self.has_gripper

    def extra_terms(self) -> list[Term]:
        """The terms the controller options add at the end of the observation (see the class docstring)."""
        rotates = self.control in ("ee_delta_pose", "ee_pose")
        return [Term("ee_quat", 4)] * rotates + [Term("gripper_opening", 1)] * self.has_gripper

    def extra_values(self) -> dict[str, np.ndarray]:
        """The values of :meth:`extra_terms` now."""
        values = {}
        if self.control in ("ee_delta_pose", "ee_pose"):
            quat = p.getLinkState(self.panda, EE_LINK, computeForwardKinematics=True, physicsClientId=self.client)[5]
            values["ee_quat"] = np.array(quat)
        if self.has_gripper:
            values["gripper_opening"] = np.array([gripper_opening(self.client, self.panda, FINGERS)])
        return values

    def build_world(self) -> None:
        c = self.client
        self.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=c))
        self.table = self.load_body("table", p.loadURDF(
            self.model_file("table/table.urdf"), [0.5, 0.0, 0.0], useFixedBase=True, physicsClientId=c
        ))
        self.panda = self.load_body("panda", p.loadURDF(
            self.model_file("franka_panda/panda.urdf"), [0.0, 0.0, TABLE_TOP], useFixedBase=True,
            physicsClientId=c,
        ))
        lower, upper, limits = [], [], {}
        for j in range(p.getNumJoints(self.panda, physicsClientId=c)):
            info = p.getJointInfo(self.panda, j, physicsClientId=c)
            if info[2] != p.JOINT_FIXED:
                lower.append(info[8])
                upper.append(info[9])
                limits[j] = (info[8], info[9], info[11])
        motors = Motors(self.panda, ARM_JOINTS, ARM_FORCES, self.motor_command)
        if CONTROLLERS[self.control] is PybulletIK:
            self.controller = PybulletIK(c, motors, EE_LINK, DOWN, lower, upper, NEUTRAL, self.max_step,
                                         (self.workspace_low, self.workspace_high))
        else:
            chain = arm_chain(c, self.panda, "panda_grasptarget", ARM_JOINTS, limits, type(self).__name__)
            solver = TaskSpaceController(chain, self.control_config, (self.workspace_low, self.workspace_high),
                                         self.dt)
            self.controller = TaskSpaceControl(c, solver, motors, range(len(ARM_JOINTS)), np.array(NEUTRAL))
        force = GRIPPER_FORCE if self.has_gripper else FINGER_FORCE
        self.gripper = Gripper(c, self.panda, FINGER_JOINTS, FINGER_RANGE[:1] * 2, FINGER_RANGE[1:] * 2,
                               (force, force), self.motor_command)
        if self.has_gripper:
            self.gripper.couple()
        self.build_task_objects()

    def build_task_objects(self) -> None:
        """Load the task's own bodies (after the robot)."""

    def reset_arm(self) -> None:
        """The arm at its neutral pose, holding it; the fingers closed (open with a gripper)."""
        finger = FINGER_RANGE[1] if self.has_gripper else FINGER_RANGE[0]
        for j, q in zip(ARM_JOINTS, NEUTRAL, strict=True):
            p.resetJointState(self.panda, j, q, 0.0, physicsClientId=self.client)
        for j in FINGER_JOINTS:
            p.resetJointState(self.panda, j, finger, 0.0, physicsClientId=self.client)
        self.controller.hold(np.array(NEUTRAL))
        self.gripper.command(1.0 if self.has_gripper else -1.0)

    def ee_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Gripper centre position and linear velocity (world frame)."""
        s = p.getLinkState(self.panda, EE_LINK, computeLinkVelocity=True, computeForwardKinematics=True,
                           physicsClientId=self.client)
        return np.array(s[4], dtype=np.float64), np.array(s[6], dtype=np.float64)

    def workspace_box(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Where the Panda tasks' objects and targets are drawn, with room for the gripper around them: kept free
        of distractors."""
        return (0.33, -0.27, TABLE_TOP), (0.77, 0.27, TABLE_TOP + 0.45)

    def distractor_area(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The table top, less a strip along its edges and the Panda's base: distractors stand on it."""
        return (0.15, -0.47, TABLE_TOP), (1.15, 0.47, TABLE_TOP)

    def render_camera(self) -> CameraSpec:
        return {"eye": (1.45, -0.75, 1.35), "target": (0.45, 0.0, 0.7), "fov": 50.0, "near": 0.05, "far": 5.0}

    def default_cameras(self) -> list[Camera]:
        rgbdl = ("rgb", "depth", "label")
        return [Camera.from_dict(c) for c in [
            {"name": "front", "eye": (0.95, 0.0, 1.25), "target": (0.5, 0.0, 0.63), "fov": 55.0,
             "width": 84, "height": 84, "near": 0.05, "far": 4.0, "modalities": rgbdl},
            {"name": "side", "eye": (0.55, -0.75, 1.1), "target": (0.55, 0.0, 0.63), "fov": 50.0,
             "width": 84, "height": 84, "near": 0.05, "far": 4.0, "modalities": rgbdl},
            # on the hand, 7 cm off the gripper axis and tilted 11.5° towards it: the finger tips stay in view
            {"name": "wrist", "mount": "panda/panda_hand",
             "offset": ((0.07, 0.0, 0.03), (0.0, -0.1, 0.0, 0.995)), "fov": 75.0,
             "width": 84, "height": 84, "near": 0.02, "far": 2.0, "modalities": rgbdl},
        ]]
