"""The Panda tasks' documented constants, read from the documentation and checked against what the envs do: episode
lengths, success thresholds (each checked on both sides, in a direction where a per-axis or a one-sided check would
differ from the documented distance), Stack's every condition, the dense reward's stage weights, and the start
ranges. The expected numbers come from the text a user reads, never from the task classes' own tables."""

from __future__ import annotations

import math
import re

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pixelrig  # noqa: F401 (registers the ids)

from .documented import doc_match, number, table_rows

TASK_IDS = ["pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0", "pixelrig/PandaStack-v0",
            "pixelrig/PandaPegInsert-v0", "pixelrig/PandaPickObject-v0"]
CM = 0.01


def task_row(env_id: str) -> list[str]:
    """The task table's row of ``env_id``: id, task, success, steps."""
    rows = [r for r in table_rows(re.escape(f"`{env_id}`")) if len(r) == 4 and r[3].isdigit()]
    assert len(rows) == 1, rows
    return rows[0]


def documented_weights() -> dict[str, dict[str, float]]:
    """{task short name: {stage: weight}} from the stages table (``| Lift, PickObject | `reach` (0.25) ... |``)."""
    out: dict[str, dict[str, float]] = {}
    for names, stages in table_rows(r"(Lift|PickPlace|Stack|PegInsert|PickObject)(, \w+)*"):
        weights = {m[0]: float(m[1]) for m in re.findall(r"`(\w+)` \((\d+(?:\.\d+)?)\)", stages)}
        for name in names.split(", "):
            out[name] = weights
    return out


def made(env_id: str, reward_type: str = "dense") -> tuple[gym.Env, object]:
    env = gym.make(env_id, reward_type=reward_type)
    env.reset(seed=0)
    return env, env.unwrapped


def table_top(base) -> float:
    """The table's top, from a cube resting on it after the reset and the documented cube size."""
    side = number(doc_match(r"lift a (\d+) cm, [\d.]+ kg cube")[1]) * CM
    name = "cube" if "cube" in base.body_ids() else "cube_a"
    return float(base.position(name)[2]) - side / 2


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_episode_lengths_are_the_documented_steps(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        assert env.spec.max_episode_steps == int(task_row(env_id)[3])
    finally:
        env.close()


def test_lift_succeeds_at_the_documented_height_and_not_below() -> None:
    height = number(doc_match(r"its bottom ≥ (\d+) cm above the table")[1]) * CM
    side = number(doc_match(r"lift a (\d+) cm, [\d.]+ kg cube")[1]) * CM
    env, base = made("pixelrig/PandaLift-v0")
    try:
        top = table_top(base)
        for above, success in ((-0.001, False), (0.001, True)):
            base.set_body_pose("cube", (0.5, 0.05, top + side / 2 + height + above))
            assert base.is_success() is success, above
    finally:
        env.close()


def test_pick_place_succeeds_within_the_documented_distance_in_any_direction() -> None:
    within = number(doc_match(r"its centre within (\d+) cm of the target")[1]) * CM
    env, base = made("pixelrig/PandaPickPlace-v0")
    try:
        target = base.target_pos.copy()
        diagonal = np.array([1.0, -1.0, 1.0]) / math.sqrt(3)  # each axis well inside the distance: a per-axis
        for scale, success in ((0.98, True), (1.02, False)):  # check would call 1.02 x a success
            base.set_body_pose("cube", target + diagonal * within * scale)
            assert base.is_success() is success, scale
    finally:
        env.close()


def stack_documented() -> dict[str, float]:
    m = doc_match(r"A on B \(within (\d+) cm across, (\d+) mm in height\), released \(gripper open > (\d+) cm, "
                  r"touching nothing of A, its centre ≥ (\d+) cm from A\), both still \(< (\d+) cm/s, "
                  r"< ([\d.]+) rad/s\)")
    return {"across": float(m[1]) * CM, "height": float(m[2]) / 1000, "open": float(m[3]) * CM,
            "clearance": float(m[4]) * CM, "speed": float(m[5]) * CM, "spin": float(m[6])}


def put_a_on_b(base, offset=(0.0, 0.0, 0.0)) -> None:
    b = base.position("cube_b")
    side = number(doc_match(r"lift a (\d+) cm, [\d.]+ kg cube")[1]) * CM
    base.set_body_pose("cube_a", b + [0.0, 0.0, side] + np.asarray(offset), base.body_pose("cube_b")[1])


def test_stack_on_b_is_the_documented_distance_across_and_height() -> None:
    doc = stack_documented()
    env, base = made("pixelrig/PandaStack-v0")
    try:
        put_a_on_b(base)
        assert base.is_success()
        diagonal = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)
        for scale, ok in ((0.97, True), (1.03, False)):  # across: the distance, not each axis
            put_a_on_b(base, diagonal * doc["across"] * scale)
            assert base.on_b() is ok and base.is_success() is ok, scale
        for dz in (doc["height"], -doc["height"]):  # in height: both ways
            for scale, ok in ((0.9, True), (1.1, False)):
                put_a_on_b(base, (0.0, 0.0, dz * scale))
                assert base.on_b() is ok and base.is_success() is ok, (dz, scale)
            # near both limits at once: across is in the table plane only, the height not part of it
            put_a_on_b(base, diagonal * doc["across"] * 0.99 + [0.0, 0.0, dz * 0.9])
            assert base.on_b() and base.is_success(), dz
    finally:
        env.close()


