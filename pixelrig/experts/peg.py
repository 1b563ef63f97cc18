"""PandaPegInsert's scripted expert: turn the gripper square to the peg, grasp it below its top, raise it, turn it
to the hole's heading over the hole, and push it down into the hole, steering by where the peg's lower end is."""

from __future__ import annotations

import math

import numpy as np

from pixelrig.experts.base import CLOSED, OPEN, Expert, wrap, yaw_of

QUARTER = math.pi / 2
"""A square's symmetry: headings 90° apart are the same."""


class PegInsertExpert(Expert):
    """PandaPegInsert's expert (``ee_delta_pose``: it turns the gripper about the vertical).

    Phases: ``above`` (turn the fingers square to the peg's faces, come over the grip point 2.5 cm below the peg's
    top), ``descend``, ``close``, ``raise`` (the peg's lower end 3 cm above the hole's opening), ``carry`` (over
    the hole, turning the peg to the hole's heading modulo 90°, until within 1.5 mm and 1.5°), ``insert`` (down,
    at a fifth of full speed, keeping the lower end over the hole). A peg that leaves the fingers starts it over.
    """

    task = "pixelrig/PandaPegInsert-v0"

    phases = ("above", "descend", "close", "raise", "carry", "insert")
    grip_below_top = 0.025
    """How far below the peg's top the fingers close (m)."""

    def __init__(self, env) -> None:
        super().__init__(env)
        if not self.rotates:
            raise ValueError("PegInsertExpert turns the peg to the hole: make the env with control='ee_delta_pose' "
                             "(PandaPegInsert's default)")

    def act(self) -> np.ndarray:
        o = self.o
        peg, bottom, hole = o["peg_pos"], o["peg_bottom_pos"], o["hole_pos"]
        axis = (peg - bottom) / max(float(np.linalg.norm(peg - bottom)), 1e-9)
        grip = 2 * peg - bottom - self.grip_below_top * axis  # below the top, along the peg
        gripper_yaw, peg_yaw = yaw_of(o["ee_quat"]), yaw_of(o["peg_quat"])
        if self.phase in ("above", "descend", "close"):
            turn = wrap(peg_yaw - gripper_yaw, QUARTER)
            if self.phase == "above":
                goal = grip + [0.0, 0.0, 0.08]
                if self.near(goal, 0.004, slice(0, 2)) and self.near(goal, 0.02) and abs(turn) < 0.03 and self.slow():
                    self.go("descend")
                return self.move(goal, OPEN, turn=turn)
            if self.phase == "descend":
                if self.near(grip, 0.005) or self.steps_in_phase >= 25:
                    self.go("close")
                return self.move(grip, OPEN, speed=0.5, turn=turn)
            if self.holds("peg") and self.steps_in_phase >= 3:
                self.go("raise")
            elif self.steps_in_phase >= 15:
                self.go("above")
            return self.move(grip, CLOSED)
        if not self.holds("peg") and self.steps_in_phase >= 5:
            self.go("above")
            return self.move(grip + [0.0, 0.0, 0.08], OPEN)
        ee = o["ee_pos"]
        lift = hole[2] + 0.03 - bottom[2]  # how far the lower end is below where it may cross the block
        turn = wrap(yaw_of(o["hole_quat"]) - peg_yaw, QUARTER)
        if self.phase == "raise":
            goal = ee + [0.0, 0.0, lift]
            if lift < 0.005:
                self.go("carry")
            return self.move(goal, CLOSED)
        across = np.array([*(hole[:2] - bottom[:2]), 0.0])
        if self.phase == "carry":
            goal = ee + across + [0.0, 0.0, max(lift, 0.0)]
            if float(np.linalg.norm(across)) < 0.0015 and abs(turn) < 0.026 and self.slow(0.02):
                self.go("insert")
            return self.move(goal, CLOSED, speed=0.6, turn=turn)
        goal = ee + across + [0.0, 0.0, hole[2] - 0.045 - bottom[2]]
        return self.move(goal, CLOSED, speed=0.2, turn=turn)
