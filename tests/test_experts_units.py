"""The experts' machinery on observations built by hand (no physics, fast): the heading and wrapping helpers, reading
the state out of an observation, the action :meth:`Expert.move` gives, the checks experts steer by (near, slow,
holds), phases and their step counts, and the grasp every picking expert shares, phase by phase at the thresholds
its docstring gives (4 mm across and slow over the body, 6 mm or both fingers or 25 steps to close, 3 steps of both
fingers to hold, 15 steps to give up, 5 steps without the body to start over), then what Lift, PickPlace, Stack and
PickObject do with it (their heights, tolerances and speeds); PushExpert's and PegInsertExpert's phases likewise."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixelrig.control.rotations import quat_to_matrix
from pixelrig.experts.base import CLOSED, OPEN, Expert, state_of, wrap, yaw_of
from pixelrig.experts.pick import LiftExpert, PickObjectExpert, PickPlaceExpert, StackExpert

TERMS = {"ee_pos": 3, "ee_linvel": 3, "gripper_opening": 1, "cube_pos": 3, "cube_contacts": 2,
         "cube_a_pos": 3, "cube_a_contacts": 2, "target_pos": 3, "object_pos": 3, "object_contacts": 2,
         "object_aabb": 6, "ee_quat": 4, "peg_pos": 3, "peg_quat": 4, "peg_contacts": 2, "peg_bottom_pos": 3,
         "hole_pos": 3, "hole_quat": 4}
LAYOUT: dict[str, slice] = {}
for _name, _size in TERMS.items():
    _start = max((s.stop for s in LAYOUT.values()), default=0)
    LAYOUT[_name] = slice(_start, _start + _size)


class TaskEnv:
    """What an expert reads of an env: its layout, control mode, action scales and the task's parameters."""

    def __init__(self, control: str = "ee_delta_pos") -> None:
        self.unwrapped = self
        self.observation_layout = LAYOUT
        self.control = control
        self.max_step, self.max_rot_step, self.lift_height = 0.05, 0.1, 0.1


def obs(**terms) -> np.ndarray:
    """A state vector with the given terms (zeros elsewhere)."""
    out = np.zeros(sum(TERMS.values()))
    for name, value in terms.items():
        out[LAYOUT[name]] = value
    return out


finite = st.floats(-3.0, 3.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)


@given(st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda q: 0.1 < np.linalg.norm(q)))
def test_yaw_of_is_the_heading_of_the_x_axis(q) -> None:
    quat = np.array(q) / np.linalg.norm(q)
    r = quat_to_matrix(quat)
    if math.hypot(r[0, 0], r[1, 0]) > 1e-3:  # a heading exists
        assert yaw_of(quat) == pytest.approx(math.atan2(r[1, 0], r[0, 0]), abs=1e-9)


@given(st.floats(-50.0, 50.0), st.sampled_from([2 * math.pi, math.pi / 2, 1.0]))
def test_wrap_is_the_same_angle_within_half_a_period(angle: float, period: float) -> None:
    w = wrap(angle, period)
    assert -period / 2 - 1e-12 <= w < period / 2 + 1e-12
    turns = (angle - w) / period
    assert turns == pytest.approx(round(turns), abs=1e-9)
    assert wrap(angle) == pytest.approx(wrap(angle, 2 * math.pi))


def test_state_of_reads_the_state_where_each_observation_keeps_it() -> None:
    state = np.arange(5, dtype=np.float32)
    for o in (state, {"observation": state, "desired_goal": state + 9}, {"state": state, "front/rgb": 0},
              {"state": state, "observation": state + 1}):
        out = state_of(o)
        assert out.dtype == np.float64 and np.array_equal(out, state)
    with pytest.raises(ValueError, match=re.escape("so that obs['state'] exists; got keys ['a/rgb', 'b']")):
        state_of({"b": 1, "a/rgb": 2})


