"""Batched vector envs (``make_vec(..., vectorization_mode="batched")``): Gymnasium's layout, seeding and autoreset,
one gl pass per process, worker processes, bad input and clean-up."""

from __future__ import annotations

import dataclasses
import os
import re

import gymnasium as gym
import numpy as np
import pybullet as p
import pytest

import pixelrig
from pixelrig import Camera
from pixelrig.vector.batched import BatchedVectorEnv, worker_slices
from pixelrig.vector.factory import EnvFactory
from pixelrig.vector.make import make_vec

from .conftest import assert_trees_equal, child_pids, new_children

pytestmark = pytest.mark.usefixtures("gl_required")  # skips without gl; fails under PIXELRIG_REQUIRE_EGL=1

CART = "pixelrig/CartPole-v0"
PUSH = "pixelrig/PandaPush-v0"
CAM = Camera("c", width=24, height=24, eye=(0.0, -2.6, 0.45), target=(0.0, 0.0, 0.35), near=0.05, far=10.0,
             modalities=("rgb", "depth", "label"))


def small_push_cams() -> list[Camera]:
    """PandaPush's default rig (two fixed cameras and the wrist camera) at 24²."""
    env = gym.make(PUSH, renderer="tiny")
    try:
        return [dataclasses.replace(Camera.from_dict(c), width=24, height=24)
                for c in env.unwrapped.default_cameras()]
    finally:
        env.close()


def assert_pixels_close(a: dict[str, np.ndarray], b: dict[str, np.ndarray], where: str) -> None:
    """Images of two gl renders of the same state: a batched render may differ from a lone one by the last float
    bit of an interpolated depth or a texel at an edge (see ``GlBackend.submit_batch``), so labels >= 99.9% equal,
    depth and RGB loosely; everything else (the state) bitwise."""
    assert a.keys() == b.keys(), where
    for key in a:
        x, y = a[key], b[key]
        assert x.shape == y.shape and x.dtype == y.dtype, f"{where} {key}"
        if key.endswith("/label"):
            assert (x == y).mean() >= 0.999, f"{where} {key}: {(x == y).mean():.4%} equal"
        elif key.endswith("/depth"):
            diff = np.abs(x.astype(np.float64) - y)
            assert np.median(diff) <= 1e-4 and (diff <= 1e-3).mean() >= 0.999, f"{where} {key}: {diff.max()}"
        elif key.endswith("/rgb"):
            assert np.abs(x.astype(int) - y).mean() <= 1.0, f"{where} {key}"
        else:
            assert_trees_equal(x, y, f"{where} {key}")


