"""Exact save/restore of whole environments: every registered id, in-process and in another process, through
the wrapper stack and pixel observations; the binary format's integrity checks; declared task state."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import pickle
import re
import struct
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, Snapshot, restore, snapshot
from pixelrig.tasks import ENV_SPECS

from .conftest import assert_trees_equal, physics_state

MAKE_KWARGS = {"pixelrig/Robot-v0": {"source": "kuka_iiwa/model.urdf"}}
ALL_IDS = list(ENV_SPECS)


def make(env_id: str, pixels: bool = True) -> gym.Env:
    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))
    if pixels:
        cams = [dataclasses.replace(Camera.from_dict(c), width=20, height=20)
                for c in env.unwrapped.default_cameras()]
        env = PixelObs(env, cams=cams)
    return env


def run(env: gym.Env, actions: list) -> list:
    """Step through actions, resetting (seeded) when an episode ends; returns every step's full result."""
    out = []
    for i, a in enumerate(actions):
        result = env.step(a)
        out.append(result)
        if result[2] or result[3]:
            out.append(env.reset(seed=10_000 + i))
    return out


def actions_for(env: gym.Env, n: int, seed: int) -> list:
    space = env.action_space
    space.seed(seed)
    return [space.sample() for _ in range(n)]


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_restore_is_bit_exact_in_process(env_id: str) -> None:
    """N steps, snapshot, M steps recorded; restore -> the same M steps are identical (pixels included), also
    when restored twice and when restored into an env that has run a different episode since."""
    env = make(env_id)
    other = make(env_id)
    try:
        env.reset(seed=1)
        run(env, actions_for(env, 40, seed=1))
        snap = snapshot(env)
        later = actions_for(env, 25, seed=2)
        reference = run(env, later)
        for _ in range(2):
            restore(env, snap)
            assert_trees_equal(reference, run(env, later))
        other.reset(seed=99)
        run(other, actions_for(other, 30, seed=3))
        restore(other, snap)
        assert_trees_equal(reference, run(other, later))
    finally:
        env.close()
        other.close()


def test_halfcheetah_report_case() -> None:
    """The original report: 200 random steps, snapshot, step(a), restore, step(a) -> equal reward and obs."""
    env = gym.make("pixelrig/HalfCheetah-v0")
    try:
        env.reset(seed=0)
        run(env, actions_for(env, 200, seed=0))
        snap = snapshot(env)
        a = actions_for(env, 1, seed=9)[0]
        first = env.step(a)
        restore(env, snap)
        second = env.step(a)
        assert_trees_equal(first, second)
        assert first[1] == second[1]  # the forward reward depends on last_x, Python-side task state
    finally:
        env.close()


CHILD = """
import pickle, sys
import gymnasium as gym, numpy as np
import pixelrig, dataclasses
from pixelrig import Camera, PixelObs, Snapshot, restore
env_id, kwargs, blob, actions = pickle.loads(sys.stdin.buffer.read())
env = gym.make(env_id, **kwargs)
cams = [dataclasses.replace(Camera.from_dict(c), width=20, height=20) for c in env.unwrapped.default_cameras()]
env = PixelObs(env, cams=cams)
restore(env, Snapshot.from_bytes(blob))
out = []
for i, a in enumerate(actions):
    r = env.step(a)
    out.append(r)
    if r[2] or r[3]:
        out.append(env.reset(seed=10_000 + i))
sys.stdout.buffer.write(pickle.dumps(out))
"""


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_restore_in_another_process(env_id: str) -> None:
    env = make(env_id)
    try:
        env.reset(seed=4)
        run(env, actions_for(env, 30, seed=4))
        blob = snapshot(env).to_bytes()
        later = actions_for(env, 20, seed=5)
        reference = run(env, later)
    finally:
        env.close()
    payload = pickle.dumps((env_id, MAKE_KWARGS.get(env_id, {}), blob, later))
    proc = subprocess.run([sys.executable, "-c", CHILD], input=payload, capture_output=True, check=True)
    assert_trees_equal(reference, pickle.loads(proc.stdout))  # test-side pickle of results, not of the snapshot


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_only_declared_state_changes_during_episodes(env_id: str) -> None:
    """Forgetting is impossible: besides the base's bookkeeping and the declared task_state, no attribute of the
    env changes while it runs (assignments are refused, and this catches in-place mutation too)."""
    env = gym.make(env_id, **MAKE_KWARGS.get(env_id, {}))
    base = env.unwrapped
    skip = base._BASE_STATE | base.declared_state() | {"_init_depth"}
    try:
        env.reset(seed=0)
        before = {k: copy.deepcopy(v) for k, v in vars(base).items() if k not in skip}
        run(env, actions_for(env, 60, seed=0))
        env.reset(seed=1)
        run(env, actions_for(env, 10, seed=1))
        after = {k: v for k, v in vars(base).items() if k not in skip}
        assert before.keys() == after.keys()
        for k in before:
            assert_trees_equal(_plain(before[k]), _plain(after[k]), k)
    finally:
        env.close()