@given(vec3, vec3, st.floats(0.05, 1.0), st.floats(-1.0, 1.0), st.floats(-2.0, 2.0), st.booleans())
def test_move_steps_towards_the_goal_at_most_speed(ee, goal, speed: float, gripper: float, turn: float,
                                                   rotates: bool) -> None:
    expert = LiftExpert(TaskEnv("ee_delta_pose" if rotates else "ee_delta_pos"))
    expert.o = {"ee_pos": ee}
    action = expert.move(goal, gripper, speed=speed, turn=turn)
    assert action.dtype == np.float32 and action.shape == ((7,) if rotates else (4,))
    step = action[:3].astype(np.float64)
    want = (goal - ee) / 0.05  # in units of max_step
    norm = float(np.linalg.norm(want))
    assert np.linalg.norm(step) == pytest.approx(min(norm, speed), rel=1e-5, abs=1e-6)
    if norm > 1e-3:
        assert np.allclose(step / np.linalg.norm(step), want / norm, atol=1e-5)  # straight at the goal
    assert action[-1] == np.float32(gripper)
    if rotates:
        assert np.array_equal(action[3:6], np.float32([0.0, 0.0, np.clip(turn / 0.1, -1.0, 1.0)]))
    default = expert.move(goal, gripper)
    assert np.linalg.norm(default[:3]) == pytest.approx(min(norm, 1.0), rel=1e-5, abs=1e-6)


def test_move_keeps_every_action_within_the_space_at_any_speed() -> None:
    expert = LiftExpert(TaskEnv())
    expert.o = {"ee_pos": np.zeros(3)}
    action = expert.move([1.0, -1.0, 0.02], OPEN, speed=3.0)  # 3 x full scale asked: each axis clipped to [-1, 1]
    assert np.allclose(action, [1.0, -1.0, 0.02 / math.sqrt(2.0004) * 3.0, OPEN], atol=1e-5)


def test_near_slow_and_holds_are_strict_at_their_thresholds() -> None:
    expert = LiftExpert(TaskEnv())
    expert.o = {"ee_pos": np.zeros(3), "ee_linvel": np.array([0.03, 0.0, 0.0]), "cube_contacts": np.array([1.0, 1.0])}
    assert expert.near([0.0, 0.006, 0.008], 0.0101) and not expert.near([0.0, 0.006, 0.008], 0.0099)
    assert expert.near([0.0, 0.006, 0.5], 0.0061, slice(0, 2)) and not expert.near([0.0, 0.006, 0.5], 0.0059,
                                                                                     slice(0, 2))
    assert expert.slow() and expert.slow(0.0301) and not expert.slow(0.0299)
    expert.o["ee_linvel"] = np.array([0.0, 0.04, 0.0301])
    assert not expert.slow()  # 0.05 m/s, the default, is not slower than itself
    assert expert.holds("cube")
    for contacts in ([1.0, 0.0], [0.0, 1.0], [0.5, 1.0]):
        expert.o["cube_contacts"] = np.array(contacts)
        assert not expert.holds("cube")


def test_phases_count_their_steps_and_reset_starts_over() -> None:
    class Counting(Expert):
        phases = ("a", "b")

        def act(self) -> np.ndarray:
            if self.o["ee_pos"][0] > 0:
                self.go("b")
            return np.zeros(4, np.float32)

    expert = Counting(TaskEnv())
    assert (expert.phase, expert.steps_in_phase, expert.memory, expert.rotates, expert.o) == ("a", 0, {}, False, {})
    for _ in range(3):
        expert(obs())
    assert (expert.phase, expert.steps_in_phase) == ("a", 3)
    expert(obs(ee_pos=[1.0, 0.0, 0.0]))
    assert (expert.phase, expert.steps_in_phase) == ("b", 0)
    expert(obs(ee_pos=[1.0, 0.0, 0.0]))
    assert expert.steps_in_phase == 1
    expert.memory["x"] = 1
    expert.reset()
    assert (expert.phase, expert.steps_in_phase, expert.memory) == ("a", 0, {})
    with pytest.raises(ValueError, match=re.escape("Counting: unknown phase 'c'; phases: ('a', 'b')")):
        expert.go("c")
    with pytest.raises(NotImplementedError):
        Expert(TaskEnv()).act()


def run(expert: Expert, o: np.ndarray, steps: int = 1) -> np.ndarray:
    for _ in range(steps):
        action = expert(o)
    return action


CUBE = np.array([0.5, 0.1, 0.65])


