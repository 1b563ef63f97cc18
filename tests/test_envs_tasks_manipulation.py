"""The Panda manipulation tasks (Lift, PickPlace, Stack, PegInsert, PickObject): spaces and observation layouts,
success and rewards checked analytically (bodies put where the task is done, or nearly), start poses drawn from
the seed through Randomization (and widened by it), snapshots mid-grasp restored bit for bit, the random_urdfs
subset derived again, and bad options refused by name."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pybullet as p
import pybullet_data
import pytest

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import PixelObs, Randomization, restore, snapshot
from pixelrig.control.rotations import quat_to_matrix
from pixelrig.envs.manipulation import CUBE_REST, PandaManipulationEnv, closeness
from pixelrig.envs.panda import TABLE_TOP
from pixelrig.experts import EXPERTS
from pixelrig.tasks.peg_insert import BLOCK_HEIGHT, HOLE_SIDE, PEG_LENGTH
from pixelrig.tasks.pick_object import OBJECTS, fits_the_hand, object_extents, stands_still

from .conftest import assert_restores_exactly, assert_trees_equal, physics_state

TASKS = {  # id: (default control, actions, observation size, bodies)
    "pixelrig/PandaLift-v0": ("ee_delta_pos", 4, 29, ("cube",)),
    "pixelrig/PandaPickPlace-v0": ("ee_delta_pos", 4, 35, ("cube",)),
    "pixelrig/PandaStack-v0": ("ee_delta_pos", 4, 50, ("cube_a", "cube_b")),
    "pixelrig/PandaPegInsert-v0": ("ee_delta_pose", 7, 42, ("peg",)),
    "pixelrig/PandaPickObject-v0": ("ee_delta_pos", 4, 35, ("object",)),
}
HEAD = ["ee_pos", "ee_quat", "ee_linvel", "gripper_opening"]
PARTS = ["pos", "quat", "linvel", "angvel", "rel_pos", "contacts"]


def expert_for(env: gym.Env):

    return EXPERTS[env.spec.id](env)


def drive_to_grasp(env: gym.Env, seed: int) -> tuple[np.ndarray, object]:
    """Reset with ``seed`` and run the task's expert until it holds its body (3 steps after closing)."""
    obs, _ = env.reset(seed=seed)
    expert = expert_for(env)
    for _ in range(120):
        obs, *_ = env.step(expert(obs))
        if expert.phase not in ("above", "descend", "close"):
            return obs, expert
    raise AssertionError(f"{env.spec.id} seed {seed}: the expert did not grasp in 120 steps")


# ---- spaces and the observation ------------------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", list(TASKS))
def test_spaces_layout_and_defaults(env_id: str) -> None:
    control, actions, size, bodies = TASKS[env_id]
    env = gym.make(env_id)
    base = env.unwrapped
    try:
        assert base.control == control and base.has_gripper and base.reward_type == "dense"
        assert base.visual_detail == "simplified"  # the Panda tasks' level of detail
        assert env.action_space == gym.spaces.Box(-1.0, 1.0, (actions,), np.float32)
        assert env.observation_space.shape == (size,) and env.observation_space.dtype == np.float32
        layout = base.observation_layout
        terms = list(layout)
        expected = HEAD + [f"{b}_{part}" for b in bodies for part in PARTS]
        assert terms[:len(expected)] == expected
        spans = list(layout.values())
        assert spans[0].start == 0 and spans[-1].stop == size
        assert all(a.stop == b.start for a, b in zip(spans, spans[1:], strict=False))  # contiguous, in order
        low, high = env.observation_space.low, env.observation_space.high
        assert np.all(low[layout["ee_quat"]] == -1) and np.all(high[layout[f"{bodies[0]}_contacts"]] == 1)
        opening = layout["gripper_opening"]  # a gap between the fingers: never negative, no bound above
        assert (low[opening].tolist(), high[opening].tolist()) == ([0.0], [np.inf])
        assert [c.name for c in base.default_cameras()] == ["front", "side", "wrist"]
        obs, info = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert info["is_success"] is False and set(info) == {"is_success", *type(base).stage_weights}
        assert math.isclose(sum(type(base).stage_weights.values()), 1.0)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", list(TASKS))
