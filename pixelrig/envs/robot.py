"""``RobotEnv`` (``pixelrig/Robot-v0``): a gymnasium env straight from a URDF / SDF / MJCF file or a scene-building
function, under any controller of :mod:`pixelrig.control` (joint torque, position or velocity; task-space control
of an arm's end effector), with an optional gripper."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.control.base import Controller, JointSpec, Motors
from pixelrig.control.gripper import Gripper, gripper_names
from pixelrig.control.joint import JointController
from pixelrig.control.registry import CONTROLLERS, ControlConfig, JointConfig, control_config
from pixelrig.control.task_space import EE_CONTROLS, TaskSpaceControl, TaskSpaceController, arm_chain, reach_box
from pixelrig.envs.base import BulletEnv, CameraSpec
from pixelrig.envs.controlled import Controlled
from pixelrig.envs.joints import Limit, RangeLimit, actuated_joints, finger_links, gripper_joints, pick_robot
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.randomization import Randomization
from pixelrig.envs.robot_files import load_model, model_kind, resolve_model_path
from pixelrig.envs.terms import (
    BASE_OBSERVATION_TERMS,
    DEFAULT_TERMS,
    GRIPPER_TERMS,
    GripperLinks,
    Observed,
    Term,
    check_names,
    parse_terms,
    read_terms,
    robot_links,
    robot_terms,
    split_term,
)
from pixelrig.render.lighting import Lighting

JOINT_CONTROLS = JointController.families
CONTROL_MODES = (*JOINT_CONTROLS, *EE_CONTROLS)
Builder = Callable[[int], int]


class RobotEnv(Observed, Controlled, BulletEnv):
    """A robot from a model file or a builder function, with no task unless you give one.

    Args:
        source: path to a ``.urdf``, ``.sdf`` or MJCF ``.xml`` file (relative paths are also looked up in
            pybullet_data), or a callable ``build(client) -> robot body id`` that builds any scene in the given
            pybullet client (the "bring your own system" constructor; it runs again at every reset).
        control: the control family's name or its configuration (the name alone takes the family's defaults):
            "torque" (action = joint torques/forces, bounded by the effort limits), "position" (action = joint
            position targets, bounded by the joint limits, tracked by pybullet's PD position controller), "velocity"
            (action = joint velocity targets, bounded by the velocity limits), each configured by
            :class:`pixelrig.control.registry.JointConfig` (PD gains); or task-space control of the end effector,
            "ee_delta_pos" (Δxyz), "ee_delta_pose" (Δxyz and an axis-angle rotation) or "ee_pose" (an absolute
            pose), configured by :class:`pixelrig.control.task_space.TaskSpaceConfig` (end-effector link, frame,
            step sizes, workspace, damping, null-space pull, rest pose, gains). Task-space actions move a target
            pose (``env.ee_target``, task state), solved by damped least squares on pybullet's Jacobian and tracked
            by the position controller with the effort limits. The default PD gains are 0.1 / 1.0 in joint control
            and 0.2 / 1.0 in task space, where 0.2 lets the arm keep up with ``max_delta_pos`` per step.
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
        initial_qpos: the default pose (actuated joints). Default: the file's zero pose clipped into the limits.
        reset_noise_scale: half-width of uniform noise on the initial positions and velocities at reset.
        gripper: joint names of a gripper, or "panda" (``panda_finger_joint1/2``). They leave the actuated joints
            (``q``, ``qd`` and the joint actions) and add ONE action dimension, last: a target opening in [-1, 1]
            (-1: every gripper joint at its lower limit, closed; 1: its upper limit, open). Every step each gripper
            joint gets the same fraction of its range as a force-limited position target, and gear constraints
            hold the joints to the same fraction, as one motor drives a parallel gripper
            (:func:`pixelrig.control.gripper.couple_gripper`; without them a grasped cube slides ±15 mm between two
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

    metadata = {**BulletEnv.metadata, "render_fps": 60}
    model_files = ("plane.urdf",)

    metadata = {**BulletEnv.metadata, "render_fps": 60}
    model_files = ("plane.urdf",)

    def __init__(
        self,
        source: str | os.PathLike[str] | Builder,
        control: str | ControlConfig = "torque",
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
        render_width: int = 320,
        render_height: int = 240,
    ) -> None:
        self.control_config: ControlConfig = control_config(control, CONTROL_MODES)  # type: ignore[assignment]
        """The controller's configuration (a name given is its family's defaults)."""
        self.control = self.control_config.control
        self.gripper_names = gripper_names(gripper)
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
        self.controller: Controller | None = None
        """The controller (:mod:`pixelrig.control`), rebuilt with the world."""
        self.gripper: Gripper | None = None
        """The gripper (None without one), rebuilt with the world."""
        self.ee_target: np.ndarray | None = None
        """The controller's state: the task-space target, (7,) position and quaternion xyzw of the end-effector
        link's URDF frame, world frame (None in joint control). Put on the end effector at reset and by
        :meth:`set_qpos_qvel`, moved by every action. Task state: snapshots restore it."""
        self._gripper_links: GripperLinks | None = None
        self.position_gains: np.ndarray | None = None
        self.velocity_gains: np.ndarray | None = None
        self.rest_pose: np.ndarray | None = None
        """The null-space pull's rest pose of the actuated joints (task space; None in joint control)."""
        self._passive: list[int] = []
        self._overrides = (effort_limits, velocity_limits, position_limits)
        super().__init__(render_mode=render_mode, renderer=renderer, time_step=time_step, frame_skip=frame_skip,
                         gravity=gravity, randomize=randomize, visual_detail=visual_detail,
                         visual_budget=visual_budget, gpu=gpu, lighting=lighting, looks=looks,
                         render_width=render_width, render_height=render_height)
        try:
            self._init_spaces(initial_qpos)
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
            robot = pick_robot(c, loaded, self._robot_name, self.model_path)
        for body in loaded:
            info = p.getBodyInfo(body, physicsClientId=c)
            self.load_body(info[1].decode("utf-8", errors="replace") or f"body{body}", body)
        self.robot = robot
        self.link_indices = robot_links(c, robot)
        self.joints, self._passive = actuated_joints(
            c, robot, self.gripper_names, self._joint_names_wanted,
            self.model_path if self.model_kind == "mjcf" else None, self._overrides,
            str(self.body_names.get(robot, robot)))
        self.gripper_joints = gripper_joints(c, robot, self.gripper_names, self.gripper_force)
        self._gripper_links = finger_links(c, robot, self.gripper_joints)
        if self.gripper_joints:
            g = self.gripper_joints
            self.gripper = Gripper(c, robot, [j.index for j in g], [j.lower for j in g], [j.upper for j in g],
                                   [j.effort for j in g], self.motor_command)
            self.gripper.couple()
        free = [js.index for js in self.joints + self.gripper_joints] + self._passive  # motors off until commanded
        self.motor_command(robot, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free))
        if self.position_gains is not None:  # the first build binds it once the gains are known
            self.controller = self._make_controller()

    def _make_controller(self) -> Controller:
        """The configured controller, bound to the robot (the registry's class for the family)."""
        cls = CONTROLLERS[self.control]
        motors = Motors.of(self.robot, self.joints, self.motor_command, self.position_gains, self.velocity_gains)
        if cls is JointController:
            where = str(self.model_path) if self.model_path else "the builder's robot"
            return JointController(self.control, self.joints, motors, where)
        config = self.control_config
        owner = f"RobotEnv({self.source!r})" if self._builder is None else "RobotEnv(builder)"
        actuated = [j.index for j in self.joints]
        chain = arm_chain(self.client, self.robot, config.ee_link, actuated,
                          {j.index: (j.lower, j.upper, j.velocity) for j in self.joints}, owner)
        box = config.workspace
        solver = TaskSpaceController(chain, config, reach_box(self.client, chain) if box is None else box, self.dt)
        arm = [actuated.index(j) for j in chain.joints]
        return TaskSpaceControl(self.client, solver, motors, arm, self.rest_pose[arm])

    # ---- spaces ---------------------------------------------------------------------------------------

    def _init_spaces(self, initial_qpos: Any) -> None:
        names = [j.name for j in self.joints]
        config = self.control_config
        task_space = not isinstance(config, JointConfig)
        self.position_gains = self._gains("position_gain", config.position_gain, 0.2 if task_space else 0.1)
        self.velocity_gains = self._gains("velocity_gain", config.velocity_gain, 1.0)
        if initial_qpos is None:
            self.initial_qpos = np.array([np.clip(0.0, j.lower, j.upper) if j.has_range else 0.0
                                          for j in self.joints])
        else:
            self.initial_qpos = self._vector("initial_qpos", initial_qpos, names)
        if task_space:
            rest = getattr(config, "rest_pose", None)
            self.rest_pose = self.initial_qpos.copy() if rest is None else self._vector("rest_pose", rest, names)
        self.controller = self._make_controller()
        low, high = self.controller.action_bounds()
        if self.gripper_joints:
            low, high = np.append(low, -1.0), np.append(high, 1.0)
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self._init_observation()

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
        self.observation_specs = robot_terms(terms, len(self.joints), num_links)
        self.describe_observation()

    def term_specs(self) -> list[Term]:
        return self.observation_specs

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
        if not isinstance(self.controller, TaskSpaceControl):
            return None
        return next(n for n, j in self.link_indices.items() if j == self.controller.solver.chain.ee_link)

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
        if self.gripper is not None:
            self.gripper.command(1.0)
        self._write_state(qpos, qvel)

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
        self.ee_target = self.controller.start(self.client)

    def _write_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        for j, q, qd in zip(self.joints, qpos, qvel, strict=True):
            p.resetJointState(self.robot, j.index, float(q), float(qd), physicsClientId=self.client)
        self.controller.hold(qpos)

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