def test_grasp_comes_over_the_body_then_descends_when_within_4_mm_across_and_slow() -> None:
    over = CUBE + [0.0, 0.0, 0.08]
    expert = LiftExpert(TaskEnv())
    action = run(expert, obs(ee_pos=over + [0.1, 0.0, 0.0], cube_pos=CUBE))
    assert expert.phase == "above" and np.allclose(action, [-1.0, 0.0, 0.0, OPEN])  # 10 cm: a full step
    for ee, vel, phase in ((over + [0.0028, 0.0028, 0.0], 0.0, "descend"),  # 3.96 mm across
                           (over + [0.0029, 0.0029, 0.0], 0.0, "above"),  # 4.1 mm
                           (over + [0.0, 0.0, 0.0199], 0.0, "descend"), (over + [0.0, 0.0, 0.0201], 0.0, "above"),
                           (over, 0.0499, "descend"), (over, 0.0501, "above")):
        expert.reset()
        action = run(expert, obs(ee_pos=ee, ee_linvel=[0.0, vel, 0.0], cube_pos=CUBE))
        assert expert.phase == phase, (ee - over, vel)
        assert np.allclose(action[:3], (over - ee) / 0.05, atol=1e-6) and action[3] == OPEN


def descending(ee, contacts=(0.0, 0.0), steps: int = 1) -> tuple[LiftExpert, np.ndarray]:
    expert = LiftExpert(TaskEnv())
    expert.go("descend")
    return expert, run(expert, obs(ee_pos=ee, cube_pos=CUBE, cube_contacts=contacts), steps)


def test_grasp_descends_at_half_speed_and_closes_within_6_mm_or_between_the_fingers_or_after_25_steps() -> None:
    expert, action = descending(CUBE + [0.0, 0.0, 0.05])
    assert expert.phase == "descend" and np.allclose(action, [0.0, 0.0, -0.5, OPEN])
    assert descending(CUBE + [0.0, 0.0, 0.0059])[0].phase == "close"
    assert descending(CUBE + [0.0, 0.0, 0.0061])[0].phase == "descend"
    assert descending(CUBE + [0.0, 0.0, 0.03], (1.0, 1.0))[0].phase == "close"
    assert descending(CUBE + [0.0, 0.0, 0.03], (1.0, 0.0))[0].phase == "descend"
    assert descending(CUBE + [0.0, 0.0, 0.03], steps=25)[0].phase == "descend"  # 24 steps counted before the 25th
    assert descending(CUBE + [0.0, 0.0, 0.03], steps=26)[0].phase == "close"
    assert descending(CUBE + [0.0199, 0.0, 0.03])[0].phase == "descend"
    expert, action = descending(CUBE + [0.0201, 0.0, 0.03])  # the body is no longer under the gripper
    assert expert.phase == "above" and action[3] == OPEN


def closing(contacts, steps: int, ee=CUBE) -> tuple[LiftExpert, np.ndarray]:
    expert = LiftExpert(TaskEnv())
    expert.go("close")
    return expert, run(expert, obs(ee_pos=ee, cube_pos=CUBE, cube_contacts=contacts), steps)


def test_grasp_holds_after_3_steps_of_both_fingers_and_gives_up_after_15() -> None:
    expert, action = closing((1.0, 1.0), 3)
    assert expert.phase == "close" and np.allclose(action, [0.0, 0.0, 0.0, CLOSED])
    ee = CUBE + [0.001, 0.0, 0.002]
    expert, _ = closing((1.0, 1.0), 4, ee)
    assert expert.phase == "lift" and np.array_equal(expert.memory["grasped_at"], ee)
    assert closing((1.0, 0.0), 15)[0].phase == "close"
    expert, action = closing((1.0, 0.0), 16)
    assert expert.phase == "above" and action[3] == CLOSED


def test_lift_raises_the_grasp_point_by_the_lift_height_plus_4_cm_and_starts_over_when_the_cube_leaves() -> None:
    expert, _ = closing((1.0, 1.0), 4)
    action = run(expert, obs(ee_pos=CUBE, cube_pos=CUBE, cube_contacts=[1.0, 1.0]))
    assert expert.phase == "lift" and np.allclose(action, [0.0, 0.0, 1.0, CLOSED])  # 14 cm up: a full step
    expert.memory["grasped_at"] = CUBE - [0.0, 0.0, 0.139]
    action = run(expert, obs(ee_pos=CUBE, cube_pos=CUBE, cube_contacts=[1.0, 1.0]))
    assert np.allclose(action, [0.0, 0.0, 0.02, CLOSED], atol=1e-6)  # 0.14 - 0.139 = 1 mm
    loose = obs(ee_pos=CUBE + [0.0, 0.0, 0.05], cube_pos=CUBE, cube_contacts=[1.0, 0.0])
    run(expert, loose, 3)  # two steps holding it, three without
    assert expert.phase == "lift" and expert.steps_in_phase == 5  # 5 steps in the phase before giving up on it
    action = run(expert, loose)
    assert expert.phase == "above" and np.allclose(action, [0.0, 0.0, 0.6, OPEN])  # back 8 cm over the cube