def test_the_tasks_hand_the_base_env_s_options_on(env_id: str) -> None:
    """Options the tasks do not take themselves reach BulletEnv: ``render()`` draws at the size asked for."""
    env = gym.make(env_id, render_mode="rgb_array", render_width=64, render_height=48)
    try:
        env.reset(seed=0)
        assert env.render().shape == (48, 64, 3)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", list(TASKS))
def test_observation_terms_are_the_bodies_and_the_gripper(env_id: str) -> None:
    env = gym.make(env_id)
    base = env.unwrapped
    try:
        obs, _ = drive_to_grasp(env, seed=1)
        o = {term: obs[span] for term, span in base.observation_layout.items()}
        ee = p.getLinkState(base.panda, 11, computeLinkVelocity=1, computeForwardKinematics=1,
                            physicsClientId=base.client)
        np.testing.assert_array_equal(o["ee_pos"], np.float32(ee[4]))
        np.testing.assert_array_equal(o["ee_linvel"], np.float32(ee[6]))
        for body in TASKS[env_id][3]:
            pos, quat = base.body_pose(body)
            np.testing.assert_array_equal(o[f"{body}_pos"], np.float32(pos))
            np.testing.assert_array_equal(o[f"{body}_quat"], np.float32(quat))
            np.testing.assert_allclose(o[f"{body}_rel_pos"], pos - ee[4], atol=1e-6)
        held = TASKS[env_id][3][0]
        np.testing.assert_array_equal(o[f"{held}_contacts"], [1.0, 1.0])  # the expert holds it
        assert 0.015 < o["gripper_opening"][0] < 0.075
        if "target_rel_pos" in o:
            np.testing.assert_allclose(o["target_rel_pos"], o["target_pos"] - o["cube_pos"], atol=1e-6)
        if "peg_bottom_rel_pos" in o:
            np.testing.assert_allclose(o["peg_bottom_rel_pos"], o["peg_bottom_pos"] - o["hole_pos"], atol=1e-6)
    finally:
        env.close()


# ---- success and rewards, analytically -----------------------------------------------------------------------------

def made(env_id: str, reward_type: str = "dense") -> tuple[gym.Env, PandaManipulationEnv]:
    env = gym.make(env_id, reward_type=reward_type)
    env.reset(seed=0)
    return env, env.unwrapped


def dense(base: PandaManipulationEnv) -> float:
    """The dense reward from its definition: -1 + Σ weight × stage."""
    stages = base.stages()
    return -1.0 + sum(w * stages[k] for k, w in type(base).stage_weights.items())


def test_lift_succeeds_with_the_cube_10_cm_up() -> None:
    env, base = made("pixelrig/PandaLift-v0")
    sparse, sbase = made("pixelrig/PandaLift-v0", "sparse")
    try:
        for b in (base, sbase):
            b.set_body_pose("cube", (0.5, 0.0, CUBE_REST + 0.099))
        assert not base.is_success() and not sbase.is_success()
        assert sbase.reward() == -1.0
        ee = base.grasp_centre()
        assert base.stages() == {"reach": closeness(float(np.linalg.norm([0.5, 0.0, CUBE_REST + 0.099] - ee))),
                                 "grasp": 0.0, "lift": 0.0}  # not held: no lift credit
        assert base.reward() == pytest.approx(-1.0 + 0.25 * base.stages()["reach"])
        for b in (base, sbase):
            b.set_body_pose("cube", (0.5, 0.0, CUBE_REST + 0.101))  # the bottom 10.1 cm above the table
        assert base.is_success() and base.reward() == 0.0 and sbase.reward() == 0.0
        for e in (env, sparse):  # 25 cm up: after a step's fall (9 mm) still up, so the episode ends with 0
            e.unwrapped.set_body_pose("cube", (0.5, 0.0, CUBE_REST + 0.25))
            _, reward, terminated, _, info = e.step(np.zeros(4, np.float32))
            assert terminated and info["is_success"] and reward == 0.0
    finally:
        env.close()
        sparse.close()


