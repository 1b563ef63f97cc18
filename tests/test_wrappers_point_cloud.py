"""PointCloudObs: fused clouds from analytic scenes, filtering, fixed size and padding, voxels, seeding, purity,
snapshot/restore exactness, and errors."""

from __future__ import annotations

import dataclasses
import re

import gymnasium as gym
import numpy as np
import pytest

import pixelrig
from pixelrig import Camera, PixelObs, PointCloudObs, restore, snapshot
from pixelrig.envs.scenes import PrimitivesEnv
from pixelrig.experts.push import PushExpert

from .conftest import assert_trees_equal, physics_state

TOP = {"eye": (0.0, 0.0, 3.0), "target": (0.0, 0.0, 0.0), "up": (0.0, 1.0, 0.0), "fov": 60.0, "width": 64,
       "height": 64, "near": 0.1, "far": 10.0}
OBLIQUE = {"eye": (1.6, -1.6, 1.3), "target": (0.0, 0.0, 0.2), "fov": 50.0, "width": 96, "height": 72, "near": 0.1,
           "far": 10.0}
FULL = ("rgb", "label", "points")
BOX_ID = 1  # PrimitivesEnv: ground 0, box 1, sphere 2, cylinder 3


def primitives_cloud(num_points: int, rig: list[Camera] | None = None, **kwargs) -> PointCloudObs:
    """PrimitivesEnv under a PixelObs of ``rig`` (default: a top and an oblique camera) and a PointCloudObs."""
    rig = rig or [Camera("top", modalities=FULL, **TOP), Camera("oblique", modalities=FULL, **OBLIQUE)]
    return PointCloudObs(PixelObs(PrimitivesEnv(renderer="tiny"), cams=rig, pixels_only=True), num_points,
                         **kwargs)


def panda_cloud(num_points: int = 512, size: int = 32, **kwargs) -> PointCloudObs:
    env = gym.make("pixelrig/PandaPush-v0", renderer="tiny")
    cams = [dataclasses.replace(c, width=size, height=size, modalities=FULL) for c in env.unwrapped.default_cameras()]
    return PointCloudObs(PixelObs(env, cams=cams), num_points, **kwargs)


def rows(*arrays: np.ndarray) -> set[tuple]:
    """The set of (xyz, rgb, label) rows of a cloud, for membership checks."""
    return {tuple(r) for r in np.concatenate([a.reshape(len(a), -1).astype(np.float64) for a in arrays], axis=1)}


def test_keys_shapes_space_and_points_are_the_pixels() -> None:
    env = primitives_cloud(700, seed=0)
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs)
        assert obs["pointcloud/xyz"].shape == (700, 3) and obs["pointcloud/xyz"].dtype == np.float32
        assert obs["pointcloud/rgb"].shape == (700, 3) and obs["pointcloud/rgb"].dtype == np.uint8
        assert obs["pointcloud/label"].shape == (700, 1) and obs["pointcloud/label"].dtype == np.int32
        assert {"top/points", "oblique/points", "top/rgb"} <= set(obs)  # the pixel keys stay
        # every sampled point is one camera pixel, with that pixel's colour and body id
        pixels = set()
        for cam in ("top", "oblique"):
            hit = obs[f"{cam}/points"][..., 3] > 0
            pixels |= rows(obs[f"{cam}/points"][hit][:, :3], obs[f"{cam}/rgb"][hit], obs[f"{cam}/label"][hit])
        cloud = rows(obs["pointcloud/xyz"], obs["pointcloud/rgb"], obs["pointcloud/label"])
        assert cloud <= pixels and len(cloud) == 700  # without replacement: 700 distinct pixels
        assert set(np.unique(obs["pointcloud/label"]).tolist()) == {0, 1, 2, 3}
    finally:
        env.close()


def test_exclude_and_bounds_keep_only_the_box() -> None:
    """Dropping the ground and cropping to the box's volume leaves box points only, all inside the box."""
    env = primitives_cloud(256, exclude=("ground", "sph*"), bounds=((-0.25, -0.25, -0.1), (0.25, 0.25, 0.45)),
                           seed=1)
    try:
        obs, _ = env.reset(seed=0)
        assert (obs["pointcloud/label"] == BOX_ID).all()
        xyz = obs["pointcloud/xyz"].astype(np.float64)
        assert (np.abs(xyz[:, :2]) <= 0.2 + 1e-5).all() and (xyz[:, 2] >= -1e-5).all()
        assert (xyz[:, 2] <= 0.4 + 1e-5).all()
        r, g, b = np.median(obs["pointcloud/rgb"].astype(int), axis=0)
        assert r > g + 40 and r > b + 40  # the box is red
    finally:
        env.close()


