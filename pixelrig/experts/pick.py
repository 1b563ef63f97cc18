"""Scripted experts for the tasks that pick something up: PandaLift, PandaPickPlace, PandaStack and
PandaPickObject. Each grasps from above (over the body, down around it, close) and then lifts, carries, places or
stacks; a grasp that slips is started again."""

from __future__ import annotations

from typing import Any

import numpy as np

from pixelrig.experts.base import CLOSED, OPEN, Expert

GRASP_PHASES: tuple[str, ...] = ("above", "descend", "close")
"""How every grasp goes: over the body, down around it, close the fingers."""


class GraspExpert(Expert):
    """The grasp the picking experts share; subclasses say what comes after it (:meth:`after_grasp`).

    Phases: ``above`` (the open gripper 8 cm over the grasp point, until within 4 mm across and slow: a cube
    turned 45° leaves 4.6 mm each side of the open fingers), ``descend`` (down onto it, at half speed; a
    body already between both open fingers, or 25 steps, also closes),
    ``close`` (until both fingers touch the body, 3 steps at least; after 15 steps without both, start over), then
    the subclass's phases. A body that leaves the fingers after the grasp starts the grasp over.
    """

    body = "cube"
    """The body it grasps (the observation's ``<body>_*`` terms)."""

    phases = GRASP_PHASES
    hover = 0.08
    """How high over the grasp point the gripper comes in (m)."""

    def grasp_point(self) -> np.ndarray:
        """Where the gripper centre closes on the body: its centre (m)."""
        return self.o[f"{self.body}_pos"]

    def act(self) -> np.ndarray:
        point = self.grasp_point()
        if self.phase == "above":
            goal = point + [0.0, 0.0, self.hover]
            if self.near(goal, 0.004, slice(0, 2)) and self.near(goal, 0.02) and self.slow():
                self.go("descend")
            return self.move(goal, OPEN)
        if self.phase == "descend":
            if self.near(point, 0.006) or self.holds(self.body) or self.steps_in_phase >= 25:
                self.go("close")  # there, or wedged between the open fingers already: close on it
            elif not self.near(point, 0.02, slice(0, 2)):  # the body moved away from under the gripper
                self.go("above")
            return self.move(point, OPEN, speed=0.5)
        if self.phase == "close":
            if self.holds(self.body) and self.steps_in_phase >= 3:
                self.memory["grasped_at"] = self.o["ee_pos"].copy()
                self.go(self.phases[len(GRASP_PHASES)])
            elif self.steps_in_phase >= 15:
                self.go("above")
            return self.move(point, CLOSED)
        if not self.holds(self.body) and self.steps_in_phase >= 5:
            self.go("above")
            return self.move(point + [0.0, 0.0, self.hover], OPEN)
        return self.after_grasp()

    def after_grasp(self) -> np.ndarray:
        """The action once the body is held (the phases after :data:`GRASP_PHASES`)."""
        raise NotImplementedError


class LiftExpert(GraspExpert):
    """PandaLift's expert: grasp the cube, lift it :attr:`lift_height` + 4 cm above where it was grasped.

    Args:
        env: a PandaLift env (its ``lift_height`` is read once).
    """

    task = "pixelrig/PandaLift-v0"

    phases = (*GRASP_PHASES, "lift")

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.lift_height = float(env.unwrapped.lift_height)

    def after_grasp(self) -> np.ndarray:
        return self.move(self.memory["grasped_at"] + [0.0, 0.0, self.lift_height + 0.04], CLOSED)


