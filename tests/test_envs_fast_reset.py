"""Fast resets are exact: an env that starts its episodes from its kept just-built world (``BulletEnv.reset``'s fast
path) gives, bit for bit, what a fresh env gives for the same seed and actions, whatever ran before.

Env A runs episodes one after another (the expert for the Panda tasks, so that episodes end in contact: a grasp,
a stack; random actions elsewhere), env B is a fresh env per seed. Both get the same actions; the reset's
observation and info, then every step's observation, reward, flags, info and the whole physics state (every
body's base pose and velocity, every joint's state, every contact point) must be equal bitwise. Also with physics
randomisation and looks, after ``pixelrig.restore`` of another episode's snapshot, for snapshots' bytes, and
against A itself with fast resets turned off. The default suite runs a few seeds per id; ``-m slow`` runs 20.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig
from pixelrig.envs import Randomization
from pixelrig.experts import EXPERTS

STEPS = 30
"""Steps compared after each reset."""

TAIL = 120
"""At most this many more steps A takes after the compared ones (the expert's, to end the episode in contact)."""

ROBOT_FILES = ("kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "mjcf/half_cheetah.xml")

BUNDLED = sorted(i for i in gym.registry if i.startswith("pixelrig/") and i != "pixelrig/Robot-v0")
CASES = [(i, {}) for i in BUNDLED] + [("pixelrig/Robot-v0", {"source": f}) for f in ROBOT_FILES]
PHYSICS = Randomization(mass_scale=(0.7, 1.3), lateral_friction=(0.5, 1.2), restitution=(0.0, 0.2))


def physics_state(env: gym.Env, contacts_in_order: bool = True) -> list[Any]:
    """Every body's base pose and velocity, every joint's state and every contact point, as plain numbers.

    ``contacts_in_order=False`` sorts the contact points: pybullet lists them in its manifold array's order, which a
    restore into another world changes (with or without fast resets) while the points stay the same."""
    c = env.unwrapped.client
    out: list[Any] = []
    for i in range(p.getNumBodies(physicsClientId=c)):
        b = p.getBodyUniqueId(i, physicsClientId=c)
        out.append((b, p.getBasePositionAndOrientation(b, physicsClientId=c), p.getBaseVelocity(b, physicsClientId=c)))
        n = p.getNumJoints(b, physicsClientId=c)
        if n:  # position, velocity and reaction forces (the 4th, the motor torque the last step applied, is a report)
            out.append([s[:3] for s in p.getJointStates(b, list(range(n)), physicsClientId=c)])
    points = p.getContactPoints(physicsClientId=c)
    out.append(points if contacts_in_order else sorted(points))
    return out


def same(a: Any, b: Any) -> bool:
    """Bitwise equality of nested observations, infos and physics states (NaN equals NaN)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(a, float):
        x, y = np.asarray(a), np.asarray(b)
        return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
    return bool(a == b) and type(a) is type(b)


def make(env_id: str, kwargs: dict[str, Any], **extra: Any) -> gym.Env:
    return gym.make(env_id, **kwargs, **extra)


def episode(env: gym.Env, seed: int, actions: list[Any] | None, policy: Any) -> tuple[list[Any], list[Any]]:
    """Reset with ``seed`` and take ``actions`` (or the policy's, recorded); returns the record and the actions."""
    obs, info = env.reset(seed=seed)
    record: list[Any] = [obs, info, physics_state(env)]
    taken: list[Any] = []
    for k in range(STEPS):
        action = actions[k] if actions is not None else policy(obs)
        taken.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        record.append([obs, reward, terminated, truncated, info, physics_state(env)])
        if terminated or truncated:
            break
    return record, taken


def policy_for(env: gym.Env, env_id: str, seed: int) -> Any:
    """The expert for a Panda task (reset for the episode), else seeded random actions."""
    if env_id in EXPERTS:
        expert = EXPERTS[env_id](env)
        expert.reset()
        return expert
    space = env.action_space
    space.seed(seed)
    return lambda obs: space.sample()


def tail(env: gym.Env, policy: Any, obs: Any) -> None:
    """Go on with the policy until the episode ends (at most TAIL steps), so that it may end in contact."""
    for _ in range(TAIL):
        obs, _, terminated, truncated, _ = env.step(policy(obs))
        if terminated or truncated:
            return


def compare(env_id: str, kwargs: dict[str, Any], seeds: list[int], **extra: Any) -> None:
    """Env A resets with each seed in turn after a whole episode; each must equal a fresh env's."""
    a = make(env_id, kwargs, **extra)
    try:
        for seed in seeds:
            policy = policy_for(a, env_id, seed)
            record_a, taken = episode(a, seed, None, policy)
            tail(a, policy, record_a[-1][0] if len(record_a) > 3 else record_a[0])
            b = make(env_id, kwargs, **extra)
            try:
                record_b, _ = episode(b, seed, taken, None)
            finally:
                b.close()
            assert len(record_a) == len(record_b), (env_id, seed)
            for k, (x, y) in enumerate(zip(record_a, record_b, strict=True)):
                assert same(x, y), f"{env_id} {kwargs} {extra}: seed {seed} differs at record {k}"
    finally:
        a.close()


@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=lambda v: str(v) if isinstance(v, str) else "")
def test_fast_resets_equal_fresh_envs(env_id: str, kwargs: dict[str, Any]) -> None:
    compare(env_id, kwargs, [3, 11])


@pytest.fixture
def rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts world rebuilds (the slow path), by env class name."""
    from pixelrig.envs.base import BulletEnv

    calls: list[str] = []
    original = BulletEnv._rebuild

    def counting(self: BulletEnv) -> None:
        calls.append(type(self).__name__)
        original(self)

    monkeypatch.setattr(BulletEnv, "_rebuild", counting)
    return calls


@pytest.mark.parametrize("env_id", ["pixelrig/PandaLift-v0", "pixelrig/PandaStack-v0", "pixelrig/CartPole-v0",
                                    "pixelrig/HalfCheetah-v0"])
def test_the_fast_path_is_taken_and_can_be_turned_off(env_id: str, rebuilds: list[str]) -> None:
    env = gym.make(env_id)
    try:
        built = len(rebuilds)  # the constructor builds once
        assert built == 1
        for seed in range(3):
            env.reset(seed=seed)
            env.step(env.action_space.sample())
        assert len(rebuilds) == built, "same world: every reset restores the kept world"
        env.unwrapped.fast_reset = False
        env.reset(seed=0)
        assert len(rebuilds) == built + 1
    finally:
        env.close()


def test_a_world_that_changes_rebuilds(rebuilds: list[str]) -> None:
    """PandaPickObject draws its object per episode: a reset to another object rebuilds, to the same one does not."""
    env = gym.make("pixelrig/PandaPickObject-v0")
    try:
        objects = []
        for seed in range(6):
            before = len(rebuilds)
            env.reset(seed=seed)
            objects.append((env.unwrapped.object_index, len(rebuilds) - before))
        for (previous, _), (now, rebuilt) in zip([(0, 0), *objects], objects, strict=False):
            assert rebuilt == int(now != previous), objects
    finally:
        env.close()


RANDOMISED = [
    ("pixelrig/PandaLift-v0", {}, {"randomize": Randomization(
        mass_scale=(0.5, 1.5), lateral_friction=(0.4, 1.2), restitution=(0.0, 0.3), link_colors=True,
        camera_position=0.02, body_position={"cube": ((0.45, -0.1, 0.65), (0.55, 0.1, 0.65))},
        body_yaw={"cube": (-1.0, 1.0)})}),
    ("pixelrig/PandaStack-v0", {}, {"randomize": PHYSICS}),
    ("pixelrig/PandaPush-v0", {}, {"randomize": PHYSICS}),
    ("pixelrig/Robot-v0", {"source": "mjcf/half_cheetah.xml"}, {"randomize": Randomization(
        mass_scale=(0.8, 1.2), lateral_friction=(0.5, 1.0), joint_noise=0.05)}),
    ("pixelrig/PandaLift-v0", {}, {"looks": "train"}),
    ("pixelrig/PandaStack-v0", {}, {"randomize": Randomization(light_azimuth=(0.0, 360.0), shadows=0.5)}),
]


@pytest.mark.parametrize(("env_id", "kwargs", "extra"), RANDOMISED,
                         ids=[f"{i}-{sorted(e)[0]}" for i, _, e in RANDOMISED])
def test_fast_resets_equal_fresh_envs_under_randomisation(env_id: str, kwargs: dict[str, Any],
                                                           extra: dict[str, Any]) -> None:
    compare(env_id, kwargs, [4, 9], **extra)


def test_pixels_equal_fresh_envs() -> None:
    """The default 3-camera rig's images after fast resets equal a fresh env's (randomised colours included)."""
    extra = {"randomize": Randomization(link_colors=True, mass_scale=(0.8, 1.2)), "renderer": "tiny"}
    a = pixelrig.PixelObs(gym.make("pixelrig/PandaLift-v0", **extra))
    try:
        for seed in (2, 7):
            policy = policy_for(a, "pixelrig/PandaLift-v0", seed)
            record_a, taken = episode(a, seed, None, policy)  # the expert reads PixelObs' dict too
            tail(a, policy, record_a[-1][0])
            b = pixelrig.PixelObs(gym.make("pixelrig/PandaLift-v0", **extra))
            try:
                record_b, _ = episode(b, seed, taken, None)
            finally:
                b.close()
            assert same(record_a, record_b), seed
    finally:
        a.close()


def island_free(data: bytes) -> bytes:
    """.bullet bytes with every collision object's ``m_islandTag1`` zeroed: the simulation island the last step put
    it in, numbered by the union-find root, which depends on the order of the broadphase's pair array (a history
    that two rebuilt worlds do not share either) and which the next step sets again before reading it. A record
    is recognised by the fields that follow the tag: ``m_companionId`` -1, ``m_activationState1``, and
    ``m_internalType`` 2 (rigid body) or 64 (multibody link)."""
    out = bytearray(data)
    for i in range(0, len(out) - 16, 4):
        if out[i + 4:i + 8] == b"\xff\xff\xff\xff" and out[i + 12:i + 16] in (b"\x40\0\0\0", b"\x02\0\0\0") \
                and out[i + 8:i + 12] in (b"\x01\0\0\0", b"\x04\0\0\0") and out[i + 2:i + 4] == b"\0\0":
            out[i:i + 4] = b"\0\0\0\0"
    return bytes(out)


def physics_bytes(env: gym.Env) -> bytes:
    """The pybullet state a snapshot carries (its .bullet bytes)."""
    from pixelrig.snapshots import physics_of

    return physics_of(pixelrig.snapshot(env).to_bytes())[1]


@pytest.mark.parametrize("env_id", ["pixelrig/PandaStack-v0", "pixelrig/PandaLift-v0", "pixelrig/Ant-v0"])
def test_snapshots_and_restores_across_fast_resets(env_id: str) -> None:
    """After a restore of another episode's snapshot, the next reset still equals a fresh env's; the snapshots
    taken after fast resets hold the physics bytes a fresh env's hold, and restore into a fresh env exactly."""
    a = gym.make(env_id)
    try:
        policy = policy_for(a, env_id, 1)
        record, _ = episode(a, 1, None, policy)
        snap = pixelrig.snapshot(a)  # mid-episode, after contact-rich steps
        tail(a, policy, record[-1][0])
        for seed in (5, 8):
            policy = policy_for(a, env_id, seed)
            record_a, taken = episode(a, seed, None, policy)
            snap_a = pixelrig.snapshot(a)
            b = gym.make(env_id)
            try:
                record_b, _ = episode(b, seed, taken, None)
                assert same(record_a, record_b), seed
                assert island_free(physics_bytes(a)) == island_free(physics_bytes(b)), seed
                c = gym.make(env_id)  # a's snapshot restores into a fresh env and goes on as b does
                try:
                    pixelrig.restore(c, pixelrig.Snapshot.from_bytes(snap_a.to_bytes()))
                    for action in taken[:10]:
                        assert same(c.step(action), b.step(action))
                        assert same(physics_state(c, False), physics_state(b, False))
                finally:
                    c.close()
            finally:
                b.close()
            pixelrig.restore(a, snap)  # back into episode 1, then the next reset must not remember it
            tail(a, policy_for(a, env_id, 1), record[-1][0])
    finally:
        a.close()


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=lambda v: str(v) if isinstance(v, str) else "")
def test_fast_resets_equal_fresh_envs_20_seeds(env_id: str, kwargs: dict[str, Any]) -> None:
    compare(env_id, kwargs, list(range(20)))