def test_fewer_points_than_asked_repeat_and_none_give_zeros() -> None:
    few = primitives_cloud(4000, exclude=("ground",), bounds=((-0.25, -0.25, 0.35), (0.25, 0.25, 0.45)),
                           cams=["top"], seed=0)
    none = primitives_cloud(50, bounds=((5.0, 5.0, 5.0), (6.0, 6.0, 6.0)), seed=0)
    try:
        obs, _ = few.reset(seed=0)
        kept = few.gather(obs)[0]
        assert 50 < len(kept) < 4000
        np.testing.assert_array_equal(obs["pointcloud/xyz"][:len(kept)], kept)  # every point once, in order
        assert rows(obs["pointcloud/xyz"][len(kept):]) <= rows(kept)  # then repeats of them
        assert (obs["pointcloud/label"] == BOX_ID).all()

        obs, _ = none.reset(seed=0)
        assert (obs["pointcloud/xyz"] == 0).all() and (obs["pointcloud/rgb"] == 0).all()
        assert (obs["pointcloud/label"] == -1).all()
        assert none.observation_space.contains(obs)  # the space holds the origin for this padding
    finally:
        few.close()
        none.close()


def test_voxel_downsampling_keeps_one_point_per_voxel() -> None:
    env = primitives_cloud(300, voxel_size=0.1, seed=0)
    try:
        obs, _ = env.reset(seed=0)
        kept = env.gather(obs)[0]
        cells = np.floor(kept.astype(np.float64) / 0.1).astype(np.int64)
        assert len(np.unique(cells, axis=0)) == len(kept)
        every = np.concatenate([obs[f"{c}/points"][obs[f"{c}/points"][..., 3] > 0][:, :3] for c in ("top", "oblique")])
        assert len(kept) == len(np.unique(np.floor(every.astype(np.float64) / 0.1).astype(np.int64), axis=0))
        assert len(kept) < len(every) / 3
        sampled = np.floor(obs["pointcloud/xyz"].astype(np.float64) / 0.1).astype(np.int64)
        assert len(np.unique(sampled, axis=0)) == min(300, len(kept))
    finally:
        env.close()


def test_cameras_without_rgb_or_label_give_zero_color_and_label_minus_one() -> None:
    env = primitives_cloud(64, rig=[Camera("bare", modalities=("points",), **TOP)], seed=0)
    try:
        obs, _ = env.reset(seed=0)
        assert (obs["pointcloud/rgb"] == 0).all() and (obs["pointcloud/label"] == -1).all()
        assert np.abs(obs["pointcloud/xyz"]).max() > 0.1
    finally:
        env.close()


def test_seeded_sampling_is_reproducible_and_the_seed_matters() -> None:
    a, b, c = (primitives_cloud(500) for _ in range(3))
    try:
        oa, _ = a.reset(seed=3)
        ob, _ = b.reset(seed=3)
        oc, _ = c.reset(seed=4)
        np.testing.assert_array_equal(oa["pointcloud/xyz"], ob["pointcloud/xyz"])
        assert not np.array_equal(oa["pointcloud/xyz"], oc["pointcloud/xyz"])
        sa, sb = a.step(a.action_space.sample())[0], b.step(b.action_space.sample())[0]
        np.testing.assert_array_equal(sa["pointcloud/xyz"], sb["pointcloud/xyz"])
        assert not np.array_equal(sa["pointcloud/xyz"], oa["pointcloud/xyz"])  # a new sample every step
    finally:
        for e in (a, b, c):
            e.close()


def test_point_clouds_do_not_change_the_simulation_or_the_env_rng() -> None:
    plain = gym.make("pixelrig/PandaPush-v0", renderer="tiny")
    seen = panda_cloud(256, exclude=("ground",), bounds=((-1, -1, 0.5), (1.5, 1, 2)), voxel_size=0.01)
    policy_a, policy_b = PushExpert(), PushExpert()
    try:
        a, _ = plain.reset(seed=11)
        b, _ = seen.reset(seed=11)
        for t in range(60):
            ra, rb = plain.step(policy_a(a)), seen.step(policy_b(b["state"]))
            a, b = ra[0], rb[0]
            assert_trees_equal(ra[0], rb[0]["state"], f"step {t}")
            assert_trees_equal(ra[1:], rb[1:], f"step {t}")
            assert_trees_equal(physics_state(plain.unwrapped.client), physics_state(seen.unwrapped.client))
        assert plain.unwrapped.np_random.bit_generator.state == seen.unwrapped.np_random.bit_generator.state
    finally:
        plain.close()
        seen.close()


def run(env: gym.Env, actions: list) -> list:
    out = []
    for i, action in enumerate(actions):
        result = env.step(action)
        out.append(result)
        if result[2] or result[3]:
            out.append(env.reset(seed=1000 + i))
    return out


def test_snapshot_restores_the_sampler_exactly() -> None:
    """Snapshot mid-episode, record; restore (twice, and into another env that ran elsewhere) -> the same clouds,
    bit for bit: the sampler's state is part of the snapshot."""
    env, other = panda_cloud(300, exclude=("ground",)), panda_cloud(300, exclude=("ground",))
    try:
        env.reset(seed=2)
        env.action_space.seed(2)
        run(env, [env.action_space.sample() for _ in range(15)])
        snap = snapshot(env)
        assert snap.wrapper_states[0]["sampler"]["bit_generator"] == "PCG64"
        later = [env.action_space.sample() for _ in range(10)]
        reference = run(env, later)
        for _ in range(2):
            restore(env, snap)
            assert_trees_equal(reference, run(env, later))
        other.reset(seed=9)
        run(other, later)
        restore(other, pixelrig.Snapshot.from_bytes(snap.to_bytes()))
        assert_trees_equal(reference, run(other, later))
    finally:
        env.close()
        other.close()