def test_stack_lets_go_where_it_put_a_down_then_leaves_straight_up() -> None:
    expert = StackExpert(TaskEnv())
    where = np.array([0.5, 0.1, 0.72])
    expert.go("release")
    expert.memory["released_at"] = where
    o = dict(ee_pos=where + [0.0, 0.0, 0.01], cube_a_pos=where, cube_a_contacts=[1.0, 1.0])
    action = run(expert, obs(**o, gripper_opening=0.069))
    assert expert.phase == "release" and np.allclose(action, [0.0, 0.0, -0.2, OPEN])
    assert run(expert, obs(**o, gripper_opening=0.071)) is not None and expert.phase == "leave"
    action = run(expert, obs(**o, gripper_opening=0.071))
    assert np.allclose(action, [0.0, 0.0, 0.5, OPEN])  # 7 cm up at half speed
    o["ee_pos"] = where + [0.0, 0.0, 0.07]
    action = run(expert, obs(**o, gripper_opening=0.071))
    assert np.allclose(action, [0.0, 0.0, 0.2, OPEN], atol=1e-5)  # to 8 cm over where it let go, no higher
    expert = StackExpert(TaskEnv())
    expert.go("release")
    expert.memory["released_at"] = where
    run(expert, obs(**o), 10)
    assert expert.phase == "release"
    run(expert, obs(**o))
    assert expert.phase == "leave"


def carrying(expert, phase: str, ee, body, target, grasped_at=None, vel=0.0, steps: int = 1):
    """The expert in ``phase`` with the body held (both fingers on it), one observation ``steps`` times."""
    expert.go(phase)
    expert.memory["grasped_at"] = np.asarray(ee if grasped_at is None else grasped_at, np.float64)
    name = expert.body
    o = obs(ee_pos=ee, ee_linvel=[vel, 0.0, 0.0], target_pos=target, **{f"{name}_pos": body,
                                                                         f"{name}_contacts": [1.0, 1.0]})
    return run(expert, o, steps)


def test_pick_place_raises_5_cm_over_the_higher_of_target_and_grasp_then_carries_then_places() -> None:
    grip = [0.0, 0.0, 0.003]  # the gripper centre 3 mm over the cube's centre
    for target, grasped_z, travel in (([0.6, -0.1, 0.75], 0.65, 0.80), ([0.6, -0.1, 0.62], 0.66, 0.71)):
        expert = PickPlaceExpert(TaskEnv())
        ee = CUBE + grip
        action = carrying(expert, "raise", ee, CUBE, target, grasped_at=[0.5, 0.1, grasped_z])
        up = (travel + 0.003 - ee[2]) / 0.05
        assert expert.phase == "raise" and np.allclose(action, [0.0, 0.0, min(up, 1.0), CLOSED], atol=1e-6)
        for dz, phase in ((0.0149, "carry"), (0.0151, "raise")):  # within 1.5 cm of the travel height
            expert = PickPlaceExpert(TaskEnv())
            ee = np.array([0.5, 0.1, travel + 0.003 - dz])
            carrying(expert, "raise", ee, ee - grip, target, grasped_at=[0.5, 0.1, grasped_z])
            assert expert.phase == phase, dz
    target = np.array([0.6, -0.1, 0.75])
    over = np.array([0.6, -0.1, 0.803])  # the cube's centre 5 cm over the target, the gripper 3 mm above it
    expert = PickPlaceExpert(TaskEnv())
    action = carrying(expert, "carry", over + [-0.0599, 0.0, 0.0], over - grip + [-0.0599, 0.0, 0.0], target,
                      grasped_at=CUBE)
    assert expert.phase == "carry" and np.allclose(action, [0.6, 0.0, 0.0, CLOSED], atol=1e-5)  # at 0.6 speed
    for dx, vel, phase in ((0.0099, 0.0, "place"), (0.0101, 0.0, "carry"), (0.0, 0.051, "carry")):
        expert = PickPlaceExpert(TaskEnv())
        carrying(expert, "carry", over + [dx, 0.0, 0.0], over - grip + [dx, 0.0, 0.0], target, CUBE, vel=vel)
        assert expert.phase == phase, (dx, vel)
    off = np.array([0.004, -0.002, 0.003])  # held off its centre: the body, not the gripper, goes over the target
    expert = PickPlaceExpert(TaskEnv())
    action = carrying(expert, "carry", over + [-0.02, 0.0, 0.0] + off - grip, over - grip + [-0.02, 0.0, 0.0], target,
                      grasped_at=CUBE)
    assert np.allclose(action, [0.4, 0.0, 0.0, CLOSED], atol=1e-5)
    action = carrying(expert, "place", over, over - grip, target)
    assert expert.phase == "place" and np.allclose(action, [0.0, 0.0, -0.5, CLOSED])  # down at half speed
    action = carrying(expert, "place", target + grip + [0.0, 0.0, 0.01], target + [0.0, 0.0, 0.01], target)
    assert np.allclose(action, [0.0, 0.0, -0.2, CLOSED], atol=1e-5)