def test_pick_place_succeeds_within_3_cm_of_the_target() -> None:
    env, base = made("pixelrig/PandaPickPlace-v0")
    try:
        target = base.target_pos.copy()
        base.set_body_pose("cube", target + [0.0, 0.031, 0.0])
        assert not base.is_success() and base.stages()["place"] == pytest.approx(closeness(0.031))
        assert base.reward() == pytest.approx(dense(base))
        base.set_body_pose("cube", target + [0.0, 0.029, 0.0])
        assert base.is_success() and base.reward() == 0.0
    finally:
        env.close()


def test_pick_place_targets_are_in_the_air_or_on_the_table_by_seed() -> None:
    """The target: x ∈ [0.40, 0.65], y ∈ [-0.20, 0.20] (the range filled, each seed its own), at least 0.10 m from
    the cube, on the table or 0.05-0.20 m higher about half the time; the green sphere drawn there (in this env's
    own physics client: another env is open, pybullet's default client may be that one)."""
    other = gym.make("pixelrig/PandaPickPlace-v0")
    env = gym.make("pixelrig/PandaPickPlace-v0")
    try:
        heights, xys = [], []
        for seed in range(40):
            obs, _ = env.reset(seed=seed)
            layout = env.unwrapped.observation_layout
            target, cube = obs[layout["target_pos"]], obs[layout["cube_pos"]]
            assert np.linalg.norm(target[:2] - cube[:2]) >= 0.10 - 1e-6
            heights.append(float(target[2]) - CUBE_REST)
            xys.append(env.unwrapped.target_pos[:2])
            np.testing.assert_allclose(env.unwrapped.body_pose("target")[0], env.unwrapped.target_pos, atol=1e-12)
        on_table = sum(abs(h) < 1e-6 for h in heights)
        assert 10 <= on_table <= 30, heights  # about half
        assert all(abs(h) < 1e-6 or 0.05 - 1e-6 <= h <= 0.20 + 1e-6 for h in heights)
        air = [h for h in heights if h > 1e-6]
        assert min(air) < 0.08 and max(air) > 0.17
        xys = np.array(xys)
        for axis, (lo, hi) in enumerate(((0.40, 0.65), (-0.20, 0.20))):
            # strictly inside: a continuous draw never lands on an end, a collapsed range always does
            assert lo < xys[:, axis].min() < lo + 0.2 * (hi - lo) and hi - 0.2 * (hi - lo) < xys[:, axis].max() < hi
    finally:
        env.close()
        other.close()


def stack_a_on_b(base: PandaManipulationEnv, offset=(0.0, 0.0, 0.0)) -> None:
    b = base.position("cube_b")
    base.set_body_pose("cube_a", b + [0.0, 0.0, 0.05] + np.asarray(offset), base.body_pose("cube_b")[1])


def test_stack_succeeds_with_a_resting_on_b_and_the_gripper_away() -> None:
    env, base = made("pixelrig/PandaStack-v0")
    try:
        stack_a_on_b(base)  # the gripper is open, 17 cm above: released
        assert base.on_b() and base.released() and base.is_success() and base.reward() == 0.0
        stack_a_on_b(base, (0.021, 0.0, 0.0))  # off by more than 2 cm
        assert not base.on_b() and not base.is_success()
        stack_a_on_b(base, (0.0, 0.0, 0.006))  # floating above B
        assert not base.is_success()
        stack_a_on_b(base)
        base.set_body_velocity("cube_a", (0.02, 0.0, 0.0), (0.0, 0.0, 0.0))  # not still
        assert not base.is_success()
        assert base.reward() == pytest.approx(dense(base)) and base.stages()["release"] == 1.0
    finally:
        env.close()


