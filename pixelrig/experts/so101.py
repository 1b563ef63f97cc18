"""Scripted experts for the SO-101 tasks (SO101Reach, SO101Lift, SO101PickPlace), acting in
``ee_delta_pitch_roll``: Δxyz, Δpitch, Δroll, then the jaw. Each grasps from above with the jaws pointing down,
turned (wrist roll) to close across two of the cube's faces; a grasp that slips is started again."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pixelrig.experts.base import CLOSED, Expert, wrap, yaw_of

PITCH_ROLL: tuple[str, ...] = ("ee_delta_pitch_roll",)
"""The control mode the SO-101 experts act in."""

FLEX_LIMIT = 85.0
"""The wrist_flex angle (degrees) the experts keep under: its range ends at 95°, and past that the jaws cannot stay
pointing down; they tilt (pitch) instead, and come back to pointing down when the wrist has room again."""

JAW_OPEN = 0.0
"""The jaw's opening on the way to a grasp: half of its range (about 5 cm between the jaws at the grasp centre): a
fully open jaw sweeps wide enough to knock the cube."""


class SO101Expert(Expert):
    """What the SO-101 experts share: a move of the grasp centre with the jaws pointing down as far as the wrist
    allows (:data:`FLEX_LIMIT`), the wrist rolled towards a heading (:meth:`move_turn`)."""

    controls = PITCH_ROLL

    def move_turn(self, goal: np.ndarray, gripper: float, heading: float | None = None,
                  speed: float = 1.0) -> np.ndarray:
        """The action that moves the grasp centre towards ``goal`` (m) at most ``speed`` × ``max_step`` a step,
        rolls the wrist so that the jaws close along ``heading`` (rad, world; modulo 90°: a cube's faces; None:
        no roll) and sets the jaw (-1 closed .. 1 open)."""
        step = (np.asarray(goal, np.float64) - self.o["ee_pos"]) / self.max_step
        norm = float(np.linalg.norm(step))
        if norm > speed:
            step *= speed / norm
        roll = 0.0 if heading is None else self.heading_error(heading) / self.max_rot
        return np.concatenate([np.clip(step, -1.0, 1.0), [self.pitch(), float(np.clip(roll, -1.0, 1.0)), gripper]]) \
            .astype(np.float32)

    def pitch(self) -> float:
        """The pitch action: away from wrist_flex's limit when past :data:`FLEX_LIMIT` (a positive pitch turns
        wrist_flex up), back towards pointing down while tilted and within it, else none."""
        room = math.radians(FLEX_LIMIT - float(self.o["joint_pos"][3]))
        x, y, _, _ = (float(v) for v in self.o["ee_quat"])
        tilt = math.acos(float(np.clip(2.0 * (x * x + y * y) - 1.0, -1.0, 1.0)))  # the jaws' axis from straight down
        if room < 0.0 or tilt > 0.02:
            return float(np.clip(min(room, tilt) / self.max_rot, -1.0, 1.0))
        return 0.0

    def jaw_across(self) -> np.ndarray:
        """The horizontal unit vector from the moving jaw towards the fixed one (gripper_frame_link's x axis)."""
        x, y, z, w = (float(v) for v in self.o["ee_quat"])
        across = np.array([1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 0.0])
        return across / max(float(np.linalg.norm(across)), 1e-9)

    def heading_error(self, heading: float) -> float:
        """How far (rad, in [-45°, 45°)) the jaws' closing direction must turn about the vertical to close along
        ``heading`` or a multiple of 90° from it: a positive wrist roll turns it clockwise seen from above."""
        return wrap(heading - yaw_of(self.o["ee_quat"]), math.pi / 2.0)


class SO101ReachExpert(SO101Expert):
    """SO101Reach's expert: straight to the target."""

    task = "pixelrig/SO101Reach-v0"

    def act(self) -> np.ndarray:
        return self.move_turn(self.o["target_pos"], JAW_OPEN)


class SO101GraspExpert(SO101Expert):
    """A grasp from above, then the subclass's :meth:`after_grasp`.

    Phases: ``above`` (the half-open jaw 4 cm over the cube, rolled to its faces, until within 4 mm across, 3° of
    its faces and 1 cm of the point), ``descend`` (down to its centre at half speed, still rolling; 30 steps at
    most), ``close`` (8 steps; both jaws on it, or it starts over), then the subclass's phases. A cube that leaves
    the jaws starts the grasp over."""

    phases: tuple[str, ...] = ("above", "descend", "close")
    body = "cube"
    hover = 0.04
    grip_height = 0.002
    """How far above the cube's centre the grasp centre closes (m)."""

    def act(self) -> np.ndarray:
        cube = self.o[f"{self.body}_pos"]
        heading = yaw_of(self.o[f"{self.body}_quat"])
        if self.phase == "above":
            goal = cube + [0.0, 0.0, self.hover]
            if (self.near(goal, 0.004, slice(0, 2)) and self.near(goal, 0.01)
                    and abs(self.heading_error(heading)) < 0.05):
                self.go("descend")
            return self.move_turn(goal, JAW_OPEN, heading)
        if self.phase == "descend":
            goal = cube + [0.0, 0.0, self.grip_height]
            if self.near(goal, 0.005) or self.steps_in_phase >= 30:
                self.go("close")
            elif not self.near(cube, 0.01, slice(0, 2)):  # the cube moved from under the jaws
                self.go("above")
            return self.move_turn(goal, JAW_OPEN, heading, speed=0.5)
        if self.phase == "close":
            if self.steps_in_phase >= 8:
                if self.holds(self.body):
                    self.memory["grasped_at"] = self.o["ee_pos"].copy()
                    self.go(self.phases[3])
                else:
                    self.go("above")
            return self.move_turn(cube + [0.0, 0.0, self.grip_height], CLOSED)
        if not self.holds(self.body) and self.steps_in_phase >= 5:
            self.go("above")
            return self.move_turn(cube + [0.0, 0.0, self.hover], JAW_OPEN)
        return self.after_grasp()

    def after_grasp(self) -> np.ndarray:
        raise NotImplementedError


class SO101LiftExpert(SO101GraspExpert):
    """SO101Lift's expert: the grasp, then straight up :attr:`lift_height` + 2 cm."""

    task = "pixelrig/SO101Lift-v0"
    phases = (*SO101GraspExpert.phases, "lift")

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.lift_height = float(env.unwrapped.lift_height)

    def after_grasp(self) -> np.ndarray:
        return self.move_turn(self.memory["grasped_at"] + [0.0, 0.0, self.lift_height + 0.02], CLOSED)


class SO101PickPlaceExpert(SO101GraspExpert):
    """SO101PickPlace's expert: the grasp, the cube raised 3 cm above the higher of the target and where it was
    grasped, carried over the target (steering by the cube, not the jaw), then lowered onto it at half speed."""

    task = "pixelrig/SO101PickPlace-v0"
    phases = (*SO101GraspExpert.phases, "raise", "carry", "place")

    def after_grasp(self) -> np.ndarray:
        goal, ee = self.o["target_pos"], self.o["ee_pos"]
        offset = ee - self.o[f"{self.body}_pos"]  # the grasp centre relative to the cube it holds
        travel = max(float(goal[2]), float(self.memory["grasped_at"][2])) + 0.03 + offset[2]
        if self.phase == "raise":
            up = np.array([*ee[:2], travel])
            if self.near(up, 0.01):
                self.go("carry")
            return self.move_turn(up, CLOSED)
        if self.phase == "carry":
            over = np.array([*(goal[:2] + offset[:2]), travel])
            if self.near(over, 0.006) and self.slow():
                self.go("place")
            return self.move_turn(over, CLOSED, speed=0.6)
        return self.move_turn(goal + offset, CLOSED, speed=0.5)


class SO101StackExpert(SO101PickPlaceExpert):
    """SO101Stack's expert: SO101PickPlace's with cube A and its place on B (``target_pos``) as the target, A
    grasped 6 mm above its centre (held lower it tilts more in the jaws); once A sits on B (within 3 mm in height)
    the jaw opens half way, the grasp centre moves 6 mm the fixed jaw's way (drawing that jaw's face off A, which
    was held against it) and rises straight up 4 cm."""

    task = "pixelrig/SO101Stack-v0"
    body = "cube_a"
    grip_height = 0.006
    phases = (*SO101PickPlaceExpert.phases, "release", "back", "leave")
    back_off = 0.006
    """How far the grasp centre moves the fixed jaw's way after opening, drawing that jaw's face off A (m)."""

    def act(self) -> np.ndarray:
        if self.phase in ("release", "back", "leave"):  # A is let go on purpose: no new grasp
            return self.let_go()
        return super().act()

    def after_grasp(self) -> np.ndarray:
        if self.phase == "place":
            a, goal = self.o["cube_a_pos"], self.o["target_pos"]
            if abs(a[2] - goal[2]) < 0.003 or self.steps_in_phase >= 40:
                self.memory["released_at"] = self.o["ee_pos"] + [0.0, 0.0, 0.003]  # off A's top
                self.go("release")
        return super().after_grasp()

    def let_go(self) -> np.ndarray:
        """Open where A was put down, draw away from the fixed jaw, then straight up."""
        where = self.memory["released_at"]
        if self.phase == "release":
            if self.steps_in_phase >= 6:
                self.memory["away"] = where + self.back_off * self.jaw_across()
                self.go("back")
            return self.move_turn(where, JAW_OPEN)
        away = self.memory["away"]
        if self.phase == "back":
            if self.steps_in_phase >= 4:
                self.go("leave")
            return self.move_turn(away, JAW_OPEN, speed=0.3)
        return self.move_turn(away + [0.0, 0.0, 0.04], JAW_OPEN, speed=0.5)