def test_stack_carries_4_cm_over_b_within_5_mm_then_lowers_straight_and_lets_go_on_b() -> None:
    target = np.array([0.5, 0.1, 0.70])  # where A's centre rests on B
    grip = np.array([0.0, 0.0, 0.003])
    expert = StackExpert(TaskEnv())
    ee = np.array([0.5, -0.1, 0.70])
    action = carrying(expert, "raise", ee, ee - grip, target)
    assert np.allclose(action, [0.0, 0.0, 0.86, CLOSED], atol=1e-5)  # A's centre 4 cm over its place on B
    over = target + [0.0, 0.0, 0.04] + grip
    for dx, phase in ((0.0049, "lower"), (0.0051, "carry")):
        expert = StackExpert(TaskEnv())
        carrying(expert, "carry", over + [dx, 0.0, 0.0], over - grip + [dx, 0.0, 0.0], target)
        assert expert.phase == phase, dx
    expert = StackExpert(TaskEnv())
    action = carrying(expert, "lower", over, over - grip, target)
    assert expert.phase == "lower" and np.allclose(action, [0.0, 0.0, -0.3, CLOSED])  # 0.3 of full speed
    action = carrying(expert, "lower", target + grip + [0.0, 0.0, 0.01], target + [0.0, 0.0, 0.01], target)
    assert np.allclose(action, [0.0, 0.0, -0.16, CLOSED], atol=1e-5)  # to A 2 mm over where it rests on B
    side = over + [0.0041, 0.0, -0.02]  # A 4.1 mm off to the side: straighten up before going lower
    action = carrying(expert, "lower", side, side - grip, target)
    assert np.allclose(action, [-0.082, 0.0, 0.0, CLOSED], atol=1e-5)
    side = over + [0.0039, 0.0, -0.02]
    action = carrying(expert, "lower", side, side - grip, target)
    assert action[2] < -0.2
    for dz, steps, phase in ((0.0039, 1, "release"), (0.0041, 1, "lower"), (0.0041, 41, "release")):
        expert = StackExpert(TaskEnv())
        ee = target + grip + [0.0, 0.0, dz]
        carrying(expert, "lower", ee, target + [0.0, 0.0, dz], target, steps=steps)
        assert expert.phase == phase, (dz, steps)
        if phase == "release":
            assert np.array_equal(expert.memory["released_at"], ee)
    expert = StackExpert(TaskEnv())
    carrying(expert, "lower", target + [0.0, 0.0, 0.01], target + [0.0, 0.0, 0.01], target, steps=40)
    assert expert.phase == "lower"  # the 41st step gives up waiting


def test_pick_object_closes_at_the_middle_of_the_box_2_to_2_5_cm_above_its_bottom() -> None:
    expert = PickObjectExpert(TaskEnv())
    assert expert.body == "object"
    for height, up in ((0.03, 0.02), (0.045, 0.0225), (0.06, 0.025)):
        expert.o = {"object_aabb": np.array([0.4, -0.1, 0.63, 0.46, -0.06, 0.63 + height])}
        np.testing.assert_allclose(expert.grasp_point(), [0.43, -0.08, 0.63 + up], atol=1e-12)


def push_obs(ee, cube, target) -> np.ndarray:
    """PandaPush's state: the gripper at 0:3, the cube at 6:9, the target at 18:21."""
    o = np.zeros(22, np.float32)
    o[0:3], o[6:9], o[18:21] = ee, cube, target
    return o