def env_slice(batch: dict[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    return {key: value[i] for key, value in batch.items()}


def pixel_keys(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in obs.items() if k != "state"}


@pytest.mark.parametrize(("env_id", "n", "steps", "kwargs"), [
    (CART, 3, 60, {}),  # episodes that terminate (the poles fall)
    (PUSH, 2, 8, {"max_episode_steps": 3}),  # episodes truncated, with infos (is_success, distance)
], ids=["terminations", "truncations-infos"])
def test_matches_gymnasium_layout_seeding_and_autoreset(env_id: str, n: int, steps: int, kwargs: dict) -> None:
    """Same spaces, metadata and Dict layout as Gymnasium's own SyncVectorEnv of the same factories (TinyRenderer);
    for the same seed and actions the same states, rewards, flags and infos step for step, through episode ends
    (next-step autoreset); and the pixels of a gl SyncVectorEnv (lone gl envs) of the same scenes."""
    cams = [CAM] if env_id == CART else small_push_cams()
    batched = make_vec(env_id, n, cams=cams, vectorization_mode="batched", renderer="gl", env_kwargs=kwargs)
    reference = make_vec(env_id, n, cams=cams, vectorization_mode="sync", renderer="tiny", env_kwargs=kwargs)
    lone_gl = make_vec(env_id, n, cams=cams, vectorization_mode="sync", renderer="gl", env_kwargs=kwargs)
    try:
        assert isinstance(batched, gym.vector.VectorEnv) and isinstance(batched, BatchedVectorEnv)
        assert isinstance(reference, gym.vector.SyncVectorEnv)
        assert batched.num_envs == n and not batched.workers  # num_workers=1: every env in this process
        assert batched.single_observation_space == reference.single_observation_space
        assert batched.observation_space == reference.observation_space
        assert batched.single_action_space == reference.single_action_space
        assert batched.action_space == reference.action_space
        assert batched.metadata == reference.metadata  # autoreset_mode: next step
        obs_b, info_b = batched.reset(seed=7)
        obs_a, info_a = reference.reset(seed=7)
        obs_g, _ = lone_gl.reset(seed=7)
        assert list(obs_b) == list(obs_a) and batched.observation_space.contains(obs_b)
        assert_trees_equal(obs_b["state"], obs_a["state"], "reset states")
        assert_trees_equal(info_b, info_a, "reset infos")
        for i in range(n):
            assert_pixels_close(env_slice(obs_b, i), env_slice(obs_g, i), f"reset env {i}")
        rng = np.random.default_rng(0)
        low, high = batched.action_space.low, batched.action_space.high
        ended_before = np.zeros(n, bool)
        autoresets = 0
        for t in range(steps):
            action = rng.uniform(low, high).astype(np.float32)
            if env_id == CART:
                action = np.where(action > -0.6, 1.0, -1.0).astype(np.float32)  # mostly one way: poles fall fast
            obs_b, rew_b, term_b, trunc_b, info_b = batched.step(action)
            obs_a, rew_a, term_a, trunc_a, info_a = reference.step(action)
            obs_g, *_ = lone_gl.step(action)
            assert_trees_equal((obs_b["state"], rew_b, term_b, trunc_b), (obs_a["state"], rew_a, term_a, trunc_a),
                               f"step {t}")
            assert_trees_equal(info_b, info_a, f"step {t} infos")
            for i in range(n):
                assert_pixels_close(env_slice(obs_b, i), env_slice(obs_g, i), f"step {t} env {i}")
            autoresets += int(ended_before.sum())
            for i in np.flatnonzero(ended_before):  # the step after an episode ended returned the reset obs
                assert rew_b[i] == 0.0 and not term_b[i] and not trunc_b[i]
            ended_before = term_b | trunc_b
        assert autoresets >= 2, "the test needs episodes that end"
    finally:
        batched.close()
        reference.close()
        lone_gl.close()


def test_first_observations_equal_lone_gl_envs_seeded_seed_plus_i() -> None:
    cams = small_push_cams()
    venv = make_vec(PUSH, 3, cams=cams, vectorization_mode="batched")  # renderer None: 'gl' for batched
    try:
        assert venv.get_attr("render_backend")[0].name == "gl"
        obs, infos = venv.reset(seed=11)
        assert infos["_distance"].all() and infos["distance"].dtype == np.float64
        for i in range(3):
            lone = pixelrig.PixelObs(gym.make(PUSH, renderer="gl"), cams=cams)
            try:
                single, info = lone.reset(seed=11 + i)
            finally:
                lone.close()
            assert infos["distance"][i] == info["distance"]
            assert_pixels_close(env_slice(obs, i), single, f"env {i}")
            assert not np.array_equal(obs["state"][i], obs["state"][(i + 1) % 3])  # each env its own seed
    finally:
        venv.close()


def test_tiny_renderer_is_allowed_and_bitwise_equal_to_lone_envs() -> None:
    """renderer='tiny' draws the rigs one after another: every key equals a lone TinyRenderer PixelObs bit for bit,
    which also shows that deferring the pixels changes nothing."""
    venv = make_vec(CART, 2, cams=[CAM], vectorization_mode="batched", renderer="tiny")
    singles = [pixelrig.PixelObs(gym.make(CART, renderer="tiny"), cams=[CAM]) for _ in range(2)]
    try:
        obs, _ = venv.reset(seed=3)
        for i, env in enumerate(singles):
            assert_trees_equal(env_slice(obs, i), env.reset(seed=3 + i)[0], f"reset env {i}")
        for t in range(5):
            obs, *_ = venv.step(np.full((2, 1), 0.5, np.float32))
            for i, env in enumerate(singles):
                assert_trees_equal(env_slice(obs, i), env.step(np.full(1, 0.5, np.float32))[0], f"step {t} env {i}")
    finally:
        venv.close()
        for env in singles:
            env.close()


def test_reset_options_reach_envs_whose_pixels_are_drawn_later() -> None:
    """A batched env resets a PixelObs env without drawing (its rig is drawn with the others after): the reset's
    options still reach the env. A robot file's qpos: the state and the picture are those of a lone env reset
    with the same options."""
    cam = Camera("c", width=16, height=16, eye=(1.5, 0.0, 1.0), target=(0.0, 0.0, 0.5), modalities=("rgb",))
    kwargs = {"source": "kuka_iiwa/model.urdf"}
    venv = make_vec("pixelrig/Robot-v0", 2, cams=[cam], vectorization_mode="batched", renderer="tiny",
                    env_kwargs=kwargs)
    lone = pixelrig.PixelObs(gym.make("pixelrig/Robot-v0", renderer="tiny", **kwargs), cams=[cam])
    qpos = [0.1, 0.2, 0.3, -0.4, 0.5, 0.6, 0.7]
    try:
        obs, _ = venv.reset(seed=0, options={"qpos": qpos})
        np.testing.assert_allclose(obs["state"][:, :7], [qpos, qpos], atol=1e-6)
        assert_trees_equal(env_slice(obs, 1), lone.reset(seed=1, options={"qpos": qpos})[0], "reset env 1")
    finally:
        venv.close()
        lone.close()


def test_two_workers_give_the_same_results_as_one() -> None:
    cams = small_push_cams()
    kwargs = {"cams": cams, "vectorization_mode": "batched", "env_kwargs": {"max_episode_steps": 4}}
    one = make_vec(PUSH, 3, **kwargs)
    two = make_vec(PUSH, 3, num_workers=2, **kwargs)
    try:
        assert [len(s) for s in two.slices] == [2, 1] and len(two.workers) == 2
        assert two.observation_space == one.observation_space and two.metadata == one.metadata
        obs1, info1 = one.reset(seed=5)
        obs2, info2 = two.reset(seed=5)
        assert_trees_equal(info1, info2, "reset infos")
        actions = np.random.default_rng(1).uniform(-1, 1, (6, *one.action_space.shape)).astype(np.float32)
        for t, action in enumerate(actions):  # truncated at step 4, reset obs at step 5
            for i in range(3):
                assert_pixels_close(env_slice(obs1, i), env_slice(obs2, i), f"step {t} env {i}")
            obs1, *rest1 = one.step(action)
            obs2, *rest2 = two.step(action)
            assert_trees_equal(rest1, rest2, f"step {t}")
        assert two.get_attr("np_random_seed") == one.get_attr("np_random_seed") == (5, 6, 7)
        partial = np.array([False, False, True])
        obs1, _ = one.reset(seed=9, options={"reset_mask": partial})
        obs2, _ = two.reset(seed=9, options={"reset_mask": partial})
        assert_trees_equal(obs1["state"], obs2["state"], "reset_mask")
        assert two.get_attr("np_random_seed") == (5, 6, 11)
    finally:
        one.close()
        two.close()


def test_steps_drawn_in_parts_are_deterministic_and_match_one_pass() -> None:
    """A process draws its envs' rigs a part at a time while the next part steps (``chunk_envs``): the same seed
    and actions give the same pixels bit for bit, and parts of any size give one pass's images (labels >= 99.9%:
    only the tiles' places in the framebuffer differ) and the same states, autoresets included."""
    from pixelrig.vector.batched import chunk_size

    assert [chunk_size(n) for n in (1, 4, 16, 17, 64)] == [4, 4, 4, 5, 16]
    cams = small_push_cams()
    kwargs = {"cams": cams, "vectorization_mode": "batched", "env_kwargs": {"max_episode_steps": 3}}
    venvs = [make_vec(PUSH, 5, **kwargs) for _ in range(3)]
    try:
        for venv, chunk in zip(venvs, (2, 2, 5), strict=True):
            venv._local.chunk_envs = chunk  # type: ignore[union-attr]
        actions = np.random.default_rng(2).uniform(-1, 1, (7, 5, *venvs[0].single_action_space.shape))
        runs = []
        for venv in venvs:
            obs, _ = venv.reset(seed=21)
            steps = [obs]
            for action in actions.astype(np.float32):
                obs, *rest = venv.step(action)
                steps.append((obs, rest))
            runs.append(steps)
        assert_trees_equal(runs[0], runs[1], "two runs in parts of 2")
        for t, (parts, whole) in enumerate(zip(runs[0][1:], runs[2][1:], strict=True)):
            assert_trees_equal(parts[1], whole[1], f"step {t} rewards and flags")
            assert_trees_equal(parts[0]["state"], whole[0]["state"], f"step {t} state")
            for i in range(5):
                assert_pixels_close(env_slice(parts[0], i), env_slice(whole[0], i), f"step {t} env {i}")
    finally:
        for venv in venvs:
            venv.close()


def test_a_step_draws_each_part_of_the_envs_in_one_gl_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted, not assumed: a reset draws all 9 envs' 27 cameras in one GL pass, and a step one pass per part of
    ``chunk_size(9)`` = 4 envs (12 cameras each) and one for the last env, autoresets included: never a pass per
    env (9 envs make three parts, where a part boundary counted wrong after the first shows)."""
    from pixelrig.render.gl.pipeline import GlPipeline
    from pixelrig.vector.batched import chunk_size

    passes: list[int] = []
    submit = GlPipeline.submit

    def counted(self, owners, requests, lightings=None):
        passes.append(len(requests))
        return submit(self, owners, requests, lightings)

    monkeypatch.setattr(GlPipeline, "submit", counted)
    cams = small_push_cams()
    venv = make_vec(PUSH, 9, cams=cams, vectorization_mode="batched", env_kwargs={"max_episode_steps": 2})
    try:
        venv.reset(seed=0)
        assert passes == [9 * len(cams)], passes
        part = chunk_size(9) * len(cams)
        for t in range(4):  # the 2nd step ends every episode (TimeLimit 2), the 3rd autoresets every env
            passes.clear()
            venv.step(np.zeros((9, *venv.single_action_space.shape), np.float32))
            assert passes == [part, part, len(cams)], f"step {t}: passes of {passes} cameras"
    finally:
        venv.close()


def test_each_env_knows_the_process_it_runs_in() -> None:
    """make_vec tells each env factory its process, which picks its GPU (``worker % n`` with egl or gl): one per env
    with "async", this one with "sync", the worker holding it with "batched"."""
    from pixelrig.vector.make import _processes

    assert _processes("async", 4, 1) == [0, 1, 2, 3]
    assert _processes("sync", 3, 1) == [0, 0, 0]
    assert _processes("batched", 5, 2) == [0, 0, 0, 1, 1]


def _shm_entries() -> set[str]:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def _shm_mappings() -> set[str]:
    with open("/proc/self/maps") as f:
        return {line.split()[5] for line in f if len(line.split()) > 5 and line.split()[5].startswith("/dev/shm/")}


def test_close_frees_processes_shared_memory_and_gl_scenes() -> None:
    mappings = []
    for _ in range(2):  # the second round reuses what the first freed: nothing grows
        children = set(child_pids())
        venv = make_vec(CART, 3, cams=[CAM], vectorization_mode="batched", num_workers=2)
        venv.reset(seed=0)
        venv.step(np.zeros((3, 1), np.float32))
        workers = list(venv.workers)
        assert all(w.alive for w in workers) and {w.pid for w in workers} <= set(child_pids())
        block = venv.shared_memory.name.lstrip("/")
        assert block in _shm_entries()  # the observations' block (/dev/shm is the machine's: only this name counts)
        venv.close()
        assert all(not w.alive and w.poll() == 0 for w in workers)
        assert not new_children(children)
        assert block not in _shm_entries()
        mappings.append(_shm_mappings())
        with pytest.raises(gym.error.ClosedEnvironmentError, match="closed: make a new one"):
            venv.step(np.zeros((3, 1), np.float32))
    assert mappings[1] <= mappings[0]

    venv = make_vec(CART, 2, cams=[CAM], vectorization_mode="batched")  # in this process: its gl scenes go
    venv.reset(seed=0)
    clients = list(venv.get_attr("client"))
    venv.close()
    venv.close()  # idempotent
    import pixelrig.render.gl.pipeline as glr

    assert not any(p.isConnected(physicsClientId=c) for c in clients)
    assert glr._pipeline is None or not set(clients) & set(glr._pipeline.clients)


def test_bad_input_raises_before_anything_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_env(self) -> gym.Env:
        raise AssertionError("an env was built before the input was checked")

    monkeypatch.setattr(EnvFactory, "__call__", no_env)
    children = set(child_pids())
    cases = [
        ({"num_envs": 0}, "num_envs=0 must be an integer >= 1"),
        ({"num_workers": 0}, "num_workers=0 must be an integer >= 1 (1 holds every env in this process)"),
        ({"num_workers": 4}, "num_workers=4 is more than num_envs=3: each worker needs at least one env; pass "
                             "num_workers <= 3"),
        ({"num_workers": 1.5}, "num_workers=1.5 must be an integer >= 1"),
        ({"vectorization_mode": "batch"}, "vectorization_mode must be one of ('async', 'sync', 'batched'): got "
                                          "'batch'"),
        ({"vectorization_mode": "async", "num_workers": 2}, "num_workers=2 applies to vectorization_mode='batched' "
                                                            "only: drop it, or pass vectorization_mode='batched'"),
        ({"renderer": "egl"}, "pybullet's EGL plugin allows one client per process; use renderer='gl'"),
        ({"renderer": "vulkan"}, "must be one of ('auto', 'tiny', 'egl', 'gl'): got 'vulkan'"),
    ]
    for change, message in cases:
        kwargs = {"num_envs": 3, "vectorization_mode": "batched", "cams": [CAM], **change}
        with pytest.raises(ValueError, match=re.escape(message)):
            make_vec(CART, **kwargs)
    assert set(child_pids()) == children
    with pytest.raises(ValueError, match=re.escape("num_workers=3 is more than num_envs=2")):
        BatchedVectorEnv([EnvFactory(CART)] * 2, num_workers=3)
    assert [list(r) for r in worker_slices(5, 3)] == [[0, 1], [2, 3], [4]]


def test_sensor_cameras_in_a_batched_env_equal_a_sync_one() -> None:
    """Cameras with a period, a latency and noise: a batched env (drawing only the cameras due, some steps nothing
    at all; its observations built by PixelObs.observation_from) equals a sync vector env of lone PixelObs envs bit
    for bit on tiny, through next-step autoresets; on gl, it draws the same images as lone gl envs (a step where no
    camera is due submits nothing)."""
    from pixelrig.cameras.noise import SensorNoise

    noise = SensorNoise(rgb_sigma=3.0, depth_sigma=(0.002, 0.01), depth_range=(0.2, 4.0))
    cams = [dataclasses.replace(CAM, name="p2", period=2), dataclasses.replace(CAM, name="l1n", latency=1, noise=noise),
            dataclasses.replace(CAM, name="p3l2", period=3, latency=2, noise=noise)]
    action = np.full((3, 1), 1.0, np.float32)
    batched = make_vec(CART, 3, cams=cams, vectorization_mode="batched", renderer="tiny")
    sync = make_vec(CART, 3, cams=cams, vectorization_mode="sync", renderer="tiny")
    try:
        assert_trees_equal(batched.reset(seed=5)[0], sync.reset(seed=5)[0], "reset")
        ended = 0
        for t in range(60):
            a, b = batched.step(action), sync.step(action)
            assert_trees_equal(a[0], b[0], f"step {t}")
            ended += int(np.sum(a[2] | a[3]))
        assert ended >= 3  # autoresets happened
    finally:
        batched.close()
        sync.close()
    timed = [dataclasses.replace(CAM, name="p2", period=2), dataclasses.replace(CAM, name="p2l1", period=2, latency=1)]
    batched = make_vec(CART, 2, cams=timed, vectorization_mode="batched", renderer="gl")
    lone = make_vec(CART, 2, cams=timed, vectorization_mode="sync", renderer="gl")
    try:
        first_a, first_b = batched.reset(seed=1)[0], lone.reset(seed=1)[0]
        for i in range(2):
            assert_pixels_close(env_slice(first_a, i), env_slice(first_b, i), f"reset env {i}")
        for t in range(6):  # odd steps draw nothing
            obs_a = batched.step(action[:2])[0]
            obs_b = lone.step(action[:2])[0]
            for i in range(2):
                assert_pixels_close(env_slice(obs_a, i), env_slice(obs_b, i), f"step {t} env {i}")
    finally:
        batched.close()
        lone.close()
