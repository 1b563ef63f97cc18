"""The shared base of the Franka Panda's manipulation tasks with its gripper (:mod:`pixelrig.tasks`: lift,
pick_place, stack, peg_insert, pick_object): task-space control and the gripper by default, rewards dense or sparse,
a flat state observation of named terms, start poses drawn through
:class:`~pixelrig.envs.randomization.Randomization`; and what the Panda's and the SO-101's tasks share: the body
terms, the reward helpers, the pick-and-place goal (:class:`PickPlaceGoal`) and the stacking goal
(:class:`StackGoal`)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
import pybullet as p

from pixelrig.cameras.spec import Camera
from pixelrig.envs.goals import check_goal_reward_type
from pixelrig.envs.panda import EE_LINK, FINGER_JOINTS, FINGERS, TABLE_TOP, PandaEnv
from pixelrig.envs.randomization import BodyRange, Randomization
from pixelrig.envs.terms import Term, gripper_opening

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


def body_terms(names: list[str]) -> list[Term]:
    """Each named body's observation terms, in order: position, quaternion (bounded by [-1, 1]), linear and angular
    velocity, position relative to the gripper, and whether each of its two fingers or jaws touches it."""
    terms: list[Term] = []
    for body in names:
        terms += [Term(f"{body}_pos", 3), Term(f"{body}_quat", 4, -1.0, 1.0), Term(f"{body}_linvel", 3),
                  Term(f"{body}_angvel", 3), Term(f"{body}_rel_pos", 3), Term(f"{body}_contacts", 2, 0.0, 1.0)]
    return terms


def body_values(env: Any, ee: np.ndarray, contacts: Callable[[int], np.ndarray]) -> dict[str, Any]:
    """The values of :func:`body_terms` for ``env.objects`` now: ``ee`` is the gripper's position, ``contacts``
    gives a body's two contact flags."""
    c, values = env.client, {}
    for name in env.objects:
        body = env.body_id(name)
        pos, orn = p.getBasePositionAndOrientation(body, physicsClientId=c)
        lin, ang = p.getBaseVelocity(body, physicsClientId=c)
        values.update({f"{name}_pos": pos, f"{name}_quat": np.clip(orn, -1.0, 1.0), f"{name}_linvel": lin,
                       f"{name}_angvel": ang, f"{name}_rel_pos": np.array(pos) - ee,
                       f"{name}_contacts": contacts(body)})
    return values


def closeness(distance: float) -> float:
    """A distance (m) as a reward stage in (0, 1]: ``1 - tanh(REACH_SCALE * distance)``."""
    return 1.0 - math.tanh(REACH_SCALE * distance)