def _plain(value):
    """Comparable form of an attribute value (objects by their __dict__)."""
    if isinstance(value, Mapping):  # read-only mappings too (a Randomization's per-body ranges)
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray | float | int | str | bool) or value is None:
        return value
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return repr(type(value))


def test_undeclared_assignment_is_refused_with_the_fix() -> None:
    env = gym.make("pixelrig/PandaPush-v0")
    try:
        with pytest.raises(AttributeError, match=re.escape(
                "PandaPushEnv.cube_color cannot be assigned after construction: per-episode state must be "
                "declared in PandaPushEnv.task_state")):
            env.unwrapped.cube_color = "red"
        with pytest.raises(AttributeError, match=re.escape("PandaPushEnv.max_step cannot be assigned")):
            env.unwrapped.max_step = 0.1  # configuration is fixed after construction
        env.unwrapped.target_pos = np.zeros(3)  # declared task state
    finally:
        env.close()


# ---- the format ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cheetah_snapshot() -> Snapshot:
    env = gym.make("pixelrig/HalfCheetah-v0")
    env.reset(seed=0)
    run(env, actions_for(env, 50, seed=0))
    snap = snapshot(env)
    env.close()
    return snap


def test_bytes_and_pickle_round_trip(cheetah_snapshot: Snapshot) -> None:
    blob = cheetah_snapshot.to_bytes()
    assert blob[:8] == b"PXRGSNAP" and struct.unpack_from("<H", blob, 8)[0] == 1
    again = Snapshot.from_bytes(blob)
    assert again.to_bytes() == blob
    assert_trees_equal(again.env_state, cheetah_snapshot.env_state)
    pickled = pickle.dumps(cheetah_snapshot)
    assert blob in pickled  # pickling goes through the same bytes
    assert pickle.loads(pickled).to_bytes() == blob
    assert 20_000 < len(cheetah_snapshot) < 100_000


def test_pickled_snapshot_only_calls_from_bytes(cheetah_snapshot: Snapshot) -> None:
    reduced = cheetah_snapshot.__reduce__()
    assert reduced[0] == Snapshot.from_bytes and reduced[1] == (cheetah_snapshot.to_bytes(),)


def fresh_cheetah() -> gym.Env:
    env = gym.make("pixelrig/HalfCheetah-v0")
    env.reset(seed=3)
    run(env, actions_for(env, 20, seed=3))
    return env


def assert_untouched(env: gym.Env, bad: object, message: str) -> None:
    """restore(env, bad) raises ValueError(message...) and the env continues exactly as it would have."""
    base = env.unwrapped
    twin = fresh_cheetah()  # same history as env
    try:
        before = physics_state(base.client)
        state = copy.deepcopy(base.export_state())
        with pytest.raises(ValueError, match=re.escape(message)):
            restore(env, bad if isinstance(bad, Snapshot) else Snapshot.from_bytes(bad))
        assert_trees_equal(before, physics_state(base.client))
        assert_trees_equal(state["task"], base.export_state()["task"])
        acts = actions_for(env, 10, seed=8)
        assert_trees_equal(run(twin, acts), run(env, acts))
    finally:
        twin.close()