def test_stack_is_not_done_while_the_gripper_holds_a() -> None:
    """The expert puts A down on B and stops before letting go: A is on B, but the fingers still hold it."""
    env = gym.make("pixelrig/PandaStack-v0")
    base = env.unwrapped
    try:
        obs, expert = drive_to_grasp(env, seed=2)
        for _ in range(100):
            if expert.phase == "release":
                break
            obs, *_ = env.step(expert(obs))
        for _ in range(10):  # hold it there, closed
            obs, reward, terminated, _, info = env.step(np.array([0.0, 0.0, 0.0, -1.0], np.float32))
        assert base.on_b() and base.grasped("cube_a") and not base.released()
        assert not terminated and not info["is_success"] and -1.0 < reward < -0.1
    finally:
        env.close()


def test_peg_insert_succeeds_3_cm_down_inside_the_hole() -> None:
    env, base = made("pixelrig/PandaPegInsert-v0")
    try:
        hole, quat = base.hole_opening()
        down = hole + [0.0, 0.0, PEG_LENGTH / 2]
        base.set_body_pose("peg", down - [0.0, 0.0, 0.031], quat)  # its lower end 3.1 cm down, square to the hole
        depth, inside = base.depth()
        assert inside and depth == pytest.approx(0.031) and base.is_success() and base.reward() == 0.0
        base.set_body_pose("peg", down - [0.0, 0.0, 0.029], quat)
        assert not base.is_success() and base.stages()["insert"] == pytest.approx(0.029 / 0.03)
        assert base.reward() == pytest.approx(dense(base))
        beside = hole + quat_to_matrix(quat) @ [0.1, 0.0, 0.0]  # next to the block, standing on the table
        base.set_body_pose("peg", [*beside[:2], TABLE_TOP + PEG_LENGTH / 2], quat)
        depth, inside = base.depth()
        assert depth == pytest.approx(BLOCK_HEIGHT) and not inside and not base.is_success()
        assert base.stages()["insert"] == 0.0
    finally:
        env.close()


def test_the_hole_leaves_2_mm_each_side_of_the_peg() -> None:
    env, base = made("pixelrig/PandaPegInsert-v0")
    try:
        hole, quat = base.hole_opening()
        for shift, clear in ((0.0019, True), (0.0025, False)):
            base.set_body_pose("peg", hole + quat_to_matrix(quat) @ [shift, 0.0, PEG_LENGTH / 2 - 0.03], quat)
            points = p.getClosestPoints(base.body_id("peg"), base.body_id("hole"), 0.0, physicsClientId=base.client)
            assert (not points) == clear, (shift, [pt[8] for pt in points])
        assert HOLE_SIDE - base.peg_size[0] == pytest.approx(0.004)
    finally:
        env.close()


def test_the_peg_s_lower_end_is_found_whichever_way_up_it_stands() -> None:
    """``peg_bottom`` is the end nearer the table: standing on either end, and tilted either way."""
    env, base = made("pixelrig/PandaPegInsert-v0")
    try:
        centre = np.array([0.5, -0.1, TABLE_TOP + 0.2])
        for quat in ((0.0, 0.0, 0.0, 1.0), (1.0, 0.0, 0.0, 0.0), (0.0, math.sin(0.5), 0.0, math.cos(0.5)),
                     (0.0, math.sin(1.2), 0.0, math.cos(1.2))):  # upright, upside down, tilted 57 and 137 degrees
            base.set_body_pose("peg", centre, quat)
            ends = [centre + s * quat_to_matrix(quat)[:, 2] * PEG_LENGTH / 2 for s in (1, -1)]
            np.testing.assert_allclose(base.peg_bottom(), min(ends, key=lambda e: e[2]), atol=1e-12)
    finally:
        env.close()