def finger_joints(base) -> list[int]:
    return [j for j in range(p.getNumJoints(base.panda, physicsClientId=base.client))
            if p.getJointInfo(base.panda, j, physicsClientId=base.client)[1].decode().startswith("panda_finger")]


def set_fingers(base, q: float) -> None:
    """Both fingers at ``q`` (m of each one's travel), without stepping."""
    for j in finger_joints(base):
        p.resetJointState(base.panda, j, q, physicsClientId=base.client)


def test_stack_released_is_the_documented_opening_and_clearance() -> None:
    doc = stack_documented()
    env, base = made("pixelrig/PandaStack-v0")
    try:
        put_a_on_b(base)
        assert base.released()
        gaps = {}
        for q in np.linspace(0.025, 0.035, 41):  # each finger's travel; find the positions around the threshold
            set_fingers(base, q)
            gaps[float(q)] = base.opening()
        below = max((q for q, g in gaps.items() if g < doc["open"] - 5e-4), key=lambda q: gaps[q])
        above = min((q for q, g in gaps.items() if g > doc["open"] + 5e-4), key=lambda q: gaps[q])
        for q, ok in ((below, False), (above, True)):
            set_fingers(base, q)
            assert base.released() is ok and base.is_success() is ok, (q, gaps[q])
        set_fingers(base, 0.04)  # wide open again
        # A right under the gripper centre (its fingers open around it), B under A, nothing touching
        centre = base.grasp_centre()
        side = number(doc_match(r"lift a (\d+) cm, [\d.]+ kg cube")[1]) * CM
        quat = base.body_pose("cube_b")[1]
        for scale, ok in ((0.96, False), (1.04, True)):
            a = centre - [0.0, 0.0, doc["clearance"] * scale]
            base.set_body_pose("cube_b", a - [0.0, 0.0, side], quat)
            base.set_body_pose("cube_a", a, quat)
            assert base.on_b() and not base.touched("cube_a")
            assert base.released() is ok and base.is_success() is ok, scale
    finally:
        env.close()


