"""The task-space controller's step as properties (Hypothesis draws the Jacobians, poses, limits and errors a
hand-picked case forgets): the damped least-squares step against the same problem solved as an augmented least
squares by numpy, the null-space pull that leaves the task alone, the cap that keeps the step's direction, and the
joint limits: a joint pushed past its limit is held there and the others take up the remaining error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pixelrig.control.gripper import gripper_positions
from pixelrig.control.rotations import quat_conjugate, quat_multiply, quat_to_matrix, quat_to_rotvec, rotvec_to_quat
from pixelrig.control.task_space import (
    MIN_QUAT_NORM,
    SOLVE_STEP_POS,
    SOLVE_STEP_ROT,
    capped,
    delta_target,
    dls_step,
    hold_near,
    joint_step,
    pose_error,
    pose_target,
)

FINITE = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, m: int | None = None):
    """A task problem: Jacobian (m, n), joint positions inside limits, an error, limits and a damping."""
    n = draw(st.integers(3, 7))
    m = m or draw(st.integers(2, min(6, n)))
    jac = draw(arrays(np.float64, (m, n), elements=FINITE))
    lower = draw(arrays(np.float64, n, elements=st.floats(-3.0, -0.05)))
    upper = draw(arrays(np.float64, n, elements=st.floats(0.05, 3.0)))
    frac = draw(arrays(np.float64, n, elements=st.floats(0.0, 1.0)))
    q = lower + frac * (upper - lower)
    error = draw(arrays(np.float64, m, elements=st.floats(-0.2, 0.2)))
    damping = draw(st.floats(0.01, 0.5))
    return jac, q, error, lower, upper, damping


def tikhonov(jac: np.ndarray, error: np.ndarray, damping: float, free: np.ndarray) -> np.ndarray:
    """min |J dq - e|² + λ² |dq|² over the free joints (the others 0), solved as the stacked least squares
    [J_free; λ I] dq = [e; 0] by numpy: the reference for a weighted DLS step with weights 0/1."""
    cols = np.flatnonzero(free)
    a = np.vstack([jac[:, cols], damping * np.eye(len(cols))])
    b = np.concatenate([error, np.zeros(len(cols))])
    out = np.zeros(jac.shape[1])
    out[cols] = np.linalg.lstsq(a, b, rcond=None)[0]
    return out


@settings(max_examples=100, deadline=None)
@given(problems(), st.data())
def test_dls_step_is_the_damped_least_squares_solution(problem, data) -> None:
    jac, _, error, _, _, damping = problem
    free = data.draw(arrays(bool, jac.shape[1], elements=st.booleans()))
    assume(free.any())
    step = dls_step(jac, error, damping, free.astype(float))
    np.testing.assert_allclose(step, tikhonov(jac, error, damping, free), atol=1e-8)
    assert np.all(step[~free] == 0.0)  # weight 0 freezes a joint


@settings(max_examples=100, deadline=None)
@given(st.integers(3, 7), st.data())
def test_the_null_space_pull_leaves_the_task_alone(n: int, data) -> None:
    """With full row rank and λ → 0 the task moves by the error exactly, whatever the pull."""
    m = data.draw(st.integers(1, n - 1))
    jac = data.draw(arrays(np.float64, (m, n), elements=FINITE))
    assume(np.linalg.svd(jac, compute_uv=False).min() > 0.3)
    error = data.draw(arrays(np.float64, m, elements=st.floats(-0.2, 0.2)))
    pull = data.draw(arrays(np.float64, n, elements=st.floats(-0.1, 0.1)))
    step = dls_step(jac, error, 1e-6, np.ones(n), pull)
    np.testing.assert_allclose(jac @ step, error, atol=1e-7)
    without = dls_step(jac, error, 1e-6, np.ones(n))
    if np.linalg.norm(pull) > 1e-3 and np.linalg.matrix_rank(jac) < n:
        projected = pull - np.linalg.pinv(jac) @ (jac @ pull)  # the pull's null-space part is what is added
        np.testing.assert_allclose(step - without, projected, atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(1, 7), elements=st.floats(-1.0, 1.0)), st.data())
def test_capped_scales_the_whole_step_to_the_largest_allowed(step: np.ndarray, data) -> None:
    caps = data.draw(arrays(np.float64, len(step), elements=st.floats(0.01, 0.5)))
    out = capped(step, caps)
    assert np.all(np.abs(out) <= caps + 1e-12)
    ratio = np.max(np.abs(step) / caps)
    if ratio <= 1.0:
        assert np.array_equal(out, step)
    else:  # the direction kept, and one joint exactly at its cap
        np.testing.assert_allclose(out * ratio, step, rtol=1e-12, atol=1e-300)
        assert np.isclose(np.max(np.abs(out) / caps), 1.0)
    assert capped(step, None) is step


@settings(max_examples=150, deadline=None)
@given(problems())
def test_joint_step_holds_limits_and_solves_again_without_the_clamped_joints(problem) -> None:
    """The documented algorithm: one DLS step; if it pushes joints past a limit, they are clamped there and the step
    is solved again for the remaining error without them (once); the result clipped to the limits."""
    jac, q, error, lower, upper, damping = problem
    out = joint_step(jac, q, error, lower, upper, damping)
    assert np.all(lower <= out) and np.all(out <= upper)
    first = q + tikhonov(jac, error, damping, np.ones(len(q), bool))
    over = (first < lower) | (first > upper)
    if not over.any():
        np.testing.assert_allclose(out, first, atol=1e-9)
        return
    fixed = np.where(over, np.clip(first, lower, upper) - q, 0.0)
    np.testing.assert_allclose(out[over], np.clip(first, lower, upper)[over], atol=1e-12)  # held at the limit
    if (~over).any():
        rest = tikhonov(jac, error - jac @ fixed, damping, ~over)
        np.testing.assert_allclose(out, np.clip(q + fixed + rest, lower, upper), atol=1e-8)


@settings(max_examples=150, deadline=None)
@given(problems(), st.data())
def test_joint_step_keeps_the_null_space_pull_on_the_joints_left_free(problem, data) -> None:
    """With a null-space pull ``n`` (minimise ``|J dq - e|² + λ² |dq - n|²``): the first solve pulls every joint,
    the second (after clamping) pulls the joints left free, the clamped ones held at their limits."""
    jac, q, error, lower, upper, damping = problem
    pull = data.draw(arrays(np.float64, len(q), elements=st.floats(-0.05, 0.05)))
    out = joint_step(jac, q, error, lower, upper, damping, pull)
    first = q + pull + tikhonov(jac, error - jac @ pull, damping, np.ones(len(q), bool))
    over = (first < lower) | (first > upper)
    if not over.any():
        np.testing.assert_allclose(out, first, atol=1e-9)
        return
    fixed = np.where(over, np.clip(first, lower, upper) - q, 0.0)
    free_pull = np.where(over, 0.0, pull)
    rest = free_pull + tikhonov(jac, error - jac @ fixed - jac @ free_pull, damping, ~over)
    np.testing.assert_allclose(out, np.clip(q + fixed + rest, lower, upper), atol=1e-8)


@settings(max_examples=100, deadline=None)
@given(problems(), st.floats(0.001, 0.05))
def test_joint_step_respects_the_largest_step_of_each_joint(problem, cap: float) -> None:
    jac, q, error, lower, upper, damping = problem
    caps = np.full(len(q), cap)
    out = joint_step(jac, q, error, lower, upper, damping, max_step=caps)
    assert np.all(lower <= out) and np.all(out <= upper)
    assert np.all(np.abs(out - q) <= caps + 1e-9)


@settings(max_examples=100, deadline=None)
@given(st.floats(-3.0, 3.0), arrays(np.float64, 2, elements=st.floats(-0.05, 0.0)),
       arrays(np.float64, 2, elements=st.floats(0.001, 0.08)))
def test_gripper_commands_are_the_same_fraction_of_every_joints_range(command: float, lower, upper) -> None:
    """-1 closed (the lower limit), 1 open (the upper), linear between, clipped outside [-1, 1]."""
    out = gripper_positions(command, lower, upper)
    frac = (min(max(command, -1.0), 1.0) + 1.0) / 2.0
    np.testing.assert_allclose(out, lower + frac * (upper - lower), atol=1e-15)
    np.testing.assert_allclose((out - lower) / (upper - lower), frac, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 7, elements=st.floats(-1.0, 1.0)), arrays(np.float64, 3, elements=FINITE),
       arrays(np.float64, 4, elements=st.floats(-1.0, 1.0)))
def test_pose_target_normalises_the_quaternion_or_keeps_the_targets(target, pos, quat) -> None:
    """ee_pose's action as a target: the position as given, the quaternion divided by its length (every component
    counts), or, shorter than MIN_QUAT_NORM, the target's orientation."""
    out = pose_target(target, np.concatenate([pos, quat]))
    assert np.array_equal(out[:3], pos)
    norm = np.sqrt(np.sum(quat * quat))
    if norm >= MIN_QUAT_NORM:
        np.testing.assert_allclose(out[3:], quat / norm, rtol=1e-12, atol=1e-15)
    else:
        assert np.array_equal(out[3:], target[3:])