def test_push_expert_goes_behind_the_cube_lowers_and_pushes_it_onto_the_target() -> None:
    from pixelrig.experts.push import PushExpert

    top = 0.625
    cube, target = np.array([0.5, 0.0, top + 0.025]), np.array([0.5, 0.2, top])
    behind = np.array([0.5, -0.07])  # 7 cm behind the cube, away from the target
    expert = PushExpert()
    ee = np.array([0.5, -0.07 + 0.02, top + 0.12])
    action = expert(push_obs(ee, cube, target))
    assert expert.phase == "approach" and action.dtype == np.float32
    assert np.allclose(action, [0.0, -0.4, 0.0], atol=1e-5)
    ee = np.array([*behind, top + 0.2]) + [0.0149, 0.0, 0.0]
    action = expert({"observation": push_obs(ee, cube, target)})  # a goal env's dict: the same state
    assert expert.phase == "lower" and np.allclose(action, [-0.298, 0.0, -1.0], atol=1e-5)  # to 12 cm over the table
    ee = np.array([*behind, top + 0.0401])
    action = expert(push_obs(ee, cube, target))
    assert expert.phase == "lower" and np.allclose(action, [0.0, 0.0, -0.202], atol=1e-4)  # down to 3 cm
    action = expert({"state": push_obs(ee - [0.0, 0.0, 0.0002], cube, target)})
    assert expert.phase == "push" and np.allclose(action, [0.0, 0.0, -0.198], atol=1e-4)
    ee = np.array([0.5, -0.06, top + 0.03])
    action = expert(push_obs(ee, cube, target))
    assert expert.phase == "push" and np.allclose(action, [0.0, 1.0, 0.0], atol=1e-5)  # on to 2 cm short of the target
    action = expert(push_obs([0.5, 0.16, top + 0.03], cube + [0.0, 0.1, 0.0], target))
    assert np.allclose(action, [0.0, 0.4, 0.0], atol=1e-5)
    expert(push_obs([0.5, -0.1199, top + 0.03], cube, target))
    assert expert.phase == "push"
    expert(push_obs([0.5, -0.1201, top + 0.03], cube, target))  # 12 cm from the cube: lost it, start over
    assert expert.phase == "approach"
    expert.phase = "push"
    expert.reset()
    assert expert.phase == "approach" and PushExpert(object()).phase == "approach"
    diagonal = push_obs([0.5, 0.0, top + 0.12], [0.5, 0.0, top + 0.025], [0.6, 0.1, top])
    action = PushExpert()(diagonal)  # behind along the diagonal, 7 cm
    assert np.allclose(action, [-0.07 / math.sqrt(2) / 0.05, -0.07 / math.sqrt(2) / 0.05, 0.0], atol=1e-5)
    assert np.all(np.isfinite(PushExpert()(push_obs([0.5, 0.0, top + 0.1], cube, cube))))  # target on the cube


def yaw(angle: float) -> np.ndarray:
    return np.array([0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)])


PEG = np.array([0.45, -0.14, 0.675])  # a peg standing on the table: its lower end 5 cm below its centre
HOLE = np.array([0.52, 0.13, 0.675])  # the opening's centre


def peg_expert(phase: str, ee, peg_yaw=0.0, ee_yaw=0.0, hole_yaw=0.0, peg=PEG, bottom=None, contacts=(1.0, 1.0),
               vel=0.0, steps: int = 1):
    from pixelrig.experts.peg import PegInsertExpert

    expert = PegInsertExpert(TaskEnv("ee_delta_pose"))
    expert.go(phase)
    bottom = peg - [0.0, 0.0, 0.05] if bottom is None else bottom
    o = obs(ee_pos=ee, ee_quat=yaw(ee_yaw), ee_linvel=[0.0, vel, 0.0], peg_pos=peg, peg_quat=yaw(peg_yaw),
            peg_bottom_pos=bottom, peg_contacts=contacts, hole_pos=HOLE, hole_quat=yaw(hole_yaw))
    return expert, run(expert, o, steps)