def test_corrupted_bytes_are_detected(cheetah_snapshot: Snapshot) -> None:
    blob = bytearray(cheetah_snapshot.to_bytes())
    blob[len(blob) // 2] ^= 0x01  # one bit inside the physics payload: pybullet itself would accept it
    with pytest.raises(ValueError, match=re.escape("snapshot is corrupted or truncated: its SHA-256 checksum")):
        Snapshot.from_bytes(bytes(blob))


def test_foreign_snapshot_leaves_env_exactly_as_it_was() -> None:
    hopper = gym.make("pixelrig/Hopper-v0")
    hopper.reset(seed=0)
    foreign = snapshot(hopper)
    hopper.close()
    env = fresh_cheetah()
    try:
        assert_untouched(env, foreign, "snapshot belongs to a different environment")
    finally:
        env.close()


def test_failed_restore_rolls_back(cheetah_snapshot: Snapshot) -> None:
    """A snapshot that passes every check but whose physics pybullet refuses: the env is rolled back."""
    state = dict(cheetah_snapshot.env_state, physics=cheetah_snapshot.env_state["physics"][:64])
    broken = Snapshot(cheetah_snapshot.identity, state, cheetah_snapshot.wrapper_states)
    env = fresh_cheetah()
    try:
        assert_untouched(env, broken, "snapshot could not be restored (ValueError: pybullet could not restore the "
                                      "physics state")
    finally:
        env.close()


@pytest.mark.parametrize("mangle,message", [
    (lambda b: b[:-100], "snapshot is corrupted or truncated: its SHA-256 checksum does not match"),
    (lambda b: b[:60], "snapshot is corrupted or truncated"),
    (lambda b: b[:10], "not a pixelrig snapshot: 10 bytes is shorter than any snapshot (truncated?)"),
    (lambda b: b"GIF89a" + b[6:], "not a pixelrig snapshot: starts with b'GIF89a"),
    (lambda b: bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)), "not a pixelrig snapshot"),
    (lambda b: pickle.dumps({"state": 1}), "not a pixelrig snapshot"),
])
def test_truncated_and_foreign_bytes_are_refused(cheetah_snapshot: Snapshot, mangle, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Snapshot.from_bytes(mangle(cheetah_snapshot.to_bytes()))


def reseal(body: bytes) -> bytes:
    return body + hashlib.sha256(body).digest()


def test_newer_format_version_is_refused(cheetah_snapshot: Snapshot) -> None:
    body = bytearray(cheetah_snapshot.to_bytes()[:-32])
    struct.pack_into("<H", body, 8, 2)
    with pytest.raises(ValueError, match=re.escape("snapshot format version 2 is newer than this pixelrig reads (1)")):
        Snapshot.from_bytes(reseal(bytes(body)))


def test_object_arrays_cannot_be_smuggled_in(cheetah_snapshot: Snapshot) -> None:
    """A well-formed, checksummed blob whose metadata asks for a Python-object array is refused (no code runs)."""
    blob = cheetah_snapshot.to_bytes()
    meta_len = struct.unpack_from("<I", blob, 10)[0]
    meta = blob[14:14 + meta_len].replace(b'{"__bytes__":0}', b'{"__array__":0,"dtype":"|O8","shape":[1]}', 1)
    assert meta != blob[14:14 + meta_len]
    body = blob[:10] + struct.pack("<I", len(meta)) + meta + blob[14 + meta_len:-32]
    with pytest.raises(ValueError, match="only bool, int and float are allowed"):
        Snapshot.from_bytes(reseal(body))


def test_snapshot_of_another_env_is_refused_and_env_untouched(cheetah_snapshot: Snapshot) -> None:
    hopper = gym.make("pixelrig/Hopper-v0")
    hopper.reset(seed=0)
    try:
        before = physics_state(hopper.unwrapped.client)
        with pytest.raises(ValueError, match=re.escape(
                "snapshot belongs to a different environment: its env id: 'pixelrig/HalfCheetah-v0'; this env's: "
                "'pixelrig/Hopper-v0'")):
            restore(hopper, cheetah_snapshot)
        assert_trees_equal(before, physics_state(hopper.unwrapped.client))
    finally:
        hopper.close()


def test_same_id_other_kwargs_or_wrappers_are_refused() -> None:
    a = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf")
    b = gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf", control="position")
    c = PixelObs(gym.make("pixelrig/Robot-v0", source="kuka_iiwa/model.urdf"))
    try:
        a.reset(seed=0)
        snap = snapshot(a)
        with pytest.raises(ValueError, match=re.escape(
                "its constructor arguments: {'source': 'kuka_iiwa/model.urdf'}; this env's: ")):
            restore(b, snap)
        with pytest.raises(ValueError, match=re.escape("its wrapper stack: ")):
            restore(c, snap)
    finally:
        for e in (a, b, c):
            e.close()


def test_changed_model_file_is_refused(tmp_path: Path) -> None:
    import pybullet_data

    urdf = tmp_path / "kuka.urdf"
    text = (Path(pybullet_data.getDataPath()) / "kuka_iiwa/model.urdf").read_text()
    urdf.write_text(text.replace('filename="meshes/', f'filename="{pybullet_data.getDataPath()}/kuka_iiwa/meshes/'))
    env = gym.make("pixelrig/Robot-v0", source=str(urdf))
    env.reset(seed=0)
    snap = snapshot(env)
    env.close()
    urdf.write_text(urdf.read_text().replace('effort="300"', 'effort="299"', 1))
    env = gym.make("pixelrig/Robot-v0", source=str(urdf))
    try:
        with pytest.raises(ValueError, match=re.escape("model files differ: ['kuka.urdf']")):
            restore(env, snap)
    finally:
        env.close()


def test_unknown_wrapper_is_named_with_the_fix() -> None:
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("pixelrig/CartPole-v0"))
    try:
        env.reset(seed=0)
        with pytest.raises(TypeError, match=re.escape(
                "snapshot does not know the state of wrapper gymnasium.wrappers.common:RecordEpisodeStatistics: "
                "give it snapshot_state() -> dict and restore_snapshot_state(dict) methods")):
            snapshot(env)
    finally:
        env.close()


