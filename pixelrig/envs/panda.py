"""Franka Panda table-top tasks: ``pixelrig/PandaPush-v0`` (push a cube onto a target) and
``pixelrig/PandaReach-v0`` (bring the gripper to a point), both with Cartesian end-effector control."""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.lod import DEFAULT_BUDGET

DEFAULT_DETAIL = "simplified"
"""visual_detail of the Panda tasks unless given: at 84x84 on TinyRenderer it renders the 3-camera rig over 5x
faster than "full" with 98% of label pixels equal, depth equal and RGB within a few levels (README, level of
detail); "collision" is faster still but loses the Panda's dark joints (RGB off by ~17 levels)."""

TABLE_TOP = 0.625
"""Height of pybullet_data's table/table.urdf top surface (m)."""

ARM_JOINTS = (0, 1, 2, 3, 4, 5, 6)
FINGER_JOINTS = (9, 10)
EE_LINK = 11  # panda_grasptarget: between the finger tips
NEUTRAL = (0.0, 0.41, 0.0, -1.85, 0.0, 2.26, 0.79)
ARM_FORCES = (87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0)
DOWN = p.getQuaternionFromEuler((np.pi, 0.0, 0.0))  # gripper pointing at the table


class PandaEnv(BulletEnv):
    """Shared world and controller of the Panda tasks.

    - World: ground plane, pybullet_data's table (top at z = 0.625 m), the Franka Panda (franka_panda/panda.urdf,
      fixed base at the table's near edge), plus what the task adds.
    - Time: time step 1/240 s, 10 physics steps per ``step()`` (dt ≈ 0.042 s).
    - Cameras see the Panda at ``visual_detail="simplified"`` by default (its visual meshes decimated to
      ``visual_budget`` = 100 triangles each); physics is the same at every detail.
    - Action: ``Box(-1, 1, (3,))``, a displacement of the gripper centre in metres × ``max_step`` (0.05 m).
      The target is clipped to the workspace, turned into joint targets by pybullet's inverse kinematics
      (gripper pointing down) and tracked by its position controller; the fingers stay closed.
    """

    metadata = {**BulletEnv.metadata, "render_fps": 24}

    max_step = 0.05
    workspace_low = np.array([0.25, -0.35, TABLE_TOP + 0.02])
    workspace_high = np.array([0.85, 0.35, TABLE_TOP + 0.45])

    def __init__(self, visual_detail: str = DEFAULT_DETAIL, visual_budget: int = DEFAULT_BUDGET,
                 **common: Any) -> None:
        """``common``: BulletEnv's options (render_mode, renderer, gpu, randomize, ...)."""
        super().__init__(time_step=1.0 / 240.0, frame_skip=10, visual_detail=visual_detail,
                         visual_budget=visual_budget, **common)
        self.action_space = spaces.Box(-1.0, 1.0, (3,), np.float32)

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
        self._joint_lower, self._joint_upper = [], []
        for j in range(p.getNumJoints(self.panda, physicsClientId=c)):
            info = p.getJointInfo(self.panda, j, physicsClientId=c)
            if info[2] != p.JOINT_FIXED:
                self._joint_lower.append(info[8])
                self._joint_upper.append(info[9])
        self.build_task_objects()

    def build_task_objects(self) -> None:
        """Load the task's own bodies (after the robot)."""

    def reset_arm(self) -> None:
        for j, q in zip(ARM_JOINTS, NEUTRAL, strict=True):
            p.resetJointState(self.panda, j, q, 0.0, physicsClientId=self.client)
        for j in FINGER_JOINTS:
            p.resetJointState(self.panda, j, 0.0, 0.0, physicsClientId=self.client)
        self._hold(list(NEUTRAL))

    def _hold(self, arm_targets: list[float]) -> None:
        self.motor_command(self.panda, ARM_JOINTS, p.POSITION_CONTROL, targetPositions=arm_targets,
                           forces=ARM_FORCES)
        self.motor_command(self.panda, FINGER_JOINTS, p.POSITION_CONTROL, targetPositions=[0.0, 0.0],
                           forces=[20.0, 20.0])

    def ee_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Gripper centre position and linear velocity (world frame)."""
        s = p.getLinkState(self.panda, EE_LINK, computeLinkVelocity=True, computeForwardKinematics=True,
                           physicsClientId=self.client)
        return np.array(s[4], dtype=np.float64), np.array(s[6], dtype=np.float64)

    def apply_action(self, action: np.ndarray) -> None:
        ee, _ = self.ee_state()
        target = np.clip(ee + action * self.max_step, self.workspace_low, self.workspace_high)
        n = len(self._joint_lower)
        q = p.calculateInverseKinematics(
            self.panda, EE_LINK, target.tolist(), DOWN,
            lowerLimits=self._joint_lower, upperLimits=self._joint_upper,
            jointRanges=[u - lo for lo, u in zip(self._joint_lower, self._joint_upper, strict=True)],
            restPoses=list(NEUTRAL) + [0.0] * (n - len(NEUTRAL)),
            maxNumIterations=50, physicsClientId=self.client,
        )
        self._hold(list(q[: len(ARM_JOINTS)]))

    def render_camera(self) -> CameraSpec:
        return {"eye": (1.45, -0.75, 1.35), "target": (0.45, 0.0, 0.7), "fov": 50.0, "width": 320, "height": 240,
                "near": 0.05, "far": 5.0}

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


class PandaPushEnv(PandaEnv):
    """Push a 5 cm cube onto a target disc on the table.

    - Observation (float32, 22): gripper position (3) and velocity (3), cube position (3), cube orientation as
      roll/pitch/yaw (3), cube linear (3) and angular (3) velocity, target position (3), and the cube's
      distance to the target in the table plane (1).
    - Reward: minus the cube's distance to the target in the table plane (m): dense, 0 is perfect.
    - Success (``info["is_success"]``): that distance < 0.05 m; the episode then terminates.
      Registered with a 100-step time limit.
    - Start: arm at its neutral pose; cube uniform in x ∈ [0.40, 0.60], y ∈ [-0.15, 0.15]; target uniform in
      x ∈ [0.40, 0.70], y ∈ [-0.20, 0.20], at least 0.10 m from the cube.
    """

    success_distance = 0.05
    task_state = ("target_pos",)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf", "cube_small.urdf")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.observation_space = spaces.Box(-np.inf, np.inf, (22,), np.float32)
        self.target_pos = np.array([0.6, 0.1, TABLE_TOP])

    def build_task_objects(self) -> None:
        c = self.client
        self.cube = self.load_body(
            "cube", p.loadURDF("cube_small.urdf", [0.5, 0.0, TABLE_TOP + 0.025], physicsClientId=c)
        )
        disc = p.createVisualShape(p.GEOM_CYLINDER, radius=0.04, length=0.002, rgbaColor=(0.1, 0.8, 0.2, 1.0),
                                   physicsClientId=c)
        self.target = self.load_body(
            "target", p.createMultiBody(0.0, -1, disc, [0.6, 0.1, TABLE_TOP + 0.001], physicsClientId=c)
        )

    def reset_task(self, options: dict[str, Any]) -> None:
        rng = self.np_random
        self.reset_arm()
        cube_xy = rng.uniform([0.40, -0.15], [0.60, 0.15])
        target_xy = rng.uniform([0.40, -0.20], [0.70, 0.20])
        while np.linalg.norm(target_xy - cube_xy) < 0.10:
            target_xy = rng.uniform([0.40, -0.20], [0.70, 0.20])
        c = self.client
        p.resetBasePositionAndOrientation(self.cube, [*cube_xy, TABLE_TOP + 0.025], (0, 0, 0, 1), physicsClientId=c)
        self.target_pos = np.array([*target_xy, TABLE_TOP + 0.001])
        p.resetBasePositionAndOrientation(self.target, self.target_pos.tolist(), (0, 0, 0, 1), physicsClientId=c)

    def cube_distance(self) -> float:
        pos, _ = p.getBasePositionAndOrientation(self.cube, physicsClientId=self.client)
        return float(np.linalg.norm(np.array(pos[:2]) - self.target_pos[:2]))

    def observe(self) -> np.ndarray:
        c = self.client
        ee, ee_vel = self.ee_state()
        pos, orn = p.getBasePositionAndOrientation(self.cube, physicsClientId=c)
        lin, ang = p.getBaseVelocity(self.cube, physicsClientId=c)
        rpy = p.getEulerFromQuaternion(orn)
        obs = np.concatenate([ee, ee_vel, pos, rpy, lin, ang, self.target_pos, [self.cube_distance()]])
        return obs.astype(np.float32)

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        d = self.cube_distance()
        success = d < self.success_distance
        return -d, success, {"is_success": success, "distance": d}

    def reset_info(self) -> dict[str, Any]:
        return {"is_success": False, "distance": self.cube_distance()}


class PushExpert:
    """A scripted pushing policy for PandaPush-v0 (for demos and tests): go behind the cube, lower, push.

    Call with the env's state observation; returns an action in [-1, 1]^3. Stateful (its phase): make a new one
    per episode or call :meth:`reset`.
    """

    hover = TABLE_TOP + 0.12
    push_height = TABLE_TOP + 0.03

    def __init__(self) -> None:
        self.phase = "approach"

    def reset(self) -> None:
        self.phase = "approach"

    def __call__(self, obs: np.ndarray) -> np.ndarray:
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
        return np.clip((goal - ee) / PandaEnv.max_step, -1.0, 1.0).astype(np.float32)


class PandaReachEnv(PandaEnv):
    """Bring the gripper centre to a target point above the table.

    - Observation (float32, 10): gripper position (3) and velocity (3), target position (3), distance (1).
    - Reward: minus the gripper's distance to the target (m). Success (``info["is_success"]``): distance
      < 0.05 m; the episode then terminates. Registered with a 50-step time limit.
    - Start: arm at its neutral pose; target uniform in x ∈ [0.35, 0.65], y ∈ [-0.2, 0.2],
      z ∈ [0.05, 0.35] m above the table. The target is a small visual-only sphere (it has a label id).
    """

    success_distance = 0.05
    task_state = ("target_pos",)
    model_files = ("plane.urdf", "table/table.urdf", "franka_panda/panda.urdf")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.observation_space = spaces.Box(-np.inf, np.inf, (10,), np.float32)
        self.target_pos = np.array([0.5, 0.0, TABLE_TOP + 0.2])

    def build_task_objects(self) -> None:
        c = self.client
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.02, rgbaColor=(0.1, 0.8, 0.2, 1.0), physicsClientId=c)
        self.target = self.load_body(
            "target", p.createMultiBody(0.0, -1, ball, [0.5, 0.0, TABLE_TOP + 0.2], physicsClientId=c)
        )

    def reset_task(self, options: dict[str, Any]) -> None:
        self.reset_arm()
        xyz = self.np_random.uniform([0.35, -0.2, TABLE_TOP + 0.05], [0.65, 0.2, TABLE_TOP + 0.35])
        self.target_pos = xyz
        p.resetBasePositionAndOrientation(self.target, xyz.tolist(), (0, 0, 0, 1), physicsClientId=self.client)

    def distance(self) -> float:
        ee, _ = self.ee_state()
        return float(np.linalg.norm(ee - self.target_pos))

    def observe(self) -> np.ndarray:
        ee, ee_vel = self.ee_state()
        return np.concatenate([ee, ee_vel, self.target_pos, [np.linalg.norm(ee - self.target_pos)]]).astype(
            np.float32
        )

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        d = self.distance()
        success = d < self.success_distance
        return -d, success, {"is_success": success, "distance": d}

    def reset_info(self) -> dict[str, Any]:
        return {"is_success": False, "distance": self.distance()}