def test_inside_the_hole_is_within_its_square_both_ways() -> None:
    """The peg's lower end counts as inside the hole within half the hole's side of its axis, across and along the
    block (1% inside: in; 1% outside: out), whatever the block's yaw."""
    env, base = made("pixelrig/PandaPegInsert-v0")
    try:
        hole, quat = base.hole_opening()
        frame = quat_to_matrix(quat)
        for axis in range(2):
            for scale, inside in ((0.99, True), (1.01, False), (-0.99, True), (-1.01, False)):
                shift = np.zeros(3)
                shift[axis], shift[2] = scale * HOLE_SIDE / 2, -0.01
                base.set_body_pose("peg", hole + frame @ shift + [0.0, 0.0, PEG_LENGTH / 2], quat)
                assert base.depth()[1] == inside, (axis, scale)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", list(TASKS))
def test_a_second_env_open_at_once_builds_the_same_bodies(env_id: str) -> None:
    """Two envs of a task open at once: the second's bodies have the first's shapes, sizes and colours, each made in
    its own env's world (a shape made in another env's world would be missing or another one)."""
    first, second = made(env_id), made(env_id)
    try:
        for name in first[1].body_ids():
            shapes = []
            for _, base in (first, second):
                body, c = base.body_id(name), base.client
                shapes.append(([v[2:8] for v in p.getVisualShapeData(body, physicsClientId=c)],
                               [s[2:5] for s in p.getCollisionShapeData(body, -1, physicsClientId=c)]))
            assert shapes[0] == shapes[1], name
    finally:
        first[0].close()
        second[0].close()


def test_every_quaternion_term_is_bounded_to_plus_minus_one() -> None:
    """A quaternion's components lie in [-1, 1]: every ``*_quat`` term's bounds in every manipulation task's
    observation space say so."""
    for env_id in TASKS:
        env = gym.make(env_id)
        try:
            space, layout = env.observation_space, env.unwrapped.observation_layout
            quats = [name for name in layout if name.endswith("_quat")]
            assert quats, env_id
            for name in quats:
                assert np.all(space.low[layout[name]] == -1.0) and np.all(space.high[layout[name]] == 1.0), name
        finally:
            env.close()