def test_peg_expert_squares_the_gripper_to_the_peg_and_comes_over_its_grip_point() -> None:
    grip = PEG + [0.0, 0.0, 0.025]  # 2.5 cm below the peg's top
    over = grip + [0.0, 0.0, 0.08]
    expert, action = peg_expert("above", over + [0.0, 0.0, 0.01], peg_yaw=0.3)
    assert expert.phase == "above" and np.allclose(action, [0.0, 0.0, -0.2, 0.0, 0.0, 1.0, OPEN], atol=1e-5)
    expert, action = peg_expert("above", over, peg_yaw=math.pi / 2 + 0.02, ee_yaw=0.0)  # a quarter turn is square
    assert expert.phase == "descend" and np.allclose(action[5], 0.2, atol=1e-5)
    for kwargs in (dict(peg_yaw=0.031), dict(ee=over + [0.0041, 0.0, 0.0]), dict(ee=over + [0.0, 0.0, 0.0201]),
                   dict(vel=0.051)):
        assert peg_expert("above", **{"ee": over, **kwargs})[0].phase == "above", kwargs
    expert, action = peg_expert("above", over + [0.0039, 0.0, 0.0195], peg_yaw=-0.029)
    assert expert.phase == "descend"
    tilted_peg = PEG + [0.0, 0.0, 0.0]
    tilted_bottom = PEG - [0.03, 0.0, 0.04]  # the grip point lies along the peg's axis
    expert, action = peg_expert("above", PEG, peg=tilted_peg, bottom=tilted_bottom)
    goal = 2 * PEG - tilted_bottom - 0.025 * np.array([0.6, 0.0, 0.8]) + [0.0, 0.0, 0.08]
    assert np.allclose(action[:3], (goal - PEG) / np.linalg.norm(goal - PEG), atol=1e-5)


def test_peg_expert_descends_closes_and_raises_the_peg_over_the_block() -> None:
    grip = PEG + [0.0, 0.0, 0.025]
    expert, action = peg_expert("descend", grip + [0.0, 0.0, 0.05], peg_yaw=-0.05, contacts=(0.0, 0.0))
    assert expert.phase == "descend" and np.allclose(action, [0.0, 0.0, -0.5, 0.0, 0.0, -0.5, OPEN], atol=1e-5)
    assert peg_expert("descend", grip + [0.0, 0.0, 0.0049], contacts=(0, 0))[0].phase == "close"
    assert peg_expert("descend", grip + [0.0, 0.0, 0.0051], contacts=(0, 0), steps=25)[0].phase == "descend"
    assert peg_expert("descend", grip + [0.0, 0.0, 0.0051], contacts=(0, 0), steps=26)[0].phase == "close"
    expert, action = peg_expert("close", grip, peg_yaw=0.2, steps=3)
    assert expert.phase == "close" and np.allclose(action, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, CLOSED])  # no turning
    assert peg_expert("close", grip, steps=4)[0].phase == "raise"
    assert peg_expert("close", grip, contacts=(1.0, 0.0), steps=15)[0].phase == "close"
    assert peg_expert("close", grip, contacts=(1.0, 0.0), steps=16)[0].phase == "above"
    # raise: the lower end to 3 cm over the opening, straight up
    lift = HOLE[2] + 0.03 - (PEG[2] - 0.05)
    expert, action = peg_expert("raise", grip, peg=PEG + [0.0, 0.0, lift - 0.01], hole_yaw=0.3)
    assert expert.phase == "raise" and np.allclose(action, [0.0, 0.0, 0.2, 0.0, 0.0, 0.0, CLOSED], atol=1e-5)
    up = PEG + [0.0, 0.0, lift - 0.0049]
    assert peg_expert("raise", grip, peg=up)[0].phase == "carry"
    assert peg_expert("raise", grip, peg=up - [0.0, 0.0, 0.0002])[0].phase == "raise"
    expert, action = peg_expert("raise", grip, contacts=(0.0, 1.0), steps=6)  # it left the fingers
    assert expert.phase == "above" and np.allclose(action[:3], [0.0, 0.0, 1.0]) and action[-1] == OPEN
    assert peg_expert("raise", grip, contacts=(0.0, 1.0), steps=5)[0].phase == "raise"


