"""``RobotEnv`` (``pixelrig/Robot-v0``): a gymnasium env straight from a URDF / SDF / MJCF file or a scene-building
function, under any controller of :mod:`pixelrig.control` (joint torque, position or velocity; task-space control
of an arm's end effector), with an optional gripper."""

from __future__ import annotations

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
from pixelrig.envs.joints import (
    Limit,
    RangeLimit,
    actuated_joints,
    check_robot_options,
    finger_links,
    framing_camera,
    gripper_joints,
    joint_gains,
    joint_vector,
    pick_robot,
    robot_aabb,
)
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.randomization import Randomization
from pixelrig.envs.robot_files import load_model, model_kind, resolve_model_path
from pixelrig.envs.terms import (
    GripperLinks,
    Observed,
    Term,
    check_gripper_terms,
    check_names,
    observation_names,
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
            "torque", "position" or "velocity" (joint control, :class:`pixelrig.control.registry.JointConfig`: PD
            gains), or task-space control of the end effector, "ee_delta_pos", "ee_delta_pose" or "ee_pose"
            (:class:`pixelrig.control.task_space.TaskSpaceConfig`); docs/robots.md says what each action means. The
            default PD gains are 0.1 / 1.0 in joint control and 0.2 / 1.0 in task space.
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
            and add ONE action dimension, last: a target opening in [-1, 1] (-1 closed at the lower limits, 1 open),
            the joints geared together (:mod:`pixelrig.control.gripper`). Episodes start open. Default None.
        gripper_force: the gripper's force limit per joint (N or N·m); default the file's effort limits (the
            Panda's fingers: 20 N each, which hold a 5 cm, 0.1 kg cube through a 2 Hz shake; 2 N still does).
        reward_fn: ``reward_fn(env) -> float`` called after each step; default 0.0.
        terminated_fn: ``terminated_fn(env) -> bool`` called after each step; default never.
        time_step: physics time step (s). frame_skip: physics steps per ``step()``. gravity: m/s².
        randomize: domain randomisation; its ``joint_noise`` adds to ``reset_noise_scale``.
        render_mode, renderer, visual_detail, visual_budget, gpu, lighting, looks, render_width, render_height:
            :class:`pixelrig.envs.BulletEnv`'s (``visual_detail`` changes what cameras see of a URDF/SDF robot,
            never its physics; MJCF files and builders are drawn as they are).

    Observation: a flat float32 Box, the concatenation of the ``observation`` terms (``observation_layout`` maps
    each term to its slice; default ``concat(q, qd)`` of the actuated joints, positions first). The terms, their
    frames and bounds: :mod:`pixelrig.envs.terms` and docs/robots.md. Bounds are infinite (pybullet's joint limits
    are soft and the state is never clipped) except where they hold mathematically.
    ``reset(options={"qpos": ..., "qvel": ...})`` starts from the given state (no noise); the task-space target
    starts at the end effector's pose once the episode's world is final.

    Action: the arm's part (joint torques, positions or velocities; or Δxyz (3); Δxyz + Δrotation (6); position +
    quaternion (7)), then the gripper's opening (1) with ``gripper=``.
    """

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
        check_robot_options(self.gripper_names, gripper_force, reward_fn, terminated_fn, reset_noise_scale)
        self.gripper_force = None if gripper_force is None else float(gripper_force)
        self.observation_terms: tuple[str, ...] = observation_names(observation, base_observation)
        """The observation's terms, in order."""
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
        """The task-space target (7,): the end-effector link's position and quaternion xyzw, world frame (None in
        joint control); put on the end effector at reset, moved by every action. Task state."""
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
        self.position_gains = joint_gains("position_gain", config.position_gain, 0.2 if task_space else 0.1, names)
        self.velocity_gains = joint_gains("velocity_gain", config.velocity_gain, 1.0, names)
        if initial_qpos is None:
            self.initial_qpos = np.array([np.clip(0.0, j.lower, j.upper) if j.has_range else 0.0
                                          for j in self.joints])
        else:
            self.initial_qpos = joint_vector("initial_qpos", initial_qpos, names)
        if task_space:
            rest = getattr(config, "rest_pose", None)
            self.rest_pose = self.initial_qpos.copy() if rest is None else joint_vector("rest_pose", rest, names)
        self.controller = self._make_controller()
        low, high = self.controller.action_bounds()
        if self.gripper_joints:
            low, high = np.append(low, -1.0), np.append(high, 1.0)
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)
        self._init_observation()

    def _init_observation(self) -> None:
        """Check the terms' link, body and gripper names; set the observation's terms, layout and space (bounds:
        :func:`pixelrig.envs.terms.robot_terms`; the state is never clipped to fit them)."""
        terms = self.observation_terms
        check_names(terms, self.link_indices, list(self.body_ids()), self.body_names.get(self.robot, "robot"))
        check_gripper_terms(terms, len(self.gripper_joints))
        for term in terms:
            kind, name = split_term(term)
            if kind in ("body_pose", "gripper_contact"):
                self.body_id(name)  # refuses a name that several bodies share
        num_links = p.getNumJoints(self.robot, physicsClientId=self.client) + 1
        self.observation_specs = robot_terms(terms, len(self.joints), num_links)
        self.describe_observation()

    def term_specs(self) -> list[Term]:
        return self.observation_specs

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
        return {k: joint_vector(k, options[k], names) for k in ("qpos", "qvel") if k in options}

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
        """Set the actuated joints' positions (and velocities, default zero) now; the controller's targets (joint
        or end-effector) move to the new pose, so the robot holds it.

        Raises:
            ValueError: wrong length or non-finite values; nothing is changed.
        """
        names = self.joint_names
        q = joint_vector("qpos", qpos, names)
        qd = joint_vector("qvel", qvel, names) if qvel is not None else np.zeros(len(names))
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
        return robot_aabb(self.client, self.robot)

    def render_camera(self) -> CameraSpec:
        return framing_camera(*self.robot_bounds())

    def default_cameras(self) -> list[Camera]:
        cam = self.render_camera()
        return [Camera.from_dict(dict(cam, name="main", width=84, height=84, modalities=("rgb", "depth", "label")))]

    def model_paths(self) -> list[Path]:
        """The model file (and the ground plane) this env loads; none for builders but the plane."""
        return super().model_paths() + ([self.model_path] if self.model_path else [])


