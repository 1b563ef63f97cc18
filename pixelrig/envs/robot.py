"""``RobotEnv`` (``pixelrig/Robot-v0``): a gymnasium env straight from a URDF / SDF / MJCF file or a scene-building
function, in torque, position (PD) or velocity control."""

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
from pixelrig.envs.lod import DEFAULT_BUDGET
from pixelrig.envs.models import load_model, mjcf_motors, model_kind, resolve_model_path
from pixelrig.envs.randomization import Randomization
from pixelrig.envs.terms import (
    BASE_OBSERVATION_TERMS,
    DEFAULT_TERMS,
    bounds,
    check_names,
    layout,
    parse_terms,
    read_terms,
    robot_links,
    split_term,
)

CONTROL_MODES = ("torque", "position", "velocity")
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
            joint position targets, bounded by the joint limits, tracked by pybullet's PD position controller)
            or "velocity" (action = joint velocity targets, bounded by the velocity limits).
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
        position_gain: PD proportional gain(s) of the position controller (pybullet's positionGain).
        velocity_gain: PD derivative gain(s) (pybullet's velocityGain).
        initial_qpos: the default pose (actuated joints). Default: the file's zero pose clipped into the limits.
        reset_noise_scale: half-width of uniform noise on the initial positions and velocities at reset.
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

    Bounds are infinite (pybullet's joint limits are soft, so a joint driven hard goes past them, and the state
    is never clipped) except where they hold mathematically: quaternion and rotation-matrix entries in [-1, 1],
    roll and yaw in [-pi, pi], pitch in [-pi/2, pi/2], contact forces >= 0.
    ``reset(options={"qpos": ..., "qvel": ...})`` starts from the given state (no noise).
    """

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
    ) -> None:
        if control not in CONTROL_MODES:
            raise ValueError(f"control must be one of {CONTROL_MODES}: got {control!r}")
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
        self._passive: list[int] = []
        self._overrides = (effort_limits, velocity_limits, position_limits)
        super().__init__(render_mode=render_mode, renderer=renderer, time_step=time_step, frame_skip=frame_skip,
                         gravity=gravity, randomize=randomize, visual_detail=visual_detail,
                         visual_budget=visual_budget, gpu=gpu)
        try:
            self._init_spaces(position_gain, velocity_gain, initial_qpos)
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
        free = [js.index for js in self.joints] + self._passive  # motors off until a command arrives
        self.motor_command(robot, free, p.VELOCITY_CONTROL, forces=[0.0] * len(free))

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
        wanted = self._joint_names_wanted
        motors = {}
        if wanted is None and self.model_kind == "mjcf":
            motors = {m.joint: m.effort for m in mjcf_motors(self.model_path) if m.joint in movable}
            wanted = list(motors) if motors else None
        if wanted is None:
            wanted = list(movable)
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
        passive = [info[0] for n, info in movable.items() if n not in wanted]
        return self._apply_overrides(specs), passive

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

    def _init_spaces(self, position_gain: Any, velocity_gain: Any, initial_qpos: Any) -> None:
        n = len(self.joints)
        names = [j.name for j in self.joints]
        where = str(self.model_path) if self.model_path else "the builder's robot"
        what, keyword, has_limit, bounds = _CONTROL_LIMITS[self.control]
        missing = [j.name for j in self.joints if not has_limit(j)]
        if missing:
            raise ValueError(f"{self.control} control needs {what}, but joints {missing} of {where} have none; "
                             f"pass {keyword}")
        low, high = (np.array(b) for b in zip(*(bounds(j) for j in self.joints), strict=True))
        self.action_space = spaces.Box(low.astype(np.float32), high.astype(np.float32), (n,), np.float32)
        self.position_gains = self._gains("position_gain", position_gain, 0.1)
        self.velocity_gains = self._gains("velocity_gain", velocity_gain, 1.0)
        self._init_observation()
        if initial_qpos is None:
            self.initial_qpos = np.array([np.clip(0.0, j.lower, j.upper) if j.has_range else 0.0
                                          for j in self.joints])
        else:
            self.initial_qpos = self._vector("initial_qpos", initial_qpos, names)

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
            if kind == "body_pose":
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
        """Names of the actuated joints, in observation and action order."""
        return [j.name for j in self.joints]

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
        self._write_state(qpos, qvel)

    def set_qpos_qvel(self, qpos: Sequence[float], qvel: Sequence[float] | None = None) -> None:
        """Set the actuated joints' positions (and velocities, default zero) now. In position control the
        controller's targets move to ``qpos`` too, so the robot holds the new pose.

        Raises:
            ValueError: wrong length or non-finite values; nothing is changed.
        """
        names = self.joint_names
        q = self._vector("qpos", qpos, names)
        qd = self._vector("qvel", qvel, names) if qvel is not None else np.zeros(len(names))
        self._write_state(q, qd)

    def _write_state(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        c = self.client
        for j, q, qd in zip(self.joints, qpos, qvel, strict=True):
            p.resetJointState(self.robot, j.index, float(q), float(qd), physicsClientId=c)
        if self.control == "position":
            self._command(qpos)
        elif self.control == "velocity":
            self._command(np.zeros(len(self.joints)))

    def _command(self, target: np.ndarray) -> None:
        idx = [j.index for j in self.joints]
        forces = [j.effort if not math.isnan(j.effort) else 1e6 for j in self.joints]
        if self.control == "torque":
            self.motor_command(self.robot, idx, p.TORQUE_CONTROL, forces=target)
        elif self.control == "position":
            self.motor_command(self.robot, idx, p.POSITION_CONTROL, targetPositions=target, forces=forces,
                               positionGains=self.position_gains, velocityGains=self.velocity_gains)
        else:
            self.motor_command(self.robot, idx, p.VELOCITY_CONTROL, targetVelocities=target, forces=forces,
                               velocityGains=self.velocity_gains)

    def apply_action(self, action: np.ndarray) -> None:
        self._command(np.asarray(action, dtype=np.float64))

    def qpos_qvel(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of the actuated joints (float64)."""
        return self.joint_states(self.robot, [j.index for j in self.joints])

    def observe(self) -> np.ndarray:
        return read_terms(self.observation_terms, self.client, self.robot, [j.index for j in self.joints],
                          self.link_indices, self.body_id)

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
