"""The Franka Panda's manipulation tasks with its gripper: the shared base (task-space control and the gripper by
default, rewards dense or sparse, a flat state observation with a documented layout, start poses drawn through
:class:`~pixelrig.envs.randomization.Randomization`) and the cube tasks ``pixelrig/PandaLift-v0``,
``pixelrig/PandaPickPlace-v0`` and ``pixelrig/PandaStack-v0``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pybullet as p
from gymnasium import spaces

from pixelrig.cameras.spec import Camera
from pixelrig.envs.panda import EE_LINK, FINGER_JOINTS, FINGERS, TABLE_TOP, PandaEnv
from pixelrig.envs.randomization import BodyRange, Randomization
from pixelrig.envs.terms import gripper_opening

REWARD_TYPES: tuple[str, ...] = ("dense", "sparse")
"""``reward_type=`` values: "dense" (staged progress, in [-1, 0]) or "sparse" (-1 until success, then 0)."""

CUBE_HALF = 0.025
"""Half the side of pybullet_data's cube_small.urdf (a 5 cm, 0.1 kg cube) (m)."""

CUBE_REST = TABLE_TOP + CUBE_HALF
"""Height of a cube's centre resting on the table (m)."""

FULL_TURN = (-math.pi, math.pi)
"""A yaw range covering every heading."""

REACH_SCALE = 10.0
"""Distances enter the dense rewards as ``1 - tanh(REACH_SCALE * d)``: 1 at 0, 0.90 at 1 cm, 0.24 at 10 cm (1/m)."""

STILL_SPEED = 0.01
"""A body is still when its centre moves slower than this (m/s) ..."""

STILL_SPIN = 0.1
"""... and it turns slower than this (rad/s)."""

RED = (0.85, 0.15, 0.12, 1.0)
BLUE = (0.15, 0.35, 0.85, 1.0)
GREEN = (0.1, 0.8, 0.2, 1.0)


def closeness(distance: float) -> float:
    """A distance (m) as a reward stage in (0, 1]: ``1 - tanh(REACH_SCALE * distance)``."""
    return 1.0 - math.tanh(REACH_SCALE * distance)


def with_start_poses(randomize: Randomization | None, positions: Mapping[str, BodyRange],
                     yaws: Mapping[str, tuple[float, float]]) -> Randomization | None:
    """``randomize`` with a task's start poses added: ``positions`` / ``yaws`` ({body: range}) for every body it
    does not randomise itself (a range the user gives for a body wins over the task's). Anything that is not a
    Randomization is passed through for BulletEnv to refuse."""
    if randomize is not None and not isinstance(randomize, Randomization):
        return randomize
    base = randomize or Randomization()
    return dataclasses.replace(base, body_position={**positions, **dict(base.body_position or {})},
                               body_yaw={**yaws, **dict(base.body_yaw or {})})


def check_reward_type(owner: str, reward_type: Any) -> str:
    """``reward_type`` if it is one of :data:`REWARD_TYPES`.

    Raises:
        ValueError: anything else, naming the choices.
    """
    if reward_type not in REWARD_TYPES:
        raise ValueError(f"{owner}: reward_type={reward_type!r} is not a reward type: pass reward_type='dense' "
                         "(staged progress, in [-1, 0]) or reward_type='sparse' (-1 until success, then 0)")
    return reward_type