def test_the_dropped_object_settles_on_the_table_for_the_documented_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the first observation the object falls from DROP_HEIGHT for at least SETTLE_STEPS[0] physics steps,
    then until it is still (at most SETTLE_STEPS[1]): two of these seeds are still by the least, and settle for
    exactly that many. It then lies on the table: its box's bottom within 2 mm of the table (pybullet pads boxes by
    about 1 mm), touching it."""
    from pixelrig.tasks.pick_object import SETTLE_STEPS, PandaPickObjectEnv

    count = {"steps": 0}
    settled: list[int] = []
    real = p.stepSimulation

    def counted(*args: object, **kwargs: object) -> object:
        count["steps"] += 1
        return real(*args, **kwargs)

    class Counted(PandaPickObjectEnv):
        def start_episode(self) -> None:  # the settling, counted alone
            count["steps"] = 0
            super().start_episode()
            settled.append(count["steps"])

    monkeypatch.setattr(p, "stepSimulation", counted)
    env = Counted()
    try:
        for seed in (3, 4, 8):  # still after 51, 48 and 48 steps
            env.reset(seed=seed)
            low = p.getAABB(env.body_id("object"), physicsClientId=env.client)[0]
            assert low[2] - TABLE_TOP < 0.002 and env.still("object"), (seed, low)
            assert p.getContactPoints(env.body_id("object"), env.body_id("table"), physicsClientId=env.client)
    finally:
        env.close()
    assert all(SETTLE_STEPS[0] <= n <= SETTLE_STEPS[1] for n in settled) and min(settled) == SETTLE_STEPS[0], settled


def test_pick_object_succeeds_10_cm_above_where_it_settled() -> None:
    env, base = made("pixelrig/PandaPickObject-v0")
    try:
        rest = base.position("object")
        assert base.rest_height == rest[2] and base.still("object")  # settled before the first observation
        base.set_body_pose("object", rest + [0.0, 0.0, 0.099])
        assert not base.is_success()
        base.set_body_pose("object", rest + [0.0, 0.0, 0.101])
        assert base.is_success() and base.reward() == 0.0
    finally:
        env.close()


@pytest.mark.parametrize("env_id", list(TASKS))
def test_rewards_are_bounded_and_zero_exactly_on_success(env_id: str) -> None:
    """Random actions, then the expert: dense rewards in [-1, 0] and 0 only on success, sparse -1 or 0."""
    for reward_type in ("dense", "sparse"):
        env = gym.make(env_id, reward_type=reward_type)
        try:
            env.action_space.seed(0)
            obs, _ = env.reset(seed=0)
            expert = expert_for(env)
            rewards = []
            for t in range(env.spec.max_episode_steps):
                action = env.action_space.sample() if t < 10 else expert(obs)
                obs, reward, terminated, truncated, info = env.step(action)
                rewards.append(reward)
                assert (reward == 0.0) == info["is_success"] == terminated
                if terminated or truncated:
                    break
            assert info["is_success"], f"{env_id}: the expert did not finish after 10 random steps"
            r = np.array(rewards)
            if reward_type == "sparse":
                assert set(r.tolist()) == {-1.0, 0.0}
            else:
                assert np.all((-1.0 <= r) & (r <= 0.0)) and len(set(r.tolist())) > 10
        finally:
            env.close()


# ---- start poses: the seed, Randomization --------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", list(TASKS))
def test_the_seed_draws_the_start_and_the_same_seed_draws_it_again(env_id: str) -> None:
    env = gym.make(env_id)
    base = env.unwrapped
    try:
        firsts = {seed: env.reset(seed=seed)[0] for seed in (3, 4, 5)}
        again = env.reset(seed=3)[0]
        np.testing.assert_array_equal(again, firsts[3])
        for body in TASKS[env_id][3]:
            span = base.observation_layout[f"{body}_pos"]
            assert len({tuple(obs[span]) for obs in firsts.values()}) == 3, body
            if body in type(base).start_positions and body != "object":  # the object settles after its drop
                low, high = (np.array(v) for v in type(base).start_positions[body])
                assert np.all(low - 1e-6 <= firsts[3][span]) and np.all(firsts[3][span] <= high + 1e-6)
        drawn = base.randomization_values
        assert {b for b, *_ in drawn["body_position"]} >= {base.body_id(n) for n in type(base).start_positions}
    finally:
        env.close()


def test_randomization_widens_a_start_range_and_keeps_the_others() -> None:
    wide = Randomization(mass_scale=(0.9, 1.1), body_position={"cube_a": ((0.3, -0.3, CUBE_REST),
                                                                          (0.7, -0.25, CUBE_REST))})
    env = gym.make("pixelrig/PandaStack-v0", randomize=wide)
    base = env.unwrapped
    try:
        assert base.randomize.mass_scale == (0.9, 1.1)
        assert base.randomize.body_yaw["cube_a"] == (-math.pi, math.pi)  # the task's own, kept
        for seed in range(5):
            env.reset(seed=seed)
            a, b = base.position("cube_a"), base.position("cube_b")
            assert -0.3 <= a[1] <= -0.25 and 0.06 <= b[1] <= 0.18
        assert base.randomization_values["mass"]
    finally:
        env.close()


def test_pick_object_chooses_the_object_by_seed() -> None:
    env = gym.make("pixelrig/PandaPickObject-v0")
    base = env.unwrapped
    try:
        names = []
        for seed in range(8):
            env.reset(seed=seed)
            names.append(base.object_name)
            shape = p.getCollisionShapeData(base.body_id("object"), -1, physicsClientId=base.client)[0]
            assert shape[4].decode().endswith(f"/{base.object_name}_hull.obj")  # the world holds that object
        assert len(set(names)) >= 5, names
        env.reset(seed=3)
        assert base.object_name == names[3]
    finally:
        env.close()


def test_an_object_s_convex_hull_is_written_whole_into_a_fresh_cache(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """On a cache miss the object's one-hull URDF and its hull mesh are written into the cache folder, no temporary
    file left beside them; the hull's vertices are the object's own, and the URDF loads with that hull."""
    from pixelrig.tasks import pick_object

    monkeypatch.setenv("PIXELRIG_CACHE_DIR", str(tmp_path))
    pick_object.convex_object_file.cache_clear()
    try:
        urdf = pick_object.convex_object_file(OBJECTS[0])
        assert urdf.is_relative_to(tmp_path) and urdf.is_file()
        folder = urdf.parent
        assert sorted(f.name for f in folder.iterdir()) == sorted([urdf.name, f"{OBJECTS[0]}_hull.obj"])
        hull = np.array([line.split()[1:] for line in (folder / f"{OBJECTS[0]}_hull.obj").read_text().splitlines()
                         if line.startswith("v ")], dtype=np.float64)
        own = {tuple(v) for v in pick_object._vertices(OBJECTS[0])}
        assert len(hull) >= 4 and all(tuple(v) in own for v in hull)
        client = p.connect(p.DIRECT)
        try:
            body = p.loadURDF(str(urdf), physicsClientId=client)
            assert len(p.getCollisionShapeData(body, -1, physicsClientId=client)) == 1
        finally:
            p.disconnect(client)
    finally:
        pick_object.convex_object_file.cache_clear()


def test_the_objects_are_the_ones_that_fit_the_hand_and_stand_still() -> None:
    """OBJECTS is derived again from all 1,000 random_urdfs: the size test, then the standing test."""
    folder = os.path.join(pybullet_data.getDataPath(), "random_urdfs")
    names = sorted(n for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)))
    assert len(names) == 1000
    fitting = [n for n in names if fits_the_hand(n)]
    assert len(fitting) == 355
    decoy = p.connect(p.DIRECT)  # another world first: the standing test must run in the client it is given
    client = p.connect(p.DIRECT)
    try:
        p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        p.setGravity(0, 0, -9.81, physicsClientId=client)
        p.loadURDF("plane.urdf", physicsClientId=client)
        assert tuple(n for n in fitting if stands_still(n, client)) == OBJECTS
        assert p.getNumBodies(physicsClientId=client) == 1 and p.getNumBodies(physicsClientId=decoy) == 0
    finally:
        p.disconnect(client)
        p.disconnect(decoy)
    widest, narrowest, height, _ = np.array([object_extents(n) for n in OBJECTS]).T
    assert widest.max() <= 0.065 and narrowest.min() >= 0.03 and 0.03 <= height.min() <= height.max() <= 0.07
    assert object_extents("000", scale=1.0)[0] > 0.08  # a file as it is: wider than the open hand


# ---- snapshots -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("env_id", list(TASKS))
def test_snapshots_mid_grasp_restore_the_task_bit_exactly(env_id: str) -> None:
    """Mid-grasp, a snapshot; the expert's next 15 steps after restoring (in place, rebuilt, and into a fresh env
    reset with another seed, from bytes) equal the first run's, observations, rewards and infos, bit for bit."""
    env, fresh = gym.make(env_id), gym.make(env_id)
    try:
        obs, expert = drive_to_grasp(env, seed=6)
        snap = snapshot(env)
        task = {name: getattr(env.unwrapped, name) for name in env.unwrapped.declared_state()}
        actions, o = [], obs
        for _ in range(15):
            actions.append(expert(o))
            o = env.step(actions[-1])[0]

        def run(e: gym.Env) -> list:
            return [e.step(a) for a in actions] + [physics_state(e.unwrapped.client)]

        restore(env, snap)
        assert_trees_equal({n: getattr(env.unwrapped, n) for n in task}, task)
        assert_restores_exactly(env, fresh, snap, run, fresh_seed=11)
    finally:
        env.close()
        fresh.close()