def test_peg_expert_carries_the_lower_end_over_the_hole_turned_to_it_then_inserts_slowly() -> None:
    high = HOLE + [0.0, 0.0, 0.03 + 0.05]  # the peg's centre with its lower end 3 cm over the opening
    ee = high + [0.0, 0.0, 0.025]
    expert, action = peg_expert("carry", ee, peg=high + [-0.01, 0.0, 0.0], peg_yaw=0.1, hole_yaw=0.0)
    assert expert.phase == "carry" and np.allclose(action, [0.2, 0.0, 0.0, 0.0, 0.0, -1.0, CLOSED], atol=1e-5)
    expert, action = peg_expert("carry", ee, peg=high + [-0.1, 0.0, -0.01])  # 1 cm low too: up as it crosses
    assert np.allclose(action[:3], np.array([0.1, 0.0, 0.01]) / np.linalg.norm([0.1, 0.0, 0.01]) * 0.6, atol=1e-5)
    expert, action = peg_expert("carry", ee, peg=high + [-0.1, 0.0, 0.01])  # too high is fine: no going down
    assert np.allclose(action[:3], [0.6, 0.0, 0.0], atol=1e-5)
    for kwargs, phase in ((dict(peg=high + [0.001, 0.001, 0.0]), "insert"), (dict(peg=high + [0.0011, 0.0011, 0.0]),
                                                                               "carry"),
                          (dict(peg_yaw=0.025), "insert"), (dict(peg_yaw=0.027), "carry"),
                          (dict(peg_yaw=math.pi / 2 - 0.02), "insert"), (dict(vel=0.019), "insert"),
                          (dict(vel=0.021), "carry")):
        assert peg_expert("carry", ee, **{"peg": high, **kwargs})[0].phase == phase, kwargs
    expert, action = peg_expert("insert", ee, peg=high + [-0.001, 0.0, 0.0], peg_yaw=-0.001)
    down = np.array([0.001, 0.0, -0.045 - 0.03])  # on down to 4.5 cm below the opening, over the hole
    assert expert.phase == "insert"
    assert np.allclose(action, [*(down / np.linalg.norm(down) * 0.2), 0.0, 0.0, 0.01, CLOSED], atol=1e-5)


def test_find_experts_takes_the_classes_that_name_their_own_task(tmp_path, monkeypatch) -> None:
    """Each module's own classes with a ``task`` of their own; an imported class or a subclass that inherits its
    task is not another expert; two classes naming one task are refused by name."""
    import sys

    import pixelrig.experts as experts

    (tmp_path / "alpha.py").write_text("class A:\n    task = 'pixelrig/A-v0'\n\nclass Helper:\n    task = ''\n")
    (tmp_path / "beta.py").write_text("from pixelrig.experts.alpha import A\n\nclass B(A):\n    pass\n\n"
                                      "class C:\n    task = 'pixelrig/C-v0'\n")
    monkeypatch.setattr(experts, "__path__", [str(tmp_path)])
    for name in ("alpha", "beta", "gamma"):
        monkeypatch.delitem(sys.modules, f"pixelrig.experts.{name}", raising=False)
    try:
        found = experts.find_experts()
        assert {k: v.__name__ for k, v in found.items()} == {"pixelrig/A-v0": "A", "pixelrig/C-v0": "C"}
        (tmp_path / "gamma.py").write_text("class D:\n    task = 'pixelrig/A-v0'\n")
        with pytest.raises(ValueError, match=re.escape("A and D both name the task 'pixelrig/A-v0'")):
            experts.find_experts()
    finally:
        for name in ("alpha", "beta", "gamma"):
            sys.modules.pop(f"pixelrig.experts.{name}", None)


def test_experts_is_derived_on_first_use_and_kept(monkeypatch) -> None:
    """``pixelrig.experts.EXPERTS`` is found on first use (the module's ``__getattr__``), then kept in the module."""
    import pixelrig.experts as experts

    monkeypatch.delitem(vars(experts), "EXPERTS", raising=False)  # as if never used in this process
    found = experts.EXPERTS
    assert isinstance(found, dict) and found["pixelrig/PandaLift-v0"] is LiftExpert
    assert vars(experts)["EXPERTS"] is found and experts.EXPERTS is found
    with pytest.raises(AttributeError, match="module 'pixelrig.experts' has no attribute 'experts'"):
        experts.experts  # noqa: B018



def test_an_env_without_a_control_mode_is_refused_by_name() -> None:
    env = TaskEnv()
    del env.control
    with pytest.raises(ValueError, match=re.escape("(got control=None)")):
        LiftExpert(env)


def test_push_expert_acts_alike_on_the_state_and_on_a_dict_holding_it() -> None:
    """A dict observation (PixelObs's ``"state"``) gives the very actions the bare float32 state gives, bit for bit,
    over whole PandaPush episodes (two experts in lockstep, one fed each)."""
    import gymnasium as gym

    from pixelrig.experts.push import PushExpert

    env = gym.make("pixelrig/PandaPush-v0")
    try:
        for seed in range(3):
            state, _ = env.reset(seed=seed)
            bare, boxed = PushExpert(), PushExpert()
            for _ in range(60):
                action = bare(state)
                assert boxed({"state": state}).tobytes() == action.tobytes()
                state, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    break
    finally:
        env.close()