@pytest.mark.slow
@pytest.mark.sweep
@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=lambda v: str(v) if isinstance(v, str) else "")
def test_fast_resets_equal_fresh_envs_20_seeds_randomised(env_id: str, kwargs: dict[str, Any]) -> None:
    compare(env_id, kwargs, list(range(20)), randomize=PHYSICS)


@pytest.mark.slow
@pytest.mark.sweep
@pytest.mark.parametrize(("env_id", "kwargs"), CASES, ids=lambda v: str(v) if isinstance(v, str) else "")
def test_fast_resets_equal_fresh_envs_20_seeds_looks(env_id: str, kwargs: dict[str, Any]) -> None:
    compare(env_id, kwargs, list(range(20)), looks="train")


def test_the_documented_reset_times_are_the_benchmarks() -> None:
    """docs/benchmark.md's reset table and docs/snapshots.md's figures are docs/reset_speed.json's (written by
    benchmarks/reset_speed.py)."""
    import json
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    rows = json.loads((docs / "reset_speed.json").read_text())["rows"]
    page = (docs / "benchmark.md").read_text()
    table = page[page.index("<!-- reset-table:start"):page.index("<!-- reset-table:end -->")]
    shown = {m[0]: m[1:] for m in re.findall(r"\| `([^`]+)` \| ([\d.]+) ms \| ([\d.]+) ms \| (\d+)x \| ([\d.]+) ms \| "
                                             r"([\d.]+) ms \| ([\d.]+) ms \| ([\d.]+) ms \|", table)}
    assert set(shown) == {r["env"] for r in rows}
    for r in rows:
        expected = (f"{r['rebuild_ms']:.1f}", f"{r['fast_ms']:.2f}", f"{r['speedup']:.0f}",
                    f"{r['rebuild_rig_ms']:.1f}", f"{r['fast_rig_ms']:.1f}", f"{r['raw_rebuild_ms']:.1f}",
                    f"{r['raw_restore_ms']:.3f}")
        assert shown[r["env"]] == expected, r["env"]
    push = next(r for r in rows if r["env"] == "pixelrig/PandaPush-v0")
    text = re.sub(r"\s+", " ", (docs / "snapshots.md").read_text())
    assert f"PandaPush {push['rebuild_ms']:.0f} ms before, {push['fast_ms']:.1f} ms now" in text
    assert all(r["fast_ms"] <= 3.0 and r["fast_rig_ms"] <= 10.0 for r in rows)  # the targets, as measured
    readme = re.sub(r"\s+", " ", (docs.parent / "README.md").read_text())
    assert "under a millisecond without cameras in the benchmark" in readme and all(r["fast_ms"] < 1.0 for r in rows)