# ---- bad options ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    ({"reward_type": "sometimes"}, "PandaLiftEnv: reward_type='sometimes' is not a reward type: pass "
                                   "reward_type='dense' (staged progress, in [-1, 0]) or reward_type='sparse'"),
    ({"gripper": None}, "PandaLiftEnv: gripper=None: the task needs the Panda's fingers; pass gripper='panda'"),
    ({"control": "ik"}, "control must be one of ('pybullet_ik', 'ee_delta_pos', 'ee_delta_pose', 'ee_pose')"),
    ({"randomize": Randomization(body_position={"ball": ((0, 0, 0), (1, 1, 1))})},
     "Randomization(body_position=...) names bodies ['ball'] that this env does not have"),
])
def test_bad_options_are_refused_by_name(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        gym.make("pixelrig/PandaLift-v0", **kwargs)


def test_under_pixel_obs_the_state_comes_with_the_pixels() -> None:
    env = PixelObs(gym.make("pixelrig/PandaStack-v0"))
    try:
        obs, _ = env.reset(seed=0)
        assert obs["state"].shape == (50,) and obs["front/rgb"].shape == (84, 84, 3)
        assert {k.split("/")[0] for k in obs if "/" in k} == {"front", "side", "wrist"}
    finally:
        env.close()


def test_rotations_of_the_start_keep_cubes_flat() -> None:
    env = gym.make("pixelrig/PandaLift-v0")
    try:
        yaws = []
        for seed in range(6):
            env.reset(seed=seed)
            quat = env.unwrapped.body_pose("cube")[1]
            np.testing.assert_allclose(quat_to_matrix(quat)[:, 2], [0, 0, 1], atol=1e-9)  # upright, any heading
            yaws.append(float(np.arctan2(*quat_to_matrix(quat)[[1, 0], 0])))
        assert np.ptp(yaws) > 1.0
    finally:
        env.close()


@pytest.mark.parametrize("env_id, cubes", [("pixelrig/PandaLift-v0", {"cube": "red"}),
                                           ("pixelrig/PandaPickPlace-v0", {"cube": "red"}),
                                           ("pixelrig/PandaStack-v0", {"cube_a": "red", "cube_b": "blue"})])
def test_the_bodies_are_the_documented_ones(env_id: str, cubes: dict[str, str]) -> None:
    """Red (A) and blue (B) 5 cm, 0.1 kg cubes; PickPlace's target a green sphere 3 cm across, drawn only (no
    collision, no mass: it stays where it is put). Another env is open, so the bodies are made in this env's own
    physics client, not pybullet's default one."""
    from pixelrig.envs.manipulation import BLUE, GREEN, RED

    colours = {"red": RED, "blue": BLUE}
    other = gym.make(env_id)
    env = gym.make(env_id)
    base = env.unwrapped
    c = base.client
    try:
        env.reset(seed=3)
        for name, colour in cubes.items():
            body = base.body_id(name)
            (look,) = p.getVisualShapeData(body, physicsClientId=c)
            assert np.allclose(look[7], colours[colour]), (name, look[7])
            (shape,) = p.getCollisionShapeData(body, -1, physicsClientId=c)
            assert np.allclose(shape[3], [0.05] * 3) and p.getDynamicsInfo(body, -1, physicsClientId=c)[0] == 0.1
        if env_id == "pixelrig/PandaPickPlace-v0":
            target = base.body_id("target")
            (look,) = p.getVisualShapeData(target, physicsClientId=c)
            assert look[2] == p.GEOM_SPHERE and look[3][0] == 0.015 and np.allclose(look[7], GREEN)
            assert p.getCollisionShapeData(target, -1, physicsClientId=c) == ()
            assert p.getDynamicsInfo(target, -1, physicsClientId=c)[0] == 0.0
            for _ in range(5):
                env.step(np.zeros(4, np.float32))
            np.testing.assert_allclose(base.body_pose("target")[0], base.target_pos, atol=1e-12)
    finally:
        env.close()
        other.close()