class CarryExpert(GraspExpert):
    """A grasp, then the body raised to a travel height and carried over where it goes (phases ``raise`` and
    ``carry``, steering by where the body is, not the gripper), then the subclass's :meth:`arrive`."""

    carry_tolerance = 0.01
    """How close over its goal (m) the carried body must come, and slow down, before :meth:`arrive`."""

    def goal_of_body(self) -> np.ndarray:
        """Where the body's centre goes (m)."""
        raise NotImplementedError

    def travel_height(self, goal: np.ndarray) -> float:
        """How high the body's centre travels to its goal (m)."""
        raise NotImplementedError

    def after_grasp(self) -> np.ndarray:
        goal, ee = self.goal_of_body(), self.o["ee_pos"]
        offset = ee - self.o[f"{self.body}_pos"]  # where the gripper centre is relative to the body it holds
        travel = self.travel_height(goal) + offset[2]
        if self.phase == "raise":
            up = np.array([*ee[:2], travel])
            if self.near(up, 0.015):
                self.go("carry")
            return self.move(up, CLOSED)
        if self.phase == "carry":
            over = np.array([*(goal[:2] + offset[:2]), travel])
            if self.near(over, self.carry_tolerance) and self.slow():
                self.go(self.phases[self.phases.index("carry") + 1])
            return self.move(over, CLOSED, speed=0.6)
        return self.arrive(goal, offset)

    def arrive(self, goal: np.ndarray, offset: np.ndarray) -> np.ndarray:
        """The action once the body is over its goal: bring it there (``offset``: gripper centre minus body)."""
        raise NotImplementedError


class PickPlaceExpert(CarryExpert):
    """PandaPickPlace's expert: grasp the cube, raise it 5 cm above the higher of the target and where it was
    grasped, carry it over the target, then bring its centre onto the target at half speed."""

    task = "pixelrig/PandaPickPlace-v0"

    phases = (*GRASP_PHASES, "raise", "carry", "place")

    def goal_of_body(self) -> np.ndarray:
        return self.o["target_pos"]

    def travel_height(self, goal: np.ndarray) -> float:
        return max(float(goal[2]), float(self.memory["grasped_at"][2])) + 0.05  # it closed at the cube's centre

    def arrive(self, goal: np.ndarray, offset: np.ndarray) -> np.ndarray:
        return self.move(goal + offset, CLOSED, speed=0.5)


class StackExpert(CarryExpert):
    """PandaStack's expert: grasp cube A, raise its bottom 4 cm above B's top, carry it over B (within 5 mm), lower
    it until it sits on B, open, then draw the open gripper straight up and wait."""

    task = "pixelrig/PandaStack-v0"

    body = "cube_a"
    phases = (*GRASP_PHASES, "raise", "carry", "lower", "release", "leave")
    carry_tolerance = 0.005

    def act(self) -> np.ndarray:
        if self.phase in ("release", "leave"):  # A is let go on purpose: no new grasp
            return self.let_go()
        return super().act()

    def goal_of_body(self) -> np.ndarray:
        return self.o["target_pos"]

    def travel_height(self, goal: np.ndarray) -> float:
        return float(goal[2]) + 0.04

    def arrive(self, goal: np.ndarray, offset: np.ndarray) -> np.ndarray:
        a, ee = self.o["cube_a_pos"], self.o["ee_pos"]
        down = goal + offset + [0.0, 0.0, 0.002]
        if np.linalg.norm(a[:2] - goal[:2]) > 0.004:  # off to the side: straighten up before going lower
            down[2] = ee[2]
        if abs(a[2] - goal[2]) < 0.004 or self.steps_in_phase >= 40:
            self.memory["released_at"] = ee.copy()
            self.go("release")
        return self.move(down, CLOSED, speed=0.3)

    def let_go(self) -> np.ndarray:
        """Open where A was put down, then go straight up 8 cm, open."""
        where = self.memory["released_at"]
        if self.phase == "release":
            if self.o["gripper_opening"][0] > 0.07 or self.steps_in_phase >= 10:
                self.go("leave")
            return self.move(where, OPEN)
        return self.move(where + [0.0, 0.0, 0.08], OPEN, speed=0.5)


class PickObjectExpert(LiftExpert):
    """PandaPickObject's expert: PandaLift's, closing around the middle of the object's bounding box (at most
    2.5 cm above its bottom and at least 2 cm, where the finger tips still clear the table)."""

    task = "pixelrig/PandaPickObject-v0"

    body = "object"

    def grasp_point(self) -> np.ndarray:
        low, high = self.o["object_aabb"][:3], self.o["object_aabb"][3:]
        centre = (low + high) / 2.0
        height = float(high[2] - low[2])
        return np.array([centre[0], centre[1], low[2] + float(np.clip(height / 2.0, 0.02, 0.025))])