def test_stack_touching_nothing_of_a_is_the_robot_s_touch() -> None:
    """"Touching nothing of A" (the README's release) is the robot's touch, as pybullet detects contacts now: B under
    A, or the table, touches A, and the robot closing on another body touches something, and A is still released;
    the robot on A is not."""
    env, base = made("pixelrig/PandaStack-v0")
    c = base.client
    try:
        put_a_on_b(base)
        env.step(np.array([0.0, 0.0, 0.0, 1.0], np.float32))  # stay, gripper open: A settles on B
        a, b = base.body_id("cube_a"), base.body_id("cube_b")
        assert p.getContactPoints(bodyA=a, bodyB=b, physicsClientId=c), "B touches A"
        assert not base.touched("cube_a") and base.released() and base.is_success()
        beside_b = base.position("cube_b") + [0.0, 0.12, 0.0]  # A on the table beside B
        base.set_body_pose("cube_a", beside_b, base.body_pose("cube_a")[1])
        env.step(np.array([0.0, 0.0, 0.0, 1.0], np.float32))
        assert [pt for pt in p.getContactPoints(physicsClientId=c) if a in pt[1:3] and b not in pt[1:3]], \
            "the table touches A"
        assert not base.touched("cube_a")
        put_a_on_b(base)
        ball = p.createCollisionShape(p.GEOM_SPHERE, radius=0.05, physicsClientId=c)
        other = p.createMultiBody(0.0, ball, -1, base.grasp_centre().tolist(), physicsClientId=c)
        p.performCollisionDetection(physicsClientId=c)
        assert base.finger_contacts(other).tolist() == [1.0, 1.0], "both fingers touch the ball"
        assert not base.touched("cube_a") and base.released() and base.is_success()
        assert base.finger_contacts(a).tolist() == [0.0, 0.0]  # the observation's contact flags: A's own
        p.removeBody(other, physicsClientId=c)
        base.set_body_pose("cube_a", base.grasp_centre(), base.body_pose("cube_a")[1])
        set_fingers(base, 0.02)  # the fingers closed on A (a 4 cm gap on a 5 cm cube)
        p.performCollisionDetection(physicsClientId=c)
        assert base.touched("cube_a") and not base.released()
    finally:
        env.close()