def test_pose_target_takes_a_quaternion_of_exactly_the_shortest_length() -> None:
    target = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    pose = np.array([0.1, 0.2, 0.3, 0.0, 0.0, 0.0, MIN_QUAT_NORM])
    np.testing.assert_array_equal(pose_target(target, pose), [0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(pose_target(target, pose * [1, 1, 1, 0, 0, 0, 0.5]), [0.1, 0.2, 0.3, 1, 0, 0, 0])


@settings(max_examples=50, deadline=None)
@given(arrays(np.float64, 3, elements=st.floats(-0.05, 0.05)), st.sampled_from(["world", "ee"]))
def test_many_small_turns_keep_the_target_quaternion_unit(drot: np.ndarray, frame: str) -> None:
    """A delta mode turns the target every step: renormalised each time, 300 turns leave it a unit quaternion (an
    error in the renormalisation would compound step over step) and equal one turn by the sum, about a fixed axis."""
    assume(np.linalg.norm(drot) > 1e-3)
    target = np.concatenate([[0.3, -0.1, 0.5], rotvec_to_quat([0.4, -0.2, 0.1])])
    start = target.copy()
    for _ in range(300):
        target = delta_target(target, np.zeros(3), drot, frame)
        assert abs(np.linalg.norm(target[3:]) - 1.0) < 1e-12
    np.testing.assert_array_equal(target[:3], start[:3])
    once = delta_target(start, np.zeros(3), 300 * drot, frame)
    np.testing.assert_allclose(quat_to_matrix(target[3:]), quat_to_matrix(once[3:]), atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 3, elements=FINITE), arrays(np.float64, 3, elements=FINITE),
       arrays(np.float64, 3, elements=st.floats(-3.0, 3.0)), arrays(np.float64, 3, elements=st.floats(-3.0, 3.0)),
       st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_hold_near_keeps_the_target_within_its_lead_of_the_measured_pose(target_pos, pos, turn, tilt, lead_pos,
                                                                         lead_rot) -> None:
    quat = rotvec_to_quat(tilt)
    target = np.concatenate([target_pos, quat_multiply(rotvec_to_quat(turn), quat)])
    out = hold_near(target, pos, quat, lead_pos, lead_rot)
    dist = np.linalg.norm(target_pos - pos)
    if dist > lead_pos:  # pulled back along the straight line to lead_pos from the measured position
        np.testing.assert_allclose(out[:3], pos + (target_pos - pos) * lead_pos / dist, atol=1e-12)
    else:
        assert np.array_equal(out[:3], target_pos)
    angle = np.linalg.norm(quat_to_rotvec(quat_multiply(target[3:], quat_conjugate(quat))))
    left = quat_to_rotvec(quat_multiply(out[3:], quat_conjugate(quat)))
    if angle > lead_rot:  # turned back along the shortest rotation to lead_rot from the measured orientation
        assert np.linalg.norm(left) == pytest.approx(lead_rot, abs=1e-9)
    else:
        assert np.array_equal(out[3:], target[3:])


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, 3, elements=FINITE), arrays(np.float64, 3, elements=FINITE),
       arrays(np.float64, 3, elements=st.floats(-3.0, 3.0)), arrays(np.float64, 3, elements=st.floats(-3.0, 3.0)),
       st.one_of(st.none(), st.tuples(st.floats(0.01, 1.0), st.floats(0.01, 1.0))))
def test_pose_error_is_each_part_scaled_down_to_its_largest(target_pos, pos, turn, tilt, limits) -> None:
    """The error from the measured pose to the target, position then axis-angle rotation (``R_target = exp(e_rot)
    R_measured``), each part scaled down along itself to at most its limit (by default the module's SOLVE_STEP_POS
    and SOLVE_STEP_ROT) and left alone within it."""
    quat = rotvec_to_quat(tilt)
    target = np.concatenate([target_pos, quat_multiply(rotvec_to_quat(turn), quat)])
    max_pos, max_rot = (SOLVE_STEP_POS, SOLVE_STEP_ROT) if limits is None else limits
    e = pose_error(target, pos, quat) if limits is None else pose_error(target, pos, quat, max_pos, max_rot)
    raw = (target_pos - pos, quat_to_rotvec(quat_multiply(target[3:], quat_conjugate(quat))))
    for got, part, limit in ((e[:3], raw[0], max_pos), (e[3:], raw[1], max_rot)):
        length = np.linalg.norm(part)
        if length > limit:
            np.testing.assert_allclose(got, part * (limit / length), rtol=1e-12, atol=1e-15)
        else:
            assert np.array_equal(got, part)