# ---- errors ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("num_points", [0, -5, 1.5, True, "64"])
def test_num_points_must_be_a_positive_integer(num_points) -> None:
    env = PixelObs(PrimitivesEnv(renderer="tiny"), cams=[Camera("top", modalities=FULL, **TOP)])
    try:
        with pytest.raises(ValueError, match=re.escape(f"PointCloudObs: num_points={num_points!r} must be an "
                                                       "integer >= 1")):
            PointCloudObs(env, num_points)
    finally:
        env.close()


def test_needs_a_pixel_obs_with_points() -> None:
    base = PrimitivesEnv(renderer="tiny")
    try:
        with pytest.raises(ValueError, match=re.escape("PointCloudObs needs a PixelObs underneath whose cameras "
                                                       "return 'points'")):
            PointCloudObs(base, 64)
        no_points = PixelObs(base, cams=[Camera("top", modalities=("rgb", "depth"), **TOP)])
        with pytest.raises(ValueError, match=re.escape("PointCloudObs: no camera returns 'points' (cameras: {'top': "
                                                       "('rgb', 'depth')}); add 'points'")):
            PointCloudObs(no_points, 64)
    finally:
        base.close()


@pytest.mark.parametrize(("bounds", "message"), [
    ((0, 0, 0), "bounds must be (low_xyz, high_xyz), two triples of numbers, shape (2, 3): got (0, 0, 0) (shape (3,))"),
    (((0, 0), (1, 1)), "shape (2, 3): got ((0, 0), (1, 1)) (shape (2, 2))"),
    (((0, 0, 0), (1, 1)), "shape (2, 3): got ((0, 0, 0), (1, 1)) (shape ragged)"),
    (((0, 0, 1), (1, 1, 0)), "bounds [[0.0, 0.0, 1.0], [1.0, 1.0, 0.0]] need low <= high on every axis and no NaN"),
])
def test_bad_bounds_are_named(bounds, message: str) -> None:
    env = PixelObs(PrimitivesEnv(renderer="tiny"), cams=[Camera("top", modalities=FULL, **TOP)])
    try:
        with pytest.raises(ValueError, match=re.escape(message)):
            PointCloudObs(env, 64, bounds=bounds)
    finally:
        env.close()


def test_bad_cams_exclude_and_voxel_size_are_named() -> None:
    cams = [Camera("top", modalities=FULL, **TOP), Camera("flat", modalities=("rgb", "points"), **OBLIQUE),
            Camera("pic", modalities=("rgb",), **OBLIQUE)]
    env = PixelObs(PrimitivesEnv(renderer="tiny"), cams=cams)
    try:
        with pytest.raises(ValueError, match=re.escape("PointCloudObs: cams ['top', 'pic'] must be a non-empty list "
                                                       "of cameras that return 'points'; those are ['top', 'flat'] "
                                                       "(not: ['pic'])")):
            PointCloudObs(env, 64, cams=["top", "pic"])
        with pytest.raises(ValueError, match=re.escape("cams must be a list of camera names: got the string 'top'")):
            PointCloudObs(env, 64, cams="top")
        with pytest.raises(ValueError, match=re.escape("PointCloudObs: exclude names ['grond'] match no body in the "
                                                       "scene; bodies: box, cylinder, ground, sphere")):
            PointCloudObs(env, 64, exclude=["grond"], cams=["top"])
        with pytest.raises(ValueError, match=re.escape("needs the body ids of every fused camera, but cameras "
                                                       "['flat'] do not return 'label'")):
            PointCloudObs(env, 64, exclude=["ground"])
        for bad in (0, -0.1, float("nan"), "1cm"):
            with pytest.raises(ValueError, match=re.escape(f"PointCloudObs: voxel_size={bad!r} must be a finite "
                                                           "number of metres > 0, or None")):
                PointCloudObs(env, 64, voxel_size=bad)
        cloud = PointCloudObs(env, 64, exclude="ground", cams=["top"])  # one name as a string is fine
        with pytest.raises(ValueError, match=re.escape("already has ['pointcloud/xyz', 'pointcloud/rgb', "
                                                       "'pointcloud/label'] (one PointCloudObs per stack)")):
            PointCloudObs(cloud, 64)
    finally:
        env.close()


def test_restore_refuses_a_state_that_is_not_a_sampler() -> None:
    env = primitives_cloud(16)
    try:
        with pytest.raises(ValueError, match=re.escape("holds no PCG64 sampler state")):
            env.restore_snapshot_state({"sampler": {"bit_generator": "MT19937"}})
    finally:
        env.close()