def test_restore_needs_a_snapshot() -> None:
    env = gym.make("pixelrig/CartPole-v0")
    try:
        with pytest.raises(ValueError, match=re.escape("restore needs a pixelrig Snapshot (Snapshot.from_bytes(b) "
                                                       "for bytes)")):
            restore(env, b"PXRGSNAP")  # type: ignore[arg-type]
    finally:
        env.close()


def test_snapshot_restores_across_renderers() -> None:
    """Rendering never changes the simulation, so a snapshot from a tiny env restores into another env
    whatever its renderer; the render-only kwargs are not part of the identity."""
    a = gym.make("pixelrig/CartPole-v0", renderer="tiny", render_mode="rgb_array")
    b = gym.make("pixelrig/CartPole-v0")
    try:
        a.reset(seed=0)
        run(a, actions_for(a, 10, seed=0))
        snap = snapshot(a)
        acts = actions_for(a, 10, seed=1)
        ref = run(a, acts)
        restore(b, snap)
        assert_trees_equal(ref, run(b, acts))
    finally:
        a.close()
        b.close()


def test_public_api() -> None:
    assert pixelrig.snapshot is snapshot and pixelrig.restore is restore and pixelrig.Snapshot is Snapshot


@pytest.mark.parametrize("env_id", ["pixelrig/PandaPush-v0", "pixelrig/Ant-v0", "pixelrig/Walker2d-v0"])
def test_in_place_and_rebuilt_restores_are_both_exact(env_id: str) -> None:
    """Restores into worlds that have run other episodes, at random points: some take the in-place path, some the
    rebuild; every one must replay bit-exactly (contacts present now but not then force the rebuild)."""
    rng = np.random.default_rng(0)
    paths = set()
    for trial in range(4):
        a, b = make(env_id, pixels=False), make(env_id, pixels=False)
        try:
            a.reset(seed=trial)
            run(a, actions_for(a, 0 if trial % 2 == 0 else int(rng.integers(1, 40)), seed=trial))
            snap = snapshot(a)
            later = actions_for(a, 40, seed=100 + trial)
            reference = run(a, later)
            b.reset(seed=50 + trial)
            run(b, actions_for(b, int(rng.integers(20, 60)), seed=200 + trial))
            for env in (a, b):
                paths.add(env.unwrapped.can_restore_in_place(snap.env_state))
                restore(env, snap)
                assert_trees_equal(reference, run(env, later), f"trial {trial}")
        finally:
            a.close()
            b.close()
    assert paths == {True, False}, "both restore paths should have been exercised"


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_restoring_many_times_keeps_memory_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """pybullet caches every state file it reads until its client disconnects (about 86 KB per PandaPush restore:
    RSS grew 118 MiB over these 1,500 restores without emptying); restore_bullet empties the cache past its budget
    (64 MiB, the README says; 1 MiB here) and every restore still lands exactly where it should, also right after
    the cache was emptied and for a rebuild after it (the model files are parsed again)."""
    import pixelrig.envs.state as state
    from pixelrig.datasets.bullet_file import pose_signature  # what a restore sets: poses, velocities, link frames

    assert state.STATE_CACHE_BUDGET == 64 << 20

    monkeypatch.setattr(state, "STATE_CACHE_BUDGET", 1 << 20)
    env = make("pixelrig/PandaPush-v0", pixels=False)
    env.reset(seed=0)
    snaps = []
    for action in actions_for(env, 2, seed=1):
        env.step(action)
        snaps.append(snapshot(env))
    client = env.unwrapped.client
    expected = []
    for snap in snaps:
        restore(env, snap)
        expected.append(pose_signature(client))
    emptied, before = 0, _rss_bytes()
    for i in range(1500):
        held = state.cached_state_bytes(client)
        restore(env, snaps[i % 2])
        emptied += state.cached_state_bytes(client) < held
        if i % 97 == 0 or state.cached_state_bytes(client) < held:
            assert pose_signature(client) == expected[i % 2], i
    grown = _rss_bytes() - before
    assert emptied >= 100, emptied  # 1,500 restores of ~86 KB each over 1 MiB budgets
    assert grown < 40 << 20, f"RSS grew {grown / 2**20:.0f} MiB over 1,500 restores"
    restore(env, snaps[0], rebuild=True)
    assert pose_signature(env.unwrapped.client) == expected[0]
    env.close()
