"""``RobotEnv`` (``pixelrig/Robot-v0``): a gymnasium env straight from a URDF / SDF / MJCF file or a scene-building
function, in torque, position (PD) or velocity control of the joints or task-space control of an arm's end effector,
with an optional gripper."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.control import (
    EE_CONTROLS,
    GRIPPER_PRESETS,
    ControllerSettings,
    TaskSpaceController,
    arm_chain,
    chain_to,
    couple_gripper,
    gripper_positions,
    reach_box,
)
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.models import load_model, mjcf_motors, model_kind, resolve_model_path
from pixelrig.envs.randomization import Randomization
from pixelrig.envs.terms import (
    BASE_OBSERVATION_TERMS,
    DEFAULT_TERMS,
    GRIPPER_TERMS,
    GripperLinks,
    bounds,
    check_names,
    layout,
    parse_terms,
    read_terms,
    robot_links,
    split_term,
)
from pixelrig.render.lighting import Lighting

JOINT_CONTROLS = ("torque", "position", "velocity")
CONTROL_MODES = (*JOINT_CONTROLS, *EE_CONTROLS)
Builder = Callable[[int], int]
Limit = float | Mapping[str, float]
RangeLimit = tuple[float, float] | Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class JointSpec:
    """An actuated joint as the env sees it (limits after overrides; NaN where the model gives none)."""

    index: int
    name: str
    lower: float
    upper: float
    effort: float
    velocity: float

    @property
    def has_range(self) -> bool:
        return self.upper > self.lower


def _per_joint(value: Any, names: Sequence[str], what: str) -> dict[str, Any]:
    """Expand an override: a mapping {joint name: value} (names checked) or one value for every joint."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"{what}: unknown joints {unknown}; actuated joints are {list(names)}")
        return dict(value)
    return {n: value for n in names}