class PandaManipulationEnv(PandaEnv):
    """Base of the Panda's manipulation tasks: the gripper, task-space control, rewards, the observation's layout.

    - World, timing and cameras as :class:`~pixelrig.envs.panda.PandaEnv` (1/240 s physics, 10 steps per
      ``step()``, ``visual_detail="simplified"``), plus the task's bodies. The default rig is front, side and
      wrist, aimed at the task's work (:attr:`rig_target`).
    - Control: task-space control with the gripper, always (``gripper="panda"``; the task's
      :attr:`default_control` unless ``control=`` says otherwise): an action is Δxyz × 0.05 m (plus a rotation ×
      0.1 rad with ``"ee_delta_pose"``), then the gripper's opening in [-1, 1] (-1 closed, 1 open).
    - Observation: a flat float32 vector; ``observation_layout`` maps each term to its slice. Every task starts
      with ``ee_pos`` (3, the gripper centre ``panda_grasptarget``), ``ee_quat`` (4, xyzw), ``ee_linvel`` (3) and
      ``gripper_opening`` (1, m between the fingers); then for each of its bodies (:attr:`objects`) ``<body>_pos``
      (3, centre of mass), ``<body>_quat`` (4), ``<body>_linvel`` (3), ``<body>_angvel`` (3), ``<body>_rel_pos``
      (3, body minus gripper centre) and ``<body>_contacts`` (2: the left and the right finger touch it, 1/0);
      then the task's goal terms. World frame, metres, seconds.
    - Reward (``reward_type``): "sparse" is -1 on every step until the task succeeds and 0 then. "dense" is 0 on
      success and otherwise ``-1 + Σ weight × stage``, stages in [0, 1] and weights adding up to 1
      (:attr:`stage_weights`; each step's stages are in ``info``), so it is in [-1, 0] and rises as the task
      progresses. Both are 0 exactly on success, where the episode terminates: ending sooner never costs reward.
    - ``info``: ``is_success`` and the dense reward's stages by name.
    - Start: the arm at its neutral pose, the gripper open; the bodies' positions and yaws drawn from the seed by
      ``randomize`` (:class:`~pixelrig.envs.randomization.Randomization`), whose ``body_position`` /
      ``body_yaw`` default to the task's :attr:`start_positions` / :attr:`start_yaws` for every body the
      Randomization passed does not set itself (widen them by passing your own; a zero-width range fixes a body).

    Args:
        reward_type: "dense" or "sparse".
        control: a Panda control mode (default: the task's :attr:`default_control`).
        gripper: "panda" (the only choice: the tasks need the fingers).
        randomize: extra randomisation; the task's start poses are added to it.
        options: PandaEnv's and BulletEnv's options (render_mode, renderer, ee_frame, visual_detail, ...).
    """

    objects: ClassVar[tuple[str, ...]] = ()
    """The named bodies the observation describes, in order."""

    default_control: ClassVar[str] = "ee_delta_pos"
    """The control mode without ``control=``."""

    start_positions: ClassVar[dict[str, BodyRange]] = {}
    """Default ``Randomization.body_position`` ranges: {body: ((x, y, z) low, (x, y, z) high)}."""

    start_yaws: ClassVar[dict[str, tuple[float, float]]] = {}
    """Default ``Randomization.body_yaw`` ranges: {body: (low, high)} (rad)."""

    stage_weights: ClassVar[dict[str, float]] = {}
    """The dense reward's stages and their weights (adding up to 1)."""

    rig_target: ClassVar[tuple[float, float, float]] = (0.5, 0.0, 0.66)
    """The point the default rig's front and side cameras look at."""

    def __init__(self, reward_type: str = "dense", control: str | None = None, gripper: str = "panda",
                 randomize: Randomization | None = None, **options: Any) -> None:
        owner = type(self).__name__
        self.reward_type = check_reward_type(owner, reward_type)
        if gripper != "panda":
            raise ValueError(f"{owner}: gripper={gripper!r}: the task needs the Panda's fingers; pass "
                             "gripper='panda' (the default) or leave it out")
        randomize = with_start_poses(randomize, self.start_positions, self.start_yaws)
        super().__init__(control=self.default_control if control is None else control, gripper=gripper,
                         randomize=randomize, **options)
        self.observation_layout: dict[str, slice] = {}
        """{term: slice} of the flat observation (see the class docstring)."""
        start = 0
        for term, size in self.observation_terms():
            self.observation_layout[term] = slice(start, start + size)
            start += size
        low, high = np.full(start, -np.inf, np.float32), np.full(start, np.inf, np.float32)
        for term, span in self.observation_layout.items():
            if term.endswith("_quat"):
                low[span], high[span] = -1.0, 1.0
            elif term.endswith("_contacts"):
                low[span], high[span] = 0.0, 1.0
            elif term == "gripper_opening":
                low[span] = 0.0
        self.observation_space = spaces.Box(low, high, dtype=np.float32)

    # ---- the observation ---------------------------------------------------------------------------------------

    def observation_terms(self) -> list[tuple[str, int]]:
        """``(term, size)`` of every observation term, in order: the gripper, each body, then :meth:`goal_terms`."""
        terms = [("ee_pos", 3), ("ee_quat", 4), ("ee_linvel", 3), ("gripper_opening", 1)]
        for body in self.objects:
            terms += [(f"{body}_{part}", size) for part, size in
                      (("pos", 3), ("quat", 4), ("linvel", 3), ("angvel", 3), ("rel_pos", 3), ("contacts", 2))]
        return terms + self.goal_terms()

    def goal_terms(self) -> list[tuple[str, int]]:
        """The task's own terms after the bodies': ``(term, size)`` (default: none)."""
        return []

    def goal_values(self) -> dict[str, np.ndarray]:
        """The values of :meth:`goal_terms` now."""
        return {}

    def observe(self) -> np.ndarray:
        c = self.client
        state = p.getLinkState(self.panda, EE_LINK, computeLinkVelocity=True, computeForwardKinematics=True,
                               physicsClientId=c)
        ee = np.array(state[4])
        values: dict[str, Any] = {"ee_pos": ee, "ee_quat": np.clip(state[5], -1.0, 1.0), "ee_linvel": state[6],
                                  "gripper_opening": [gripper_opening(c, self.panda, FINGERS)]}
        for name in self.objects:
            body = self.body_id(name)
            pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
            lin, ang = p.getBaseVelocity(body, physicsClientId=c)
            values.update({f"{name}_pos": pos, f"{name}_quat": np.clip(orn, -1.0, 1.0), f"{name}_linvel": lin,
                           f"{name}_angvel": ang, f"{name}_rel_pos": np.array(pos) - ee,
                           f"{name}_contacts": self.finger_contacts(body)})
        values.update(self.goal_values())
        return np.concatenate([np.asarray(values[term], np.float64) for term in self.observation_layout]
                              ).astype(np.float32)

    # ---- what the task reads -----------------------------------------------------------------------------------

    def grasp_centre(self) -> np.ndarray:
        """Where the gripper centre (``panda_grasptarget``) is now: (3,) float64, world frame."""
        state = p.getLinkState(self.panda, EE_LINK, computeForwardKinematics=True, physicsClientId=self.client)
        return np.array(state[4])

    def position(self, name: str) -> np.ndarray:
        """The named body's position (centre of mass): (3,) float64."""
        return self.body_pose(name)[0]

    def finger_contacts(self, body: int) -> np.ndarray:
        """(2,) float64: whether the left and the right finger touch ``body`` now (1.0 / 0.0)."""
        links = {pt[3] for pt in p.getContactPoints(bodyA=self.panda, bodyB=body, physicsClientId=self.client)}
        return np.array([float(j in links) for j in FINGER_JOINTS])

    def grasped(self, name: str) -> bool:
        """Whether both fingers touch the named body."""
        return bool(self.finger_contacts(self.body_id(name)).all())

    def touched(self, name: str) -> bool:
        """Whether any link of the robot touches the named body."""
        return bool(p.getContactPoints(bodyA=self.panda, bodyB=self.body_id(name), physicsClientId=self.client))

    def still(self, name: str) -> bool:
        """Whether the named body moves slower than :data:`STILL_SPEED` and turns slower than :data:`STILL_SPIN`."""
        lin, ang = p.getBaseVelocity(self.body_id(name), physicsClientId=self.client)
        return bool(np.linalg.norm(lin) < STILL_SPEED and np.linalg.norm(ang) < STILL_SPIN)

    def opening(self) -> float:
        """The gap between the fingers now (m)."""
        return gripper_opening(self.client, self.panda, FINGERS)

    # ---- success and reward ------------------------------------------------------------------------------------

    def is_success(self) -> bool:
        """Whether the task is done in the current state (each task's docstring says when)."""
        raise NotImplementedError

    def stages(self) -> dict[str, float]:
        """The dense reward's stages now, each in [0, 1] (keys: :attr:`stage_weights`)."""
        raise NotImplementedError

    def reward(self, success: bool | None = None) -> float:
        """The reward of the current state for the env's ``reward_type`` (see the class docstring); ``success``
        saves computing :meth:`is_success` again."""
        success = self.is_success() if success is None else success
        if success:
            return 0.0
        if self.reward_type == "sparse":
            return -1.0
        stages = self.stages()
        return -1.0 + sum(weight * stages[name] for name, weight in self.stage_weights.items())

    def evaluate(self, action: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        success = self.is_success()
        return self.reward(success), success, {"is_success": success, **self.stages()}

    def reset_info(self) -> dict[str, Any]:
        return {"is_success": self.is_success(), **self.stages()}

    def reset_task(self, options: dict[str, Any]) -> None:
        self.reset_arm()

    # ---- building --------------------------------------------------------------------------------------------

    def load_cube(self, name: str, color: tuple[float, float, float, float], xy: tuple[float, float]) -> int:
        """Load a 5 cm cube (cube_small.urdf) resting on the table at ``xy``, coloured, named ``name``."""
        c = self.client
        cube = self.load_body(name, p.loadURDF("cube_small.urdf", [*xy, CUBE_REST], physicsClientId=c))
        p.changeVisualShape(cube, -1, rgbaColor=color, physicsClientId=c)
        return cube

    def default_cameras(self) -> list[Camera]:
        """Front, side and wrist cameras like PandaPush's, the front and side ones aimed at :attr:`rig_target`: the
        front one from the front-left (from straight ahead the arm hides the work), the side one closer."""
        x, y, z = self.rig_target
        rgbdl = ("rgb", "depth", "label")
        cams = {c.name: c for c in super().default_cameras()}
        return [
            Camera("front", eye=(x + 0.48, y + 0.26, z + 0.46), target=(x, y, z), fov=50.0, width=84, height=84,
                   near=0.05, far=4.0, modalities=rgbdl),
            Camera("side", eye=(x, y - 0.55, z + 0.3), target=(x, y, z - 0.02), fov=55.0, width=84, height=84,
                   near=0.05, far=4.0, modalities=rgbdl),
            cams["wrist"],
        ]


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
    """

    objects = ("cube",)
    lift_height = 0.10
    """How high the cube's bottom must be above the table (m)."""
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

    def stages(self) -> dict[str, float]:
        grasp = float(self.grasped("cube"))
        return {"reach": closeness(float(np.linalg.norm(self.position("cube") - self.grasp_centre()))),
                "grasp": grasp, "lift": grasp * float(np.clip(self.lifted() / self.lift_height, 0.0, 1.0))}


class PandaPickPlaceEnv(PandaManipulationEnv):
    """Move a 5 cm cube to a target, in the air or on the table (``pixelrig/PandaPickPlace-v0``).

    - Start: the cube as in PandaLift; the target (a green sphere drawn only, 3 cm across) is where the cube's
      centre must go: x ∈ [0.40, 0.65], y ∈ [-0.20, 0.20] and at least 0.10 m from the cube across the table; the
      seed puts it on the table (the cube resting there, centre 0.025 m above the top) or, with probability
      :attr:`air_probability` (0.5), 0.05-0.20 m higher, in the air.
    - Observation (float32, 35): PandaLift's, then ``target_pos`` (3) and ``target_rel_pos`` (3, target minus cube).
    - Success: the cube's centre within :attr:`success_distance` (0.03 m) of the target; the episode then
      terminates. The cube need not be let go. Registered with a 150-step time limit.
    - Dense stages: ``reach`` (0.25) and ``grasp`` (0.25) as PandaLift's, ``place`` (0.5) ``1 - tanh(10 d)`` of the
      cube's distance to the target.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    """

    objects = ("cube",)
    task_state = ("target_pos",)
    success_distance = 0.03
    air_probability = 0.5
    start_positions = PandaLiftEnv.start_positions
    start_yaws = PandaLiftEnv.start_yaws
    stage_weights = {"reach": 0.25, "grasp": 0.25, "place": 0.5}
    rig_target = (0.52, 0.0, 0.72)
    model_files = PandaLiftEnv.model_files

    def __init__(self, **options: Any) -> None:
        self.target_pos = np.array([0.55, 0.1, CUBE_REST])
        """Where the cube's centre must go (m, world frame)."""
        super().__init__(**options)

    def build_task_objects(self) -> None:
        c = self.client
        self.load_cube("cube", RED, (0.5, 0.0))
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=0.015, rgbaColor=GREEN, physicsClientId=c)
        self.load_body("target", p.createMultiBody(0.0, -1, ball, self.target_pos.tolist(), physicsClientId=c))

    def goal_terms(self) -> list[tuple[str, int]]:
        return [("target_pos", 3), ("target_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.target_pos, "target_rel_pos": self.target_pos - self.position("cube")}

    def reset_task(self, options: dict[str, Any]) -> None:
        super().reset_task(options)
        rng = self.np_random
        cube = self.position("cube")[:2]
        xy = rng.uniform([0.40, -0.20], [0.65, 0.20])
        while np.linalg.norm(xy - cube) < 0.10:
            xy = rng.uniform([0.40, -0.20], [0.65, 0.20])
        height = rng.uniform(0.05, 0.20) if rng.random() < self.air_probability else 0.0
        self.target_pos = np.array([*xy, CUBE_REST + height])
        p.resetBasePositionAndOrientation(self.body_id("target"), self.target_pos.tolist(), (0, 0, 0, 1),
                                          physicsClientId=self.client)

    def distance(self) -> float:
        """The cube's centre's distance to the target (m)."""
        return float(np.linalg.norm(self.position("cube") - self.target_pos))

    def is_success(self) -> bool:
        return self.distance() < self.success_distance

    def stages(self) -> dict[str, float]:
        return {"reach": closeness(float(np.linalg.norm(self.position("cube") - self.grasp_centre()))),
                "grasp": float(self.grasped("cube")), "place": closeness(self.distance())}


class PandaStackEnv(PandaManipulationEnv):
    """Put cube A on cube B and let go (``pixelrig/PandaStack-v0``).

    - Start: two 5 cm cubes on the table, any yaw: A (``cube_a``, red) at x ∈ [0.40, 0.60], y ∈ [-0.18, -0.06];
      B (``cube_b``, blue) at x ∈ [0.40, 0.60], y ∈ [0.06, 0.18]. The two ranges keep the cubes at least 12 cm
      apart across the fingers' closing direction, so the open gripper around one never touches the other (widen
      them into each other and the cubes may start inside one another).
    - Observation (float32, 50): the gripper, then ``cube_a_*`` and ``cube_b_*`` (as
      :class:`PandaManipulationEnv` lays them out), then ``target_pos`` (3): where A's centre rests on B, B's
      centre plus 0.05 m up.
    - Success, all of: A on B (A's centre within :attr:`xy_tolerance` (0.02 m) of B's across the table and
      0.05 ± :attr:`z_tolerance` (0.005) m above it); released (the gripper open wider than :attr:`open_width`
      (0.06 m), no link of the robot touching A, the gripper centre at least :attr:`clearance` (0.05 m) from A's
      centre); both cubes still (slower than 0.01 m/s and 0.1 rad/s). The episode then terminates. Registered
      with a 200-step time limit.
    - Dense stages: ``reach`` (0.2) to A as in PandaLift, ``grasp`` (0.2) both fingers on A, ``align`` (0.4)
      ``1 - tanh(10 d)`` of A's distance to ``target_pos``, ``release`` (0.2) A on B and released.
    - Control: ``ee_delta_pos`` with the gripper (4 actions).
    """

    objects = ("cube_a", "cube_b")
    xy_tolerance = 0.02
    z_tolerance = 0.005
    open_width = 0.06
    clearance = 0.05
    start_positions = {"cube_a": ((0.40, -0.18, CUBE_REST), (0.60, -0.06, CUBE_REST)),
                       "cube_b": ((0.40, 0.06, CUBE_REST), (0.60, 0.18, CUBE_REST))}
    start_yaws = {"cube_a": FULL_TURN, "cube_b": FULL_TURN}
    stage_weights = {"reach": 0.2, "grasp": 0.2, "align": 0.4, "release": 0.2}
    rig_target = (0.5, 0.0, 0.67)
    model_files = PandaLiftEnv.model_files

    def build_task_objects(self) -> None:
        self.load_cube("cube_a", RED, (0.5, -0.1))
        self.load_cube("cube_b", BLUE, (0.5, 0.1))

    def goal_terms(self) -> list[tuple[str, int]]:
        return [("target_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.stack_target()}

    def stack_target(self) -> np.ndarray:
        """Where A's centre rests on B: B's centre plus one cube side up (m)."""
        return self.position("cube_b") + [0.0, 0.0, 2 * CUBE_HALF]

    def on_b(self) -> bool:
        """Whether A sits on B within the tolerances."""
        offset = self.position("cube_a") - self.stack_target()
        return bool(np.linalg.norm(offset[:2]) < self.xy_tolerance and abs(offset[2]) < self.z_tolerance)

    def released(self) -> bool:
        """Whether the gripper has let go of A: open, touching it nowhere, and away from it."""
        return (self.opening() > self.open_width and not self.touched("cube_a")
                and float(np.linalg.norm(self.grasp_centre() - self.position("cube_a"))) >= self.clearance)

    def is_success(self) -> bool:
        return self.on_b() and self.released() and self.still("cube_a") and self.still("cube_b")

    def stages(self) -> dict[str, float]:
        a = self.position("cube_a")
        return {"reach": closeness(float(np.linalg.norm(a - self.grasp_centre()))),
                "grasp": float(self.grasped("cube_a")),
                "align": closeness(float(np.linalg.norm(a - self.stack_target()))),
                "release": float(self.on_b() and self.released())}