@pytest.mark.parametrize("body", ["cube_a", "cube_b"])
def test_stack_needs_both_cubes_still_by_the_documented_speeds(body: str) -> None:
    doc = stack_documented()
    env, base = made("pixelrig/PandaStack-v0")
    try:
        put_a_on_b(base)
        slant = np.array([0.6, -0.8, 0.0])  # a unit vector whose components are each below it
        for scale, ok in ((0.95, True), (1.05, False)):
            base.set_body_velocity(body, slant * doc["speed"] * scale, (0.0, 0.0, 0.0))
            assert base.is_success() is ok, ("speed", scale)
            base.set_body_velocity(body, (0.0, 0.0, 0.0), slant[[2, 0, 1]] * doc["spin"] * scale)
            assert base.is_success() is ok, ("spin", scale)
            base.set_body_velocity(body, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    finally:
        env.close()


def test_stack_reads_each_env_s_own_world() -> None:
    """Two stacking envs in one process: a cube moving in one is not still, the same cube at rest in the other is; the
    fingers closed on A in one touch and grasp it, A away from them in the other does not (each env reads its own
    pybullet world, not pybullet's default one)."""
    envs = [made("pixelrig/PandaStack-v0") for _ in range(2)]
    try:
        for moving in range(2):
            for i, (_, base) in enumerate(envs):
                base.set_body_velocity("cube_a", (0.5, 0.0, 0.0) if i == moving else (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
            assert [base.still("cube_a") for _, base in envs] == [i != moving for i in range(2)]
        for holding in range(2):
            for i, (_, base) in enumerate(envs):
                put_a_on_b(base)
                if i == holding:
                    base.set_body_pose("cube_a", base.grasp_centre(), base.body_pose("cube_a")[1])
                set_fingers(base, 0.02)  # closed on A where it is there (a 4 cm gap on a 5 cm cube)
                p.performCollisionDetection(physicsClientId=base.client)
            assert [base.touched("cube_a") for _, base in envs] == [i == holding for i in range(2)]
            assert [base.grasped("cube_a") for _, base in envs] == [i == holding for i in range(2)]
    finally:
        for env, _ in envs:
            env.close()


def documented_stages(env_id: str, o: dict[str, np.ndarray], rest: float) -> dict[str, float]:
    """Each stage as the stages table and the observation's documented terms define it (``o``: the observation by
    term; ``rest``: the height the body's centre started at). Distances enter as ``1 - tanh(k d)``."""
    k = float(doc_match(r"Distances enter as `1 - tanh\((\d+) d\)`")[1])
    close = lambda d: 1.0 - math.tanh(k * float(np.linalg.norm(d)))  # noqa: E731
    body = {"pixelrig/PandaStack-v0": "cube_a", "pixelrig/PandaPegInsert-v0": "peg",
            "pixelrig/PandaPickObject-v0": "object"}.get(env_id, "cube")
    grasp = float(np.all(o[f"{body}_contacts"] == 1.0))  # both fingers touch it
    stages = {"reach": close(o[f"{body}_rel_pos"]), "grasp": grasp}
    if env_id == "pixelrig/PandaPickObject-v0":  # reach: to the middle of the object's box
        stages["reach"] = close((o["object_aabb"][:3] + o["object_aabb"][3:]) / 2 - o["ee_pos"])
    if env_id in ("pixelrig/PandaLift-v0", "pixelrig/PandaPickObject-v0"):
        lift = number(doc_match(r"`lift` \(0.5\) its rise over (\d+) cm")[1]) * CM
        stages["lift"] = grasp * float(np.clip((o[f"{body}_pos"][2] - rest) / lift, 0.0, 1.0))
    elif env_id == "pixelrig/PandaPickPlace-v0":
        stages["place"] = close(o["target_rel_pos"])
    elif env_id == "pixelrig/PandaStack-v0":
        stages["align"] = close(o["cube_a_pos"] - o["target_pos"])  # target_pos: where A's centre rests on B
        doc, off = stack_documented(), o["cube_a_pos"] - o["target_pos"]
        on_b = np.linalg.norm(off[:2]) < doc["across"] and abs(off[2]) < doc["height"]
        released = (o["gripper_opening"][0] > doc["open"] and not o["cube_a_contacts"].any()  # the fingers: the
                    and np.linalg.norm(o["cube_a_rel_pos"]) >= doc["clearance"])  # links that come near A
        stages["release"] = float(on_b and released)
    elif env_id == "pixelrig/PandaPegInsert-v0":
        m = doc_match(r"a 2 × 2 × 10 cm peg into a square hole with (\d+) mm of clearance each side")
        half_hole = 0.01 + float(m[1]) / 1000
        depth = number(doc_match(r"`insert` \(0.3\) its depth over (\d+) cm")[1]) * CM
        x, y, z, w = o["hole_quat"].astype(np.float64)
        rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        offset = rot.T @ o["peg_bottom_rel_pos"]  # the lower end in the block's axes, from the opening
        inside = float(np.all(np.abs(offset[:2]) < half_hole))
        stages["align"] = close(o["peg_bottom_rel_pos"])
        stages["insert"] = inside * float(np.clip(-offset[2] / depth, 0.0, 1.0))
    return stages


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_the_dense_reward_is_the_documented_weighted_stages(env_id: str) -> None:
    """From states along a random, then an expert episode: -1 + Σ weight × stage with the documented weights, each
    stage as the stages table defines it, computed from the observation's documented terms."""
    from pixelrig.experts import EXPERTS

    short = env_id.split("/")[1].removeprefix("Panda").removesuffix("-v0")
    weights = documented_weights()[short]
    assert math.isclose(sum(weights.values()), 1.0)
    env = gym.make(env_id)
    try:
        obs, info = env.reset(seed=1)
        assert set(info) == {"is_success", *weights}
        layout = env.unwrapped.observation_layout
        body = next(t for t in layout if t.endswith("_pos") and t != "ee_pos")
        rest = float(obs[layout[body]][2])
        expert = EXPERTS[env_id](env)
        env.action_space.seed(1)
        checked, rewards, seen = 0, set(), {k: set() for k in weights}
        for t in range(env.spec.max_episode_steps):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample() if t < 5 else expert(obs))
            stages = {k: info[k] for k in weights}
            o = {term: obs[span] for term, span in layout.items()}
            assert stages == pytest.approx(documented_stages(env_id, o, rest), abs=2e-5), t  # float32 terms
            if not info["is_success"]:  # on success the reward is 0, the stages are still reported
                assert reward == pytest.approx(-1.0 + sum(w * stages[k] for k, w in weights.items()), abs=1e-12)
                checked += 1
                rewards.add(round(reward, 6))
                for k, v in stages.items():
                    seen[k].add(round(v, 3))
            if terminated or truncated:
                break
        assert checked > 10 and len(rewards) > 5  # states that told the weights apart
        assert {1.0, 0.0} <= seen["grasp"] and all(len(v) > 1 for k, v in seen.items() if k != "release"), seen
    finally:
        env.close()


def test_closeness_is_the_documented_curve() -> None:
    """"Distances enter as 1 - tanh(10 d) (0.76 at 1 cm, 0.24 at 10 cm)": PickPlace's place stage, the cube put
    1 and 10 cm from the target."""
    m = doc_match(r"Distances enter as `1 - tanh\((\d+) d\)` \(([\d.]+) at 1 cm, ([\d.]+) at 10 cm\)")
    k, at1, at10 = float(m[1]), float(m[2]), float(m[3])
    env, base = made("pixelrig/PandaPickPlace-v0")
    try:
        target = base.target_pos.copy()
        for d, documented in ((0.01, at1), (0.10, at10)):
            base.set_body_pose("cube", target + [0.0, d, 0.0])
            assert base.stages()["place"] == pytest.approx(1 - math.tanh(k * d), abs=1e-9)
            assert base.stages()["place"] == pytest.approx(documented, abs=0.005)
    finally:
        env.close()


_LIFT: dict[str, object] = {}


def lift_env():
    """One PandaLift env for the property test below (made once: Hypothesis calls the test many times)."""
    if not _LIFT:
        _LIFT["env"], _LIFT["base"] = made("pixelrig/PandaLift-v0")
        _LIFT["sparse"] = made("pixelrig/PandaLift-v0", "sparse")[1]
    return _LIFT["base"], _LIFT["sparse"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=st.floats(0.35, 0.65), y=st.floats(-0.2, 0.2), rise=st.floats(-0.0, 0.3))
def test_lift_rewards_for_any_cube_position(x: float, y: float, rise: float) -> None:
    """Wherever the cube is put: dense in [-1, 0], 0 exactly on success; sparse -1 or 0 with the same success; the
    lift stage is 0 while the cube is not grasped (the documented 'while grasped')."""
    base, sparse = lift_env()
    top = table_top(base) if "top" not in _LIFT else _LIFT["top"]
    _LIFT["top"] = top
    for b in (base, sparse):
        b.set_body_pose("cube", (x, y, top + 0.025 + rise))
    success = base.is_success()
    assert success == sparse.is_success()
    reward = base.reward()
    assert -1.0 <= reward <= 0.0 and (reward == 0.0) == success
    assert sparse.reward() == (0.0 if success else -1.0)
    stages = base.stages()
    assert all(0.0 <= v <= 1.0 for v in stages.values())
    if not base.grasped("cube"):
        assert stages["lift"] == 0.0 and stages["grasp"] == 0.0


def start_ranges() -> dict[str, tuple[tuple[float, float], tuple[float, float]]]:
    """{task: ((x lo, x hi), (y lo, y hi))} of the first body, from the "Starts" paragraph."""
    rng = r"x ∈ \[([\d.-]+), ([\d.-]+)\], y ∈ \[([\d.-]+), ([\d.-]+)\]"
    lift = doc_match(r"Lift, PickPlace: the cube at " + rng)
    stack = doc_match(r"Stack: A at y ∈ \[([\d.-]+), ([\d.-]+)\], B at y ∈ \[([\d.-]+), ([\d.-]+)\]")
    peg = doc_match(r"PegInsert: the peg standing at " + rng)
    xy = lambda m: ((float(m[1]), float(m[2])), (float(m[3]), float(m[4])))  # noqa: E731
    return {"pixelrig/PandaLift-v0": xy(lift), "pixelrig/PandaPickPlace-v0": xy(lift),
            "pixelrig/PandaPegInsert-v0": xy(peg),
            "pixelrig/PandaStack-v0": ((float(lift[1]), float(lift[2])), (float(stack[1]), float(stack[2]))),
            "stack_b": ((float(lift[1]), float(lift[2])), (float(stack[3]), float(stack[4])))}


@pytest.mark.parametrize("env_id", ["pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0", "pixelrig/PandaStack-v0",
                                    "pixelrig/PandaPegInsert-v0"])
def test_start_positions_fill_the_documented_ranges(env_id: str) -> None:
    """Over 40 seeds the first body's start lies in the documented x-y range and reaches near both ends of it."""
    ranges = start_ranges()
    body = {"pixelrig/PandaStack-v0": "cube_a", "pixelrig/PandaPegInsert-v0": "peg"}.get(env_id, "cube")
    env = gym.make(env_id)
    try:
        xys = [env.unwrapped.position(body)[:2] for seed in range(40) if env.reset(seed=seed)]
        bodies = {body: np.array(xys)}
        if env_id == "pixelrig/PandaStack-v0":
            bodies["cube_b"] = np.array([env.unwrapped.position("cube_b")[:2] for seed in range(40)
                                         if env.reset(seed=seed)])
        for name, pts in bodies.items():
            (x0, x1), (y0, y1) = ranges["stack_b" if name == "cube_b" else env_id]
            for axis, (lo, hi) in enumerate(((x0, x1), (y0, y1))):
                assert lo - 1e-6 <= pts[:, axis].min() and pts[:, axis].max() <= hi + 1e-6, (name, axis)
                span = hi - lo
                assert pts[:, axis].min() < lo + 0.2 * span and pts[:, axis].max() > hi - 0.2 * span, (name, axis)
    finally:
        env.close()


def test_peg_and_block_are_the_documented_bodies() -> None:
    """PegInsert's docstring: a peg 2 × 2 × 10 cm, 0.05 kg, friction 1, orange, standing on its end; a block
    12 × 12 × 5 cm, grey, fixed (no mass), four boxes drawn where they collide, standing on the table."""
    from pixelrig.envs.panda import TABLE_TOP
    from pixelrig.tasks.peg_insert import PandaPegInsertEnv

    doc = re.sub(r"\s+", " ", PandaPegInsertEnv.__doc__)
    m = re.search(r"a peg \((\d+) × (\d+) × (\d+) cm, ([\d.]+) kg, friction (\d+), orange\) standing on its end, "
                  r"and a block \((\d+) × (\d+) × (\d+) cm, grey, fixed to the table\)", doc)
    assert m, "PandaPegInsertEnv's docstring no longer describes the bodies as the test reads them"
    peg_size, mass, friction = np.array([float(v) for v in m.group(1, 2, 3)]) * CM, float(m[4]), float(m[5])
    block_size = np.array([float(v) for v in m.group(6, 7, 8)]) * CM
    env, base = made("pixelrig/PandaPegInsert-v0")
    c = base.client
    try:
        peg, block = base.body_id("peg"), base.body_id("hole")
        assert p.getDynamicsInfo(peg, -1, physicsClientId=c)[:2] == (mass, friction)
        (shape,) = p.getCollisionShapeData(peg, -1, physicsClientId=c)
        assert shape[2] == p.GEOM_BOX and np.allclose(shape[3], peg_size)
        (look,) = p.getVisualShapeData(peg, physicsClientId=c)
        assert np.allclose(look[3], peg_size) and look[7][0] > look[7][1] > look[7][2]  # orange
        assert base.position("peg")[2] == pytest.approx(TABLE_TOP + peg_size[2] / 2)  # standing on its end
        assert p.getDynamicsInfo(block, -1, physicsClientId=c)[0] == 0.0  # fixed
        walls = p.getCollisionShapeData(block, -1, physicsClientId=c)
        looks = p.getVisualShapeData(block, physicsClientId=c)
        assert len(walls) == len(looks) == 4
        for wall, look in zip(walls, looks, strict=True):  # each wall drawn where it collides, grey
            assert wall[2] == look[2] == p.GEOM_BOX and np.allclose(wall[3], look[3]) and np.allclose(wall[5], look[5])
            assert look[7][0] == look[7][1] and abs(look[7][2] - look[7][0]) < 0.1
            assert 0.2 < look[7][0] < 0.8  # grey, not the default white
        quat = base.body_pose("hole")[1]
        base.set_body_pose("hole", base.position("hole"), (0.0, 0.0, 0.0, 1.0))  # square to the axes
        low, high = p.getAABB(block, physicsClientId=c)
        assert np.allclose(np.subtract(high, low), block_size, atol=1e-9) and low[2] == pytest.approx(TABLE_TOP)
        base.set_body_pose("hole", base.position("hole"), quat)
    finally:
        env.close()