class RobotEnv(BulletEnv):
    """A robot from a model file or a builder function, with no task unless you give one.

    Args:
        source: path to a ``.urdf``, ``.sdf`` or MJCF ``.xml`` file (relative paths are also looked up in
            pybullet_data), or a callable ``build(client) -> robot body id`` that builds any scene in the given
            pybullet client (the "bring your own system" constructor; it runs again at every reset).
        control: "torque" (action = joint torques/forces, bounded by the effort limits), "position" (action =
            joint position targets, bounded by the joint limits, tracked by pybullet's PD position controller),
            "velocity" (action = joint velocity targets, bounded by the velocity limits), or task-space control of
            the end effector (see :mod:`pixelrig.envs.control`): "ee_delta_pos" (action = Δxyz in [-1, 1]³ ×
            ``max_delta_pos``; the target's orientation is held), "ee_delta_pose" (Δxyz, then a rotation as an
            axis-angle vector in [-1, 1]³ × ``max_delta_rot``) or "ee_pose" (an absolute position in the workspace
            box and a quaternion xyzw in [-1, 1]⁴, normalised; a zero or tiny one keeps the target's orientation).
            Task-space actions move a target pose (``env.ee_target``, task state), solved by damped least squares
            on pybullet's Jacobian and tracked by the position controller with the effort limits.
        robot: for files holding several bodies, the name of the robot body (model name or base link name).
            Default: the first body with movable joints.
        joints: names of the actuated joints. Default: for MJCF, the joints driven by ``<actuator><motor>``;
            otherwise every revolute and prismatic joint. Other movable joints are passive (motors off).
        fixed_base: pin the robot's base. None: fixed for URDF and SDF (arms), as the file says for MJCF
            (a floating torso stays floating), left to the builder for callables.
        self_collision: enable collisions between the robot's own links (URDF and MJCF).
        ground: add pybullet_data's plane at z = 0. None: yes for files, no for builders.
        base_position: where a URDF robot's base is placed.
        observation: the observation's terms, in order (a list or tuple of names; see below and
            :mod:`pixelrig.envs.terms`). Default ``("q", "qd")``.
        base_observation: shorthand for ``observation=("q", "qd", "base_pos", "base_quat", "base_linvel",
            "base_angvel")`` (position 3, quaternion xyzw 4, linear and angular velocity 3 each), for floating-base
            robots. Not with ``observation=``.
        effort_limits: override/fill torque limits: a number for every joint lacking one, or {joint: N·m}.
            MJCF motors give gear × |ctrlrange| as the limit.
        velocity_limits: the same for velocity limits (rad/s or m/s).
        position_limits: the same for position limits: (low, high) or {joint: (low, high)}.
        position_gain: PD proportional gain(s) of the position controller (pybullet's positionGain). Default 0.1,
            and 0.2 in task-space control, where it lets the arm keep up with ``max_delta_pos`` per step (measured
            at the default 4 physics steps per step: at 0.1 the Panda and the xArm6 reach 70% and 63% of it).
        velocity_gain: PD derivative gain(s) (pybullet's velocityGain).
        initial_qpos: the default pose (actuated joints). Default: the file's zero pose clipped into the limits.
        reset_noise_scale: half-width of uniform noise on the initial positions and velocities at reset.
        ee_link: (task space) the end-effector link's name. Default: the last link of the arm chain, where a walk
            from the base that follows the actuated joints (a gripper's excluded), then fixed joints, ends
            (:func:`pixelrig.envs.control.default_ee_link`): ``panda_grasptarget`` for the Panda with
            ``gripper="panda"`` (``panda_hand`` without: its fingers branch), ``lbr_iiwa_link_7`` for the kuka iiwa,
            ``link6`` for the xArm6. The arm is the actuated joints on the path to it; other actuated joints hold
            their reset position.
        ee_frame: (delta modes) "world" (default) or "ee": the axes of Δxyz and of the rotation: the world's or the
            end-effector target's own.
        max_delta_pos: (delta modes) metres per step of an action of 1; default 0.01 (0.6 m/s at the default
            1/60 s step).
        max_delta_rot: ("ee_delta_pose") radians per step of an action of 1; default 0.05 (3 rad/s).
        workspace: (task space) ``(low, high)`` corners of the world box the target is kept in (and ``ee_pose``'s
            position bounds). Default: the box around the arm's first joint with half-size its reach.
        ik_damping: (task space) λ of the damped least squares, default 0.05.
        nullspace_gain: (task space) pull towards ``rest_pose`` in the arm's null space, a fraction per step in
            [0, 1]; default 0.02 (0: off). Moves a redundant arm's elbow without moving the end effector, and
            bends an arm stretched straight (a singular pose) back towards the rest pose.
        rest_pose: (task space) the rest pose of the actuated joints (``q``'s layout); default ``initial_qpos``.
            Start task-space control from a bent pose (``initial_qpos=``): the zero pose of many arms (the
            Panda's, the iiwa's) is stretched straight up, a singular pose the arm can leave sideways but not
            along itself.
        gripper: joint names of a gripper, or "panda" (``panda_finger_joint1/2``). They leave the actuated joints
            (``q``, ``qd`` and the joint actions) and add ONE action dimension, last: a target opening in [-1, 1]
            (-1: every gripper joint at its lower limit, closed; 1: its upper limit, open). Every step each gripper
            joint gets the same fraction of its range as a force-limited position target, and gear constraints
            hold the joints to the same fraction, as one motor drives a parallel gripper
            (:func:`pixelrig.envs.control.couple_gripper`; without them a grasped cube slides ±15 mm between two
            force-saturated fingers when shaken). Episodes start open. Default None (no gripper).
        gripper_force: the gripper's force limit per joint (N or N·m); default the file's effort limits (the
            Panda's fingers: 20 N each, which hold a 5 cm, 0.1 kg cube through a 2 Hz shake; 2 N still does).
        reward_fn: ``reward_fn(env) -> float`` called after each step; default 0.0.
        terminated_fn: ``terminated_fn(env) -> bool`` called after each step; default never.
        time_step: physics time step (s). frame_skip: physics steps per ``step()``. gravity: m/s².
        randomize: domain randomisation (:class:`pixelrig.envs.Randomization`); its ``joint_noise`` adds to
            ``reset_noise_scale``.
        render_mode: None, "rgb_array" or "human" (a world-fixed camera that frames the robot).
        renderer: any renderer (:data:`pixelrig.render.registry.RENDERER_CHOICES`), or None for
            ``PIXELRIG_RENDERER`` (default "auto").
        visual_detail: "full", "simplified" or "collision": what cameras see of a URDF/SDF robot (physics is the
            file's in every case; MJCF files and builders are drawn as they are). See :mod:`pixelrig.envs.lod`.
        visual_budget: triangles per visual mesh for "simplified".
        gpu: render on this CUDA device with EGL (see :class:`pixelrig.envs.BulletEnv`).
        lighting: the light (see :class:`pixelrig.envs.BulletEnv`).
        looks: a looks preset's name (see :class:`pixelrig.envs.BulletEnv`).

    Observation: a flat float32 Box, the concatenation of the ``observation`` terms; ``observation_layout`` maps
    each term to its slice. Default ``concat(q, qd)`` of the actuated joints (positions first). Terms:

    - ``"q"``, ``"qd"``: actuated joint positions and velocities (n each).
    - ``"base_pos"`` (3, the base's centre of mass), ``"base_quat"`` (4, xyzw), ``"base_rpy"`` (3, roll, pitch,
      yaw with ``R = Rz Ry Rx``), ``"base_rotmat"`` (9, row-major), ``"base_rot6d"`` (6, the first two columns
      of R: R00, R10, R20, R01, R11, R21), ``"base_linvel"``, ``"base_angvel"`` (3 each, world frame),
      ``"base_linvel_local"``, ``"base_angvel_local"`` (3 each, in the base frame: ``R.T @ v``).
    - ``"link_pose:<link>"`` (7: position and quaternion of the link's URDF frame; the base link's name gives
      the base's URDF frame), ``"link_vel:<link>"`` (6: linear velocity of the link's centre of mass and
      angular velocity, world frame), ``"body_pose:<body>"`` (7: a named body's :meth:`body_pose`).
    - ``"contact_forces"``: total normal contact force (N) on each robot link, base first (links + 1 values).
    - ``"gripper_opening"`` (1: the distance between the first two gripper joints' child link frames, m; the
      Panda's finger gap) and ``"gripper_contact:<body>"`` (1: 1.0 if a gripper link touches the body, else 0.0),
      with ``gripper=``.

    Bounds are infinite (pybullet's joint limits are soft, so a joint driven hard goes past them, and the state
    is never clipped) except where they hold mathematically: quaternion and rotation-matrix entries in [-1, 1],
    roll and yaw in [-pi, pi], pitch in [-pi/2, pi/2], contact forces >= 0, the gripper's opening >= 0 and its
    contacts in [0, 1].
    ``reset(options={"qpos": ..., "qvel": ...})`` starts from the given state (no noise); the task-space target
    starts at the end effector's pose once the episode's world is final.

    Action: the arm's part (joint torques, positions or velocities; or Δxyz (3); Δxyz + Δrotation (6); position +
    quaternion (7)), then the gripper's opening (1) with ``gripper=``.
    """

    task_state = ("ee_target",)

    metadata = {**BulletEnv.metadata, "render_fps": 60}
    model_files = ("plane.urdf",)

    def __init__(
        self,
        source: str | os.PathLike[str] | Builder,
        control: str = "torque",
        *,
        robot: str | None = None,
        joints: Sequence[str] | None = None,
        fixed_base: bool | None = None,
        self_collision: bool = False,
        ground: bool | None = None,
        base_position: Sequence[float] = (0.0, 0.0, 0.0),
        base_observation: bool = False,
        observation: Sequence[str] | None = None,
        effort_limits: Limit | None = None,
        velocity_limits: Limit | None = None,
        position_limits: RangeLimit | None = None,
        position_gain: float | Sequence[float] | None = None,
        velocity_gain: float | Sequence[float] | None = None,
        ee_link: str | None = None,
        ee_frame: str | None = None,
        max_delta_pos: float | None = None,
        max_delta_rot: float | None = None,
        workspace: tuple[Sequence[float], Sequence[float]] | None = None,
        ik_damping: float | None = None,
        nullspace_gain: float | None = None,
        rest_pose: Sequence[float] | None = None,
        gripper: str | Sequence[str] | None = None,
        gripper_force: float | None = None,
        initial_qpos: Sequence[float] | None = None,
        reset_noise_scale: float = 0.0,
        reward_fn: Callable[[RobotEnv], float] | None = None,
        terminated_fn: Callable[[RobotEnv], bool] | None = None,
        time_step: float = 1.0 / 240.0,
        frame_skip: int = 4,
        gravity: Sequence[float] = (0.0, 0.0, -9.81),
        randomize: Randomization | None = None,
        render_mode: str | None = None,
        renderer: str | None = None,
        visual_detail: str = "full",
        visual_budget: int = DEFAULT_BUDGET,
        gpu: int | None = None,
        lighting: Lighting | None = None,
        looks: str | None = None,
    ) -> None:
        if control not in CONTROL_MODES:
            raise ValueError(f"control must be one of {CONTROL_MODES}: got {control!r}")
        self.controller_settings = _controller_settings(
            control, ee_link=ee_link, ee_frame=ee_frame, max_delta_pos=max_delta_pos, max_delta_rot=max_delta_rot,
            workspace=workspace, ik_damping=ik_damping, nullspace_gain=nullspace_gain, rest_pose=rest_pose)
        """The task-space controller's configuration (None in joint control)."""
        self.gripper_names = _gripper_names(gripper)
        """The gripper's joint names (empty without a gripper)."""
        if gripper_force is not None and not self.gripper_names:
            raise ValueError(f"gripper_force={gripper_force!r} needs a gripper: pass gripper=(joint names) or "
                             "gripper='panda'")
        if gripper_force is not None and (isinstance(gripper_force, bool) or not isinstance(gripper_force, int | float)
                                          or not math.isfinite(gripper_force) or gripper_force <= 0):
            raise ValueError(f"gripper_force={gripper_force!r} must be a finite number > 0 (N per gripper joint)")
        self.gripper_force = None if gripper_force is None else float(gripper_force)
        for name, fn in (("reward_fn", reward_fn), ("terminated_fn", terminated_fn)):
            if fn is not None and not callable(fn):
                raise ValueError(f"{name} must be a callable taking the env: got {fn!r}")
        if not (isinstance(reset_noise_scale, int | float) and math.isfinite(reset_noise_scale)
                and reset_noise_scale >= 0):
            raise ValueError(f"reset_noise_scale={reset_noise_scale!r} must be a finite number >= 0")
        if observation is not None and base_observation:
            raise ValueError(
                f"pass observation=... or base_observation=True, not both: base_observation=True means "
                f"observation={BASE_OBSERVATION_TERMS}; add the base terms you want to observation={observation!r}"
            )
        self.observation_terms: tuple[str, ...] = (
            parse_terms(observation) if observation is not None
            else BASE_OBSERVATION_TERMS if base_observation else DEFAULT_TERMS
        )
        """The observation's terms, in order."""
        self.observation_layout: dict[str, slice] = {}
        """{term: slice} of each term in the observation."""
        self.link_indices: dict[str, int] = {}
        """The robot's link names -> link index (the base link is -1)."""
        if callable(source):
            self.model_path: Path | None = None
            self.model_kind = "builder"
            self._builder: Builder | None = source
        else:
            self.model_path = resolve_model_path(source)
            self.model_kind = model_kind(self.model_path)
            self._builder = None
        self.source = source
        self.control = control
        self._robot_name = robot
        self._joint_names_wanted = list(joints) if joints is not None else None
        self.fixed_base = fixed_base
        self.self_collision = bool(self_collision)
        self.ground = (self._builder is None) if ground is None else bool(ground)
        self.base_position = tuple(float(v) for v in base_position)
        self.base_observation = bool(base_observation)
        self.reward_fn, self.terminated_fn = reward_fn, terminated_fn
        self.reset_noise_scale = float(reset_noise_scale)
        self.robot = -1
        self.joints: list[JointSpec] = []
        """The actuated joints (a gripper's excluded), in model order."""
        self.gripper_joints: list[JointSpec] = []
        """The gripper's joints, in ``gripper=`` order (``effort`` is the force limit used)."""
        self.controller: TaskSpaceController | None = None
        """The task-space controller (None in joint control); rebuilt with the world."""
        self.ee_target: np.ndarray | None = None
        """The task-space target: (7,) position and quaternion xyzw of the end-effector link's URDF frame, world
        frame (None in joint control). Put on the end effector at reset and by :meth:`set_qpos_qvel`, moved by
        every action. Task state: snapshots restore it."""
        self._ee_link_name = ee_link
        self._gripper_links: GripperLinks | None = None
        self._arm_positions: list[int] = []
        self.rest_pose: np.ndarray | None = None
        """The null-space pull's rest pose of the actuated joints (task space; None in joint control)."""
        self._passive: list[int] = []
        self._overrides = (effort_limits, velocity_limits, position_limits)
        super().__init__(render_mode=render_mode, renderer=renderer, time_step=time_step, frame_skip=frame_skip,
                         gravity=gravity, randomize=randomize, visual_detail=visual_detail,
                         visual_budget=visual_budget, gpu=gpu, lighting=lighting, looks=looks)
        try:
            self._init_spaces(position_gain, velocity_gain, initial_qpos, rest_pose)
        except BaseException:
            self.close()
            raise
        self.metadata = {**type(self).metadata, "render_fps": max(1, round(1.0 / self.dt))}

    # ---- world ----------------------------------------------------------------------------------------

    def build_world(self) -> None:
        c = self.client
        if self.ground:
            self.load_body("ground", p.loadURDF("plane.urdf", physicsClientId=c))
        if self._builder is not None:
            robot = self._builder(c)
            bodies = [p.getBodyUniqueId(i, physicsClientId=c) for i in range(p.getNumBodies(physicsClientId=c))]
            if isinstance(robot, bool) or not isinstance(robot, int | np.integer) or int(robot) not in bodies:
                raise ValueError(
                    f"RobotEnv builder {getattr(self._builder, '__name__', self._builder)!r} returned {robot!r}, "
                    f"which is not a body in its client (bodies: {bodies}); return the id that loadURDF / "
                    "createMultiBody gave for the robot"
                )
            robot = int(robot)
            if self.fixed_base:
                p.changeDynamics(robot, -1, mass=0.0, physicsClientId=c)
            loaded = [b for b in bodies if b not in self.body_names]
        else:
            loaded = load_model(Path(self.model_file(self.model_path)), c, fixed_base=self.fixed_base,
                                self_collision=self.self_collision, base_position=self.base_position)
            robot = self._pick_robot(loaded)
        for body in loaded:
            info = p.getBodyInfo(body, physicsClientId=c)
            self.load_body(info[1].decode("utf-8", errors="replace") or f"body{body}", body)
        self.robot = robot
        self.link_indices = robot_links(c, robot)
        self.joints, self._passive = self._actuated_joints()
        self.gripper_joints = self._gripper_joints()
        self._gripper_links = self._finger_links()
        if len(self.gripper_joints) > 1:
            g = self.gripper_joints
            couple_gripper(c, robot, [j.index for j in g], [j.lower for j in g], [j.upper for j in g],
                           max(j.effort for j in g))
        free = [js.index for js in self.joints + self.gripper_joints] + self._passive  # motors off until commanded
        self.motor_command(robot, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free))
        if self.controller_settings is not None:
            owner = f"RobotEnv({self.source!r})" if self._builder is None else "RobotEnv(builder)"
            chain = arm_chain(c, robot, self._ee_link_name, [j.index for j in self.joints],
                              {j.index: (j.lower, j.upper, j.velocity) for j in self.joints}, owner)
            box = self.controller_settings.workspace
            self.controller = TaskSpaceController(chain, self.controller_settings,
                                                  reach_box(c, chain) if box is None else box, self.dt)
            actuated = [j.index for j in self.joints]
            self._arm_positions = [actuated.index(j) for j in chain.joints]

    def _pick_robot(self, bodies: list[int]) -> int:
        c = self.client

        def names(b: int) -> tuple[str, str]:
            base, model = p.getBodyInfo(b, physicsClientId=c)
            return model.decode(errors="replace"), base.decode(errors="replace")

        if self._robot_name is not None:
            hits = [b for b in bodies if self._robot_name in names(b)]
            if not hits:
                listing = ", ".join(f"{m!r} (base link {b!r})" for m, b in map(names, bodies))
                raise ValueError(f"robot={self._robot_name!r} is not a body of {self.model_path}; bodies: {listing}")
            return hits[0]
        for b in bodies:
            if any(p.getJointInfo(b, j, physicsClientId=c)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC)
                   for j in range(p.getNumJoints(b, physicsClientId=c))):
                return b
        return bodies[0]

    def _actuated_joints(self) -> tuple[list[JointSpec], list[int]]:
        c = self.client
        movable = {}
        for j in range(p.getNumJoints(self.robot, physicsClientId=c)):
            info = p.getJointInfo(self.robot, j, physicsClientId=c)
            if info[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC):
                movable[info[1].decode()] = info
        grip = self.gripper_names
        unknown = [n for n in grip if n not in movable]
        if unknown:
            raise ValueError(f"gripper joints {unknown} are not movable joints of the robot; movable joints: "
                             f"{list(movable)}")
        wanted = self._joint_names_wanted
        both = [n for n in wanted or () if n in grip]
        if both:
            raise ValueError(f"joints {both} are in both joints= and gripper=: the gripper's action dimension drives "
                             "them; leave them out of joints=")
        motors = {}
        if wanted is None and self.model_kind == "mjcf":
            motors = {m.joint: m.effort for m in mjcf_motors(self.model_path) if m.joint in movable and
                      m.joint not in grip}
            wanted = list(motors) if motors else None
        if wanted is None:
            wanted = [n for n in movable if n not in grip]
        unknown = [n for n in wanted if n not in movable]
        if unknown:
            raise ValueError(f"joints {unknown} are not movable joints of the robot; movable joints: {list(movable)}")
        if not wanted:
            raise ValueError(f"the robot body {self.body_names.get(self.robot, self.robot)!r} has no movable "
                             "(revolute or prismatic) joints to control")
        order = sorted(wanted, key=lambda n: movable[n][0])  # model joint order
        specs = []
        for n in order:
            info = movable[n]
            effort = motors.get(n, info[10])
            specs.append(JointSpec(info[0], n, float(info[8]), float(info[9]),
                                   float(effort) if effort > 0 else math.nan,
                                   float(info[11]) if info[11] > 0 else math.nan))
        passive = [info[0] for n, info in movable.items() if n not in wanted and n not in grip]
        return self._apply_overrides(specs), passive

    def _gripper_joints(self) -> list[JointSpec]:
        """The gripper's joints with their range and force limit (``gripper_force`` or the file's effort)."""
        specs = []
        index = {n: j for j, n in ((j, p.getJointInfo(self.robot, j, physicsClientId=self.client)[1].decode())
                                   for j in range(p.getNumJoints(self.robot, physicsClientId=self.client)))}
        for name in self.gripper_names:
            info = p.getJointInfo(self.robot, index[name], physicsClientId=self.client)
            lower, upper = float(info[8]), float(info[9])
            if not upper > lower:
                raise ValueError(f"gripper joint {name!r} has no position range ({lower}, {upper}) to open and close "
                                 "over; a gripper joint needs lower < upper limits in the model")
            force = self.gripper_force if self.gripper_force is not None else float(info[10])
            if not force > 0:
                raise ValueError(f"gripper joint {name!r} has no effort limit: pass gripper_force=<N per joint>")
            specs.append(JointSpec(info[0], name, lower, upper, force, float(info[11])))
        return specs

    def _finger_links(self) -> GripperLinks | None:
        """The gripper's links for the observation terms: its joints' child links and every link below them."""
        if not self.gripper_joints:
            return None
        c = self.client
        parents = [int(p.getJointInfo(self.robot, j, physicsClientId=c)[16])
                   for j in range(p.getNumJoints(self.robot, physicsClientId=c))]
        fingers = tuple(j.index for j in self.gripper_joints)
        below = {link for link in range(len(parents)) if set(chain_to(parents, link)) & set(fingers)}
        return GripperLinks(fingers, frozenset(below))

    def _apply_overrides(self, specs: list[JointSpec]) -> list[JointSpec]:
        effort, velocity, position = self._overrides
        names = [s.name for s in specs]
        out = []
        per = {k: _per_joint(v, names, k) for k, v in
               (("effort_limits", effort), ("velocity_limits", velocity), ("position_limits", position))}
        fill = {k: not isinstance(v, Mapping) for k, v in
                (("effort_limits", effort), ("velocity_limits", velocity), ("position_limits", position))}
        for s in specs:
            e, v, lo, hi = s.effort, s.velocity, s.lower, s.upper
            if s.name in per["effort_limits"] and (not fill["effort_limits"] or math.isnan(e)):
                e = _positive("effort_limits", s.name, per["effort_limits"][s.name])
            if s.name in per["velocity_limits"] and (not fill["velocity_limits"] or math.isnan(v)):
                v = _positive("velocity_limits", s.name, per["velocity_limits"][s.name])
            if s.name in per["position_limits"] and (not fill["position_limits"] or not s.has_range):
                lo, hi = _interval("position_limits", s.name, per["position_limits"][s.name])
            out.append(JointSpec(s.index, s.name, lo, hi, e, v))
        return out

    # ---- spaces ---------------------------------------------------------------------------------------

    def _init_spaces(self, position_gain: Any, velocity_gain: Any, initial_qpos: Any, rest_pose: Any) -> None:
        names = [j.name for j in self.joints]
        if self.controller is not None:
            low, high = self.controller.action_bounds()
        else:
            where = str(self.model_path) if self.model_path else "the builder's robot"
            what, keyword, has_limit, limits = _CONTROL_LIMITS[self.control]
            missing = [j.name for j in self.joints if not has_limit(j)]
            if missing:
                raise ValueError(f"{self.control} control needs {what}, but joints {missing} of {where} have none; "
                                 f"pass {keyword}")
            low, high = (np.array(b) for b in zip(*(limits(j) for j in self.joints), strict=True))
        if self.gripper_joints:
            low, high = np.append(low, -1.0), np.append(high, 1.0)
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self.position_gains = self._gains("position_gain", position_gain, 0.1 if self.controller is None else 0.2)
        self.velocity_gains = self._gains("velocity_gain", velocity_gain, 1.0)
        self._init_observation()
        if initial_qpos is None:
            self.initial_qpos = np.array([np.clip(0.0, j.lower, j.upper) if j.has_range else 0.0
                                          for j in self.joints])
        else:
            self.initial_qpos = self._vector("initial_qpos", initial_qpos, names)
        if self.controller is not None:
            self.rest_pose = self.initial_qpos.copy() if rest_pose is None else \
                self._vector("rest_pose", rest_pose, names)

    def _init_observation(self) -> None:
        """Check the terms' link and body names; set ``observation_layout`` and ``observation_space``.

        Unbounded but where a term is bounded mathematically: pybullet's joint limits are soft (a torque at its
        bound pushes a joint past them), and nothing else bounds positions or velocities. The state is never
        clipped to fit a declared bound.
        """
        terms = self.observation_terms
        check_names(terms, self.link_indices, list(self.body_ids()), self.body_names.get(self.robot, "robot"))
        for term in terms:
            kind, name = split_term(term)
            if kind in GRIPPER_TERMS and len(self.gripper_joints) < (2 if kind == "gripper_opening" else 1):
                raise ValueError(f"observation term {term!r} needs a gripper"
                                 f"{' of two or more joints' if kind == 'gripper_opening' else ''}: pass "
                                 "gripper=(joint names) or gripper='panda'")
            if kind in ("body_pose", "gripper_contact"):
                self.body_id(name)  # refuses a name that several bodies share
        num_links = p.getNumJoints(self.robot, physicsClientId=self.client) + 1
        self.observation_layout = layout(terms, len(self.joints), num_links)
        low, high = bounds(self.observation_layout)
        self.observation_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    def _gains(self, what: str, value: Any, default: float) -> np.ndarray:
        n = len(self.joints)
        if value is None:
            return np.full(n, default)
        g = np.broadcast_to(np.asarray(value, dtype=np.float64), (n,)) if np.ndim(value) == 0 else \
            self._vector(what, value, [j.name for j in self.joints])
        if not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ValueError(f"{what}={value!r} must be finite and >= 0")
        return np.array(g, dtype=np.float64)

    def _vector(self, what: str, value: Any, names: Sequence[str]) -> np.ndarray:
        try:
            v = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{what}={value!r} is not numeric; expected {len(names)} values for {list(names)}") \
                from None
        if v.shape != (len(names),):
            raise ValueError(f"{what} has shape {v.shape}, expected ({len(names)},) for joints {list(names)}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{what} contains NaN or inf: {v.tolist()}")
        return v

    # ---- episode --------------------------------------------------------------------------------------

    @property
    def joint_names(self) -> list[str]:
        """Names of the actuated joints (a gripper's excluded), in observation and joint-action order."""
        return [j.name for j in self.joints]

    @property
    def ee_link(self) -> str | None:
        """The end-effector link's name (task-space control), or None."""
        if self.controller is None:
            return None
        return next(n for n, j in self.link_indices.items() if j == self.controller.chain.ee_link)

    def check_reset_options(self, options: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(options) - {"qpos", "qvel"}, key=str)
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; RobotEnv takes 'qpos' and 'qvel'")
        names = self.joint_names
        return {k: self._vector(k, options[k], names) for k in ("qpos", "qvel") if k in options}

    def reset_task(self, options: dict[str, Any]) -> None:
        names = self.joint_names
        qpos, qvel = options.get("qpos"), options.get("qvel")
        noise = self.reset_noise_scale + (self.randomize.joint_noise if self.randomize else 0.0)
        n = len(names)
        if qpos is None:
            qpos = self.initial_qpos + (self.np_random.uniform(-noise, noise, n) if noise else 0.0)
        if qvel is None:
            qvel = self.np_random.uniform(-noise, noise, n) if noise and "qpos" not in options else np.zeros(n)
        for j in self.gripper_joints:  # episodes start with the gripper open
            p.resetJointState(self.robot, j.index, j.upper, 0.0, physicsClientId=self.client)
        if self.gripper_joints:
            self._grip(1.0)
        self._write_state(qpos, qvel)

    def start_episode(self) -> None:
        if self.controller is not None:
            self._latch_target()

    def set_qpos_qvel(self, qpos: Sequence[float], qvel: Sequence[float] | None = None) -> None:
        """Set the actuated joints' positions (and velocities, default zero) now. In position control the
        controller's targets move to ``qpos`` too, so the robot holds the new pose.

        In task-space control the end-effector target moves to the new pose as well.

        Raises:
            ValueError: wrong length or non-finite values; nothing is changed.
        """
        names = self.joint_names
        q = self._vector("qpos", qpos, names)
        qd = self._vector("qvel", qvel, names) if qvel is not None else np.zeros(len(names))
        self._write_state(q, qd)
        if self.controller is not None:
            self._latch_target()

    def _write_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        c = self.client
        for j, q, qd in zip(self.joints, qpos, qvel, strict=True):
            p.resetJointState(self.robot, j.index, float(q), float(qd), physicsClientId=c)
        if self.control == "velocity":
            self._command(np.zeros(len(self.joints)))
        elif self.control != "torque":  # position control and task space hold the pose
            self._command(qpos)

    def _latch_target(self) -> None:
        """Put the task-space target on the end effector's pose now."""
        self.ee_target = self.controller.pose_now(self.client)

    def _command(self, target: np.ndarray, positions: Sequence[int] | None = None) -> None:
        """Send ``target`` to the actuated joints (or to those at ``positions`` in :attr:`joints`) in the control
        mode's motor mode: torques, velocities, or position targets (joint position and task-space control)."""
        joints = self.joints if positions is None else [self.joints[i] for i in positions]
        idx = [j.index for j in joints]
        forces = [j.effort if not math.isnan(j.effort) else 1e6 for j in joints]
        position_gains, velocity_gains = self.position_gains, self.velocity_gains
        if positions is not None:
            position_gains, velocity_gains = position_gains[list(positions)], velocity_gains[list(positions)]
        if self.control == "torque":
            self.motor_command(self.robot, idx, p.TORQUE_CONTROL, forces=target)
        elif self.control == "velocity":
            self.motor_command(self.robot, idx, p.VELOCITY_CONTROL, targetVelocities=target, forces=forces,
                               velocityGains=velocity_gains)
        else:
            self.motor_command(self.robot, idx, p.POSITION_CONTROL, targetPositions=target, forces=forces,
                               positionGains=position_gains, velocityGains=velocity_gains)

    def _grip(self, command: float) -> None:
        """Send the gripper's opening command (-1 closed .. 1 open) to every gripper joint, force-limited."""
        g = self.gripper_joints
        targets = gripper_positions(command, np.array([j.lower for j in g]), np.array([j.upper for j in g]))
        self.motor_command(self.robot, [j.index for j in g], p.POSITION_CONTROL, targetPositions=targets,
                           forces=[j.effort for j in g])

    def apply_action(self, action: np.ndarray) -> None:
        a = np.asarray(action, dtype=np.float64)
        arm = a[:-1] if self.gripper_joints else a
        if self.controller is None:
            self._command(arm)
        else:
            self.ee_target, q = self.controller.command(self.client, self.ee_target, arm,
                                                        self.rest_pose[self._arm_positions])
            self._command(q, self._arm_positions)
        if self.gripper_joints:
            self._grip(a[-1])

    def qpos_qvel(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of the actuated joints (float64)."""
        return self.joint_states(self.robot, [j.index for j in self.joints])

    def observe(self) -> np.ndarray:
        return read_terms(self.observation_terms, self.client, self.robot, [j.index for j in self.joints],
                          self.link_indices, self.body_id, self._gripper_links)

    def evaluate(self, action: Any) -> tuple[float, bool, dict[str, Any]]:
        reward = float(self.reward_fn(self)) if self.reward_fn is not None else 0.0
        terminated = bool(self.terminated_fn(self)) if self.terminated_fn is not None else False
        return reward, terminated, {}

    # ---- cameras ----------------------------------------------------------------------------------------

    def robot_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """World axis-aligned bounding box of the robot (all links), as (min, max)."""
        c = self.client
        lows, highs = [], []
        for link in range(-1, p.getNumJoints(self.robot, physicsClientId=c)):
            lo, hi = p.getAABB(self.robot, link, physicsClientId=c)
            lows.append(lo)
            highs.append(hi)
        return np.min(lows, axis=0), np.max(highs, axis=0)

    def render_camera(self) -> CameraSpec:
        lo, hi = self.robot_bounds()
        centre = (lo + hi) / 2.0
        radius = max(float(np.linalg.norm(hi - lo)) / 2.0, 0.25)
        fov = 50.0
        distance = 1.15 * radius / math.sin(math.radians(fov) / 2.0)
        direction = np.array([1.0, -1.0, 0.6]) / np.linalg.norm([1.0, -1.0, 0.6])
        eye = centre + direction * distance
        return {"eye": tuple(eye.tolist()), "target": tuple(centre.tolist()), "fov": fov, "width": 320,
                "height": 240, "near": 0.02, "far": float(distance + 4 * radius + 5.0)}

    def default_cameras(self) -> list[Camera]:
        cam = self.render_camera()
        return [Camera.from_dict(dict(cam, name="main", width=84, height=84, modalities=("rgb", "depth", "label")))]

    def model_paths(self) -> list[Path]:
        """The model file (and the ground plane) this env loads; none for builders but the plane."""
        return super().model_paths() + ([self.model_path] if self.model_path else [])


_CONTROL_LIMITS: dict[str, tuple[str, str, Callable[[JointSpec], bool], Callable[[JointSpec], tuple]]] = {
    "torque": ("effort limits", "effort_limits=<N·m for all> or effort_limits={joint: N·m}",
               lambda j: not math.isnan(j.effort), lambda j: (-j.effort, j.effort)),
    "position": ("joint limits (continuous joints have none)",
                 "position_limits=(low, high) or {joint: (low, high)}",
                 lambda j: j.has_range, lambda j: (j.lower, j.upper)),
    "velocity": ("velocity limits", "velocity_limits=<rad/s for all> or velocity_limits={joint: rad/s}",
                 lambda j: not math.isnan(j.velocity), lambda j: (-j.velocity, j.velocity)),
}
"""Per control mode: what its action bounds need, the keyword that supplies it, the test, the bounds."""


def _controller_settings(control: str, *, rest_pose: Any, **options: Any) -> ControllerSettings | None:
    """The task-space controller's settings for ``control`` (None for joint control, which takes none of the
    task-space options: naming one is an error). ``options`` are RobotEnv's keywords; None means the default."""
    given = sorted(k for k, v in {**options, "rest_pose": rest_pose}.items() if v is not None)
    if control not in EE_CONTROLS:
        if given:
            raise ValueError(f"{', '.join(given)} apply to task-space control {EE_CONTROLS}; control={control!r} "
                             "takes none: leave them out or pick a task-space control")
        return None
    names = {"ee_frame": "frame", "ik_damping": "damping"}
    settings = {names.get(k, k): v for k, v in options.items() if v is not None and k != "ee_link"}
    ee_link = options.get("ee_link")
    if ee_link is not None and not isinstance(ee_link, str):
        raise ValueError(f"ee_link={ee_link!r} must be a link name (a string)")
    return ControllerSettings(control, **settings)


def _gripper_names(gripper: Any) -> tuple[str, ...]:
    """``gripper=`` as joint names: None -> (), a preset name (:data:`GRIPPER_PRESETS`) -> its joints, or the
    names given (checked: strings, at least one, no repeats)."""
    if gripper is None:
        return ()
    if isinstance(gripper, str):
        if gripper not in GRIPPER_PRESETS:
            raise ValueError(f"gripper={gripper!r} is not a known gripper ({sorted(GRIPPER_PRESETS)}); pass its joint "
                             "names, e.g. gripper=('finger_joint_a', 'finger_joint_b')")
        return GRIPPER_PRESETS[gripper]
    names = tuple(gripper) if isinstance(gripper, Sequence) else ()
    if not names or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise ValueError(f"gripper={gripper!r} must be a preset name ({sorted(GRIPPER_PRESETS)}) or distinct joint "
                         "names (strings)")
    return names


def _positive(what: str, joint: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a positive number") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a positive number")
    return v


def _interval(what: str, joint: str, value: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}[{joint!r}]={value!r} must be a (low, high) pair") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{what}[{joint!r}]={value!r} needs finite low < high")
    return lo, hi