class PickPlaceGoal:
    """The goal both robots' pick-and-place tasks share (a mixin before the robot's task base:
    ``class SO101PickPlaceEnv(PickPlaceGoal, SO101TaskEnv)``): the cube (``"cube"``) to move to a target, a green
    sphere drawn only (0.6 of the cube's side across), on the table or in the air; the observation's ``target_pos``
    and ``target_rel_pos``; success by the cube's distance to the target; the ``reach``, ``grasp`` and ``place``
    stages.

    Each task sets what differs: :attr:`success_distance`, where the target is drawn (:attr:`target_low`,
    :attr:`target_high`, at least :attr:`target_separation` from the cube across the table) and where the cube
    stands when the world is built (:attr:`cube_start`; each reset draws it again). The robot's base gives the cube
    (``load_cube``, ``cube_size``, ``cube_rest``), ``load_body``, ``position``, ``grasp_centre`` and ``grasped``.
    """

    objects: ClassVar[tuple[str, ...]] = ("cube",)
    task_state: ClassVar[tuple[str, ...]] = ("target_pos",)
    stage_weights: ClassVar[dict[str, float]] = {"reach": 0.25, "grasp": 0.25, "place": 0.5}
    success_distance: ClassVar[float]
    """The cube's centre is placed once it is closer than this to the target (m)."""
    target_low: ClassVar[tuple[float, float, float]]
    target_high: ClassVar[tuple[float, float, float]]
    """The range the target is drawn in: x and y (m), then, for a target in the air, its height above a resting
    cube's centre (m); a target on the table is at a resting cube's centre."""
    target_separation: ClassVar[float]
    """The least distance across the table between the cube and the target (m)."""
    air_probability: ClassVar[float] = 0.5
    """How often the target is drawn in the air rather than on the table."""
    cube_start: ClassVar[tuple[float, float]]
    """Where (x, y) the cube (and the target, over it) stand when the world is built, before a reset draws them."""

    def __init__(self, **options: Any) -> None:
        self.target_pos = np.array([*self.cube_start, self.cube_rest])
        """Where the cube's centre must go (m, world frame)."""
        super().__init__(**options)

    def build_task_objects(self) -> None:
        c = self.client
        self.load_cube("cube", RED, self.cube_start)
        ball = p.createVisualShape(p.GEOM_SPHERE, radius=self.cube_size * 0.3, rgbaColor=GREEN, physicsClientId=c)
        self.load_body("target", p.createMultiBody(0.0, -1, ball, self.target_pos.tolist(), physicsClientId=c))

    def goal_terms(self) -> list[Term]:
        return [Term("target_pos", 3), Term("target_rel_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.target_pos, "target_rel_pos": self.target_pos - self.position("cube")}

    def reset_task(self, options: dict[str, Any]) -> None:
        """The robot's reset (the cube's start drawn by the randomisation), then the target drawn."""
        super().reset_task(options)
        rng, low, high = self.np_random, self.target_low, self.target_high
        cube = self.position("cube")[:2]
        xy = rng.uniform(low[:2], high[:2])
        while np.linalg.norm(xy - cube) < self.target_separation:
            xy = rng.uniform(low[:2], high[:2])
        height = rng.uniform(low[2], high[2]) if rng.random() < self.air_probability else 0.0
        self.target_pos = np.array([*xy, self.cube_rest + height])
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


class StackGoal:
    """The goal both robots' stacking tasks share (a mixin before the robot's task base, as :class:`PickPlaceGoal`):
    cube A (``"cube_a"``, red) onto cube B (``"cube_b"``, blue), let go, both still; the observation's
    ``target_pos`` (where A's centre rests on B); the ``reach``, ``grasp``, ``align`` and ``release`` stages.

    Each task sets what differs: how close A must sit to its place on B (:attr:`xy_tolerance` across the table,
    :attr:`z_tolerance` in height), how far the grasp centre must be from A once released (:attr:`clearance`),
    when its gripper counts as open (its :meth:`let_go_open`), and where the cubes stand when the world is built
    (:attr:`cube_starts`; each reset draws them again). The robot's base gives the cubes (``load_cube``,
    ``cube_size``), ``load_body``, ``position``, ``grasp_centre``, ``grasped``, ``touched`` and ``still``.
    """

    objects: ClassVar[tuple[str, ...]] = ("cube_a", "cube_b")
    stage_weights: ClassVar[dict[str, float]] = {"reach": 0.2, "grasp": 0.2, "align": 0.4, "release": 0.2}
    xy_tolerance: ClassVar[float]
    """A sits on B when its centre is closer than this to its place on B across the table (m) ..."""
    z_tolerance: ClassVar[float]
    """... and closer than this in height (m)."""
    clearance: ClassVar[float]
    """Released: the grasp centre at least this far from A's centre (m)."""
    cube_starts: ClassVar[tuple[tuple[float, float], tuple[float, float]]]
    """Where (x, y) A and B stand when the world is built, before a reset draws them."""

    def build_task_objects(self) -> None:
        a, b = self.cube_starts
        self.load_cube("cube_a", RED, a)
        self.load_cube("cube_b", BLUE, b)

    def goal_terms(self) -> list[Term]:
        return [Term("target_pos", 3)]

    def goal_values(self) -> dict[str, np.ndarray]:
        return {"target_pos": self.stack_target()}

    def stack_target(self) -> np.ndarray:
        """Where A's centre rests on B: B's centre plus one cube side up (m)."""
        return self.position("cube_b") + [0.0, 0.0, self.cube_size]

    def on_b(self) -> bool:
        """Whether A sits on B within the tolerances."""
        offset = self.position("cube_a") - self.stack_target()
        return bool(np.linalg.norm(offset[:2]) < self.xy_tolerance and abs(offset[2]) < self.z_tolerance)

    def let_go_open(self) -> bool:
        """Whether the gripper is open enough to count as having let go (each robot says how far)."""
        raise NotImplementedError

    def released(self) -> bool:
        """Whether the gripper has let go of A: open, touching it nowhere, and away from it."""
        return (self.let_go_open() and not self.touched("cube_a")
                and float(np.linalg.norm(self.grasp_centre() - self.position("cube_a"))) >= self.clearance)

    def is_success(self) -> bool:
        return self.on_b() and self.released() and self.still("cube_a") and self.still("cube_b")

    def stages(self) -> dict[str, float]:
        a = self.position("cube_a")
        return {"reach": closeness(float(np.linalg.norm(a - self.grasp_centre()))),
                "grasp": float(self.grasped("cube_a")),
                "align": closeness(float(np.linalg.norm(a - self.stack_target()))),
                "release": float(self.on_b() and self.released())}


def body_still(client: int, body: int) -> bool:
    """Whether ``body`` moves slower than :data:`STILL_SPEED` and turns slower than :data:`STILL_SPIN`."""
    lin, ang = p.getBaseVelocity(body, physicsClientId=client)
    return bool(np.linalg.norm(lin) < STILL_SPEED and np.linalg.norm(ang) < STILL_SPIN)


def touching(client: int, robot: int, body: int) -> bool:
    """Whether any link of ``robot`` touches ``body``."""
    return bool(p.getContactPoints(bodyA=robot, bodyB=body, physicsClientId=client))


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
    - ``goal_obs=True`` (the tasks that set :attr:`goal_size`): the observation is ``Dict(observation=<the flat
      state above>, achieved_goal, desired_goal)``, the reward the goal's own (``reward_type`` "sparse" by default,
      as panda-gym's, or "dense": minus the goal distance) and success the goal distance below
      :attr:`distance_threshold` (:class:`~pixelrig.envs.goals.GoalObserved`); ``info`` keeps the stages.
    - Start: the arm at its neutral pose, the gripper open; the bodies' positions and yaws drawn from the seed by
      ``randomize`` (:class:`~pixelrig.envs.randomization.Randomization`), whose ``body_position`` /
      ``body_yaw`` default to the task's :attr:`start_positions` / :attr:`start_yaws` for every body the
      Randomization passed does not set itself (widen them by passing your own; a zero-width range fixes a body).

    Args:
        reward_type: "dense" or "sparse" (default "dense"; "sparse" with ``goal_obs=True``).
        control: a Panda control mode (default: the task's :attr:`default_control`).
        gripper: "panda" (the only choice: the tasks need the fingers).
        randomize: extra randomisation; the task's start poses are added to it.
        goal_obs: observe the task's goals for HER (see above).
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

    cube_size: ClassVar[float] = 2 * CUBE_HALF
    """The side of the cubes :meth:`load_cube` makes (m) ..."""

    cube_rest: ClassVar[float] = CUBE_REST
    """... and the height of their centres resting on the table (m)."""

    def __init__(self, reward_type: str | None = None, control: str | None = None, gripper: str = "panda",
                 randomize: Randomization | None = None, goal_obs: bool = False, **options: Any) -> None:
        owner = type(self).__name__
        if isinstance(goal_obs, bool | np.bool_) and goal_obs and self.goal_size:
            self.reward_type = check_goal_reward_type(owner, "sparse" if reward_type is None else reward_type)
        else:
            self.reward_type = check_reward_type(owner, "dense" if reward_type is None else reward_type)
        if gripper != "panda":
            raise ValueError(f"{owner}: gripper={gripper!r}: the task needs the Panda's fingers; pass "
                             "gripper='panda' (the default) or leave it out")
        randomize = with_start_poses(randomize, self.start_positions, self.start_yaws)
        super().__init__(control=self.default_control if control is None else control, gripper=gripper,
                         randomize=randomize, goal_obs=goal_obs, **options)
        self.describe_observation()

    # ---- the observation ---------------------------------------------------------------------------------------

    def term_specs(self) -> list[Term]:
        """Every observation term, in order: the gripper, each body, then :meth:`goal_terms`. Quaternions are
        bounded by [-1, 1], contacts by [0, 1], the gripper's opening by 0 below."""
        terms = [Term("ee_pos", 3), Term("ee_quat", 4, -1.0, 1.0), Term("ee_linvel", 3),
                 Term("gripper_opening", 1, 0.0)]
        return terms + body_terms(self.objects) + self.goal_terms()

    def goal_terms(self) -> list[Term]:
        """The task's own terms after the bodies' (default: none)."""
        return []

    def goal_values(self) -> dict[str, np.ndarray]:
        """The values of :meth:`goal_terms` now."""
        return {}

    def term_values(self) -> dict[str, Any]:
        c = self.client
        state = p.getLinkState(self.panda, EE_LINK, computeLinkVelocity=True, computeForwardKinematics=True,
                               physicsClientId=c)
        ee = np.array(state[4])
        values: dict[str, Any] = {"ee_pos": ee, "ee_quat": np.clip(state[5], -1.0, 1.0), "ee_linvel": state[6],
                                  "gripper_opening": [gripper_opening(c, self.panda, FINGERS)]}
        values.update(body_values(self, ee, self.finger_contacts))
        values.update(self.goal_values())
        return values

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
        return touching(self.client, self.panda, self.body_id(name))

    def still(self, name: str) -> bool:
        """Whether the named body moves slower than :data:`STILL_SPEED` and turns slower than :data:`STILL_SPIN`."""
        return body_still(self.client, self.body_id(name))

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
        if self.goal_obs:
            return self.goal_evaluate(self.stages())
        success = self.is_success()
        return self.reward(success), success, {"is_success": success, **self.stages()}

    def reset_info(self) -> dict[str, Any]:
        success = self.goal_success() if self.goal_obs else self.is_success()
        return {"is_success": success, **self.stages()}

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
